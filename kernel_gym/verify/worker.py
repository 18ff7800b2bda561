"""The verification worker: runs inside the sandboxed subprocess, one stage per function.

    python -m kernel_gym.verify.worker JOB.json RESULT.json

Stages: prepare_reference -> load_answer -> build_answer -> check_correctness ->
measure_latency -> recheck_after_timing. ``prepare_reference`` runs before any answer code:
every reference output and the reference's latency are fixed before the answer could hook,
override or slow down torch. Each stage returns normally or raises ``StageFailure`` carrying
the error class; ``run_job`` turns that into the result dict. A progress file written after
each stage lets the parent report how far a worker got when it dies by a signal.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import threading
import time
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
import torch.utils.deterministic

from kernel_gym.backends import Backend, get_backend
from kernel_gym.native import CompileError
from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify.correctness import compare_outputs, draw_inputs, poison_
from kernel_gym.verify.runtime_guards import AuditGuard, ComputeGuard, PatchSnapshot, clone_inputs, inputs_equal
from kernel_gym.verify.settings import VerifySettings
from kernel_gym.verify.static_checks import RULES, check_compiler_flags, check_kernel_source

ANSWER_FILENAME = "<answer>"
# Memory for the distinct input sets (and their reference outputs) of the timed calls.
TIMING_SET_BYTES = 256 << 20


class StageFailure(Exception):
    def __init__(self, error_class: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.extra = extra


def _describe(exc: BaseException) -> str:
    """The exception and the answer's own frames (not the harness's)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == ANSWER_FILENAME]
    where = f" (answer line {frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"[:2000]


def classify(exc: BaseException, default: str) -> StageFailure:
    """Map an exception raised by answer code to an error class."""
    if isinstance(exc, StageFailure):
        return exc
    cls = getattr(exc, "error_class", None)
    log = getattr(exc, "log", "") or ""
    if isinstance(cls, str):
        return StageFailure(cls, _describe(exc), compiled=cls not in ("compile_error", "unsupported_dtype"),
                            compile_log=log[-4000:])
    if isinstance(exc, CompileError):
        return StageFailure("compile_error", _describe(exc), compiled=False, compile_log=log[-4000:])
    text = str(exc)
    if isinstance(exc, MemoryError) or "can't allocate memory" in text or "bad_alloc" in text:
        return StageFailure("memory_limit", _describe(exc))
    return StageFailure(default, _describe(exc))


# ---------------------------------------------------------------------------- stages
@dataclass
class ReferencePlan:
    """What the reference contributes, computed before the answer's code runs.

    Trial inputs are regenerated from their seeds when used (only the expected outputs are
    kept); the timing sets are kept whole, one per timed call while memory allows.
    """

    init_inputs: list[Any]
    trials: list[tuple[float, int, torch.Tensor]]  # (input scale, input seed, expected output)
    recheck: tuple[int, torch.Tensor]  # (input seed, expected output)
    timing_sets: list[tuple[list[Any], torch.Tensor]] = field(default_factory=list)  # (inputs, expected)
    reference_timing: dict[str, Any] = field(default_factory=dict)


def _nbytes(values: list[Any]) -> int:
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def _timing_sets(task_module: Any, reference: torch.nn.Module, settings: VerifySettings
                 ) -> list[tuple[list[Any], torch.Tensor]]:
    """Distinct inputs for every timed call (warm-up included) within TIMING_SET_BYTES, so a
    result cached by pointer or by input values never applies while timed."""
    calls = settings.warmup_runs + max(1, settings.timing_trials)
    sets: list[tuple[list[Any], torch.Tensor]] = []
    budget = TIMING_SET_BYTES
    for j in range(calls):
        inputs = draw_inputs(task_module, settings.seed + 2_000_003 + j, 1.0)
        sets.append((inputs, _reference_output(reference, inputs)))
        size = _nbytes(inputs) + _nbytes([sets[-1][1]])
        budget -= size
        if budget < size:
            break
    return sets


