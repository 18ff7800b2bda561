"""The verification worker: runs inside the sandboxed subprocess, one stage per function.

    python -m kernel_gym.verify.worker JOB.json RESULT.json

Stages: load_answer -> build_models -> check_correctness -> measure_latency ->
recheck_after_timing. Each returns normally or raises ``StageFailure`` carrying the error
class; ``run_job`` turns that into the result dict. A progress file written after each
stage lets the parent report how far a worker got when it dies by a signal.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
import types
from pathlib import Path
from typing import Any

import torch

from kernel_gym.backends import Backend, get_backend
from kernel_gym.native import CompileError
from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify.correctness import compare_outputs, draw_inputs, poison_
from kernel_gym.verify.runtime_guards import ComputeGuard, PatchSnapshot, clone_inputs, inputs_equal
from kernel_gym.verify.settings import VerifySettings

ANSWER_FILENAME = "<answer>"


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


def build_models(task_module: Any, model_new_cls: type, seed: int) -> tuple[torch.nn.Module, torch.nn.Module]:
    """Reference and answer models, both built right after seeding with the same seed."""
    init_inputs = task_module.get_init_inputs()
    torch.manual_seed(seed)
    reference = task_module.Model(*init_inputs)
    torch.manual_seed(seed)
    try:
        answer = model_new_cls(*init_inputs)
    except BaseException as exc:  # noqa: BLE001
        raise classify(exc, "init_error") from None
    return reference.eval(), answer.eval() if isinstance(answer, torch.nn.Module) else answer


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


def check_correctness(task: TaskSpec, task_module: Any, reference: torch.nn.Module, answer: Any,
                      settings: VerifySettings, patches: PatchSnapshot, stats: dict[str, Any]) -> list[Any]:
    """``settings.correctness_trials`` trials; returns the last trial's inputs (for timing).

    Trial inputs after the first are written into the first trial's tensors, so an answer
    that caches results by data pointer sees the same pointers with new values.
    """
    inputs: list[Any] | None = None
    previous: tuple[torch.Tensor, torch.Tensor] | None = None
    for trial in range(settings.correctness_trials):
        scale = settings.input_scales[trial % len(settings.input_scales)]
        fresh = draw_inputs(task_module, settings.seed + 1000 * (trial + 1), scale)
        if inputs is None:
            inputs = fresh
        else:
            for dst, src in zip(inputs, fresh):
                if isinstance(dst, torch.Tensor) and dst.shape == src.shape:
                    dst.copy_(src)
            inputs = [dst if isinstance(dst, torch.Tensor) and dst.shape == src.shape else src
                      for dst, src in zip(inputs, fresh)]
        expected = _reference_output(reference, inputs)
        out = _run_answer(answer, inputs, patches)
        atol, rtol = settings.tolerances(str(expected.dtype).removeprefix("torch."))
        cmp = compare_outputs(out, expected, atol, rtol)
        stats["trials_run"] = trial + 1
        for key in ("max_abs_error", "max_rel_error"):
            value = getattr(cmp, key)
            if value is not None:
                stats[key] = max(stats.get(key) or 0.0, value)
        if not cmp.ok:
            if (previous is not None and isinstance(out, torch.Tensor) and out.shape == previous[0].shape
                    and torch.equal(out.nan_to_num(), previous[0].nan_to_num())
                    and not torch.equal(expected.nan_to_num(), previous[1].nan_to_num())):
                raise StageFailure("hacked", f"trial {trial}: the output is identical to the previous trial's "
                                   "although the inputs changed", hack_rule="stale_or_constant_output")
            raise StageFailure(cmp.error_class, f"trial {trial} (input scale {scale:g}): {cmp.message}",
                               first_mismatch_index=cmp.first_mismatch_index,
                               mismatch_fraction=cmp.mismatch_fraction)
        stats["trials_passed"] = trial + 1
        previous = (out.detach().clone(), expected)
    assert inputs is not None
    return inputs


def measure_latency(backend: Backend, reference: torch.nn.Module, answer: Any, inputs: list[Any],
                    settings: VerifySettings) -> dict[str, Any]:
    """Median latency of answer and reference (seconds) on the same inputs."""
    def run_answer() -> Any:
        with torch.no_grad():
            return answer(*inputs)

    def run_reference() -> Any:
        with torch.no_grad():
            return reference(*inputs)

    try:
        latency, answer_details = backend.time_answer(run_answer, settings)
    except BaseException as exc:  # noqa: BLE001
        raise classify(exc, "runtime_error") from None
    ref_latency, ref_details = backend.time_reference(run_reference, reference, inputs, settings)
    return {"latency_s": latency, "reference_latency_s": ref_latency,
            "speedup": ref_latency / latency if latency > 0 else None,
            "details": {"answer_timing": answer_details, "reference_timing": ref_details}}


def recheck_after_timing(task_module: Any, reference: torch.nn.Module, answer: Any, inputs: list[Any],
                         settings: VerifySettings, patches: PatchSnapshot) -> None:
    """One more guarded trial after timing: work deferred or changed under timing shows here."""
    fresh = draw_inputs(task_module, settings.seed + 999_983, 1.0)
    for dst, src in zip(inputs, fresh):
        if isinstance(dst, torch.Tensor) and dst.shape == src.shape:
            dst.copy_(src)
    expected = _reference_output(reference, inputs)
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
    patches = PatchSnapshot()
    try:
        progress("load")
        model_new_cls = load_answer(job["answer"])
        progress("build")
        reference, answer = build_models(task_module, model_new_cls, settings.seed)
        result["compiled"] = True
        progress("correctness")
        inputs = check_correctness(task, task_module, reference, answer, settings, patches, result)
        result["correct"] = True
        if settings.measure_time:
            progress("timing")
            result.update(measure_latency(backend, reference, answer, inputs, settings))
            progress("recheck")
            recheck_after_timing(task_module, reference, answer, inputs, settings, patches)
        result["error_class"] = "ok"
    except StageFailure as failure:
        result["error_class"] = failure.error_class
        result["message"] = failure.message
        if failure.error_class == "hacked":
            result["hacked"] = True
            result["correct"] = False
        for key, value in failure.extra.items():
            result[key] = value
        if failure.error_class in ("nondeterministic",):
            result["correct"] = False
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
