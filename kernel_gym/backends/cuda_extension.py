"""KernelBench's own CUDA answer format: ``torch.utils.cpp_extension.load_inline``, built by the judge.

An answer in this format builds its CUDA/C++ source with ``load_inline`` at import time. Inside the
verifier the answer's process can neither run a compiler nor write a file, so the runner puts a
shim in place of ``torch.utils.cpp_extension`` before the answer is loaded (:func:`install_shim`):
its ``load_inline`` sends the arguments to the judge's compile service, which checks the sources
(the kernel-source rules) and flags (:func:`check_flags`), builds the extension with torch's own
ninja build in a sandboxed process (:func:`build_extension`), caches it by content
(``<cache root>/torch_ext``, signed like every compiled artefact) and answers with its path; the
shim imports the built module from there (read-only in the sandbox).

Every extension is built as the module ``kg_torch_ext`` (the file name carries the content hash):
the answer's ``name`` only labels messages, and one module name lets one precompiled header of
``torch/extension.h`` (built once per torch version, compiler and flag set) serve every build.

The CUDA unit, which nvcc compiles (no precompiled header there), is the longer of the two: its
``#include <torch/extension.h>`` pulls in all of libtorch's C++ API and pybind11 three times over
(nvcc's host front end, its device front end and the host compiler). Unless a scan of the CUDA
sources shows they use more (:func:`light_header_fits`), that line is built as
``#include <torch/version.h>`` beside the ``torch/types.h``, ``cuda.h`` and ``cuda_runtime.h`` that
load_inline puts first: ATen, the tensor factories and the version, not the modules, optimisers,
serialisation or Python bindings a kernel file does not call. If that build fails on a name it
could not find, it is built again with torch's header, whose errors are the ones reported. The
header is part of the cache key (the rendered source differs).

Outside the verifier (:func:`extract_calls`) the ``load_inline`` arguments are read from the
answer's syntax tree, resolving module-level string constants, so ``compile_only`` and the
candidates' parallel builds need not run the answer.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CACHE_SUBDIR",
    "MODULE_NAME",
    "ExtensionRequest",
    "build_extension",
    "check_flags",
    "extract_calls",
    "install_shim",
    "light_header_fits",
    "render_sources",
]

CACHE_SUBDIR = "torch_ext"
MODULE_NAME = "kg_torch_ext"
_PCH_HEADER = "kg_torch_extension_pch.h"
_PCH_FAILED_MARKER = "pch.failed"
# torch's full C++ API header in a CUDA source, as KernelBench answers write it (torch/torch.h is
# the same API); the light build replaces the line, keeping the line numbers of compiler messages
_FULL_HEADER_LINE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]torch/(extension|torch)\.h[>"][^\n]*$', re.M)
_LIGHT_HEADER_LINE = "#include <torch/version.h> /* kernel-gym: torch/extension.h, light form */"
# what only the full header declares: pybind11 and torch's Python glue, and the C++ API beyond
# ATen and the tensor factories (modules, autograd functions, optimisers, data, serialisation,
# torch/enum.h's constants such as torch::kMean (not the dtypes: torch/types.h has those), the
# grad-mode guards of torch/utils.h)
_NEEDS_FULL_HEADER = re.compile(
    r"\b(py|pybind11)::|PYBIND11_|TORCH_EXTENSION_NAME|\bTHP[A-Z]\w*|"
    r"\btorch::(nn|autograd|jit|optim|data|fft|linalg|special|nested|sparse|serialize|python|cuda|mps|xpu|"
    r"enumtype|detail|NoGradGuard|AutoGradMode|InferenceMode|manual_seed|OrderedDict|ExpandingArray|save|load|"
    r"pickle_\w+|utils|k(Mean|Sum|None|BatchMean|ReLU|GELU|Tanh|Sigmoid|LSTM|GRU|Nearest|Bilinear|Bicubic|"
    r"Zeros|Reflect|Replicate|Circular))\b"
)
# compiler messages of a name or header it could not find: what a missing declaration looks like,
# so a light build failing with them is built again with the full header (other errors are the
# answer's own and the full header would report them the same)
_MISSING_DECLARATION = re.compile(
    r"is undefined|was not declared|not declared in this scope|has no member|is not a member of|"
    r"incomplete type|does not name a (type|template)|is not a (class|namespace|template)|no instance of|"
    r"no matching function|not a class or namespace|no template named|explicit type is missing"
)

# Flags an answer may pass to the host compiler (extra_cflags) and to nvcc (extra_cuda_cflags):
# optimisation and code generation. -D of names of the toolchain, torch or this package (the
# half-precision operator guards, TORCH_*, C10_*, PYBIND11_*, names with a leading underscore) and
# -U are refused: they switch off checks or change the ABI the extension is built against.
_OPT = r"-O[0-3s]?|-Ofast"
_DEFINE = r"-D(?!_|TORCH|C10|PYBIND|AT_|CUDA|CUB_|THRUST|NDEBUG|KG_|KGSIM)[A-Za-z]\w*(=[\w.+-]*)?"
_HOST_FLAG = re.compile(
    rf"{_OPT}|{_DEFINE}|-g[0-3]?|-w|-W[\w=-]*|-std=(c|gnu)\+\+\d\w|-march=[\w.-]+|-mtune=[\w.-]+|"
    r"-f(no-)?(fast-math|finite-math-only|unsafe-math-optimizations|tree-vectorize|unroll-loops|"
    r"strict-aliasing|omit-frame-pointer|openmp|openmp-simd|inline-functions)|-ffp-contract=(fast|on|off)"
)
_NVCC_FLAG = re.compile(
    rf"{_OPT}|{_DEFINE}|-g[0-3]?|-w|-std=(c|gnu)\+\+\d\w|--?use_fast_math|-lineinfo|--?extra-device-vectorization|"
    r"--?maxrregcount[= ]?\d+|--?ftz=(true|false)|--?prec-div=(true|false)|--?prec-sqrt=(true|false)|"
    r"--?fmad=(true|false)|--?restrict|--?expt-relaxed-constexpr|--?expt-extended-lambda|"
    r"(-Xptxas[= ]|--ptxas-options=)(-O[0-3]|-v|--warn-on-spills|-dlcm=c[ag])(,(-O[0-3]|-v|--warn-on-spills))*|"
    r"-arch=(sm|compute)_\d+a?|-gencode=arch=compute_\d+a?,code=(sm|compute)_\d+a?|"
    r"--?resource-usage|-res-usage|--?generate-line-info|-Xcompiler=(-O[0-3]|-fno-strict-aliasing|-w)"
)
# load_inline arguments an answer may not set (they name files or change how the module loads)
_REFUSED_ARGUMENTS = ("build_directory", "extra_include_paths", "extra_ldflags", "sycl_sources", "extra_sycl_cflags")
_IGNORED_ARGUMENTS = ("name", "verbose", "keep_intermediates", "use_pch", "with_sycl")


@dataclass
class ExtensionRequest:
    """The parts of a ``load_inline`` call that decide what is built."""

    name: str = "extension"
    cpp_sources: list[str] = field(default_factory=list)
    cuda_sources: list[str] = field(default_factory=list)
    functions: dict[str, str] | None = None
    extra_cflags: list[str] = field(default_factory=list)
    extra_cuda_cflags: list[str] = field(default_factory=list)
    with_cuda: bool = True
    with_pytorch_error_handling: bool = True
    no_implicit_headers: bool = False

    @classmethod
    def from_call(cls, args: Sequence[Any], kwargs: dict[str, Any]) -> ExtensionRequest:
        """The request of ``load_inline(*args, **kwargs)``; ValueError names a refused argument."""
        names = (
            "name",
            "cpp_sources",
            "cuda_sources",
            "sycl_sources",
            "functions",
            "extra_cflags",
            "extra_cuda_cflags",
        )
        if len(args) > len(names):
            raise ValueError("load_inline takes at most 7 positional arguments; pass the rest by keyword")
        given = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key in given:
                raise TypeError(f"load_inline() got multiple values for argument {key!r}")
            given[key] = value
        for key in _REFUSED_ARGUMENTS:
            if given.get(key):
                raise ValueError(
                    f"load_inline({key}=...) is not supported in an answer: the judge builds the extension "
                    "from the inline sources alone (no files, include paths or libraries of the answer's)"
                )
        if given.get("is_python_module", True) is not True:
            raise ValueError("load_inline(is_python_module=False) is not supported: the answer gets a Python module")
        known = {*names, *_REFUSED_ARGUMENTS, *_IGNORED_ARGUMENTS}
        known |= {"with_cuda", "with_pytorch_error_handling", "no_implicit_headers", "is_python_module"}
        unknown = sorted(set(given) - known)
        if unknown:
            raise TypeError(f"load_inline() got unexpected keyword arguments {', '.join(unknown)}")

        def texts(value: Any, what: str) -> list[str]:
            value = [value] if isinstance(value, str) else list(value or [])
            if not all(isinstance(v, str) for v in value):
                raise TypeError(f"load_inline({what}=...) must be a string or a list of strings")
            return value

        functions = given.get("functions")
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, (list, tuple)):
            functions = {str(f): str(f) for f in functions}
        if functions is not None and not isinstance(functions, dict):
            raise TypeError("load_inline(functions=...) must be a list of names or a dict of name: docstring")
        for fname in functions or {}:
            if not re.fullmatch(r"[A-Za-z_]\w*(::[A-Za-z_]\w*)*", str(fname)):
                raise ValueError(f"load_inline(functions=...): {fname!r} is not a C++ function name")
        cuda_sources = texts(given.get("cuda_sources"), "cuda_sources")
        with_cuda = given.get("with_cuda")
        return cls(
            name=str(given.get("name") or "extension")[:80],
            cpp_sources=texts(given.get("cpp_sources"), "cpp_sources"),
            cuda_sources=cuda_sources,
            functions={str(k): str(v) for k, v in functions.items()} if functions is not None else None,
            extra_cflags=texts(given.get("extra_cflags"), "extra_cflags"),
            extra_cuda_cflags=texts(given.get("extra_cuda_cflags"), "extra_cuda_cflags"),
            with_cuda=bool(cuda_sources) if with_cuda is None else bool(with_cuda),
            with_pytorch_error_handling=bool(given.get("with_pytorch_error_handling", True)),
            no_implicit_headers=bool(given.get("no_implicit_headers", False)),
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExtensionRequest:
        if not isinstance(data, dict):
            raise TypeError("malformed extension request")
        request = cls.from_call((), {k: v for k, v in data.items() if k != "with_cuda"})
        request.with_cuda = bool(data.get("with_cuda", request.with_cuda))
        return request


def check_flags(request: ExtensionRequest) -> list[str]:
    """One message per flag outside the allow-lists (host compiler, nvcc)."""
    bad = [f"extra_cflags flag {f!r} is not allowed" for f in request.extra_cflags if not _HOST_FLAG.fullmatch(f)]
    bad += [
        f"extra_cuda_cflags flag {f!r} is not allowed" for f in request.extra_cuda_cflags if not _NVCC_FLAG.fullmatch(f)
    ]
    return [
        m + " (optimisation and code-generation flags only; no include or library paths, no -D of "
        "toolchain, torch or guard names, no -U)"
        for m in bad
    ]


def light_header_fits(request: ExtensionRequest) -> bool:
    """Whether the CUDA unit may be built with torch/extension.h in its light form: it includes
    the header (else there is nothing to lighten), load_inline's implicit headers are on (the light
    form relies on their torch/types.h) and no CUDA source names what only the full header has."""
    texts = request.cuda_sources
    return (
        bool(texts)
        and not request.no_implicit_headers
        and any(_FULL_HEADER_LINE.search(t) for t in texts)
        and not any(_NEEDS_FULL_HEADER.search(t) for t in texts)
    )


def render_sources(request: ExtensionRequest, light_header: bool = False) -> dict[str, str]:
    """The build's files, as load_inline writes them: the C++ sources joined (torch/extension.h
    first, then pybind11 bindings of ``functions``) and the CUDA sources joined; with
    ``light_header``, the CUDA sources' torch/extension.h lines in their light form."""
    cpp = list(request.cpp_sources)
    if not request.no_implicit_headers:
        cpp.insert(0, "#include <torch/extension.h>")
    if request.functions is not None:
        cpp.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        for fname, doc in request.functions.items():
            target = f"torch::wrap_pybind_function({fname})" if request.with_pytorch_error_handling else fname
            cpp.append(f"m.def({json.dumps(fname)}, {target}, {json.dumps(doc)});")
        cpp.append("}")
    files = {"main.cpp": "\n".join(cpp)}
    if request.cuda_sources:
        cuda = list(request.cuda_sources)
        if light_header:
            cuda = [_FULL_HEADER_LINE.sub(_LIGHT_HEADER_LINE, text) for text in cuda]
        if not request.no_implicit_headers:
            cuda[:0] = ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"]
        files["cuda.cu"] = "\n".join(cuda)
    return files