class _RotatingCall:
    """A timed callable: one forward per call on the input sets in turn. The timing loop
    hands each result to ``after_call`` outside the timed region, where it is compared with
    that set's reference output; ``on_mismatch`` (the answer's side) turns a mismatch into
    a failure. The reference's outputs are compared too, so both sides leave the caches
    alike (an 8 MB flush does not empty a large L3, the comparison's temporaries do)."""

    def __init__(self, model: Any, sets: list[tuple[list[Any], torch.Tensor]], settings: VerifySettings,
                 on_mismatch: Callable[[str], None] | None = None) -> None:
        self.model, self.sets, self.settings, self.on_mismatch = model, sets, settings, on_mismatch
        self.calls = self.checked = self.index = 0
        self.unique = len(sets) >= settings.warmup_runs + max(1, settings.timing_trials)

    def __call__(self) -> Any:
        # torch.empty unfilled only while every result so far reached after_call and no
        # input set repeats (see _timing_allocations); a backend that never hands results
        # back (simulated timing) keeps the fill
        torch.utils.deterministic.fill_uninitialized_memory = not (self.unique and self.checked == self.calls > 0)
        self.index = self.calls % len(self.sets)
        self.calls += 1
        return self.model(*self.sets[self.index][0])

    def after_call(self, out: Any) -> None:
        expected = self.sets[self.index][1]
        atol, rtol = self.settings.tolerances(str(expected.dtype).removeprefix("torch."))
        cmp = compare_outputs(out, expected, atol, rtol)
        self.checked += 1
        if not cmp.ok and self.on_mismatch is not None:
            self.on_mismatch(f"timed call {self.calls}: {cmp.message}")


@contextlib.contextmanager
def _timing_allocations() -> Iterator[None]:
    """The timing context: no autograd; the NaN fill of torch.empty restored afterwards.

    While timed, a _RotatingCall turns the fill off when every timed call has its own input
    set and its output is checked: the fill is a pass over each output the answer allocates
    that the reference's internal allocations do not pay, and stale memory could hold a
    correct result only for a repeated input set, which never comes.
    """
    det = torch.utils.deterministic
    before = det.fill_uninitialized_memory
    try:
        with torch.no_grad():
            yield
    finally:
        det.fill_uninitialized_memory = before


def prepare_reference(backend: Backend, task_module: Any, settings: VerifySettings) -> ReferencePlan:
    """Reference outputs for every trial, the recheck and the timing sets, and the
    reference's latency: all before the answer is loaded."""
    init_inputs = task_module.get_init_inputs()
    torch.manual_seed(settings.seed)
    reference = task_module.Model(*init_inputs).eval()
    trials = []
    for trial in range(settings.correctness_trials):
        scale = settings.input_scales[trial % len(settings.input_scales)]
        seed = settings.seed + 1000 * (trial + 1)
        trials.append((scale, seed, _reference_output(reference, draw_inputs(task_module, seed, scale))))
    recheck_seed = settings.seed + 999_983
    plan = ReferencePlan(init_inputs, trials,
                         (recheck_seed, _reference_output(reference, draw_inputs(task_module, recheck_seed, 1.0))))
    if settings.measure_time:
        plan.timing_sets = _timing_sets(task_module, reference, settings)
        call = _RotatingCall(reference, plan.timing_sets, settings)
        with _timing_allocations():
            latency, details = backend.time_reference(call, reference, plan.timing_sets[0][0], settings)
        plan.reference_timing = {"reference_latency_s": latency, "reference_timing": details}
    return plan


