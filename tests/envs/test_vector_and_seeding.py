"""make_vec copies share one store and split the task stream; reset(seed) never rewinds it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import kernel_gym  # noqa: F401  (registers the ids)
from kernel_gym.memory import MemoryStore

TASKS = ["level1/021_relu", "level1/008_square", "level1/001_add", "level1/027_silu",
         "level1/024_tanh", "level1/036_relu6", "level1/002_sub", "level1/022_leaky_relu"]
FAST = {"correctness_trials": 1, "timing_trials": 1}


def test_reseeding_every_episode_still_walks_the_task_list(tmp_path):
    env = gym.make("KernelBench-CPU-v0", tasks=TASKS[:3], memory=str(tmp_path / "m.db"), generator="code", budget=1)
    seen = [env.reset(seed=0)[1]["task_id"] for _ in range(4)]
    assert seen == [*TASKS[:3], TASKS[0]]
    assert env.reset(seed=0, options={"task": TASKS[2]})[1]["task_id"] == TASKS[2]
    assert env.reset(options={"task_id": TASKS[1]})[1]["task_id"] == TASKS[1]
    with pytest.raises(ValueError, match="task \\(or task_id\\)"):
        env.reset(options={"tsk": TASKS[0]})
    env.close()


def test_mixed_order_comes_from_the_first_seed():
    def order(seed):
        env = gym.make("KernelBench-CPU-v0", tasks=TASKS, task_stream="mixed", generator="code", budget=1)
        out = [env.reset(seed=seed + i)[1]["task_id"] for i in range(len(TASKS))]  # later seeds change nothing
        env.close()
        return out
    a, b = order(3), order(3)
    assert a == b and sorted(a) == sorted(TASKS) and a != TASKS


@pytest.mark.slow
def test_make_vec_copies_share_one_store_and_take_disjoint_tasks(tmp_path):
    path = tmp_path / "shared.db"
    vec = gym.make_vec("KernelBench-Ascend-v0", num_envs=4, tasks=TASKS, memory=str(path), budget=1,
                       verify_settings=FAST)
    try:
        _, infos = vec.reset(seed=0)
        first = list(infos["task_id"])
        assert sorted(first) == sorted(TASKS[:4])  # copy i takes task i, i + 4, ...
        vec.step(vec.action_space.sample())
        # every copy sees the traces all four wrote
        assert [s["trace"] for s in vec.call("memory_stats")] == [4, 4, 4, 4]
        _, infos = vec.reset()
        assert sorted(infos["task_id"]) == sorted(TASKS[4:])
    finally:
        vec.close()
    with MemoryStore(path) as store:
        traces = store.all("trace")
        assert sorted(t.task_id for t in traces) == sorted(TASKS[:4])
        # what copy 0 wrote is recalled through another copy's store handle too
        hit = store.recall(np.asarray(traces[0].embedding) if traces[0].embedding is not None else traces[0].text,
                           k=1, kinds="trace", task_id=traces[0].task_id)
        assert hit and hit[0][0].id == traces[0].id


def test_make_vec_refuses_an_open_store(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        with pytest.raises(ValueError, match="pass its path"):
            gym.make_vec("KernelBench-CPU-v0", num_envs=2, memory=store)
