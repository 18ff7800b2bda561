"""Compile C/C++ sources into shared libraries, cached by content hash.

The cache key covers the sources, the compiler flags and the compiler's version, so a
changed header or flag never reuses a stale library. Writes are atomic (build in a temp
dir, then rename), so concurrent processes compiling the same source are safe.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

__all__ = ["CompileError", "cache_root", "compile_shared", "compiler_version"]


class CompileError(RuntimeError):
    """The compiler rejected a source. ``log`` holds the compiler's output."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


def cache_root() -> Path:
    """Root of kernel-gym's on-disk caches: $KERNEL_GYM_CACHE, else ~/.cache/kernel_gym."""
    root = os.environ.get("KERNEL_GYM_CACHE")
    path = Path(root) if root else Path.home() / ".cache" / "kernel_gym"
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.lru_cache(maxsize=8)
def compiler_version(compiler: str) -> str:
    exe = shutil.which(compiler)
    if exe is None:
        raise CompileError(
            f"C++ compiler {compiler!r} not found on PATH; install it (Debian: apt-get install g++)"
        )
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else compiler


def _hash_inputs(sources: Mapping[str, str], flags: Sequence[str], compiler: str,
                 extra_files: Sequence[Path]) -> str:
    h = hashlib.sha256()
    h.update(compiler_version(compiler).encode())
    for flag in flags:
        h.update(b"\0flag\0" + flag.encode())
    for name in sorted(sources):
        h.update(b"\0src\0" + name.encode() + b"\0" + sources[name].encode())
    for path in extra_files:
        h.update(b"\0dep\0" + Path(path).read_bytes())
    return h.hexdigest()[:24]


def compile_shared(
    sources: str | Mapping[str, str],
    *,
    flags: Sequence[str] = ("-O2",),
    compiler: str = "g++",
    cache_subdir: str = "native",
    depends_on: Sequence[Path] = (),
    timeout_s: float = 120.0,
) -> Path:
    """Compile ``sources`` into a shared library and return its path.

    Args:
        sources: one source text, or {file name: text}; every ``.cpp``/``.cc``/``.c`` file is
            compiled and linked, other files (headers) are written beside them.
        flags: compiler flags; ``-shared -fPIC`` are always added.
        depends_on: files outside ``sources`` (e.g. package headers) whose content must be
            part of the cache key.
        timeout_s: wall-clock limit of the compiler, seconds.

    Raises:
        CompileError: the compiler failed or timed out; ``.log`` holds its output.
    """
    if isinstance(sources, str):
        sources = {"kernel.cpp": sources}
    flags = list(flags)
    key = _hash_inputs(sources, flags, compiler, depends_on)
    out_dir = cache_root() / cache_subdir
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{key}.so"
    if target.exists():
        return target
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=f".build-{key}-") as tmp:
        tmp_path = Path(tmp)
        units = []
        for name, text in sources.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            if path.suffix in (".cpp", ".cc", ".cxx", ".c"):
                units.append(str(path))
        if not units:
            raise CompileError("no .cpp/.cc/.c file among the sources: nothing to compile")
        lib = tmp_path / "lib.so"
        cmd = [compiler, "-shared", "-fPIC", *flags, "-I", str(tmp_path), *units, "-o", str(lib)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                                  cwd=tmp_path, check=False)
        except subprocess.TimeoutExpired as exc:
            raise CompileError(f"compiler timed out after {timeout_s:.0f} s", str(exc.stdout or "")) from None
        log = (proc.stdout + proc.stderr).replace(str(tmp_path) + "/", "")
        if proc.returncode != 0:
            first = next((ln for ln in log.splitlines() if "error" in ln), log.strip()[:200])
            raise CompileError(f"compilation failed: {first}", log)
        os.replace(lib, target)
    return target