# ------------------------------------------------------------------ building (judge side)
def _toolchain_identity() -> str:
    """What a built extension depends on besides its sources: torch, CUDA, the compilers, the arch."""
    import torch

    from kernel_gym.backends.cuda import cuda_arch
    from kernel_gym.native.compile import compiler_version

    parts = [torch.__version__, str(torch.version.cuda), sys.version.split()[0], cuda_arch()]
    for compiler in ("g++", "nvcc"):
        try:
            parts.append(compiler_version(compiler))
        except Exception:  # noqa: BLE001 - absent: part of the identity as such
            parts.append(f"no {compiler}")
    return "\0".join(parts)


def _key(files: dict[str, str], request: ExtensionRequest, objects_only: bool) -> str:
    h = hashlib.sha256(_toolchain_identity().encode())
    h.update(json.dumps([request.extra_cflags, request.extra_cuda_cflags, request.with_cuda, objects_only]).encode())
    for name in sorted(files):
        h.update(b"\0" + name.encode() + b"\0" + files[name].encode())
    return h.hexdigest()[:24]


@dataclass
class BuildResult:
    path: Path
    seconds: float
    cached: bool
    pch: str  # "used", "built", "off", "unavailable: ..."
    log: str = ""
    header: str = "full"  # the CUDA unit's torch/extension.h: "light", "full", "full (the light ...)"


