"""The env's reward objects (formulas on hand-made verifier results, choice by name or callable)
and its typed info (the keys returned are exactly the documented records' fields)."""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import pytest

import kernel_gym  # noqa: F401  (registers the ids)
from kernel_gym.envs.info import CandidateInfo, EnvInfo, ParentInfo, StepRecord, StepTiming
from kernel_gym.envs.rewards import REWARDS, AdaExploreReward, EvoKernelReward, SpeedupReward, get_reward
from kernel_gym.llm.fixed import FixedGenerator
from solutions import reference_answer

RELU = "level1/021_relu"
GOOD = reference_answer(RELU, "ascend_sim")
NAIVE = reference_answer(RELU, "ascend_sim_naive")
BAD = GOOD.replace("Relu(", "Relux(")
FAST = {"correctness_trials": 2, "timing_trials": 3}


def ok(latency, speedup):
    return {"feasible": True, "compiled": True, "correct": True, "hacked": False, "latency_s": latency,
            "speedup": speedup}


WRONG = {"feasible": False, "compiled": True, "correct": False, "hacked": False, "error_class": "incorrect"}
NO_COMPILE = {"feasible": False, "compiled": False, "correct": False, "hacked": False, "error_class": "compile_error"}
HACK = {"feasible": False, "compiled": True, "correct": True, "hacked": True, "error_class": "hack"}


def test_evokernel_reward():
    r = EvoKernelReward()
    assert r(ok(2e-6, 3.0), "drafting", None) == 1.0
    assert r(WRONG, "drafting", None) == -1.0 and r(NO_COMPILE, "refining", 1e-6) == -1.0
    assert math.isclose(r(ok(1e-6, 3.0), "refining", 2e-6), math.tanh(math.log(2.0)))
    assert math.isclose(r(ok(4e-6, 1.0), "refining", 2e-6), math.tanh(-math.log(2.0)))
    assert r(ok(1e-6, 3.0), "refining", None) == 0.0  # no best yet: compared with itself


def test_adaexplore_reward():
    r = AdaExploreReward()
    assert r(NO_COMPILE, "drafting", None) == 0.0 and r(HACK, "drafting", None) == 0.0
    assert r(WRONG, "refining", 1e-6) == 0.05
    assert math.isclose(r(ok(1e-6, 0.01), "drafting", None), 0.4)
    assert math.isclose(r(ok(1e-6, 50.0), "drafting", None), 1.6)
    assert math.isclose(r(ok(1e-6, 5.05), "refining", 1e-6), 0.4 + 1.2 * (5.05 - 0.1) / 9.9)


def test_speedup_reward():
    r = SpeedupReward()
    assert r(ok(1e-6, 2.5), "drafting", None) == 2.5
    assert r(WRONG, "refining", 1e-6) == 0.0 and r(ok(1e-6, None), "drafting", None) == 0.0


def test_reward_by_name_or_callable_and_clear_errors():
    assert set(REWARDS) == {"evokernel", "adaexplore", "speedup"}
    assert isinstance(get_reward("adaexplore"), AdaExploreReward)
    fn = lambda result, stage, best: 7.0  # noqa: E731
    assert get_reward(fn) is fn
    with pytest.raises(ValueError, match="env.reward=evokernel"):
        get_reward("fastest")
    with pytest.raises(TypeError, match="callable"):
        get_reward(3)


def _fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_env_uses_the_chosen_reward_and_info_matches_the_records(tmp_path):
    env = gym.make("KernelBench-Ascend-v0", memory=str(tmp_path / "mem.db"), tasks=[RELU], task_stream="single",
                   verify_settings=FAST, generator=FixedGenerator([BAD, NAIVE, GOOD]), budget=3, reward="speedup")
    _, info = env.reset(seed=0)
    assert set(info) == _fields(EnvInfo) - {"last_step"}
    _, r0, *_ = env.step(env.action_space.sample())
    _, r1, _, _, info1 = env.step(env.action_space.sample())
    assert r0 == 0.0 and info1["verifier"]["feasible"]
    assert r1 == pytest.approx(info1["verifier"]["speedup"]) and r1 > 0
    assert set(info1) == (_fields(EnvInfo) - {"last_step"}) | _fields(StepRecord)
    assert set(info1["timing"]) == _fields(StepTiming) and info1["timing"]["overhead_s"] >= 0
    assert set(next(c for c in info1["candidates"] if c)) == _fields(CandidateInfo)
    assert set(next(p for p in info1["parents"] if p)) == _fields(ParentInfo)
    env.close()

    calls = []

    def custom(result, stage, best):
        calls.append((bool(result.get("feasible")), stage, best))
        return 0.5

    env = gym.make("KernelBench-Ascend-v0", memory=str(tmp_path / "mem2.db"), tasks=[RELU], task_stream="single",
                   verify_settings=FAST, generator=FixedGenerator([NAIVE, GOOD]), budget=2, reward=custom)
    env.reset(seed=0)
    rewards = [env.step(env.action_space.sample())[1] for _ in range(2)]
    assert rewards == [0.5, 0.5]
    assert calls[0] == (True, "drafting", None)
    assert calls[1][:2] == (True, "refining") and calls[1][2] > 0  # the naive kernel's latency
    env.close()
