"""Call the ``extern "C"`` functions of a compiled source from Python.

``parse_extern_c`` reads the C signatures out of the source text; ``NativeLibrary`` binds
them with ctypes so that torch tensors go in as pointers (after a dtype and contiguity
check) and Python numbers as scalars. ctypes is used instead of a torch extension build
because it adds no compile time: a call costs microseconds and a build only the compiler.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from _ctypes import CFuncPtr

__all__ = ["CParam", "CFunction", "NativeLibrary", "parse_extern_c", "strip_comments"]

# Scalar C types -> ctypes. Pointer types are handled separately.
_SCALARS: dict[str, Any] = {
    "int": ctypes.c_int,
    "signed": ctypes.c_int,
    "unsigned": ctypes.c_uint,
    "unsigned int": ctypes.c_uint,
    "long": ctypes.c_long,
    "unsigned long": ctypes.c_ulong,
    "long long": ctypes.c_longlong,
    "unsigned long long": ctypes.c_ulonglong,
    "short": ctypes.c_short,
    "unsigned short": ctypes.c_ushort,
    "char": ctypes.c_char,
    "int8_t": ctypes.c_int8,
    "uint8_t": ctypes.c_uint8,
    "int16_t": ctypes.c_int16,
    "uint16_t": ctypes.c_uint16,
    "int32_t": ctypes.c_int32,
    "uint32_t": ctypes.c_uint32,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
    "ssize_t": ctypes.c_ssize_t,
    "ptrdiff_t": ctypes.c_ssize_t,
    "float": ctypes.c_float,
    "double": ctypes.c_double,
    "bool": ctypes.c_bool,
}
# Pointee type -> the torch dtypes a tensor passed there may have (None: any dtype).
_POINTEE_DTYPES: dict[str, tuple[torch.dtype, ...] | None] = {
    "float": (torch.float32,),
    "double": (torch.float64,),
    "half": (torch.float16,),
    "_Float16": (torch.float16,),
    "__fp16": (torch.float16,),
    "bfloat16_t": (torch.bfloat16,),
    "int64_t": (torch.int64,),
    "long": (torch.int64,),
    "int32_t": (torch.int32,),
    "int": (torch.int32,),
    "int16_t": (torch.int16,),
    "int8_t": (torch.int8,),
    "uint8_t": None,
    "char": None,
    "void": None,
    "bool": (torch.bool,),
}
_POINTER_ALIASES = {"GM_ADDR"}
_QUALIFIERS = re.compile(r"\b(const|volatile|restrict|__restrict__|__restrict|__gm__|struct|inline|static)\b")


def strip_comments(source: str) -> str:
    """Remove // and /* */ comments, keeping newlines so line numbers stay right."""

    def repl(m: re.Match[str]) -> str:
        s = m.group(0)
        return "\n" * s.count("\n") if s.startswith("/") else s

    pattern = r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\''
    return re.sub(pattern, repl, source, flags=re.S)


@dataclass(frozen=True)
class CParam:
    ctype: str  # normalised type text, e.g. "float*", "int64_t"
    name: str
    pointee: str | None  # base type for pointers, None for scalars

    @property
    def is_pointer(self) -> bool:
        return self.pointee is not None


@dataclass(frozen=True)
class CFunction:
    name: str
    return_type: str
    params: tuple[CParam, ...]
    line: int

    def signature(self) -> str:
        args = ", ".join(f"{p.ctype} {p.name}" for p in self.params)
        return f"{self.return_type} {self.name}({args})"


def _parse_param(text: str, index: int) -> CParam | None:
    text = text.strip()
    if not text or text == "void":
        return None
    text = re.sub(r"\[\s*\]$", "*", text)  # T x[] -> T* x
    m = re.match(r"^(.*?)([A-Za-z_]\w*)$", text, flags=re.S)
    if m is None or not m.group(1).strip() or m.group(1).strip().endswith("::"):
        base, name = text, f"arg{index}"
    else:
        base, name = m.group(1), m.group(2)
    base = " ".join(_QUALIFIERS.sub(" ", base).split())
    stars = base.count("*") + base.count("&")
    base = base.replace("*", "").replace("&", "").strip()
    base = re.sub(r"^(std::|::)", "", base)
    if base in _POINTER_ALIASES:
        return CParam(ctype=base, name=name, pointee="uint8_t")
    if stars:
        return CParam(ctype=base + "*" * stars, name=name, pointee=base)
    return CParam(ctype=base, name=name, pointee=None)


_DEVICE_MARKERS = ("__global__", "__aicore__", "__device__", "__cube__", "__vector__")
_FUNC_RE = re.compile(r"([A-Za-z_][\w:<>\s\*&]*?)\b([A-Za-z_]\w*)\s*\(([^()]*)\)\s*(?:noexcept\s*)?\{", re.S)


