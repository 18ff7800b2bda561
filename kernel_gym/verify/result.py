"""VerifyResult and the error-class taxonomy.

Every verification ends in exactly one error class (``"ok"`` when the kernel is feasible).
The classes, in the order the pipeline can produce them:

| class | stage | meaning |
|---|---|---|
| hacked | static / runtime | the answer broke an anti-hack rule (``hack_rule`` names it) |
| syntax_error | load | the answer's Python does not parse |
| no_model_new | load | the answer defines no ``ModelNew`` class |
| import_error | load | executing the answer module raised |
| compile_error | compile | the kernel's compiler rejected it (``compile_log`` has the excerpt) |
| unsupported_dtype | compile | (Ascend) an op used with a dtype the SoC does not support |
| init_error | build | ``ModelNew(*init_inputs)`` raised |
| runtime_error | run | the forward raised a Python/C++ error |
| <backend fault> | run | a simulated-hardware fault, e.g. ub_overflow, misaligned_copy, gm_out_of_bounds |
| crash | run | the worker died by a signal (segfault, abort, ...) |
| timeout | run | wall-clock limit reached (hang, infinite loop); the worker was killed |
| memory_limit | run | the memory limit was hit |
| shape_mismatch | check | output shape differs from the reference's |
| dtype_mismatch | check | output dtype differs from the reference's |
| numerical_mismatch | check | values differ beyond tolerance in some trial |
| nondeterministic | check | the output changed when re-checked after timing |
| internal_error | any | the verifier itself failed (a bug to report; never cached) |
| ok | - | compiled, correct, not hacked: feasible |
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["ERROR_CLASSES", "VerifyResult"]

ERROR_CLASSES: tuple[str, ...] = (
    "ok",
    "hacked",
    "syntax_error",
    "no_model_new",
    "import_error",
    "compile_error",
    "unsupported_dtype",
    "init_error",
    "runtime_error",
    "crash",
    "timeout",
    "memory_limit",
    "shape_mismatch",
    "dtype_mismatch",
    "numerical_mismatch",
    "nondeterministic",
    "internal_error",
)


@dataclass
class VerifyResult:
    """The verifier's structured feedback on one answer.

    Latencies are in seconds: wall-clock medians on the cpu backend, simulated on
    ascend_sim. ``speedup`` = reference_latency_s / latency_s (> 1 means faster than the
    reference). Errors are absolute (``max_abs_error``) and relative to |reference|
    (``max_rel_error``), over all correctness trials.

    Uncertainty (timed results; None otherwise): ``speedup_ci`` is the speedup's 95 % interval
    [low, high] (a bootstrap over the timed calls, paired rounds on the cpu backend; zero width on
    a deterministic simulator), ``latency_iqr_s`` / ``reference_latency_iqr_s`` the interquartile
    range of each side's timed calls, ``timing_converged`` whether the interval reached the
    target width before the time budget ran out (cpu; True on a simulator; None where the trial
    count is fixed), ``timing_clock`` the clock the latencies come from.
    """

    task_id: str
    backend: str
    error_class: str = "internal_error"
    hacked: bool = False
    hack_rule: str | None = None
    compiled: bool = False
    correct: bool = False
    message: str = ""
    compile_log: str = ""
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    first_mismatch_index: list[int] | None = None
    mismatch_fraction: float | None = None
    trials_passed: int = 0
    trials_run: int = 0
    latency_s: float | None = None
    reference_latency_s: float | None = None
    speedup: float | None = None
    speedup_ci: list[float] | None = None
    latency_iqr_s: float | None = None
    reference_latency_iqr_s: float | None = None
    timing_converged: bool | None = None
    timing_clock: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    verify_seconds: float = 0.0
    cached: bool = False

    @property
    def feasible(self) -> bool:
        """No hack, compiled and correct: the kernel counts."""
        return (not self.hacked) and self.compiled and self.correct

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["feasible"] = self.feasible
        for k, v in d.items():  # JSON has no inf/nan
            if isinstance(v, float) and not math.isfinite(v):
                d[k] = str(v)
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> VerifyResult:
        names = {f.name for f in fields(cls)}
        kwargs = {}
        for k, v in d.items():
            if k not in names:
                continue
            if isinstance(v, str) and v in ("inf", "-inf", "nan") and k not in ("message", "compile_log"):
                v = float(v)
            kwargs[k] = v
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str) -> VerifyResult:
        return cls.from_dict(json.loads(text))

    def summary(self) -> str:
        """One line for logs and prompts."""
        if self.feasible:
            sp = f"{self.speedup:.2f}x" if self.speedup is not None else "n/a"
            if self.speedup_ci is not None and self.speedup_ci[0] != self.speedup_ci[1]:
                sp += f" (95% {self.speedup_ci[0]:.2f}-{self.speedup_ci[1]:.2f}"
                sp += ", not converged)" if self.timing_converged is False else ")"
            lat = f"{self.latency_s * 1e6:.1f} us" if self.latency_s is not None else "n/a"
            return f"[{self.task_id}] OK latency {lat}, speedup {sp}"
        rule = f" ({self.hack_rule})" if self.hack_rule else ""
        return f"[{self.task_id}] {self.error_class}{rule}: {self.message[:300]}"
