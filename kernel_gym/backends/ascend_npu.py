"""The ``ascend_npu`` backend: Ascend C answers built with the CANN toolchain, run on a real NPU.

It takes the answers ``ascend_sim`` takes and runs them on an Ascend NPU instead of the simulator:

- ``six_string`` (a MultiKernelBench answer): the CANN operator-project flow. The project JSON goes
  to ``msopgen gen -i <op>.json -c ai_core-<soc> -lan cpp -out <project>``, which generates the
  project; the host tiling header, the host operator and the kernel replace the generated
  ``op_host/`` and ``op_kernel/`` files; the project's ``build.sh`` builds the custom operator
  package (``build_out/custom_opp_<os>_<arch>.run``), which is installed into a vendor directory
  of the job named by ``ASCEND_CUSTOM_OPP_PATH``; the Python binding (``EXEC_NPU_CMD``) is built
  as a torch C++ extension against torch_npu and imported as ``custom_ops_lib``, and ``model_src``
  runs with the real ``torch_npu``;
- ``python``: ModelNew calls ``kernel_gym.ascendc.load(SOURCE)``; on this backend that builds the
  Ascend C source with the CANN compiler (``bisheng -xcce --npu-arch=<arch>``) into a shared
  library whose ``extern "C"`` host function launches the kernel on the current NPU stream
  (tensors are passed as device pointers, ``void* stream`` as torch_npu's current stream).

Latency: NPU events (``torch.npu.Event(enable_timing=True)``) around each call after warm-up, the
median over the timing trials; the reference is timed the same way in eager mode on the NPU.

This module imports nothing of CANN or torch_npu until it is used. Written to the toolchain's
documented flow; no NPU was available where it was written, so only its availability check and
registration are tested (``tests/backends/test_ascend_npu.py``).
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel_gym.backends.base import Backend, BackendUnavailable, SandboxPolicy

if TYPE_CHECKING:  # imported on use: registering the backend must not import torch
    import torch

__all__ = ["AscendNpuBackend", "NPU_SOC_ARCH", "build_op_project", "load_npu", "missing_requirements"]

#: SoC -> the ``--npu-arch`` of the CANN compiler for kernel-launch builds
NPU_SOC_ARCH = {
    "Ascend910B1": "dav-2201",
    "Ascend910B2": "dav-2201",
    "Ascend910B3": "dav-2201",
    "Ascend910B4": "dav-2201",
    "Ascend310P3": "dav-2002",
}
_DEVICE_FILES = ("/dev/davinci[0-9]*", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
_ENV = (
    "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
    "ASCEND_OPP_PATH",
    "ASCEND_AICPU_PATH",
    "ASCEND_CUSTOM_OPP_PATH",
    "ASCEND_RT_VISIBLE_DEVICES",
    "ASCEND_DEVICE_ID",
    "LD_LIBRARY_PATH",
)


def _toolkit_home() -> str | None:
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        value = os.environ.get(var, "").strip()
        if value and Path(value).is_dir():
            return value
    return None


def missing_requirements() -> list[str]:
    """What this machine lacks to run the backend, each with its fix (empty: nothing missing)."""
    missing: list[str] = []
    home = _toolkit_home()
    if home is None:
        missing.append(
            "the CANN toolkit: neither ASCEND_HOME_PATH nor ASCEND_TOOLKIT_HOME names a directory "
            "(install CANN, then `source <install dir>/ascend-toolkit/set_env.sh`, "
            "by default /usr/local/Ascend/ascend-toolkit/set_env.sh)"
        )
    elif shutil.which("msopgen") is None and not (Path(home) / "python" / "site-packages" / "bin" / "msopgen").exists():
        missing.append("msopgen (CANN's operator-project generator) is not on PATH: source the toolkit's set_env.sh")
    if importlib.util.find_spec("torch_npu") is None:
        missing.append("torch_npu (Ascend Extension for PyTorch, matching the torch version: pip install torch_npu)")
    if not any(glob.glob(p) for p in _DEVICE_FILES[:1]):
        missing.append("an Ascend NPU device: no /dev/davinci<N> device file (check npu-smi info)")
    return missing


def _soc_arch(soc: str) -> str:
    if soc not in NPU_SOC_ARCH:
        raise ValueError(f"unknown SoC {soc!r} for ascend_npu; choose one of {', '.join(NPU_SOC_ARCH)}")
    return NPU_SOC_ARCH[soc]


def _work_dir(kind: str, key: str) -> Path:
    from kernel_gym.native import cache_root

    base = cache_root() / "ascend_npu"
    try:
        base.mkdir(parents=True, exist_ok=True)
        if not os.access(base, os.W_OK):
            raise OSError
    except OSError:  # read-only cache root in the sandbox: the job's private /tmp
        base = Path(os.environ.get("TMPDIR", "/tmp")) / "ascend_npu"
    path = base / kind / key
    path.mkdir(parents=True, exist_ok=True)
    return path


def _digest(*parts: str) -> str:
    import hashlib

    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def _run(cmd: Sequence[str], cwd: Path, what: str) -> None:
    proc = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, timeout=1800, check=False)
    if proc.returncode != 0:
        from kernel_gym.native import CompileError

        log = (proc.stdout + proc.stderr)[-20000:]
        raise CompileError(f"{what} failed (exit {proc.returncode})", log)


# --------------------------------------------------------------------------- six-string answers
def build_op_project(six: dict[str, str], soc: str) -> Any:
    """Build, install and bind a MultiKernelBench answer's operator; returns ``custom_ops_lib``.

    Steps (CANN's documented custom-operator flow): msopgen generates the project from the JSON,
    the answer's host and kernel sources replace the generated ones, ``build.sh`` builds the custom
    operator package, its ``.run`` installs it into a vendor directory that
    ``ASCEND_CUSTOM_OPP_PATH`` then names, and the binding is built as a torch extension against
    torch_npu. Every step is cached by the answer's content.
    """
    import json

    from kernel_gym.ascendc.multikernelbench import SIX_STRING_KEYS

    missing = [k for k in SIX_STRING_KEYS[:5] if not six.get(k)]
    if missing:
        raise ValueError(f"six-string answer lacks {', '.join(missing)}")
    ops = json.loads(six["project_json_src"])
    op_name = ops[0]["op"]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in op_name).lstrip("_")
    key = _digest(soc, *(six[k] for k in SIX_STRING_KEYS[:5]))
    root = _work_dir("op_project", key)
    project, vendor = root / "project", root / "vendor"
    if not (root / "installed").exists():
        shutil.rmtree(project, ignore_errors=True)
        (root / f"{snake}.json").write_text(six["project_json_src"])
        _run(
            ["msopgen", "gen", "-i", f"{snake}.json", "-c", f"ai_core-{soc}", "-lan", "cpp", "-out", "project"],
            root,
            "msopgen gen",
        )
        (project / "op_host" / f"{snake}_tiling.h").write_text(six["host_tiling_src"])
        (project / "op_host" / f"{snake}.cpp").write_text(six["host_operator_src"])
        (project / "op_kernel" / f"{snake}.cpp").write_text(six["kernel_src"])
        _run(["bash", "build.sh"], project, "the operator project's build.sh")
        packages = sorted((project / "build_out").glob("custom_opp_*.run"))
        if not packages:
            from kernel_gym.native import CompileError

            raise CompileError("build.sh produced no custom_opp_*.run package", "")
        vendor.mkdir(exist_ok=True)
        _run(["bash", str(packages[0]), f"--install-path={vendor}"], project, "installing the custom operator package")
        (root / "installed").write_text(op_name)
    vendors = sorted(p for p in (vendor / "vendors").glob("*") if p.is_dir())
    paths = [str(p) for p in vendors] + [p for p in os.environ.get("ASCEND_CUSTOM_OPP_PATH", "").split(":") if p]
    os.environ["ASCEND_CUSTOM_OPP_PATH"] = ":".join(dict.fromkeys(paths))
    return _build_binding(six["python_bind_src"], root)


def _build_binding(bind_src: str, root: Path) -> Any:
    """The binding (``EXEC_NPU_CMD`` from torch_npu's op-plugin headers) as a torch extension."""
    import torch_npu  # noqa: F401 - the extension links against it
    from torch.utils.cpp_extension import load

    spec = importlib.util.find_spec("torch_npu")
    npu_root = Path(str(spec.origin if spec is not None else "")).parent
    src = root / "pytorch_npu_helper.cpp"
    src.write_text(bind_src)
    home = _toolkit_home() or ""
    return load(
        name="custom_ops_lib",
        sources=[str(src)],
        extra_include_paths=[str(npu_root / "include"), str(Path(home) / "include")],
        extra_ldflags=[f"-L{npu_root / 'lib'}", "-ltorch_npu"],
        build_directory=str(root),
        verbose=False,
    )


def install_six_string_npu(answer: str, soc: str = "Ascend910B2") -> Any:
    """Build a six-string answer for the NPU and make ``custom_ops_lib`` importable."""
    from kernel_gym.ascendc.multikernelbench import parse_six_strings

    lib = build_op_project(parse_six_strings(answer), soc)
    sys.modules["custom_ops_lib"] = lib
    return lib


# --------------------------------------------------------------------------- python answers
class NpuLibrary:
    """A kernel-launch library built by the CANN compiler; its ``extern "C"`` host functions take
    NPU tensors (device pointers), numbers, and ``None`` for ``void* stream`` (the current stream)."""

    def __init__(self, path: Path, functions: Sequence[Any]) -> None:
        import ctypes

        from kernel_gym.native.cabi import _scalar_type

        self._dll = ctypes.CDLL(str(path))
        self._fns: dict[str, tuple[Any, Any]] = {}
        for f in functions:
            raw = getattr(self._dll, f.name)
            raw.argtypes = [ctypes.c_void_p if p.is_pointer else _scalar_type(p) for p in f.params]
            raw.restype = None
            self._fns[f.name] = (f, raw)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        fns = self.__dict__.get("_fns", {})
        if name not in fns:
            raise AttributeError(f'no extern "C" function {name!r}; the library has {", ".join(fns) or "none"}')
        cfunc, raw = fns[name]

        def call(*args: Any) -> Any:
            import torch
            import torch_npu

            values = []
            for p, a in zip(cfunc.params, args, strict=True):
                if isinstance(a, torch.Tensor):
                    values.append(a.data_ptr())
                elif a is None and p.is_pointer:
                    values.append(torch_npu.npu.current_stream().npu_stream)
                else:
                    values.append(a)
            return raw(*values)

        return call


def load_npu(source: str, soc: str = "Ascend910B2", extra_flags: Sequence[str] = ()) -> NpuLibrary:
    """Build an Ascend C kernel-launch source (``kernel<<<blocks, nullptr, stream>>>``) with the CANN
    compiler into a shared library cached by content, and bind its host functions."""
    from kernel_gym.native import parse_extern_c

    home = _toolkit_home()
    if home is None:
        raise BackendUnavailable("; ".join(missing_requirements()))
    root = _work_dir("kernel", _digest(soc, source, *extra_flags))
    lib = root / "kernel.so"
    if not lib.exists():
        (root / "kernel.cpp").write_text(source)
        compiler = shutil.which("bisheng") or str(Path(home) / "compiler" / "ccec_compiler" / "bin" / "bisheng")
        cmd = [
            compiler,
            "-xcce",
            f"--npu-arch={_soc_arch(soc)}",
            "-O2",
            "-std=c++17",
            "-fPIC",
            "-shared",
            f"-I{home}/include",
            f"-I{home}/compiler/tikcpp/tikcfw",
            f"-I{home}/compiler/tikcpp/tikcfw/impl",
            f"-I{home}/compiler/tikcpp/tikcfw/interface",
            *extra_flags,
            "kernel.cpp",
            "-o",
            "kernel.so",
            f"-L{home}/lib64",
            "-lascendcl",
            "-lruntime",
        ]
        _run(cmd, root, "bisheng (Ascend C kernel build)")
    return NpuLibrary(lib, parse_extern_c(source))


# --------------------------------------------------------------------------- timing
def npu_event_timing(run: Callable[[], Any], warmup: int, trials: int) -> tuple[float, dict[str, Any]]:
    """Median seconds per call from NPU events (``torch.npu.Event(enable_timing=True)``)."""
    import statistics

    import torch
    import torch_npu  # noqa: F401 - registers torch.npu

    npu = torch.npu  # type: ignore[attr-defined]
    for _ in range(max(0, warmup)):
        run()
    npu.synchronize()
    times = []
    for _ in range(max(1, trials)):
        start, end = npu.Event(enable_timing=True), npu.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    npu.synchronize()
    median = statistics.median(times)
    return median, {"device_median_s": median, "trials": len(times), "timer": "npu events"}


class NpuSession:
    """The answer process's side of NPU timing: model and inputs on the NPU, NPU events around each
    call, the output and the inputs copied back for the judge."""

    def __init__(self) -> None:
        import torch
        import torch_npu  # noqa: F401 - registers torch.npu

        self.torch = torch
        self.npu = torch.npu  # type: ignore[attr-defined]
        self.device = torch.device("npu", self.npu.current_device())

    def place_model(self, model: Any) -> Any:
        return model.to(self.device) if isinstance(model, self.torch.nn.Module) else model

    def stage(self, host_inputs: list[Any]) -> list[Any]:
        return [x.to(self.device) if isinstance(x, self.torch.Tensor) else x for x in host_inputs]

    def run(self, call: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
        start, end = self.npu.Event(enable_timing=True), self.npu.Event(enable_timing=True)
        start.record()
        out = call()
        end.record()
        end.synchronize()
        self.npu.synchronize()
        return out, {"event_s": start.elapsed_time(end) / 1e3, "timer": "npu events"}

    def to_host(self, out: Any, staged: list[Any], host_inputs: list[Any]) -> Any:
        for dev, host in zip(staged, host_inputs, strict=False):
            if isinstance(dev, self.torch.Tensor) and isinstance(host, self.torch.Tensor):
                host.copy_(dev.cpu())
        return out.cpu() if isinstance(out, self.torch.Tensor) else out


class AscendNpuBackend(Backend):
    name = "ascend_npu"
    language = "ascendc"
    device = "npu"
    compile_kinds = ()  # the CANN toolchain builds in the answer's process, not the compile service
    compilers = ()
    answer_formats = ("python", "six_string")
    env_id = "KernelBench-AscendNPU-v0"
    answer_imports = {"kernel_gym.ascendc": None, "kernel_gym.backends.ascend_npu": frozenset({"load_npu"})}
    compile_source_rules = {}
    sandbox = SandboxPolicy(
        env_vars=_ENV,
        devices=_DEVICE_FILES,
        read_only_paths=tuple(
            p for p in ("/usr/local/Ascend", "/usr/local/dcmi", "/etc/ascend_install.info") if Path(p).exists()
        ),
        limit_address_space=False,  # the NPU runtime reserves device-sized address ranges
        runner_exec=True,  # msopgen, build.sh (cmake, make, bisheng) and the .run installer
        runner_programs=("msopgen", "bash", "sh", "cmake", "make", "bisheng", "ccec", "g++", "c++", "python3"),
        open_files=1024,
        unix_sockets=True,
    )
    no_launch_message = "ModelNew.forward launched no Ascend C kernel on the NPU"

    def __init__(self) -> None:
        self.soc = "Ascend910B2"

    def seed_items(self) -> list[dict[str, Any]]:
        from kernel_gym.backends.seeds.ascendc_vector import SEED_ITEMS

        return SEED_ITEMS

    def configure(self, options: dict[str, Any]) -> None:
        self.soc = str(options.get("soc", self.soc))

    def check_available(self) -> None:
        missing = missing_requirements()
        if missing:
            raise BackendUnavailable(
                "backend 'ascend_npu' runs Ascend C on a real Ascend NPU; this machine lacks: "
                + "; ".join(missing)
                + ". Without an NPU, backend='ascend_sim' runs the same answers on the simulator"
            )

    def answer_source(self, answer: str, answer_format: str = "python") -> str:
        self.check_answer_format(answer_format)
        if answer_format == "six_string":
            from kernel_gym.ascendc.multikernelbench import parse_six_strings

            try:
                model_src = parse_six_strings(answer)["model_src"]
            except ValueError as exc:
                return f"raise ValueError({str(exc)!r})\n"
            return (
                "from kernel_gym.backends.ascend_npu import install_six_string_npu as _install\n"
                f"_install({answer!r})\n"
                "# ---- model_src ----\n" + model_src + "\n"
            )
        return answer

    def setup_worker(self, options: dict[str, Any]) -> None:
        import torch
        import torch_npu  # noqa: F401 - registers the npu device

        import kernel_gym.ascendc as asc

        self.configure(options)
        _soc_arch(self.soc)
        torch.set_num_threads(int(options.get("threads", 1)))
        device = int(options.get("device", 0))
        torch.npu.set_device(device)  # type: ignore[attr-defined]
        soc = self.soc

        def load(source: str, *args: Any, **kwargs: Any) -> NpuLibrary:  # python answers: the NPU build
            return load_npu(source, soc)

        asc.load = load  # type: ignore[assignment]

    def device_session(self) -> Any:
        return NpuSession()

    def call_latency(self, reply: dict[str, Any], wall_s: float, cpu_s: float) -> float:
        report = reply.get("device_timing") or {}
        return float(report["event_s"]) if "event_s" in report else max(wall_s, cpu_s)

    def time_answer(self, run: Callable[[], Any], settings: Any) -> tuple[float, dict[str, Any]]:
        seconds, details = npu_event_timing(run, int(settings.warmup_runs), int(settings.timing_trials))
        return seconds, {**details, "soc": self.soc}

    def time_reference(
        self, run: Callable[[], Any], model: torch.nn.Module, inputs: list[Any], settings: Any
    ) -> tuple[float, dict[str, Any]]:
        seconds, details = npu_event_timing(run, int(settings.warmup_runs), int(settings.timing_trials))
        return seconds, {**details, "soc": self.soc, "estimate": "eager on the NPU"}

    def timing_details(self) -> dict[str, Any]:
        return {"soc": self.soc}

    def answer_format(self) -> str:
        from kernel_gym.backends.ascend_sim import ASCEND_ANSWER_FORMAT

        return ASCEND_ANSWER_FORMAT.replace(
            "A simulated Huawei Ascend AI Core", "A Huawei Ascend NPU (CANN toolchain)"
        ).replace("Latency is the simulated time of the kernel.", "Latency is measured with NPU events.")
