"""VerifySettings: every knob of the verification protocol, in one place."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["TOLERANCE_PRESETS", "VerifySettings"]

# (atol, rtol) per output dtype. "evokernel" is the protocol of the EvoKernel paper
# (1e-2 for all); "kernelbench" is KernelBench's current fp32 tolerance.
TOLERANCE_PRESETS: dict[str, dict[str, tuple[float, float]]] = {
    "evokernel": {"float32": (1e-2, 1e-2), "float16": (1e-2, 1e-2), "bfloat16": (2e-2, 2e-2), "float64": (1e-2, 1e-2)},
    "kernelbench": {
        "float32": (1e-4, 1e-4),
        "float16": (1e-2, 1e-2),
        "bfloat16": (2e-2, 2e-2),
        "float64": (1e-6, 1e-6),
    },
}


#: what a forward that runs torch compute ops gets (VerifySettings.torch_ops)
TORCH_OPS_POLICIES = ("refuse", "beside_kernel")
#: the mode the task's modules run in (VerifySettings.module_mode)
MODULE_MODES = ("eval", "train")


def set_module_mode(model: Any, mode: str) -> Any:
    """``model`` in ``mode`` ("eval" or "train"); anything but a torch module as it is."""
    train = getattr(model, "train", None)
    return train(mode == "train") if callable(train) and hasattr(model, "training") else model


@dataclass(frozen=True)
class VerifySettings:
    """Settings of one verification; part of the result-cache key.

    Attributes:
        correctness_trials: trials with fresh input values (>= 5 per the protocol).
        input_scales: positive factors applied to floating inputs, cycled over trials, so
            outputs that are constant on one input distribution fail on another.
        tolerance: preset name of TOLERANCE_PRESETS, or set ``atol``/``rtol`` for all dtypes.
        warmup_runs / timing_trials: timing protocol (median of ``timing_trials``; on a host-timed
            backend, cpu, the least number of paired rounds, each timing the reference and the answer).
        timing_target: (host-timed backends) paired rounds are added until the speedup's 95 %
            interval lies within speedup * (1 -+ timing_target), or 10 * timing_trials rounds were run ...
        timing_budget_s: ... or until the timing stage has taken this many seconds; the result then
            says ``timing_converged=False``.
        flush_cache_mb: bytes written between timing trials to evict CPU caches (0: off).
        timeout_s: wall-clock limit of the whole sandboxed run, compile included.
        memory_limit_mb: address-space limit of the sandboxed worker.
        measure_time: time answer and reference (off: correctness only).
        seed: seeds weights (same for both models) and inputs when ``fixed_inputs`` is on.
        fixed_inputs: draw weights and inputs from ``seed`` instead of OS entropy, so verdicts and
            failure messages (which quote values) repeat from run to run: for reproducible offline
            runs (the demo); off, an answer cannot predict its inputs.
        threads: torch / OpenMP threads inside the worker (the reference gets the same).
        backend_options: backend-specific settings (e.g. soc, align_mode for ascend_sim).
        use_cache: read and write the result cache.
        published_shapes: for a simulated backend and a task that carries its published shapes
            (``TaskSpec.published_source``, e.g. a shrunk KernelBench file), also run the answer
            at those shapes under sampled simulation (lazy inputs, ``sampled_blocks`` block groups)
            and report its latency, the reference's estimate and the speedup there
            (``details["published"]`` of the result). The lazy tensors take address space: memory_limit_mb must
            cover the task's published tensor bytes on top of the usual limit.
        sampled_blocks: block groups simulated per launch at published shapes (>= 2).
        torch_ops: what a forward that calls torch operators gets. ``"refuse"`` (the default, the
            reward's rule): any compute op that runs is a ``hacked`` verdict (``torch_compute``).
            ``"beside_kernel"`` (KernelBench's rule, for answers that write part of the model and
            leave the rest to torch): torch ops may run beside the answer's own compiled code, but
            every guarded call must call that code and run the same torch ops as the first one
            (a forward that switches to torch once it is timed is still refused); the ops that ran
            are listed in ``details["torch_ops"]``. Only backends that count calls into the
            answer's code (``Backend.counts_own_code``: cuda) take it.
        module_mode: the mode the reference and the answer's modules run in. ``"eval"`` (the
            default): ``Module.eval()``, BatchNorm with its running statistics. ``"train"``
            (KernelBench's rule: its evaluation never calls ``eval()``): the modules as built, in
            training mode, BatchNorm with the batch's statistics; answers written for KernelBench
            that compute a training-mode BatchNorm fall back to torch in eval mode.
    """

    correctness_trials: int = 5
    input_scales: tuple[float, ...] = (1.0, 1.0, 2.0, 0.5, 1.5)
    tolerance: str = "evokernel"
    atol: float | None = None
    rtol: float | None = None
    warmup_runs: int = 3
    timing_trials: int = 20
    timing_target: float = 0.05
    timing_budget_s: float = 5.0
    flush_cache_mb: int = 8
    timeout_s: float = 180.0
    memory_limit_mb: int = 4096
    measure_time: bool = True
    seed: int = 42
    fixed_inputs: bool = False
    threads: int = 1
    backend_options: dict[str, Any] = field(default_factory=dict)
    use_cache: bool = True
    published_shapes: bool = False
    sampled_blocks: int = 5
    torch_ops: str = "refuse"
    module_mode: str = "eval"

    def __post_init__(self) -> None:
        if not isinstance(self.correctness_trials, int) or self.correctness_trials < 1:
            raise ValueError("correctness_trials must be >= 1 (the protocol uses 5)")
        if self.tolerance not in TOLERANCE_PRESETS:
            raise ValueError(
                f"unknown tolerance preset {self.tolerance!r}; choose one of "
                f"{', '.join(TOLERANCE_PRESETS)} or set atol/rtol"
            )
        if not self.input_scales or any(s <= 0 for s in self.input_scales):
            raise ValueError("input_scales must be a non-empty tuple of positive factors")
        if (
            not isinstance(self.timeout_s, (int, float))
            or isinstance(self.timeout_s, bool)
            or not math.isfinite(self.timeout_s)
            or not 0 < self.timeout_s <= 3600
        ):
            raise ValueError(f"timeout_s must be a finite number of seconds in (0, 3600], got {self.timeout_s!r}")
        if not isinstance(self.memory_limit_mb, int) or self.memory_limit_mb < 256:
            raise ValueError(f"memory_limit_mb must be an integer >= 256, got {self.memory_limit_mb!r}")
        if not isinstance(self.threads, int) or not 1 <= self.threads <= 256:
            raise ValueError(f"threads must be an integer in [1, 256], got {self.threads!r}")
        for name in ("correctness_trials", "warmup_runs", "timing_trials", "flush_cache_mb"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        for name in ("atol", "rtol"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        for name, top in (("timing_target", 1.0), ("timing_budget_s", 600.0)):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value <= top:
                raise ValueError(f"{name} must be a number in (0, {top:g}], got {value!r}")
        if not isinstance(self.sampled_blocks, int) or isinstance(self.sampled_blocks, bool) or self.sampled_blocks < 2:
            raise ValueError(
                f"sampled_blocks must be an integer >= 2 (the first and the last block), got {self.sampled_blocks!r}"
            )
        if self.torch_ops not in TORCH_OPS_POLICIES:
            raise ValueError(
                f"torch_ops must be one of {', '.join(TORCH_OPS_POLICIES)}, got {self.torch_ops!r} "
                "('beside_kernel' accepts KernelBench answers that leave part of the model to torch)"
            )
        if self.module_mode not in MODULE_MODES:
            raise ValueError(
                f"module_mode must be one of {', '.join(MODULE_MODES)}, got {self.module_mode!r} "
                "('train' is KernelBench's rule: modules as built, BatchNorm on the batch's statistics)"
            )
        if not isinstance(self.fixed_inputs, bool):
            raise ValueError(f"fixed_inputs must be true or false, got {self.fixed_inputs!r}")
        if not isinstance(self.backend_options, dict):
            raise ValueError("backend_options must be a dict")

    def tolerances(self, dtype: str) -> tuple[float, float]:
        atol, rtol = TOLERANCE_PRESETS[self.tolerance].get(dtype, (1e-2, 1e-2))
        return (self.atol if self.atol is not None else atol, self.rtol if self.rtol is not None else rtol)

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> VerifySettings:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise TypeError(f"unknown verify setting(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
        if "input_scales" in kwargs:
            kwargs["input_scales"] = tuple(kwargs["input_scales"])
        return cls(**kwargs)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cache_key_part(self) -> str:
        d = self.to_dict()
        d.pop("use_cache")
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()
