"""Vector envs of kernel synthesis: N copies that share one memory store and split one task stream.

``gym.make_vec("KernelBench-Ascend-v0", num_envs=4)`` lands here (the ids register this function
as their ``vector_entry_point``). Copy i of n streams tasks i, i + n, i + 2n, ... of the task list,
so the copies work on disjoint tasks, and every copy opens the same SQLite store (WAL makes
concurrent writers safe), so what one copy writes the others recall. With ``memory=None`` the store
is a temporary file that the vector env deletes on ``close()``.

Copies run in subprocesses (``asynchronous=True``, the default) started with ``context="spawn"``:
forking a process whose store already runs index threads can deadlock the child. A script that
creates the vector env must therefore guard its entry point with ``if __name__ == "__main__":``
(spawn re-imports the main module in each child), and a generator passed as an object must be
picklable (names such as ``"synthetic"`` or ``"litellm:<model>"`` always are).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import gymnasium as gym

__all__ = ["make_vector_env"]


def _make_copy(kwargs: dict[str, Any]) -> gym.Env:
    from kernel_gym.envs.kernel_synthesis import KernelSynthesisEnv

    return KernelSynthesisEnv(**kwargs)


class _SharedStoreVectorEnv(gym.vector.VectorWrapper):
    """Deletes the temporary store directory of the copies when the vector env closes."""

    def __init__(self, env: gym.vector.AsyncVectorEnv | gym.vector.SyncVectorEnv, tmpdir: str | None) -> None:
        super().__init__(env)
        self._copies = env  # self.env, typed as the vector envs that have call/get_attr/set_attr
        self._tmpdir = tmpdir

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call ``name`` on every copy (``vec.call("memory_stats")``)."""
        return self._copies.call(name, *args, **kwargs)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self._copies.get_attr(name)

    def set_attr(self, name: str, values: Any) -> None:
        self._copies.set_attr(name, values)

    def close(self, **kwargs: Any) -> None:
        super().close(**kwargs)
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None


def _share_llm_concurrency(kwargs: dict[str, Any]) -> dict[str, Any]:
    """An LLM generator named by string or dict gets one ``concurrency_group`` for all copies, so
    they keep its ``max_concurrency`` requests in flight together (not each)."""
    generator = kwargs.get("generator")
    name = generator.get("name") if isinstance(generator, dict) else generator
    if not (isinstance(name, str) and name.startswith("litellm:")):
        return kwargs
    options = dict(kwargs.get("generator_options") or {})
    in_dict = isinstance(generator, dict) and "concurrency_group" in generator
    if not in_dict and "concurrency_group" not in options:
        options["concurrency_group"] = f"vector-env-{uuid.uuid4().hex}"
    return {**kwargs, "generator_options": options}


def make_vector_env(
    num_envs: int = 1,
    *,
    asynchronous: bool = True,
    context: str | None = "spawn",
    memory: str | os.PathLike[str] | None = None,
    **kwargs: Any,
) -> gym.vector.VectorEnv:
    """``num_envs`` copies of KernelSynthesisEnv over one store and one split task stream.

    :param num_envs: number of copies (>= 1).
    :param asynchronous: copies in subprocesses (``AsyncVectorEnv``) or in this process (``SyncVectorEnv``).
    :param context: multiprocessing start method for asynchronous copies ("spawn" or "forkserver").
    :param memory: path of the shared SQLite store, or a ``postgresql://`` DSN; None = a temporary
        SQLite store, deleted on ``close()``. An open MemoryStore cannot cross processes: pass its path.
    :param kwargs: KernelSynthesisEnv arguments, the same for every copy (``shard`` is set per
        copy unless given; ``task_stream="single"`` gives every copy the same task). An LLM
        generator's ``max_concurrency`` is shared by all copies (one ``concurrency_group``).
    """
    from kernel_gym.memory import MemoryStore

    if not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    if isinstance(memory, MemoryStore):
        raise ValueError(
            "make_vec copies cannot share an open MemoryStore object; pass its path or DSN: "
            "memory=store.dsn or store.path"
        )
    tmpdir = None
    if memory is None:
        tmpdir = tempfile.mkdtemp(prefix="kernel_gym_vec_")
        memory = Path(tmpdir) / "memory.db"
    kwargs = _share_llm_concurrency(kwargs)
    split = "shard" not in kwargs and kwargs.get("task_stream", "suite") != "single" and num_envs > 1
    fns = []
    for i in range(num_envs):
        kw = dict(kwargs, memory=str(memory))
        if split:
            kw["shard"] = (i, num_envs)
        fns.append(functools.partial(_make_copy, kw))
    if asynchronous:
        env: gym.vector.AsyncVectorEnv | gym.vector.SyncVectorEnv = gym.vector.AsyncVectorEnv(
            fns, shared_memory=True, context=context
        )
    else:
        env = gym.vector.SyncVectorEnv(fns)
    return _SharedStoreVectorEnv(env, tmpdir)