def guard_kernel_loader() -> None:
    """Apply the kernel-source and compiler-flag rules to what load_cpp actually gets: a
    source assembled at run time (joins, replaces, f-strings) never met the static check."""
    import kernel_gym.backends.cpu as cpu

    original = cpu.load_cpp
    if getattr(original, "_kernel_gym_guarded", False):
        return

    @functools.wraps(original)
    def load_cpp(source: str, *, openmp: bool = True, extra_flags: Any = ()) -> Any:
        violations = check_kernel_source(source) + check_compiler_flags(tuple(extra_flags))
        if violations:
            first = violations[0]
            raise StageFailure("hacked", f"{RULES.get(first.rule, first.rule)}: {first} (checked at load_cpp)",
                               hack_rule=first.rule)
        return original(source, openmp=openmp, extra_flags=extra_flags)

    load_cpp._kernel_gym_guarded = True  # type: ignore[attr-defined]
    cpu.load_cpp = load_cpp


def load_answer(source: str) -> type:
    """Execute the answer module; return its ModelNew class."""
    try:
        code = compile(source, ANSWER_FILENAME, "exec")
    except SyntaxError as exc:
        raise StageFailure("syntax_error", f"line {exc.lineno}: {exc.msg}") from None
    module = types.ModuleType("answer")
    module.__file__ = ANSWER_FILENAME
    try:
        exec(code, module.__dict__)  # noqa: S102 - sandboxed worker
    except BaseException as exc:  # noqa: BLE001
        raise classify(exc, "import_error") from None
    model_new = module.__dict__.get("ModelNew")
    if not isinstance(model_new, type):
        raise StageFailure("no_model_new", "the answer defines no class ModelNew")
    return model_new


def build_answer(plan: ReferencePlan, model_new_cls: type, seed: int) -> Any:
    """The answer model, built right after seeding with the seed the reference was built with."""
    torch.manual_seed(seed)
    try:
        answer = model_new_cls(*plan.init_inputs)
    except BaseException as exc:  # noqa: BLE001
        raise classify(exc, "init_error") from None
    return answer.eval() if isinstance(answer, torch.nn.Module) else answer


def _run_answer(model: Any, inputs: list[Any], patches: PatchSnapshot) -> Any:
    """One guarded answer forward: torch-compute, thread, mutation and patch checks."""
    before = clone_inputs(inputs)
    threads_before = threading.active_count()
    guard = ComputeGuard()
    try:
        with torch.no_grad(), guard:
            out = model(*inputs)
    except BaseException as exc:  # noqa: BLE001
        raise classify(exc, "runtime_error") from None
    patched = patches.changed()
    if patched:
        raise StageFailure("hacked", f"patched: {', '.join(patched[:8])}", hack_rule="monkey_patch")
    if guard.violations:
        ops = ", ".join(dict.fromkeys(guard.violations))
        raise StageFailure("hacked", f"ModelNew.forward ran torch ops {ops}; compute in the kernel",
                           hack_rule="torch_compute")
    if threading.active_count() > threads_before:
        raise StageFailure("hacked", "the forward left threads running", hack_rule="threads_or_streams")
    if isinstance(out, torch.Tensor) and type(out) is not torch.Tensor:
        raise StageFailure("hacked", f"forward returned a {type(out).__name__}, a tensor subclass",
                           hack_rule="tensor_subclass")
    if not inputs_equal(inputs, before):
        raise StageFailure("hacked", "the forward modified its inputs", hack_rule="input_mutation")
    return out


def _reference_output(reference: torch.nn.Module, inputs: list[Any]) -> torch.Tensor:
    with torch.no_grad():
        out = reference(*clone_inputs(inputs))
    expected = out.detach().clone()
    poison_(out)  # freed reference memory must not pass for the answer's output
    del out
    return expected


def _refill(inputs: list[Any] | None, fresh: list[Any]) -> list[Any]:
    """Write ``fresh`` into the tensors of ``inputs`` (same pointers, new values)."""
    if inputs is None:
        return fresh
    for dst, src in zip(inputs, fresh):
        if isinstance(dst, torch.Tensor) and dst.shape == src.shape:
            dst.copy_(src)
    return [dst if isinstance(dst, torch.Tensor) and dst.shape == src.shape else src
            for dst, src in zip(inputs, fresh)]


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.nan_to_num(), b.nan_to_num())


