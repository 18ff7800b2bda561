"""Verification at a task's published shapes (verify setting ``published_shapes``): the answer
runs in the sandbox on lazy inputs under sampled simulation, the judge checks the sampled
blocks' output against the reference it computes itself on the same inputs."""

import pytest

from experiments.bench_sampled import RELU
from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify import verify

TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


batch_size = {batch}
dim = {dim}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
"""

# The RELU kernel of the sampled-simulation benchmark; WRONG_AT_SCALE makes it wrong at scale
# (a kernel that is right at simulation scale and wrong at the published one: blocks with a share
# of 1M elements or more add 1).
ANSWER = '''
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""{source}"""
mod = asc.load(SOURCE, name="relu.cpp", extra_flags=({flags}))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        mod.relu_do(40, x, y, x.numel(), 8192)
        return y
'''

WRONG_AT_SCALE = """
#define OFF_BY (count >= (1u << 20) ? 1 : 0)
"""


def _task(published: bool) -> TaskSpec:
    return TaskSpec(
        id="test/relu_published",
        level=1,
        category="activation",
        dtype="float32",
        source=TASK.format(batch=16, dim=4096),
        published_source=TASK.format(batch=2048, dim=65536) if published else None,
    )


SETTINGS = dict(
    use_cache=False,
    published_shapes=True,
    memory_limit_mb=6144,
    timing_trials=1,
    warmup_runs=0,
    correctness_trials=2,
    timeout_s=300,
)


@pytest.mark.slow
def test_a_correct_answer_is_timed_and_checked_at_published_shapes():
    answer = ANSWER.format(source=RELU, flags="")
    result = verify(_task(True), answer, backend="ascend_sim", **SETTINGS)
    assert result.feasible, result.message
    pub = result.details["published"]
    assert pub["ok"] and pub["checked_elements"] > 0, pub
    assert pub["blocks_run"] == 5 and pub["blocks_skipped"] == 35
    lo, hi = pub["latency_bracket_s"]
    assert lo <= pub["latency_s"] <= hi
    # 2 x 512 MiB through HBM dominate: far slower than the simulation-scale run
    assert pub["latency_s"] > 50 * result.latency_s
    assert pub["speedup"] == pytest.approx(pub["reference_latency_s"] / pub["latency_s"])


@pytest.mark.slow
def test_an_answer_wrong_only_at_scale_fails_there():
    source = RELU.replace("#ifndef OFF_BY\n#define OFF_BY 0\n#endif", WRONG_AT_SCALE)
    assert source != RELU
    result = verify(_task(True), ANSWER.format(source=source, flags=""), backend="ascend_sim", **SETTINGS)
    assert not result.feasible
    assert result.error_class == "numerical_mismatch" and "published shapes" in result.message


def test_too_little_memory_is_a_clear_error_not_a_failure():
    answer = ANSWER.format(source=RELU, flags="")
    result = verify(_task(True), answer, backend="ascend_sim", **{**SETTINGS, "memory_limit_mb": 1536})
    assert result.feasible, result.message
    assert "memory_limit_mb" in result.details["published"]["error"]


def test_without_a_published_source_nothing_more_runs():
    result = verify(_task(False), ANSWER.format(source=RELU, flags=""), backend="ascend_sim", **SETTINGS)
    assert result.feasible and "published" not in result.details


def test_row_reference_compares_in_chunks_and_refuses_a_non_separable_model() -> None:
    import torch

    from kernel_gym.verify.correctness import _close_in_chunks, row_reference

    a = torch.randn(3 * (1 << 10) + 7)
    b = a.clone()
    assert _close_in_chunks(a, b, 1e-3, 0.0, chunk=1 << 10)
    b[-1] += 1.0  # in the last, partial chunk
    assert not _close_in_chunks(a, b, 1e-3, 0.0, chunk=1 << 10)
    x = torch.randn(4, 8)
    rows = row_reference(torch.nn.Softmax(dim=1), [x])
    assert rows is not None and torch.allclose(rows(1, 3), torch.softmax(x[1:3], dim=1))
    assert row_reference(torch.nn.Softmax(dim=0), [x]) is None  # across the rows: not separable
