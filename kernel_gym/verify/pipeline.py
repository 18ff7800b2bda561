"""``verify(task, answer_source, backend, **settings) -> VerifyResult``: the whole pipeline.

1. static_stage: parse the answer and apply the static anti-hack rules (in this process;
   the answer is only parsed here, never executed). A torch call in ``ModelNew.forward`` is
   not refused here: the source does not say it runs (most are fallback branches); the judge
   guards every call of such an answer and refuses it when a compute op executes;
2. sandbox_stage: the judge (kernel_gym.verify.judge, its own process) draws inputs, runs the
   reference, and drives the answer's runner (kernel_gym.verify.runner, in an OS sandbox)
   through correctness trials, timing and a re-check;
3. the result is cached by a hash of task, answer, backend and settings.
"""

from __future__ import annotations

import time
from typing import Any

from kernel_gym.backends import backend_target, get_backend
from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify.cache import ResultCache, cache_key
from kernel_gym.verify.result import VerifyResult
from kernel_gym.verify.sandbox import SandboxLimits, run_in_sandbox
from kernel_gym.verify.settings import VerifySettings
from kernel_gym.verify.static_checks import RULES, check_answer_source

__all__ = ["verify", "static_stage", "sandbox_stage", "watched_torch_calls"]


def static_stage(task: TaskSpec, answer_source: str, backend: str) -> VerifyResult | None:
    """A failed result when the source does not parse or breaks a static rule, else None."""
    try:
        violations = check_answer_source(answer_source, backend)
    except SyntaxError as exc:
        return VerifyResult(task.id, backend, error_class="syntax_error", message=f"line {exc.lineno}: {exc.msg}")
    violations = [v for v in violations if not v.runtime_checked]  # the judge watches those
    if not violations:
        return None
    first = violations[0]
    return VerifyResult(
        task.id,
        backend,
        error_class="hacked",
        hacked=True,
        hack_rule=first.rule,
        message=f"{RULES.get(first.rule, first.rule)}: {first}",
        details={"violations": [str(v) for v in violations[:20]]},
    )


def watched_torch_calls(answer_source: str, backend: str) -> list[str]:
    """The torch calls in the answer's forward that the judge watches on every call."""
    try:
        return [str(v) for v in check_answer_source(answer_source, backend) if v.runtime_checked]
    except SyntaxError:
        return []


def sandbox_stage(task: TaskSpec, answer_source: str, backend: str, settings: VerifySettings) -> VerifyResult:
    """Compile, check and time the answer in the sandboxed worker."""
    job = {
        # torch calls in forward: the compute guard runs on every call, not a sample of them
        "watched_torch_calls": watched_torch_calls(answer_source, backend),
        "task": task.to_dict(),
        "answer": answer_source,
        "backend": backend,
        # the verifier's processes import the backend by this name, plug-ins included
        "backend_target": backend_target(backend),
        "settings": settings.to_dict(),
    }
    raw = run_in_sandbox(job, SandboxLimits(settings.timeout_s, settings.memory_limit_mb, settings.threads))
    raw.pop("stage", None)
    raw.setdefault("details", {})["worker_seconds"] = raw.pop("worker_seconds", None)
    return VerifyResult.from_dict(raw)


def verify(task: TaskSpec, answer_source: str, backend: str = "cpu", **settings: Any) -> VerifyResult:
    """Verify one answer (a Python source defining ModelNew) for ``task`` on ``backend``.

    Keyword settings are the fields of :class:`VerifySettings` (e.g. ``correctness_trials=5``,
    ``tolerance="kernelbench"``, ``timeout_s=60``, ``backend_options={"soc": "Ascend910B2"}``).
    Never raises for anything the answer does; raises ValueError/TypeError for bad settings
    and BackendUnavailable when the backend cannot run here.
    """
    started = time.perf_counter()
    if not isinstance(answer_source, str):
        raise TypeError(
            f"answer_source must be the answer's Python source as a str, got {type(answer_source).__name__}"
        )
    if not isinstance(task, TaskSpec):
        raise TypeError(f"task must be a TaskSpec (kernel_gym.tasks.get_task), got {type(task).__name__}")
    config = VerifySettings.from_kwargs(**settings)
    backend_obj = get_backend(backend)
    if config.torch_ops != "refuse" and not backend_obj.counts_own_code:
        raise ValueError(
            f"torch_ops={config.torch_ops!r} needs a backend that counts calls into the answer's own code "
            f"(cuda); {backend_obj.name!r} does not: leave torch_ops at 'refuse'"
        )
    backend_obj.configure(dict(config.backend_options))
    backend_obj.check_available()
    cache = ResultCache() if config.use_cache else None
    key = cache_key(task, answer_source, backend_obj.name, config)
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            hit.details["original_verify_seconds"] = hit.verify_seconds
            hit.verify_seconds = time.perf_counter() - started
            return hit
    result = static_stage(task, answer_source, backend_obj.name)
    if result is None:
        result = sandbox_stage(task, answer_source, backend_obj.name, config)
    result.verify_seconds = time.perf_counter() - started
    if cache is not None:
        cache.put(key, result)
    return result
