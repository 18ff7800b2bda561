"""The env's reward at a task's published shapes (``reward_shapes``): which figure the reward
sees, the fallback to the verified shapes with its reason, the settings it implies, and an env
whose reward comes from the published-shape run of the verifier."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

import kernel_gym  # noqa: F401  (registers the ids)
from experiments.bench_sampled import RELU
from kernel_gym.envs.kernel_synthesis import KernelSynthesisEnv
from kernel_gym.envs.reward_shapes import (
    PUBLISHED_MEMORY_LIMIT_MB,
    check_reward_shapes,
    published_run_settings,
    reward_basis,
)
from kernel_gym.llm.fixed import FixedGenerator
from kernel_gym.tasks.spec import TaskSpec

SIM = {"feasible": True, "latency_s": 2e-6, "reference_latency_s": 4e-6, "speedup": 2.0}
PUB = {
    "ok": True,
    "latency_s": 8e-4,
    "latency_bracket_s": [7e-4, 9e-4],
    "reference_latency_s": 4e-4,
    "speedup": 0.5,
    "blocks_run": 5,
    "blocks_skipped": 35,
}


def test_published_figures_replace_the_simulated_ones_with_bracket_and_sampling():
    view, basis = reward_basis({**SIM, "details": {"published": PUB}}, "published")
    assert view["latency_s"] == 8e-4 and view["reference_latency_s"] == 4e-4 and view["speedup"] == 0.5
    assert basis["shapes"] == "published" and basis["fallback"] is None
    assert basis["latency_bracket_s"] == [7e-4, 9e-4] and basis["sampled"] is True
    # every block ran: the published figure is exact, not extrapolated
    whole = {**PUB, "blocks_skipped": 0, "latency_bracket_s": [8e-4, 8e-4]}
    assert reward_basis({**SIM, "details": {"published": whole}}, "published")[1]["sampled"] is False


@pytest.mark.parametrize(
    ("result", "reason"),
    [
        ({**SIM, "details": {}}, "no published shapes"),
        ({**SIM, "details": {"published": {"ok": False, "error": "set memory_limit_mb to 9000"}}}, "memory_limit_mb"),
        ({**SIM, "details": {"published": {"ok": False, "error": "timeout at published shapes: x"}}}, "timeout"),
        ({**SIM, "details": {"published": {**PUB, "latency_s": 0.0}}}, "no positive latency"),
        ({"feasible": False, "details": {"published": PUB}}, "not feasible"),
    ],
)
def test_without_a_published_figure_the_verified_shapes_are_used_and_say_why(result, reason):
    view, basis = reward_basis(result, "published")
    assert view is result and basis["shapes"] == "simulated" and reason in basis["fallback"]
    assert basis["sampled"] is False


def test_simulated_shapes_ignore_the_published_run():
    result = {**SIM, "details": {"published": PUB}}
    view, basis = reward_basis(result, "simulated")
    assert view is result and basis == {
        "requested": "simulated",
        "shapes": "simulated",
        "fallback": None,
        "latency_s": 2e-6,
        "reference_latency_s": 4e-6,
        "speedup": 2.0,
        "latency_bracket_s": [2e-6, 2e-6],
        "sampled": False,
    }


def test_bad_values_and_contradicting_settings_are_one_clear_error(tmp_path):
    for bad in ("full", "", None, 1):
        with pytest.raises(ValueError, match="env.reward_shapes=published"):
            check_reward_shapes(bad)
    with pytest.raises(ValueError, match="reward_shapes must be one of published, simulated"):
        KernelSynthesisEnv(memory=str(tmp_path / "m.db"), generator="code", reward_shapes="huge")
    with pytest.raises(ValueError, match="env.reward_shapes=simulated"):
        published_run_settings({"published_shapes": False}, "published", True)
    # published on a backend that runs published shapes: the run is on, the address space raised
    on = published_run_settings({"published_shapes": None, "timeout_s": 60}, "published", True)
    assert on == {"published_shapes": True, "memory_limit_mb": PUBLISHED_MEMORY_LIMIT_MB, "timeout_s": 60}
    assert published_run_settings({"memory_limit_mb": 8192}, "published", True)["memory_limit_mb"] == 8192
    # simulated, or a backend without published-shape runs: as given (null dropped)
    assert published_run_settings({"published_shapes": None}, "simulated", True) == {}
    assert published_run_settings({"published_shapes": True}, "simulated", True) == {"published_shapes": True}
    assert published_run_settings({}, "published", False) == {}


TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn({batch}, {dim})]


def get_init_inputs():
    return []
"""

ANSWER = '''
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

mod = asc.load(r"""{source}""", name="relu.cpp")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        mod.relu_do({blocks}, x, y, x.numel(), 8192)
        return y
'''
SETTINGS = {"use_cache": False, "timing_trials": 1, "warmup_runs": 0, "correctness_trials": 2, "timeout_s": 300}


def _task(batch: int = 256) -> TaskSpec:
    return TaskSpec(
        id="test/relu_reward_shapes",
        level=1,
        category="activation",
        dtype="float32",
        source=TASK.format(batch=16, dim=4096),
        published_source=TASK.format(batch=batch, dim=65536),  # 64 MiB in, 64 MiB out at 256
    )


def test_the_env_rewards_the_published_shape_latency_and_falls_back_with_a_reason(tmp_path):
    answers = [ANSWER.format(source=RELU, blocks=b) for b in (8, 40)]
    env = gym.make(
        "KernelBench-Ascend-v0",
        memory=str(tmp_path / "m.db"),
        tasks=[_task()],
        task_stream="single",
        verify_settings=SETTINGS,
        generator=FixedGenerator(answers),
        budget=2,
    )
    env.reset(seed=0)
    _, r0, _, _, info0 = env.step(env.action_space.sample())
    _, r1, _, _, info1 = env.step(env.action_space.sample())
    env.close()
    assert r0 == 1.0  # drafting: feasible
    for info in (info0, info1):
        pub, basis = info["verifier"]["details"]["published"], info["reward_basis"]
        assert pub["ok"], pub
        assert basis["shapes"] == "published" and basis["fallback"] is None and basis["sampled"]
        assert basis["latency_s"] == pub["latency_s"] and basis["speedup"] == pytest.approx(pub["speedup"])
        lo, hi = basis["latency_bracket_s"]
        assert lo <= basis["latency_s"] <= hi
        # 2 x 64 MiB through HBM at the published shapes vs 2 x 256 KiB verified: far slower
        assert basis["latency_s"] > 10 * info["verifier"]["latency_s"]
    # refining: the second kernel against the first, both at the published shapes
    want = math.tanh(math.log(info0["reward_basis"]["latency_s"]) - math.log(info1["reward_basis"]["latency_s"]))
    assert r1 == pytest.approx(want)

    # the published run cannot run (2 x 512 MiB, too little address space): the reward is the
    # verified shapes' speedup
    env = gym.make(
        "KernelBench-Ascend-v0",
        memory=str(tmp_path / "m2.db"),
        tasks=[_task(2048)],
        task_stream="single",
        verify_settings={**SETTINGS, "memory_limit_mb": 1536},
        generator=FixedGenerator(answers[:1]),
        budget=1,
        reward="speedup",
    )
    env.reset(seed=0)
    _, r, _, _, info = env.step(env.action_space.sample())
    env.close()
    assert info["verifier"]["feasible"] and "memory_limit_mb" in info["reward_basis"]["fallback"]
    assert info["reward_basis"]["shapes"] == "simulated" and r == pytest.approx(info["verifier"]["speedup"])
