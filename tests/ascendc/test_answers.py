"""The ascend_sim reference answers: every task of KernelBench-Ascend-v0 has a naive answer (the
straightforward Ascend C a first attempt would be) that verifies, so every task is known to be
solvable in the simulator; at least a third also have an optimised answer (multi-block,
double-buffered, fused) that verifies and simulates faster than its naive twin."""

from __future__ import annotations

import functools

import pytest

from kernel_gym.tasks import get_task, load_suite
from kernel_gym.verify import verify
from solutions import available_answers, reference_answer

OPT, NAIVE = "ascend_sim", "ascend_sim_naive"
ALL_TASKS = [t.id for t in load_suite("all")]
NAIVE_TASKS = available_answers(NAIVE)
OPT_TASKS = available_answers(OPT)


@functools.lru_cache(maxsize=None)
def _verify(task_id: str, folder: str):
    src = reference_answer(task_id, folder)
    assert src is not None, f"no {folder} answer for {task_id}"
    return verify(get_task(task_id), src, backend="ascend_sim", use_cache=False, timing_trials=1, warmup_runs=0)


def test_every_task_has_a_naive_answer_and_a_third_an_optimised_one():
    assert sorted(ALL_TASKS) == NAIVE_TASKS, sorted(set(ALL_TASKS) ^ set(NAIVE_TASKS))
    assert set(OPT_TASKS) <= set(NAIVE_TASKS), "an optimised answer without its naive twin"
    assert len(OPT_TASKS) * 3 >= len(ALL_TASKS), (len(OPT_TASKS), len(ALL_TASKS))


@pytest.mark.slow
@pytest.mark.parametrize("task_id", NAIVE_TASKS)
def test_naive_answer_verifies(task_id):
    naive = _verify(task_id, NAIVE)
    assert naive.feasible, f"naive: {naive.error_class}: {naive.message}"


@pytest.mark.slow
@pytest.mark.parametrize("task_id", OPT_TASKS)
def test_optimised_answer_verifies_and_is_faster(task_id):
    naive, opt = _verify(task_id, NAIVE), _verify(task_id, OPT)
    assert opt.feasible, f"optimised: {opt.error_class}: {opt.message}"
    assert naive.feasible and 0 < opt.latency_s < naive.latency_s, (opt.latency_s, naive.latency_s)
