"""Native code plumbing shared by the backends: cached compilation and ctypes binding."""

from kernel_gym.native.cabi import CFunction, CParam, NativeFunction, NativeLibrary, parse_extern_c, strip_comments
from kernel_gym.native.compile import CompileError, cache_root, compile_shared, compiler_version

__all__ = [
    "CFunction",
    "CParam",
    "CompileError",
    "NativeFunction",
    "NativeLibrary",
    "cache_root",
    "compile_shared",
    "compiler_version",
    "parse_extern_c",
    "strip_comments",
]
