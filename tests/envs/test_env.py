"""KernelSynthesisEnv: episodes, rewards, memory writes, checkers, vectorisation, bad input."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest

import kernel_gym  # noqa: F401  (registers the ids)
from solutions import reference_answer
from kernel_gym.envs import FlatKernelEnv, KernelSynthesisEnv
from kernel_gym.envs.streams import TaskStream, resolve_tasks
from kernel_gym.llm.fixed import FixedGenerator
from kernel_gym.memory import MemoryStore

FAST = {"correctness_trials": 2, "timing_trials": 3}
RELU = "level1/021_relu"
GOOD = reference_answer(RELU, "ascend_sim")
NAIVE = reference_answer(RELU, "ascend_sim_naive")
BAD = GOOD.replace("Relu(", "Relux(")


def make(tmp_path, sources, **kw):
    kw.setdefault("tasks", [RELU])
    kw.setdefault("verify_settings", FAST)
    return gym.make("KernelBench-Ascend-v0", memory=str(tmp_path / "mem.db"),
                    generator=FixedGenerator(sources), **kw)


def test_thirty_step_episode_with_random_actions(tmp_path):
    env = make(tmp_path, [BAD, BAD, NAIVE, GOOD, BAD], task_stream="single")
    env.action_space.seed(0)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert info["stage"] == "drafting" and obs["stage"] == 0
    rewards, stages = [], []
    for t in range(30):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs)
        rewards.append(r)
        stages.append(info["step_stage"])
        assert term == (t == 29) and not trunc
        assert math.isclose(float(obs["budget_left"][0]), (30 - t - 1) / 30, abs_tol=1e-6)
    # steps 0 and 1 are failed drafts, step 2 the first feasible kernel
    assert rewards[:3] == [-1.0, -1.0, 1.0] and stages[:3] == ["drafting"] * 3
    assert set(stages[3:]) == {"refining"}
    with pytest.raises(RuntimeError, match="reset"):
        env.step(env.action_space.sample())
    store = env.unwrapped.memory
    assert store.count("trace", task_id=RELU) == 30
    assert store.count("experience_failure", task_id=RELU) + store.count("experience_success", task_id=RELU) == 30
    env.close()


def test_refining_reward_and_parents(tmp_path):
    env = make(tmp_path, [NAIVE, GOOD, NAIVE], task_stream="single", budget=3)
    obs, info = env.reset(seed=0)
    _, r0, *_ , i0 = env.step({"select": np.zeros(16, np.int8), "parent": 0})
    assert r0 == 1.0 and i0["first_feasible"] and i0["stage"] == "refining"
    assert i0["parents"][0]["id"] == i0["trace_id"]
    best = i0["verifier"]["latency_s"]
    obs, r1, *_, i1 = env.step({"select": np.zeros(16, np.int8), "parent": 1})
    lat = i1["verifier"]["latency_s"]
    assert lat < best  # the optimised kernel is faster than the naive one
    assert r1 == pytest.approx(math.tanh(math.log(best) - math.log(lat)))
    assert i1["parent_id"] == i0["trace_id"]
    assert env.unwrapped.memory.get(i1["trace_id"]).payload["depth"] == 1
    # the faster kernel is now parent slot 0; the naive one again gives a negative reward
    assert i1["parents"][0]["id"] == i1["trace_id"] and obs["parent_mask"].tolist() == [1, 1, 0, 0]
    _, r2, term, *_ = env.step({"select": np.zeros(16, np.int8), "parent": 1})
    assert r2 == pytest.approx(math.tanh(math.log(lat) - math.log(best))) and r2 < 0 and term
    env.close()


def test_context_selection_is_capped_and_recorded(tmp_path):
    env = make(tmp_path, [BAD], budget=2, n_select=3, recall_multiplier=2)
    obs, info = env.reset(seed=0)
    assert obs["candidates"].shape == (6, 15) and obs["candidate_mask"].sum() == 6
    _, _, _, _, step = env.step({"select": np.ones(6, np.int8), "parent": 0})
    assert step["context_ids"] == [c["id"] for c in info["candidates"][:3]]  # the 3 most similar
    items = env.unwrapped.memory.get_many(step["context_ids"])
    assert all(it.use_count == 1 for it in items)
    trace = env.unwrapped.memory.get(step["trace_id"])
    assert trace.payload["context_ids"] == step["context_ids"] and trace.payload["reward"] == -1.0
    env.close()


def test_memory_persists_across_envs_and_starts_refining(tmp_path):
    env = make(tmp_path, [GOOD], budget=1)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.close()
    env2 = make(tmp_path, [GOOD], budget=1)
    obs, info = env2.reset(seed=0)
    assert info["stage"] == "refining" and obs["parent_mask"][0] == 1 and info["best_speedup"] > 0
    env2.close()


def test_gymnasium_and_sb3_checkers(tmp_path):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env
    env = make(tmp_path, [GOOD], tasks=[RELU, "level1/022_leaky_relu"], budget=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)
    flat = FlatKernelEnv(make(tmp_path, [GOOD], budget=4).unwrapped)
    sb3_check_env(flat)
    assert flat.observation_space.shape[0] == 64 + 2 + 1 + 1 + 16 * 15 + 16 + 4 * 4 + 4
    env.close()
    flat.close()


def test_async_vector_env_shares_one_store(tmp_path):
    path = str(tmp_path / "shared.db")
    venv = gym.make_vec("KernelBench-Ascend-v0", num_envs=4, vectorization_mode="async",
                        vector_kwargs={"shared_memory": False, "context": "spawn"}, memory=path, tasks="level1", max_tasks=4,
                        budget=2, generator="code", verify_settings=FAST)
    venv.reset(seed=0)
    ids = []
    for _ in range(2):
        action = venv.action_space.sample()
        _, rewards, _, _, info = venv.step(action)
        assert rewards.tolist() == [-1.0] * 4  # random text never compiles
        ids.extend(info["trace_id"].tolist())
    venv.close()
    assert len(set(ids)) == 8
    with MemoryStore(path) as store:
        assert store.count("trace") == 8 and sorted(it.id for it in store.all("trace")) == sorted(ids)


def test_render_ansi(tmp_path):
    env = make(tmp_path, [BAD], budget=1, render_mode="ansi")
    env.reset(seed=0)
    assert "no feasible kernel yet" in env.render()
    env.step(env.action_space.sample())
    text = env.render()
    assert RELU in text and "compile_error" in text and "reward -1.000" in text
    env.close()


def test_task_streams():
    tasks = resolve_tasks(["level2/001_conv_relu_bias" if False else "level1/001_add", "level1/021_relu",
                           "level1/022_leaky_relu"])
    s = TaskStream(tasks, "suite")
    assert [s.next().id for _ in range(4)] == [t.id for t in tasks] + [tasks[0].id]
    single = TaskStream(tasks, "single")
    assert {single.next().id for _ in range(3)} == {tasks[0].id}
    m1, m2 = TaskStream(tasks, "mixed"), TaskStream(tasks, "mixed")
    m1.restart(7), m2.restart(7)
    assert [m1.next().id for _ in range(3)] == [m2.next().id for _ in range(3)]
    both = resolve_tasks("all")
    cur = TaskStream(list(reversed(both)), "curriculum")
    levels = [cur.next().level for _ in range(len(both))]
    assert levels == sorted(levels) and levels[0] == 1 and levels[-1] == 2
    shard = TaskStream(tasks, "suite", shard=(1, 2))
    assert [t.id for t in shard.tasks] == [tasks[1].id]


@pytest.mark.parametrize("kwargs, match", [
    ({"budget": 0}, "budget"), ({"backend": "nope"}, "nope"), ({"task_stream": "random"}, "task_stream"),
    ({"render_mode": "rgb_array"}, "render_mode"), ({"verify_settings": {"timing_trial": 3}}, "timing_trial"),
])
def test_bad_configuration_is_refused(tmp_path, kwargs, match):
    with pytest.raises((ValueError, TypeError, KeyError), match=match):
        KernelSynthesisEnv(memory=str(tmp_path / "m.db"), generator=FixedGenerator([GOOD]), tasks=[RELU], **kwargs)


def test_bad_actions_are_refused(tmp_path):
    env = make(tmp_path, [GOOD], budget=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="16 entries"):
        env.unwrapped.step({"select": np.zeros(3), "parent": 0})
    with pytest.raises(ValueError, match="parent"):
        env.unwrapped.step({"select": np.zeros(16), "parent": 9})
    with pytest.raises(ValueError, match="dict"):
        env.unwrapped.step([0, 1])
    env.close()


def test_code_action_mode(tmp_path):
    env = gym.make("KernelBench-Ascend-v0", memory=str(tmp_path / "m.db"), generator="code", tasks=[RELU],
                   budget=2, verify_settings=FAST)
    assert "code" in env.action_space.spaces
    env.reset(seed=0)
    _, r, *_ = env.step({"select": np.zeros(16, np.int8), "parent": 0, "code": GOOD})
    assert r == 1.0
    with pytest.raises(ValueError, match="code"):
        env.unwrapped.step({"select": np.zeros(16, np.int8), "parent": 0})
    env.close()


def test_search_actions_name_parents_by_trace_id(tmp_path):
    env = make(tmp_path, [NAIVE, GOOD, NAIVE], budget=3, search_actions=True, max_parents=1)
    env.reset(seed=0)
    none = {"select": np.zeros(16, np.int8), "parent": 0, "mode": 0, "pool": np.zeros(1, np.int8),
            "parent_id": np.int64(-1), "pool_ids": np.full(1, -1, np.int64)}
    *_, i0 = env.step(none)
    *_, i1 = env.step({**none, "parent": 1})
    # only the faster kernel is shown in the single slot; the naive one is still reachable by id
    assert [p["id"] for p in i1["parents"] if p] == [i1["trace_id"]]
    *_, i2 = env.step({**none, "parent_id": np.int64(i0["trace_id"]), "mode": 1,
                       "pool_ids": np.array([i1["trace_id"]], np.int64)})
    assert i2["parent_id"] == i0["trace_id"] and i2["mode"] == "large" and i2["invalid_ids"] == []
    env.close()
    env = make(tmp_path / "x", [GOOD], budget=1, search_actions=True)
    env.reset(seed=0)
    *_, info = env.step({**none, "pool": np.zeros(4, np.int8), "pool_ids": np.full(4, -1, np.int64),
                         "parent_id": np.int64(10**9)})
    assert info["invalid_ids"] == [10**9] and info["parent_id"] is None
    env.close()


def test_pinned_rules_and_task_slots(tmp_path):
    from kernel_gym.memory import MemoryItem
    (tmp_path / "x").mkdir()
    store = MemoryStore(tmp_path / "x" / "m.db")
    rule = store.add(MemoryItem(kind="validity_rule", text="You cannot call Relux: it does not exist.",
                                title="zz unrelated words", backend="ascend_sim", count=3))
    rare = store.add(MemoryItem(kind="validity_rule", text="You cannot frobnicate.", title="qq", count=1,
                                backend="ascend_sim"))
    own = store.add(MemoryItem(kind="experience_failure", text="zzz", title="qqq", task_id=RELU, level=1,
                               category="activation", backend="ascend_sim"))
    env = KernelSynthesisEnv(memory=store, generator=FixedGenerator([GOOD]), tasks=[RELU], pin_rules=3,
                             n_select=2, recall_multiplier=2, verify_settings=FAST)
    _, info = env.reset(seed=0)
    ids = [c["id"] for c in info["candidates"] if c]
    assert ids[0] == rule and rare not in ids  # pinned first, whatever its similarity
    assert own in ids  # task slot: the task's own item although it is not similar
    env2 = KernelSynthesisEnv(memory=store, generator=FixedGenerator([GOOD]), tasks=[RELU], task_slots=0,
                              n_select=2, recall_multiplier=2, verify_settings=FAST)
    _, info2 = env2.reset(seed=0)
    assert own not in [c["id"] for c in info2["candidates"] if c] and rule not in [c["id"] for c in info2["candidates"] if c]
    env.close(), env2.close(), store.close()
