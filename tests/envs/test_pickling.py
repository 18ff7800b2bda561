"""A made env pickles (pickle and cloudpickle) and runs under an async vector env: connections,
locks, faiss indexes and worker threads are dropped when pickled and made anew on load."""

from __future__ import annotations

import pickle

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest

import kernel_gym  # noqa: F401  (registers the ids)
from kernel_gym.memory import MemoryItem

TASKS = ["level1/021_relu", "level1/001_add"]


def _note(store, title: str) -> None:
    store.add(
        MemoryItem(kind="best_practice", title=title, text=f"{title}: use double buffering", backend="ascend_sim")
    )


def test_env_round_trips_through_pickle_and_cloudpickle(tmp_path):
    env = gym.make("KernelBench-Ascend-v0", tasks=TASKS, budget=2, memory=str(tmp_path / "m.db"))
    obs, info = env.reset(seed=0)  # recall built the faiss index and its worker threads
    for dumps, loads in ((pickle.dumps, pickle.loads), (cloudpickle.dumps, cloudpickle.loads)):
        copy = loads(dumps(env))
        inner = copy.unwrapped
        assert inner.task.id == env.unwrapped.task.id and inner.memory.path == env.unwrapped.memory.path
        assert inner.memory_stats() == env.unwrapped.memory_stats()
        # the copy writes through its own connection to the same store, and recalls what it wrote
        _note(inner.memory, f"note from a copy {dumps.__module__}")
        assert env.unwrapped.memory_stats() == inner.memory_stats()
        obs2, info2 = copy.reset(seed=0)
        assert info2["task_id"] == TASKS[1]  # the stream position travelled with the copy
        assert obs2["candidate_mask"].sum() > 0
        copy.close()
    np.testing.assert_array_equal(env.reset(seed=0)[0]["candidate_mask"], obs["candidate_mask"])
    env.close()


def test_an_env_without_a_memory_path_pickles_too():
    env = gym.make("KernelBench-CPU-v0", tasks=TASKS[:1], budget=1, generator="code")
    env.reset(seed=0)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.unwrapped.memory_stats() == env.unwrapped.memory_stats()
    copy.close()
    env.close()


def test_litellm_generator_pickles_without_its_locks(tmp_path):
    from kernel_gym.llm.litellm_generator import LiteLLMGenerator

    gen = LiteLLMGenerator("openai/test-model", api_base="http://127.0.0.1:9/v1", cache_dir=tmp_path, max_concurrency=3)
    copy = pickle.loads(pickle.dumps(gen))
    assert copy.model == gen.model and copy.max_concurrency == 3 and copy._lock is not gen._lock
    assert copy._slots.acquire(blocking=False) and copy._lib is gen._lib


@pytest.mark.slow  # four env processes started with spawn: about 12 s on 2 cores
def test_async_vector_env_with_shared_memory(tmp_path):
    # Gymnasium's own async mode: independent copies made with the same kwargs (so the same task
    # stream; memory=<path> makes them share one store), observations in shared memory
    vec = gym.make_vec(
        "KernelBench-Ascend-v0",
        num_envs=2,
        vectorization_mode="async",
        tasks=TASKS,
        budget=1,
        memory=str(tmp_path / "shared.db"),
    )
    try:
        assert vec.shared_memory  # the observation space (Text included) fits shared memory
        obs, infos = vec.reset(seed=0)
        assert list(infos["task_id"]) == [TASKS[0]] * 2 and obs["candidate_mask"].shape[0] == 2
        stats = vec.call("memory_stats")
        assert stats[0] == stats[1] and stats[0]["total"] > 0
    finally:
        vec.close()
    # the package's vector entry point (the default mode) splits the stream, in shared memory too
    split = gym.make_vec("KernelBench-Ascend-v0", num_envs=2, tasks=TASKS, budget=1)
    try:
        assert split.env.shared_memory
        _, infos = split.reset(seed=0)
        assert sorted(infos["task_id"]) == sorted(TASKS)
    finally:
        split.close()
