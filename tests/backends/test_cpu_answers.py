"""The hand-written reference answers (solutions/cpu) verify on cpu.

Every answer must be feasible under the default protocol (5 trials, scaled inputs, timed
outputs checked) and at least one must beat the PyTorch reference on this CPU (both sides
run on one thread: the wins come from fusion and vectorisation).
"""

from __future__ import annotations

import functools

import pytest

from kernel_gym.tasks import get_task, load_suite
from kernel_gym.verify import VerifyResult, check_answer_source, verify
from solutions import available_answers, reference_answer

ANSWER_IDS = available_answers("cpu")
SETTINGS = {"use_cache": False, "warmup_runs": 1, "timing_trials": 5, "timeout_s": 120}


@functools.lru_cache(maxsize=None)
def result_for(task_id: str) -> VerifyResult:
    return verify(get_task(task_id), reference_answer(task_id), "cpu", **SETTINGS)


def test_answer_index() -> None:
    level1 = {t.id: t for t in load_suite("level1")}
    assert len(ANSWER_IDS) >= 12
    assert set(ANSWER_IDS) <= set(level1)
    categories = {level1[t].category for t in ANSWER_IDS}
    assert len(categories) >= 6, categories
    assert any(level1[t].dtype == "float16" for t in ANSWER_IDS)
    assert reference_answer("level1/no_such_task") is None
    assert reference_answer("level2/001_anything") is None
    assert available_answers("no_such_backend") == []


@pytest.mark.parametrize("task_id", ANSWER_IDS)
def test_answer_passes_static_checks(task_id: str) -> None:
    assert check_answer_source(reference_answer(task_id)) == []


@pytest.mark.parametrize("task_id", ANSWER_IDS)
def test_answer_is_feasible(task_id: str) -> None:
    result = result_for(task_id)
    assert result.feasible, result.summary()
    assert result.trials_passed == 5
    assert result.details["answer_timing"]["outputs_checked"] >= SETTINGS["warmup_runs"] + SETTINGS["timing_trials"]


def test_best_answer_beats_pytorch() -> None:
    speedups = {t: result_for(t).speedup for t in ANSWER_IDS}
    best = max(speedups, key=lambda t: speedups[t] or 0.0)
    assert speedups[best] is not None and speedups[best] > 1.0, speedups
