"""The SoC profiles feed kernel_gym.ascendc.reference_estimate (the eager-reference estimate)."""

import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.reference_estimate import estimate_reference


class Elementwise(torch.nn.Module):
    def forward(self, x, y):
        return torch.relu(x + y)


def test_estimate_uses_the_profile_constants():
    x, y = torch.randn(1024, 1024), torch.randn(1024, 1024)
    b2, b4 = asc.SOC_PROFILES["Ascend910B2"], asc.SOC_PROFILES["Ascend910B4"]
    s2, ops = estimate_reference(Elementwise(), [x, y], b2)
    s4, _ = estimate_reference(Elementwise(), [x, y], b4)
    assert [o.op for o in ops if o.bound != "free"] == ["aten.add", "aten.relu"]
    moved = 5 * 4 * 1024 * 1024
    assert s2 == pytest.approx(moved / b2.hbm_bytes_per_s + 2 * b2.eager_op_launch_s, rel=1e-6)
    assert s4 > s2