Wrap = Callable[[list[str], list[Path], list[Path]], list[str]]


def _run(cmd: list[str], cwd: Path, timeout_s: float, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, env=env, check=False)


def build_environment() -> tuple[dict[str, str], list[Path]]:
    """The build process's environment, and the folders outside the system and Python's own that
    it reads (the CUDA toolkit, the caller's PYTHONPATH entries: torch installed with --target)."""
    from kernel_gym.backends.cuda import cuda_arch
    from kernel_gym.native.compile import compiler_path

    nvcc = compiler_path("nvcc")
    cuda_home = os.environ.get("CUDA_HOME") or (str(Path(nvcc).resolve().parent.parent) if nvcc else "")
    python_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).is_dir()]
    package_parent = str(Path(__file__).resolve().parent.parent.parent)
    path = [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
    if nvcc:
        path.insert(0, str(Path(nvcc).parent))
    jobs = int(os.environ.get("KERNEL_GYM_BUILD_JOBS", "0") or 0) or (os.cpu_count() or 2)
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(path)),
        "LANG": "C",
        "TMPDIR": "/tmp",
        "HOME": "/tmp",
        "PYTHONPATH": os.pathsep.join(dict.fromkeys([package_parent, *python_path])),
        "MAX_JOBS": str(jobs),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if cuda_home:
        env["CUDA_HOME"] = cuda_home
    arch = cuda_arch().removeprefix("sm_")
    suffix = "a" if arch.endswith("a") else ""
    arch = arch.removesuffix("a")
    env["TORCH_CUDA_ARCH_LIST"] = f"{arch[:-1]}.{arch[-1]}{suffix}"
    read_only = [Path(p) for p in (cuda_home, *python_path) if p and Path(p).is_dir() and p != package_parent]
    if nvcc:
        read_only.append(Path(nvcc).resolve().parent.parent)
    return env, list(dict.fromkeys(read_only))