def check_correctness(plan: ReferencePlan, task_module: Any, answer: Any, settings: VerifySettings,
                      patches: PatchSnapshot, stats: dict[str, Any]) -> list[Any]:
    """``settings.correctness_trials`` trials; returns the last trial's inputs (for the recheck).

    Trial inputs after the first are written into the first trial's tensors, so an answer
    that caches results by data pointer sees the same pointers with new values. An output
    identical to the previous trial's while the reference's changed is a cached or constant
    result, even when it is within tolerance (a constant near a zero mean is).
    """
    inputs: list[Any] | None = None
    previous: tuple[torch.Tensor, torch.Tensor] | None = None
    for trial, (scale, seed, expected) in enumerate(plan.trials):
        inputs = _refill(inputs, draw_inputs(task_module, seed, scale))
        out = _run_answer(answer, inputs, patches)
        atol, rtol = settings.tolerances(str(expected.dtype).removeprefix("torch."))
        cmp = compare_outputs(out, expected, atol, rtol)
        stats["trials_run"] = trial + 1
        for key in ("max_abs_error", "max_rel_error"):
            value = getattr(cmp, key)
            if value is not None:
                stats[key] = max(stats.get(key) or 0.0, value)
        if (previous is not None and isinstance(out, torch.Tensor) and _same(out, previous[0])
                and not _same(expected, previous[1])):
            raise StageFailure("hacked", f"trial {trial}: the output is identical to the previous trial's "
                               "although the inputs and the reference's output changed",
                               hack_rule="stale_or_constant_output")
        if not cmp.ok:
            raise StageFailure(cmp.error_class, f"trial {trial} (input scale {scale:g}): {cmp.message}",
                               first_mismatch_index=cmp.first_mismatch_index,
                               mismatch_fraction=cmp.mismatch_fraction)
        stats["trials_passed"] = trial + 1
        previous = (out.detach().clone(), expected)
    assert inputs is not None
    return inputs


def measure_latency(backend: Backend, plan: ReferencePlan, answer: Any, settings: VerifySettings) -> dict[str, Any]:
    """Median latency of the answer (seconds) over the reference's timing sets, every timed
    output checked against its set's reference output (outside the timed region)."""
    def mismatch(message: str) -> None:
        raise StageFailure("nondeterministic", f"the output was wrong while timed although the correctness "
                           f"trials passed; {message}")

    call = _RotatingCall(answer, plan.timing_sets, settings, mismatch)
    try:
        with _timing_allocations():
            latency, answer_details = backend.time_answer(call, settings)
    except BaseException as exc:  # noqa: BLE001
        raise classify(exc, "runtime_error") from None
    answer_details = {**answer_details, "input_sets": len(plan.timing_sets), "outputs_checked": call.checked}
    ref_latency = plan.reference_timing["reference_latency_s"]
    return {"latency_s": latency, "reference_latency_s": ref_latency,
            "speedup": ref_latency / latency if latency > 0 else None,
            "details": {"answer_timing": answer_details, "reference_timing": plan.reference_timing["reference_timing"]}}


def recheck_after_timing(plan: ReferencePlan, task_module: Any, answer: Any, inputs: list[Any],
                         settings: VerifySettings, patches: PatchSnapshot) -> None:
    """One more guarded trial after timing: work deferred or changed under timing shows here."""
    seed, expected = plan.recheck
    inputs = _refill(inputs, draw_inputs(task_module, seed, 1.0))
    out = _run_answer(answer, inputs, patches)
    atol, rtol = settings.tolerances(str(expected.dtype).removeprefix("torch."))
    cmp = compare_outputs(out, expected, atol, rtol)
    if not cmp.ok:
        raise StageFailure("nondeterministic", f"after timing: {cmp.message}")


