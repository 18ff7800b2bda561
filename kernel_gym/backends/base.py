"""The backend interface: what a target (cpu, ascend_sim, ascend_npu, cuda...) must provide.

A backend is used in two places:
- in the caller, for metadata (name, answer language, a description of the answer format
  for prompts) and an availability check with a message naming the fix;
- inside the sandboxed verification worker, to prepare the process and to measure the
  latency of the answer and of the reference.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # torch is imported where a backend is used, not where it is registered
    import torch

__all__ = ["Backend", "BackendUnavailable", "OwnCodeCalls", "SandboxPolicy", "TimingRejected"]


@dataclass(frozen=True)
class SandboxPolicy:
    """What the verifier's sandbox must let a backend's answer process reach.

    Attributes:
        env_vars: names of environment variables passed from the caller's environment into the
            verification server, the judge and the answer's process (e.g. ``CUDA_VISIBLE_DEVICES``).
            Everything else is cleared.
        devices: device files bound into the sandbox (e.g. ``/dev/nvidia0``); glob patterns allowed.
        read_only_paths: more paths visible read-only (a toolchain's install directory).
        limit_address_space: cap the answer process's virtual memory at the memory limit
            (RLIMIT_AS). GPU runtimes reserve far more virtual memory than they use, so a GPU
            backend turns it off and relies on the device's own memory limit.
        import_roots: directories of backend packages outside kernel_gym, bound read-only with
            their parents on PYTHONPATH so the verifier's processes import the backend. Filled
            by the registry (:func:`kernel_gym.backends.sandbox_policy`); a backend leaves it empty.
        runner_exec: the answer's process may run programs (a JIT such as Triton's runs ptxas and
            the host compiler in-process); the namespace sandbox still bounds what they reach.
        open_files: the answer process's file-descriptor limit (a GPU runtime opens device files).
        unix_sockets: the answer process may create, bind and listen on AF_UNIX sockets (the
            CUDA driver does at initialisation); connecting and every other family stay denied.
        runner_programs: file names of programs the backend's runtime starts from the answer's
            process (Triton's JIT: ptxas, ldconfig); with ``runner_exec``. Others stay refused.
    """

    env_vars: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    read_only_paths: tuple[str, ...] = ()
    limit_address_space: bool = True
    import_roots: tuple[str, ...] = ()
    runner_exec: bool = False
    open_files: int = 64
    unix_sockets: bool = False
    runner_programs: tuple[str, ...] = ()


class BackendUnavailable(RuntimeError):
    """The backend cannot run on this machine; the message says what to install or set."""


class OwnCodeCalls:
    """Calls into the answer's own compiled code in this worker process (the functions of the
    modules the judge built for it). The runner reads the count around each forward, so that under
    ``VerifySettings.torch_ops="beside_kernel"`` a forward that only ran torch is told apart from
    one that ran the answer's kernels beside torch."""

    count: ClassVar[int] = 0


class TimingRejected(RuntimeError):
    """A device-timed call whose timing report breaks a rule (work left running after the call,
    a latency below the physical floor); the judge turns it into a ``hacked`` verdict."""

    def __init__(self, hack_rule: str, message: str) -> None:
        super().__init__(message)
        self.hack_rule = hack_rule