def build_extension(
    request: ExtensionRequest,
    *,
    wrap: Wrap | None = None,
    timeout_s: float = 600.0,
    objects_only: bool = False,
    use_pch: bool | None = None,
    light_header: bool | None = None,
) -> BuildResult:
    """Build (or find in the cache) the extension of ``request``; the path of the module's ``.so``
    (with ``objects_only``: of a marker file once every translation unit compiled).

    ``wrap(cmd, read_only, writable)`` runs the build process in a sandbox. The precompiled header
    of torch/extension.h is on unless ``use_pch`` is False or $KERNEL_GYM_TORCH_PCH=0; the CUDA
    unit's light header (see the module's notes) unless ``light_header`` is False or
    $KERNEL_GYM_TORCH_LIGHT_HEADER=0.

    Raises:
        kernel_gym.native.CompileError: the build failed; ``.log`` holds the compiler's output.
    """
    import time

    from kernel_gym.native import CompileError, cache_root
    from kernel_gym.native.compile import artefact_is_signed

    started = time.perf_counter()
    if light_header is None:
        light_header = os.environ.get("KERNEL_GYM_TORCH_LIGHT_HEADER", "1") != "0"
    light_header = light_header and light_header_fits(request)
    full = render_sources(request)
    light = render_sources(request, light_header=True) if light_header else None
    out_dir = cache_root() / CACHE_SUBDIR
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = ".objects" if objects_only else ".so"
    # a light build that failed was built again in full: both keys are looked up
    for files, header in ((light, "light"), (full, "full")):
        if files is None:
            continue
        target = out_dir / (_key(files, request, objects_only) + suffix)
        if target.exists() and artefact_is_signed(target):
            return BuildResult(target, time.perf_counter() - started, True, "cached", header=header)
    if use_pch is None:
        use_pch = os.environ.get("KERNEL_GYM_TORCH_PCH", "1") != "0"
    env = build_environment()[0]
    pch_state, pch_dir = "off", None
    if use_pch:
        pch_dir, pch_state = _ensure_pch(request, env, wrap, timeout_s)
    header, log = "full", ""
    try:
        if light is not None:
            try:
                header = "light"
                target, log = _build_files(light, request, objects_only, pch_dir, env, wrap, timeout_s)
            except CompileError as exc:
                if not _MISSING_DECLARATION.search(exc.log):
                    raise
                header = "full (the light header lacked a declaration)"
                target, log = _build_files(full, request, objects_only, pch_dir, env, wrap, timeout_s)
        else:
            target, log = _build_files(full, request, objects_only, pch_dir, env, wrap, timeout_s)
    except subprocess.TimeoutExpired:
        raise CompileError(f"the extension build timed out after {timeout_s:.0f} s") from None
    if pch_state == "built" or pch_state == "cached":
        pch_state = "used" if "not used because" not in log else "rejected by the compiler"
    return BuildResult(target, time.perf_counter() - started, False, pch_state, log[-4000:], header)


