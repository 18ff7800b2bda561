"""The agent interface every retrieval / search policy implements.

An agent drives :class:`kernel_gym.envs.KernelSynthesisEnv` (or anything with its contract):

```python
agent.attach(env.unwrapped.memory)        # the shared MemoryStore (Q-values live in it)
obs, info = env.reset(seed=0)
agent.reset(obs, info)                    # a new episode = a new task
while True:
    action = agent.act(obs, info)
    next_obs, reward, terminated, truncated, step_info = env.step(action)
    agent.update(obs, action, reward, next_obs, step_info)
    obs, info = next_obs, step_info
    if terminated or truncated: break
agent.save("agent.json")
```

The step ``info`` carries both what happened (``context_ids``, ``parent_id``, ``stage``,
``feasible``, ``verifier``, ``trace_id``) and the next decision's choices (``candidates``,
``parents``: one dict per slot, see docs/environment.md), so an agent never needs to reach
into the environment.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import numpy as np

from kernel_gym.memory import MemoryStore

__all__ = ["Agent"]


class Agent(ABC):
    """Base class: ``act`` picks an action dict, ``update`` learns from one step.

    Subclasses set ``name`` and implement :meth:`act`; learning agents override :meth:`update`
    and :meth:`state_dict` / :meth:`load_state_dict` (JSON-able state; Q-values that belong to
    memory items live in the store, keyed by item id, not here).
    """

    name: str = "agent"

    def __init__(self, seed: int = 0) -> None:
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)
        self.memory: MemoryStore | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def attach(self, memory: MemoryStore | None) -> None:
        """Give the agent the shared memory store (where item Q-values are read and written)."""
        self.memory = memory

    def reset(self, obs: dict[str, Any], info: dict[str, Any]) -> None:  # noqa: B027  (optional hook)
        """Called after ``env.reset``: a new episode (task) starts. Default: nothing (stateless agents)."""

    @abstractmethod
    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        """Return an action for the env's action space: ``{"select": int8[K] 0/1, "parent": int}``
        (``parent`` 0 = no parent, i = parent slot i-1)."""

    def update(  # noqa: B027  (optional hook: non-learning agents keep the no-op)
        self, obs: dict[str, Any], action: dict[str, Any], reward: float, next_obs: dict[str, Any], info: dict[str, Any]
    ) -> None:
        """Learn from one transition. Default: nothing (non-learning baselines)."""

    # -- persistence -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """JSON-able learning state (hyper-parameters are the constructor's business)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:  # noqa: B027  (optional hook)
        """Restore what :meth:`state_dict` returned. Default: nothing (the default state is empty)."""

    def save(self, path: str | Path) -> None:
        """Write ``{"agent": name, "seed", "state", "rng"}`` as JSON to ``path``."""
        doc = {"agent": self.name, "seed": self.seed, "state": self.state_dict(), "rng": self.rng.bit_generator.state}
        Path(path).write_text(json.dumps(doc, indent=1, default=json_default))

    def load(self, path: str | Path) -> None:
        """Restore from :meth:`save`'s file; refuses a file written by another agent class."""
        doc = json.loads(Path(path).read_text())
        if doc.get("agent") != self.name:
            raise ValueError(f"{path} holds the state of agent {doc.get('agent')!r}, not {self.name!r}")
        self.load_state_dict(doc.get("state", {}))
        if "rng" in doc:
            self.rng.bit_generator.state = doc["rng"]

    # -- helpers for subclasses ------------------------------------------------------------
    @staticmethod
    def make_action(k: int, selected: list[int] | np.ndarray, parent_slot: int | None) -> dict[str, Any]:
        """An action dict selecting candidate slots ``selected`` and parent slot ``parent_slot``
        (None = no parent)."""
        select = np.zeros(k, dtype=np.int8)
        for i in selected:
            select[int(i)] = 1
        return {"select": select, "parent": 0 if parent_slot is None else int(parent_slot) + 1}


def json_default(o: Any) -> Any:
    """``json.dumps`` default for numpy scalars and arrays (agent states, exported records)."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")