class Backend(ABC):
    """A kernel target. Subclasses live one per module in kernel_gym/backends/."""

    name: ClassVar[str]
    #: language the answer's kernel is written in ("cpp", "ascendc", "cuda", "triton")
    language: ClassVar[str]
    #: device the models and tensors live on inside the worker
    device: ClassVar[str] = "cpu"
    #: latencies come from a model (reported per call by the runner), not the judge's clock
    simulated: ClassVar[bool] = False
    #: the judge's clock times a host computation (no device report): the reference gets a runner
    #: of its own, timed in alternating paired rounds with the answer's until the speedup's interval
    #: is tight, and run-queue waits are taken out of each call (kernel_gym.verify.timing)
    host_clock: ClassVar[bool] = False
    #: compile caches (kernel_gym.native.compile ``cache_subdir``) an answer may build into; the
    #: judge's compile service refuses the others
    compile_kinds: ClassVar[tuple[str, ...]] = ("cpp", "native")
    #: answer formats this backend accepts (``answer_format`` of the env); the first is the default
    answer_formats: ClassVar[tuple[str, ...]] = ("python",)
    #: Gymnasium id registered for this backend (None: reachable only with ``backend=``)
    env_id: ClassVar[str | None] = None
    #: kernel_gym modules an answer may import, each with the names it may use from it (None: any)
    answer_imports: ClassVar[Mapping[str, frozenset[str] | None]] = {}
    #: compile cache -> the static rule set its sources are checked with before g++ runs
    #: ("kernel": no OS access; "simulator": that plus no reach into the simulator's accounting)
    compile_source_rules: ClassVar[Mapping[str, str]] = {"cpp": "kernel", "native": "kernel"}
    #: what the verifier's sandbox must allow
    sandbox: ClassVar[SandboxPolicy] = SandboxPolicy()
    #: calls into the answer's compiled code are counted (OwnCodeCalls): torch_ops="beside_kernel" works
    counts_own_code: ClassVar[bool] = False
    #: shown when a simulated backend's answer launched no kernel
    no_launch_message: ClassVar[str] = "ModelNew.forward launched no kernel"
    #: compilers the judge's compile service may run for this backend's caches
    compilers: ClassVar[tuple[str, ...]] = ("g++", "gcc")
    #: (simulated backends) can run an answer at a task's published shapes: lazy inputs, a sample
    #: of each launch's blocks (``run_sampled``; verify setting ``published_shapes``)
    published_shapes: ClassVar[bool] = False

    def check_answer_format(self, answer_format: str) -> None:
        """Raise ValueError naming the accepted formats when ``answer_format`` is not one."""
        if answer_format not in self.answer_formats:
            raise ValueError(
                f"backend {self.name!r} accepts answer_format {' or '.join(self.answer_formats)}; got {answer_format!r}"
            )

    def answer_source(self, answer: str, answer_format: str = "python") -> str:
        """The Python module the verifier loads for an answer written in ``answer_format``."""
        self.check_answer_format(answer_format)
        return answer

    def seed_items(self) -> list[dict[str, Any]]:
        """Seed knowledge (M0) for this backend's memory: dicts with ``slug``, ``kind``, ``title``,
        ``text``, ``category`` and optional ``tags``. Default: none."""
        return []

    def compile_flags(self, cache_subdir: str) -> tuple[str, ...]:
        """Flags the judge's compile service adds to every answer build into ``cache_subdir``
        (whatever the answer asked for). Default: none."""
        return ()

    def trusted_compile_sources(self, cache_subdir: str) -> frozenset[str]:
        """SHA-256 digests of the package's own sources that answers' loaders send to the compile
        service verbatim (a runtime library); they skip the answer rules. Default: none."""
        return frozenset()

    def launch_recorder(self) -> AbstractContextManager[Any] | None:
        """(Simulated backends) a context manager recording the launches of one call; its value has
        ``total_latency_s`` and ``launches``. Default: None (latency is measured, not recorded)."""
        return None

    def lazy_inputs(self, specs: list[dict[str, Any]]) -> list[Any]:
        """(published_shapes backends) the inputs ``specs`` describe, allocated lazily."""
        raise NotImplementedError(f"backend {self.name!r} cannot run published shapes")

    def lazy_parameters(self, seed: int) -> Any:
        """(published_shapes backends) a context manager inside which a model is built with its
        large parameters lazy, drawn from ``seed``: the same construction gives the same values in
        any process. Its ``draws`` attribute lists the lazy regions made, in order."""
        raise NotImplementedError(f"backend {self.name!r} cannot run published shapes")

    def run_sampled(
        self, forward: Callable[[], Any], blocks: int, loop_sampling: bool = True
    ) -> tuple[Any, dict[str, Any], list[list[int]]]:
        """(published_shapes backends) ``forward()`` under sampled simulation of ``blocks`` block
        groups (and of loop iterations unless ``loop_sampling`` is False): its output, the launches'
        summary (``latency_s``, ``latency_lo_s``, ``latency_hi_s``, ``launches``, ``blocks_run``,
        ``blocks_skipped``) and the spans of the output it stored, as [core, first element, end
        element] rows."""
        raise NotImplementedError(f"backend {self.name!r} cannot run published shapes")

    def estimate_reference_meta(self, model: Any, inputs: list[Any]) -> float:
        """(published_shapes backends) the reference's latency estimate from meta tensors."""
        raise NotImplementedError(f"backend {self.name!r} cannot run published shapes")

    def configure(self, options: dict[str, Any]) -> None:  # noqa: B027  (optional hook)
        """(Caller) the verification's ``backend_options``, before :meth:`check_available` (an
        option may change what the machine needs, e.g. an interpreter instead of a GPU)."""

    def check_available(self) -> None:  # noqa: B027  (optional hook)
        """Raise BackendUnavailable (with the fix) when this machine cannot run the backend.
        Default: always available."""

    def setup_worker(self, options: dict[str, Any]) -> None:  # noqa: B027  (optional hook)
        """Prepare the sandboxed worker process before the answer is loaded. Default: nothing to prepare."""

    def setup_judge(self, options: dict[str, Any]) -> None:
        """Prepare the judge's process (reference, timing model): same options as the worker."""
        import torch

        torch.set_num_threads(int(options.get("threads", 1)))

    def lock_options(self) -> None:  # noqa: B027  (optional hook)
        """In the sandbox, after setup: refuse answer code that changes the backend's settings.
        Default: nothing to lock."""

    def latency_floor_s(self, inputs: list[Any], expected: torch.Tensor) -> float:
        """(Simulated backends) the least latency any correct kernel can report for these tensors."""
        return 0.0

    def device_session(self) -> Any:
        """(Device-timed backends, in the answer's process) an object that moves models and inputs
        to the device and times each call there: ``place_model(model)``, ``stage(inputs)``,
        ``run(call) -> (output, report)``, ``to_host(output, staged, inputs)``. Default: None
        (the model runs on the host and the judge's clock times it)."""
        return None

    def untimed_reason(self, options: dict[str, Any]) -> str | None:
        """Why these backend options allow functional checks only (an interpreter), or None."""
        return None

    def call_latency(self, reply: dict[str, Any], wall_s: float, cpu_s: float) -> float:
        """(In the judge) the latency of one timed call from the judge's wall clock, the runner's
        CPU time per thread and the runner's reply. Device-timed backends read the device's
        timing report from the reply and may raise TimingRejected."""
        return max(wall_s, cpu_s)

    def summarize_timing(self, reports: list[dict[str, Any]]) -> dict[str, Any]:
        """(In the judge) extra details from the timed calls' device reports; may raise
        TimingRejected for a rule that only the whole series shows. Default: none."""
        return {}

    def timing_details(self) -> dict[str, Any]:
        """Extra details of the answer's timing (e.g. the simulated SoC)."""
        return {}

    @abstractmethod
    def time_answer(self, run: Callable[[], Any], settings: Any) -> tuple[float, dict[str, Any]]:
        """Latency of one answer forward in seconds, and details (e.g. per-pipe busy time)."""

    @abstractmethod
    def time_reference(
        self, run: Callable[[], Any], model: torch.nn.Module, inputs: list[Any], settings: Any
    ) -> tuple[float, dict[str, Any]]:
        """Latency of one reference forward in seconds, and details."""

    @abstractmethod
    def answer_format(self) -> str:
        """Prompt-ready description of the answer format (how ModelNew builds its kernel)."""