def _build_files(
    files: dict[str, str],
    request: ExtensionRequest,
    objects_only: bool,
    pch_dir: Path | None,
    env: dict[str, str],
    wrap: Wrap | None,
    timeout_s: float,
) -> tuple[Path, str]:
    """One build of rendered sources into the cache: the artefact's path and the build's log."""
    import shutil
    import tempfile

    from kernel_gym.native import CompileError, cache_root
    from kernel_gym.native.compile import sign_artefact

    key = _key(files, request, objects_only)
    out_dir = cache_root() / CACHE_SUBDIR
    target = out_dir / (f"{key}.objects" if objects_only else f"{key}.so")
    target.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=f".build-{key}-") as tmp:
        build_dir = Path(tmp)
        for name, text in files.items():
            (build_dir / name).write_text(text)
        spec = {
            "mode": "objects" if objects_only else "library",
            "sources": sorted(files),
            "extra_cflags": request.extra_cflags,
            "extra_cuda_cflags": request.extra_cuda_cflags,
            "with_cuda": request.with_cuda,
            "pch": str(pch_dir / _PCH_HEADER) if pch_dir is not None else None,
        }
        (build_dir / "request.json").write_text(json.dumps(spec))
        cmd = [sys.executable, "-m", "kernel_gym.backends.cuda_extension", "build", str(build_dir)]
        read_only = [p for p in (pch_dir,) if p is not None]
        if wrap is not None:
            cmd = wrap(cmd, read_only, [build_dir])
        proc = _run(cmd, build_dir, timeout_s, env)
        log = (proc.stdout + proc.stderr).replace(str(build_dir) + "/", "")
        if proc.returncode != 0:
            first = next((ln for ln in log.splitlines() if re.search(r"error", ln, re.I)), log.strip()[-300:])
            raise CompileError(f"extension build failed: {first.strip()[:400]}", log[-20000:])
        built = build_dir / ("objects.ok" if objects_only else f"{MODULE_NAME}.so")
        if objects_only:
            built.write_text("compiled\n")
        sign_artefact(target, content=built)
        shutil.move(str(built), target)
    return target, log


