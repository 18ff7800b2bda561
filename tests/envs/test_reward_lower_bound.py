"""The ':lower' reward suffix: scores the low end of the speedup's 95 % interval."""

from __future__ import annotations

import pytest

from kernel_gym.envs.rewards import LowerBoundReward, get_reward

FEASIBLE = {"feasible": True, "compiled": True, "correct": True, "hacked": False}


def test_lower_suffix_scores_the_interval_low_end():
    result = {**FEASIBLE, "latency_s": 1e-3, "reference_latency_s": 2e-3, "speedup": 2.0, "speedup_ci": [1.6, 2.3]}
    assert get_reward("speedup")(result, "refining", None) == pytest.approx(2.0)
    lower = get_reward("speedup:lower")
    assert isinstance(lower, LowerBoundReward)
    assert lower(result, "refining", None) == pytest.approx(1.6)
    # evokernel compares latencies: the lower bound's latency is reference / low = 1.25 ms
    assert get_reward("evokernel:lower")(result, "refining", 1.25e-3) == pytest.approx(0.0)
    assert get_reward("evokernel")(result, "refining", 1.25e-3) > 0.2


def test_lower_suffix_leaves_results_without_an_interval_alone():
    untimed = {**FEASIBLE, "latency_s": 1e-3, "reference_latency_s": 2e-3, "speedup": 2.0, "speedup_ci": None}
    assert get_reward("speedup:lower")(untimed, "refining", None) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="unknown reward"):
        get_reward("nonsense:lower")
