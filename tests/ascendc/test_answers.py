"""The ascend_sim reference answers: each task has a naive form (one block, single-buffered) and
an optimised form (multi-block, double-buffered); both must verify, and the optimised one must
simulate faster."""

from __future__ import annotations

import functools

import pytest

from solutions import available_answers, reference_answer
from kernel_gym.tasks import get_task
from kernel_gym.verify import verify

OPT, NAIVE = "ascend_sim", "ascend_sim_naive"
TASKS = available_answers(OPT)

REQUIRED = ["level1/001_add", "level1/003_mul_fp16", "level1/005_scalar_multiply", "level1/021_relu",
            "level1/022_leaky_relu", "level1/023_sigmoid_tail", "level1/024_tanh", "level1/027_silu",
            "level1/038_sigmoid_fp16", "level1/047_sum_last_dim_tail", "level1/051_layer_norm",
            "level1/052_rms_norm", "level1/061_softmax", "level1/066_mse_loss"]


@functools.lru_cache(maxsize=None)
def _verify(task_id: str, folder: str):
    src = reference_answer(task_id, folder)
    assert src is not None, f"no {folder} answer for {task_id}"
    return verify(get_task(task_id), src, backend="ascend_sim", use_cache=False, timing_trials=1, warmup_runs=0)


def test_both_forms_listed():
    assert set(REQUIRED) <= set(TASKS)
    assert available_answers(NAIVE) == TASKS


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASKS)
def test_naive_and_optimised_verify_and_optimised_is_faster(task_id):
    naive = _verify(task_id, NAIVE)
    opt = _verify(task_id, OPT)
    assert naive.feasible, f"naive: {naive.error_class}: {naive.message}"
    assert opt.feasible, f"optimised: {opt.error_class}: {opt.message}"
    assert 0 < opt.latency_s < naive.latency_s, (opt.latency_s, naive.latency_s)
