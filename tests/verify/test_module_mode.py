"""VerifySettings.module_mode: KernelBench's evaluation never calls ``eval()``, so a BatchNorm task
is judged on the batch's statistics there; an answer written for that rule must pass under
``module_mode="train"`` and fail under the default ``"eval"`` (running statistics)."""

from __future__ import annotations

import pytest

from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify import verify

TASK = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        return self.bn(x)

def get_inputs():
    return [torch.randn(64, 16) * 3.0 + 1.0]

def get_init_inputs():
    return [16]
"""

# a training-mode BatchNorm1d over (N, C): each channel normalised by its batch mean and biased
# variance; the module's weight 1 and bias 0 as built
ANSWER = r'''
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cmath>
#include <cstdint>
extern "C" void bn_train(const float* x, float* y, int64_t n, int64_t c, float eps) {
    for (int64_t j = 0; j < c; ++j) {
        double mean = 0.0, var = 0.0;
        for (int64_t i = 0; i < n; ++i) mean += x[i * c + j];
        mean /= n;
        for (int64_t i = 0; i < n; ++i) var += (x[i * c + j] - mean) * (x[i * c + j] - mean);
        var /= n;
        const double inv = 1.0 / std::sqrt(var + eps);
        for (int64_t i = 0; i < n; ++i) y[i * c + j] = float((x[i * c + j] - mean) * inv);
    }
}
"""


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.lib = load_cpp(CPP)

    def forward(self, x):
        y = torch.empty_like(x)
        self.lib.bn_train(x, y, x.shape[0], x.shape[1], 1e-5)
        return y
'''


def _task() -> TaskSpec:
    return TaskSpec(id="test/batchnorm_mode", level=1, category="normalization", dtype="float32", source=TASK)


@pytest.mark.parametrize(("mode", "correct"), [("train", True), ("eval", False)])
def test_batch_statistics_pass_only_in_kernelbench_train_mode(mode: str, correct: bool) -> None:
    result = verify(_task(), ANSWER, backend="cpu", use_cache=False, measure_time=False, module_mode=mode)
    assert result.correct is correct, result.message
    if not correct:
        assert result.error_class == "numerical_mismatch"


def test_an_unknown_mode_names_the_choices() -> None:
    with pytest.raises(ValueError, match="module_mode must be one of eval, train"):
        verify(_task(), ANSWER, backend="cpu", module_mode="inference")