def _functions_in(text: str, offset_line: int, host_only: bool) -> list[CFunction]:
    found = []
    for m in _FUNC_RE.finditer(text):
        head = " ".join(m.group(1).split())
        if host_only and any(k in head for k in _DEVICE_MARKERS):
            continue
        if head.split()[-1:] and head.split()[-1] in ("if", "for", "while", "switch", "return"):
            continue
        ret = " ".join(_QUALIFIERS.sub(" ", head).split()) or "int"
        params = []
        for i, part in enumerate(p for p in m.group(3).split(",")):
            param = _parse_param(part, i)
            if param is not None:
                params.append(param)
        line = offset_line + text.count("\n", 0, m.start())
        found.append(CFunction(m.group(2), ret, tuple(params), line))
    return found


def _match_brace(text: str, open_index: int) -> int:
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced braces in source")


def parse_extern_c(source: str, host_only: bool = True) -> list[CFunction]:
    """Signatures of the ``extern "C"`` functions defined in ``source``.

    Both the single-declaration form (``extern "C" void f(...) {``) and the block form
    (``extern "C" { ... }``) are read. With ``host_only`` device kernels
    (``__global__``/``__aicore__``) are skipped: they are launched, not called.
    """
    text = strip_comments(source)
    functions: list[CFunction] = []
    for m in re.finditer(r'extern\s+"C"\s*', text):
        start = m.end()
        line = text.count("\n", 0, start) + 1
        if text.startswith("{", start):
            end = _match_brace(text, start)
            body = text[start + 1 : end]
            # only top-level definitions of the block: blank out nested bodies first
            depth, keep = 0, list[str]()
            for ch in body:
                if ch == "{":
                    depth += 1
                    if depth == 1:
                        keep.append("{")
                    continue
                if ch == "}":
                    depth -= 1
                    continue
                keep.append(ch if depth == 0 else ("\n" if ch == "\n" else " "))
            flat = "".join(keep)
            functions.extend(_functions_in(flat, line, host_only))
        else:
            brace = text.find("{", start)
            semi = text.find(";", start)
            if brace < 0 or (0 <= semi < brace):
                continue  # a declaration only
            functions.extend(_functions_in(text[start : brace + 1], line, host_only)[:1])
    return functions


class NativeFunction:
    """A bound ``extern "C"`` function: tensors in as pointers, numbers as scalars."""

    def __init__(self, cfunc: CFunction, raw: CFuncPtr) -> None:
        self.cfunc = cfunc
        self._raw = raw
        self._raw.argtypes = [ctypes.c_void_p if p.is_pointer else _scalar_type(p) for p in cfunc.params]
        rt = cfunc.return_type
        self._raw.restype = (
            None if rt == "void" else (ctypes.c_void_p if "*" in rt else _scalar_type(CParam(rt, "ret", None)))
        )

    def convert_args(self, args: Sequence[Any]) -> list[Any]:
        if len(args) != len(self.cfunc.params):
            raise TypeError(
                f"{self.cfunc.name}() takes {len(self.cfunc.params)} arguments "
                f"({self.cfunc.signature()}), got {len(args)}"
            )
        return [_convert(p, a, self.cfunc.name) for p, a in zip(self.cfunc.params, args, strict=True)]

    def __call__(self, *args: Any) -> Any:
        return self._raw(*self.convert_args(args))

    def __repr__(self) -> str:
        return f"<native {self.cfunc.signature()}>"


def _scalar_type(p: CParam) -> Any:
    t = _SCALARS.get(p.ctype)
    if t is None:
        raise TypeError(
            f"unsupported C type {p.ctype!r} for {p.name!r}: use a pointer, an integer, "
            'float or double type in extern "C" signatures'
        )
    return t


def _convert(p: CParam, value: Any, fname: str) -> Any:
    if p.is_pointer:
        if value is None:
            return None
        if isinstance(value, int):
            return value
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"{fname}(): argument {p.name!r} is {p.ctype}; pass a torch.Tensor, got {type(value).__name__}"
            )
        if value.device.type != "cpu":
            raise TypeError(f"{fname}(): argument {p.name!r} must be a CPU tensor, got device {value.device}")
        if not value.is_contiguous():
            raise ValueError(f"{fname}(): argument {p.name!r} is not contiguous; call .contiguous() first")
        allowed = _POINTEE_DTYPES.get(p.pointee or "", None)
        if allowed is not None and value.dtype not in allowed:
            raise TypeError(f"{fname}(): argument {p.name!r} is {p.ctype} but the tensor is {value.dtype}")
        return value.data_ptr()
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise TypeError(
                f"{fname}(): argument {p.name!r} is a scalar {p.ctype}; got a tensor of {value.numel()} elements"
            )
        value = value.item()
    return value


class NativeLibrary:
    """A loaded shared library whose ``extern "C"`` functions are attributes."""

    def __init__(self, path: Path, functions: Sequence[CFunction]) -> None:
        self.path = Path(path)
        self._dll = ctypes.CDLL(str(self.path))
        self.functions: dict[str, NativeFunction] = {}
        for f in functions:
            self.functions[f.name] = NativeFunction(f, getattr(self._dll, f.name))

    def __getattr__(self, name: str) -> NativeFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(
            f'no extern "C" function {name!r} in this library; it has: {", ".join(functions) or "none"}'
        )

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self.functions]

    def symbol(self, name: str) -> Any:
        """The raw ctypes symbol (for functions the parser does not list)."""
        return getattr(self._dll, name)
