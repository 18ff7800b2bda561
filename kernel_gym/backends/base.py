"""The backend interface: what a target (cpu, ascend_sim, ascend_npu, cuda...) must provide.

A backend is used in two places:
- in the caller, for metadata (name, answer language, a description of the answer format
  for prompts) and an availability check with a message naming the fix;
- inside the sandboxed verification worker, to prepare the process and to measure the
  latency of the answer and of the reference.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import torch

__all__ = ["Backend", "BackendUnavailable"]


class BackendUnavailable(RuntimeError):
    """The backend cannot run on this machine; the message says what to install or set."""


class Backend(ABC):
    """A kernel target. Subclasses live one per module in kernel_gym/backends/."""

    name: ClassVar[str]
    #: language the answer's kernel is written in ("cpp", "ascendc", "cuda", "triton")
    language: ClassVar[str]
    #: device the models and tensors live on inside the worker
    device: ClassVar[str] = "cpu"
    #: latencies come from a model (reported per call by the runner), not the judge's clock
    simulated: ClassVar[bool] = False
    #: compile caches (kernel_gym.native.compile ``cache_subdir``) an answer may build into; the
    #: judge's compile service refuses the others
    compile_kinds: ClassVar[tuple[str, ...]] = ("cpp", "native")
    #: answer formats this backend accepts (``answer_format`` of the env); the first is the default
    answer_formats: ClassVar[tuple[str, ...]] = ("python",)

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

    def check_available(self) -> None:  # noqa: B027  (optional hook)
        """Raise BackendUnavailable (with the fix) when this machine cannot run the backend.
        Default: always available."""

    def setup_worker(self, options: dict[str, Any]) -> None:  # noqa: B027  (optional hook)
        """Prepare the sandboxed worker process before the answer is loaded. Default: nothing to prepare."""

    def setup_judge(self, options: dict[str, Any]) -> None:
        """Prepare the judge's process (reference, timing model): same options as the worker."""
        torch.set_num_threads(int(options.get("threads", 1)))

    def lock_options(self) -> None:  # noqa: B027  (optional hook)
        """In the sandbox, after setup: refuse answer code that changes the backend's settings.
        Default: nothing to lock."""

    def latency_floor_s(self, inputs: list[Any], expected: torch.Tensor) -> float:
        """(Simulated backends) the least latency any correct kernel can report for these tensors."""
        return 0.0

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