def _ensure_pch(
    request: ExtensionRequest, env: dict[str, str], wrap: Wrap | None, timeout_s: float
) -> tuple[Path | None, str]:
    """The folder of a precompiled torch/extension.h for this request's host flags (built on first
    use, in the sandbox, shared by every later build with the same torch, compiler and flags)."""
    import fcntl

    from kernel_gym.native import cache_root
    from kernel_gym.native.compile import artefact_is_signed, sign_artefact

    h = hashlib.sha256(_toolchain_identity().encode())
    h.update(json.dumps(request.extra_cflags).encode())
    pch_dir = cache_root() / CACHE_SUBDIR / f"pch-{h.hexdigest()[:16]}"
    gch = pch_dir / f"{_PCH_HEADER}.gch"
    if gch.exists() and artefact_is_signed(gch):
        return pch_dir, "cached"
    if (pch_dir / _PCH_FAILED_MARKER).exists():
        return None, "unavailable: " + (pch_dir / _PCH_FAILED_MARKER).read_text()[:200]
    pch_dir.mkdir(parents=True, exist_ok=True)
    with open(pch_dir.parent / f".{pch_dir.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build of it at a time; the others wait and reuse it
        if gch.exists() and artefact_is_signed(gch):
            return pch_dir, "cached"
        (pch_dir / _PCH_HEADER).write_text("#include <torch/extension.h>\n")
        spec = {"mode": "pch", "extra_cflags": request.extra_cflags, "with_cuda": True, "sources": ["main.cpp"]}
        (pch_dir / "request.json").write_text(json.dumps(spec))
        (pch_dir / "main.cpp").write_text("")
        cmd = [sys.executable, "-m", "kernel_gym.backends.cuda_extension", "build", str(pch_dir)]
        if wrap is not None:
            cmd = wrap(cmd, [], [pch_dir])
        try:
            proc = _run(cmd, pch_dir, timeout_s, env)
            ok = proc.returncode == 0 and gch.exists()
            why = (proc.stdout + proc.stderr).strip()[-400:]
        except subprocess.TimeoutExpired:
            ok, why = False, "timed out"
        if not ok:
            (pch_dir / _PCH_FAILED_MARKER).write_text(why or "failed")
            return None, "unavailable: " + (why or "failed")[:200]
        sign_artefact(gch)
        return pch_dir, "built"


# ------------------------------------------------------------------ the build process (sandboxed)
def _ninja_variables(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = re.match(r"([A-Za-z_]\w*)\s*=\s*(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _write_ninja(build_dir: Path, spec: dict[str, Any]) -> Path:
    """torch's own build file for the sources (the flags load_inline would use)."""
    import inspect

    from torch.utils import cpp_extension

    if cpp_extension.CUDA_HOME is None and os.environ.get("CUDA_HOME"):
        # a CPU-only torch finds no CUDA; compile-only builds still use the toolkit's headers
        cpp_extension.CUDA_HOME = os.environ["CUDA_HOME"]
    writer = cpp_extension._write_ninja_file_to_build_library
    arguments = {
        "path": str(build_dir / "build.ninja"),
        "name": MODULE_NAME,
        "sources": [str(build_dir / s) for s in spec["sources"]],
        "extra_cflags": list(spec["extra_cflags"]),
        "extra_cuda_cflags": list(spec.get("extra_cuda_cflags") or []),
        "extra_sycl_cflags": [],
        "extra_ldflags": [],
        "extra_include_paths": [],
        "with_cuda": bool(spec["with_cuda"]),
        "with_sycl": False,
        "is_standalone": False,
    }
    if spec["mode"] == "library":  # link against torch's libraries as load_inline does (DT_NEEDED)
        prepare = cpp_extension._prepare_ldflags
        options = {"extra_ldflags": [], "with_cuda": bool(spec["with_cuda"]), "with_sycl": False, "verbose": False}
        options["is_standalone"] = False
        wanted = inspect.signature(prepare).parameters
        arguments["extra_ldflags"] = prepare(**{k: v for k, v in options.items() if k in wanted})
    accepted = inspect.signature(writer).parameters
    writer(**{k: v for k, v in arguments.items() if k in accepted})
    return build_dir / "build.ninja"


def _cpu_only_torch() -> bool:
    import torch

    return torch.version.cuda is None


def _build_main(build_dir: Path) -> int:
    import shlex

    spec = json.loads((build_dir / "request.json").read_text())
    ninja_file = _write_ninja(build_dir, spec)
    text = ninja_file.read_text()
    variables = _ninja_variables(text)
    if spec["mode"] == "pch":
        cxx = shlex.split(variables.get("cxx", "c++"))
        flags = shlex.split(variables.get("cflags", "")) + shlex.split(variables.get("post_cflags", ""))
        cmd = [*cxx, "-x", "c++-header", *flags, _PCH_HEADER, "-o", f"{_PCH_HEADER}.gch"]
        print(" ".join(cmd), flush=True)
        return subprocess.run(cmd, cwd=build_dir, check=False).returncode
    if spec["mode"] == "objects" and _cpu_only_torch():
        # a CPU-only torch wheel ships the c10/cuda headers without their generated configuration
        # header; compile-only checks supply it (its one setting: c10_cuda is a shared library)
        compat = build_dir / "compat" / "c10" / "cuda" / "impl"
        compat.mkdir(parents=True, exist_ok=True)
        (compat / "cuda_cmake_macros.h").write_text("#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n")
        text = re.sub(
            r"^(cuda_post_cflags|post_cflags) = (.*)$",
            lambda m: f"{m.group(1)} = {m.group(2)} -I{shlex.quote(str(build_dir / 'compat'))}",
            text,
            flags=re.M,
        )
        ninja_file.write_text(text)
    if spec.get("pch"):  # the host compile includes the precompiled header first
        text = re.sub(
            r"^post_cflags = (.*)$",
            lambda m: f"post_cflags = {m.group(1)} -Winvalid-pch -include {shlex.quote(spec['pch'])}",
            text,
            count=1,
            flags=re.M,
        )
        ninja_file.write_text(text)
    targets: list[str] = []
    if spec["mode"] == "objects":  # compile only: every object, no link (no CUDA torch needed)
        targets = re.findall(r"^build ([^:\s]+\.o):", text, flags=re.M)
    ninja = [str(Path(sys.executable).parent / "ninja"), "ninja"]
    exe = next((n for n in ninja if Path(n).is_file()), "ninja")
    jobs = os.environ.get("MAX_JOBS", "")
    cmd = [exe, "-v", *(["-j", jobs] if jobs else []), *targets]
    return subprocess.run(cmd, cwd=build_dir, check=False).returncode


# ------------------------------------------------------------------ the shim (runner side)
def install_shim(build: Callable[[dict[str, Any]], Path]) -> types.ModuleType:
    """Replace ``torch.utils.cpp_extension`` for the answer: ``load_inline`` asks ``build`` (the
    judge's compile service) for the module and imports it from the path it answers. Installed by
    the runner before the answer is loaded, from the package (read-only in the sandbox)."""
    import torch.utils

    shim = types.ModuleType("torch.utils.cpp_extension")
    shim.__doc__ = "kernel-gym: load_inline is served by the verifier's compile service"

    def load_inline(*args: Any, **kwargs: Any) -> types.ModuleType:
        request = ExtensionRequest.from_call(args, kwargs)
        path = build(request.to_json())
        return _counting(_import_built(Path(path)))

    def load(*args: Any, **kwargs: Any) -> types.ModuleType:
        raise ValueError(
            "torch.utils.cpp_extension.load builds from files, which an answer cannot ship: "
            "pass the sources as strings to load_inline"
        )

    shim.load_inline = load_inline  # type: ignore[attr-defined]
    shim.load = load  # type: ignore[attr-defined]
    shim.CUDA_HOME = None  # type: ignore[attr-defined]
    sys.modules["torch.utils.cpp_extension"] = shim
    torch.utils.cpp_extension = shim
    return shim


_IMPORTED: dict[str, types.ModuleType] = {}


def _counting(module: types.ModuleType) -> types.ModuleType:
    """The built module as the answer sees it: its functions count their calls (OwnCodeCalls), so
    the runner can tell a forward that ran the answer's kernels from one that only called torch."""
    from kernel_gym.backends.base import OwnCodeCalls

    def counted(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            OwnCodeCalls.count += 1
            return fn(*args, **kwargs)

        call.__name__ = getattr(fn, "__name__", "function")
        call.__doc__ = getattr(fn, "__doc__", None)
        return call

    view = types.ModuleType(module.__name__, module.__doc__)
    for name, value in vars(module).items():
        plain_function = callable(value) and not isinstance(value, type) and not name.startswith("__")
        setattr(view, name, counted(value) if plain_function else value)
    return view


def _import_built(path: Path) -> types.ModuleType:
    import importlib.machinery
    import importlib.util

    if str(path) in _IMPORTED:
        return _IMPORTED[str(path)]
    loader = importlib.machinery.ExtensionFileLoader(MODULE_NAME, str(path))
    spec = importlib.util.spec_from_file_location(MODULE_NAME, str(path), loader=loader)
    if spec is None:
        raise ImportError(f"cannot import the built extension {path.name}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    _IMPORTED[str(path)] = module
    return module


# ------------------------------------------------------------------ static extraction
class _Unresolved(Exception):
    pass


def _module_constants(tree: ast.Module) -> dict[str, ast.AST]:
    """Module-level ``NAME = <expr>`` assignments (the last one of each name)."""
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = node.value
    return out


def _evaluate(node: ast.AST, names: dict[str, ast.AST], depth: int = 0) -> Any:
    """The value of a constant expression: literals, names of module constants, + of strings and
    lists, f-strings and %-formatting of those, lists/tuples/dicts of them."""
    if depth > 50:
        raise _Unresolved("too deep")
    ev = lambda n: _evaluate(n, names, depth + 1)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return ev(names[node.id])
    if isinstance(node, (ast.List, ast.Tuple)):
        return [ev(e) for e in node.elts]
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {ev(k): ev(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return ev(node.left) + ev(node.right)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return ev(node.left) % ev(node.right)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.format_spec is not None or value.conversion not in (-1, None):
                    raise _Unresolved("formatted value")
                parts.append(str(ev(value.value)))
            else:
                parts.append(str(ev(value)))
        return "".join(parts)
    raise _Unresolved(ast.dump(node)[:80])


def extract_calls(answer: str) -> list[ExtensionRequest | str]:
    """The ``load_inline`` calls of an answer, each as a request, or as a message saying why its
    arguments cannot be read without running the answer."""
    tree = ast.parse(answer)
    names = _module_constants(tree)
    out: list[ExtensionRequest | str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if called != "load_inline":
            continue
        try:
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                raise _Unresolved("*args or **kwargs")
            args = [_evaluate(a, names) for a in node.args]
            kwargs = {str(k.arg): _evaluate(k.value, names) for k in node.keywords}
            out.append(ExtensionRequest.from_call(args, kwargs))
        except _Unresolved as exc:
            out.append(f"line {node.lineno}: load_inline arguments are not constants ({exc})")
        except (TypeError, ValueError) as exc:
            out.append(f"line {node.lineno}: {exc}")
    return out


if __name__ == "__main__":  # the sandboxed build process: python -m ... build <dir>
    if len(sys.argv) != 3 or sys.argv[1] != "build":
        raise SystemExit("usage: python -m kernel_gym.backends.cuda_extension build <build dir>")
    raise SystemExit(_build_main(Path(sys.argv[2])))
