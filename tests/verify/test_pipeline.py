"""The verification pipeline end to end on the cpu backend (a correct answer, cache, settings)."""

import json

import pytest

from kernel_gym.tasks import get_task
from kernel_gym.verify import ERROR_CLASSES, VerifyResult, VerifySettings, check_answer_source, verify

FAST = dict(timing_trials=3, warmup_runs=1, flush_cache_mb=0)


def test_correct_answer_is_feasible_with_timing(relu_answer):
    result = verify(get_task("relu"), relu_answer, backend="cpu", use_cache=False, **FAST)
    assert result.feasible, result.message
    assert result.error_class == "ok"
    assert result.trials_passed == result.trials_run == 5
    assert result.max_abs_error == 0.0
    assert result.latency_s > 0 and result.reference_latency_s > 0
    assert result.speedup == pytest.approx(result.reference_latency_s / result.latency_s)
    # paired rounds: at least timing_trials, at most ten times as many (until the interval is tight)
    timing = result.details["answer_timing"]
    assert 3 <= timing["trials"] == result.details["reference_timing"]["trials"] <= 30
    assert timing["outputs_checked"] >= timing["trials"] + 1  # the warm-up round is checked too
    lo, hi = result.speedup_ci
    assert lo <= result.speedup <= hi
    assert result.timing_converged in (True, False) and result.latency_iqr_s >= 0
    assert "run-queue" in result.timing_clock or "wall clock" in result.timing_clock


def test_result_json_roundtrip(relu_answer):
    result = verify(get_task("relu"), relu_answer, use_cache=False, measure_time=False)
    data = json.loads(result.to_json())
    assert data["feasible"] is True
    again = VerifyResult.from_dict(data)
    assert again.feasible and again.error_class == "ok" and again.task_id == result.task_id


def test_cache_returns_the_stored_result(relu_answer, tmp_path, monkeypatch):
    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path))
    first = verify(get_task("relu"), relu_answer, **FAST)
    second = verify(get_task("relu"), relu_answer, **FAST)
    assert not first.cached and second.cached
    assert second.latency_s == first.latency_s
    assert second.verify_seconds < first.verify_seconds
    other = verify(get_task("relu"), relu_answer, **{**FAST, "timing_trials": 4})
    assert not other.cached, "different settings must not hit the cache"


def test_wrong_answer_reports_where(relu_answer):
    wrong = relu_answer.replace("x[i] > 0.f ? x[i] : 0.f", "x[i] > 0.f ? x[i] : 0.5f")
    result = verify(get_task("relu"), wrong, use_cache=False, measure_time=False)
    assert result.error_class == "numerical_mismatch" and not result.feasible
    assert result.compiled and not result.correct
    assert result.first_mismatch_index is not None and len(result.first_mismatch_index) == 2
    assert result.max_abs_error == pytest.approx(0.5, abs=1e-6)
    assert "expected" in result.message


def test_wrong_shape_is_a_shape_mismatch(relu_answer):
    wrong = relu_answer.replace("y = torch.empty_like(x)", "y = torch.empty(x.numel())")
    result = verify(get_task("relu"), wrong, use_cache=False, measure_time=False)
    assert result.error_class == "shape_mismatch"


def test_compile_error_has_log_excerpt(relu_answer):
    broken = relu_answer.replace("y[i] = x[i] > 0.f", "y[i] = undefined_symbol > 0.f")
    result = verify(get_task("relu"), broken, use_cache=False)
    assert result.error_class == "compile_error" and not result.compiled
    assert "undefined_symbol" in result.compile_log


def test_bad_settings_and_backend_fail_clearly(relu_answer):
    with pytest.raises(TypeError, match="unknown verify setting"):
        verify(get_task("relu"), relu_answer, trials=3)
    with pytest.raises(ValueError, match="choose one of ascend_npu, ascend_sim, cpu, cuda, triton"):
        verify(get_task("relu"), relu_answer, backend="tpu")
    with pytest.raises(ValueError, match="tolerance preset"):
        VerifySettings(tolerance="loose")


def test_clean_answer_has_no_static_violation(relu_answer):
    assert check_answer_source(relu_answer) == []


def test_error_taxonomy_is_documented():
    import kernel_gym.verify.result as result_module

    for name in ERROR_CLASSES:
        assert f"| {name} |" in result_module.__doc__ or name == "ok"