# ---------------------------------------------------------------------------- driver
def _poison_uninitialized_memory() -> None:
    """Make torch.empty & co. return NaN / max-int filled memory (deterministic mode).

    Calls the C switch directly: torch.use_deterministic_algorithms imports torch._inductor
    (about 1.7 s), which would dominate a verification.
    """
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is not None:
        setter(True, warn_only=True)
    else:
        torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True


def _audit_failure(audit: AuditGuard) -> StageFailure | None:
    found = audit.failure()
    if found is None:
        return None
    rule, what = found
    return StageFailure("hacked", f"{RULES.get(rule, rule)}: {what} (refused at run time)", hack_rule=rule)


def _raise_audit_failure(audit: AuditGuard) -> None:
    failure = _audit_failure(audit)
    if failure is not None:
        raise failure


def run_job(job: dict[str, Any], progress_path: Path | None = None) -> dict[str, Any]:
    task = TaskSpec.from_dict(job["task"])
    settings = VerifySettings.from_kwargs(**job["settings"])
    backend = get_backend(job["backend"])
    result: dict[str, Any] = {"task_id": task.id, "backend": backend.name, "compiled": False,
                              "correct": False, "trials_passed": 0, "trials_run": 0}

    stage_seconds: dict[str, float] = {}
    clock = {"stage": None, "t": time.perf_counter()}

    def progress(stage: str) -> None:
        now = time.perf_counter()
        if clock["stage"] is not None:
            stage_seconds[clock["stage"]] = now - clock["t"]
        clock.update(stage=stage, t=now)
        result["stage"] = stage
        if progress_path is not None:
            progress_path.write_text(json.dumps({"stage": stage, "compiled": result["compiled"]}))

    backend.setup_worker({"threads": settings.threads, **settings.backend_options})
    _poison_uninitialized_memory()
    task_module = task.module()
    progress("reference")
    plan = prepare_reference(backend, task_module, settings)  # before any answer code runs
    guard_kernel_loader()
    audit = AuditGuard.install()
    patches = PatchSnapshot()
    audit.armed = True
    try:
        progress("load")
        model_new_cls = load_answer(job["answer"])
        progress("build")
        answer = build_answer(plan, model_new_cls, settings.seed)
        result["compiled"] = True
        progress("correctness")
        inputs = check_correctness(plan, task_module, answer, settings, patches, result)
        result["correct"] = True
        if settings.measure_time:
            progress("timing")
            result.update(measure_latency(backend, plan, answer, settings))
            progress("recheck")
            recheck_after_timing(plan, task_module, answer, inputs, settings, patches)
        _raise_audit_failure(audit)
        result["error_class"] = "ok"
    except StageFailure as failure:
        failure = _audit_failure(audit) or failure  # the refused operation, not the error it caused
        result["error_class"] = failure.error_class
        result["message"] = failure.message
        if failure.error_class == "hacked":
            result["hacked"] = True
            result["correct"] = False
        for key, value in failure.extra.items():
            result[key] = value
        if failure.error_class in ("nondeterministic",):
            result["correct"] = False
    finally:
        audit.armed = False
    progress("done")
    result.setdefault("details", {})["stage_seconds"] = stage_seconds
    return result


def main(argv: list[str]) -> int:
    job_path, result_path = Path(argv[1]), Path(argv[2])
    job = json.loads(job_path.read_text())
    started = time.perf_counter()
    try:
        result = run_job(job, progress_path=result_path.with_suffix(".progress"))
    except BaseException as exc:  # noqa: BLE001 - the harness failing is reported, not raised
        result = {"error_class": "internal_error", "message": traceback.format_exc()[-3000:],
                  "task_id": job.get("task", {}).get("id", "?"), "backend": job.get("backend", "?")}
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            result["message"] = f"the answer exited the worker ({type(exc).__name__})"
            result["error_class"] = "runtime_error"
    result["worker_seconds"] = time.perf_counter() - started
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, default=str))
    os.replace(tmp, result_path)
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: answer objects' destructors cannot fail the run


if __name__ == "__main__":
    sys.exit(main(sys.argv))
