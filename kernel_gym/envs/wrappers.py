"""FlatKernelEnv: the numeric view of KernelSynthesisEnv for stable-baselines3 and other
array-only policies (SB3 takes no Dict actions and no text)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["FlatKernelEnv", "NUMERIC_KEYS", "flatten_observation"]

#: Observation keys the flat view concatenates, in this order (stage as a one-hot of 2).
NUMERIC_KEYS: tuple[str, ...] = (
    "task_embedding",
    "stage",
    "budget_left",
    "best_speedup",
    "candidates",
    "candidate_mask",
    "parents",
    "parent_mask",
)


def flatten_observation(obs: dict[str, Any]) -> np.ndarray:
    """The flat float32 vector of an observation: :data:`NUMERIC_KEYS` concatenated, stage one-hot."""
    parts = []
    for key in NUMERIC_KEYS:
        v = obs[key]
        if key == "stage":
            v = np.eye(2, dtype=np.float32)[int(v)]
        parts.append(np.asarray(v, dtype=np.float32).reshape(-1))
    return np.concatenate(parts)


class FlatKernelEnv(gym.Wrapper):
    """Box observations and a MultiDiscrete action over a :class:`KernelSynthesisEnv`.

    Observation: ``Box(D,)`` float32, the concatenation of :data:`NUMERIC_KEYS` (text dropped;
    ``stage`` one-hot). Action: ``MultiDiscrete([2] * K + [P + 1])``: the first K entries are
    ``select``, the last is ``parent``. Only generator-driven envs can be flattened (a code string
    has no numeric form).
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        base = env.observation_space
        act = env.action_space
        if not isinstance(base, spaces.Dict) or not isinstance(act, spaces.Dict):
            raise TypeError("FlatKernelEnv needs a KernelSynthesisEnv-like env (Dict observation and action spaces)")
        if "code" in act.spaces:
            raise ValueError(
                "FlatKernelEnv needs a generator-driven env; code-action mode (generator='code') "
                "has a text action that cannot be flattened"
            )
        select, parent = act["select"], act["parent"]
        if not isinstance(select, spaces.MultiBinary) or not isinstance(parent, spaces.Discrete):
            raise TypeError("FlatKernelEnv needs a MultiBinary 'select' and a Discrete 'parent' action")
        (self._k,) = select.shape
        self._p1 = parent.n
        low, high = [], []
        for key in NUMERIC_KEYS:
            sp = base[key]
            if isinstance(sp, spaces.Discrete):
                low.append(np.zeros(sp.n))
                high.append(np.ones(sp.n))
            elif isinstance(sp, spaces.MultiBinary):
                low.append(np.zeros(int(np.prod(sp.shape))))
                high.append(np.ones(int(np.prod(sp.shape))))
            elif isinstance(sp, spaces.Box):
                low.append(np.broadcast_to(sp.low, sp.shape).reshape(-1))
                high.append(np.broadcast_to(sp.high, sp.shape).reshape(-1))
            else:
                raise TypeError(f"FlatKernelEnv cannot flatten observation {key!r} ({sp})")
        self.observation_space = spaces.Box(
            np.concatenate(low).astype(np.float32), np.concatenate(high).astype(np.float32), dtype=np.float32
        )
        self.action_space = spaces.MultiDiscrete([2] * self._k + [self._p1])

    def flatten(self, obs: dict[str, Any]) -> np.ndarray:
        return flatten_observation(obs)

    def unflatten_action(self, action: np.ndarray) -> dict[str, Any]:
        a = np.asarray(action).reshape(-1)
        return {"select": a[: self._k].astype(np.int8), "parent": int(a[self._k])}

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self.flatten(obs), info

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(self.unflatten_action(action))
        return self.flatten(obs), float(reward), terminated, truncated, info
