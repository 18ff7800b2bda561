"""PPOAgent: a retrieval policy trained by stable-baselines3 PPO (experiments/train_ppo.py),
acting through the env's flat numeric view (kernel_gym.envs.FlatKernelEnv)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kernel_gym.envs.wrappers import NUMERIC_KEYS, flatten_observation

from .base import Agent

__all__ = ["PPOAgent"]


class PPOAgent(Agent):
    """Loads a PPO checkpoint (``.zip``) and maps its MultiDiscrete action ``[select x K, parent]``
    to the env's Dict action. It does not learn during evaluation (``update`` is a no-op).

    Args:
        checkpoint: path of the saved SB3 model.
        deterministic: take the policy's mode instead of sampling.
        seed: seeds sampling when ``deterministic`` is False.
    """

    name = "ppo"

    def __init__(self, checkpoint: str, deterministic: bool = True, seed: int = 0) -> None:
        super().__init__(seed)
        from stable_baselines3 import PPO

        path = Path(checkpoint)
        if not path.exists():
            raise FileNotFoundError(
                f"PPO checkpoint {path} does not exist; train one with "
                "`python -m experiments.train_ppo` and pass agent.kwargs.checkpoint=<its .zip>"
            )
        self.model = PPO.load(str(path), device="cpu")
        self.model.set_random_seed(seed)
        self.deterministic = bool(deterministic)
        self.checkpoint = str(path)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        flat = flatten_observation(obs)
        shape = self.model.observation_space.shape
        assert shape is not None  # a Box observation space
        expected = shape[0]
        if flat.shape[0] != expected:
            raise ValueError(
                f"the PPO policy expects {expected} observation features but the env gives "
                f"{flat.shape[0]}: evaluate with the env settings it was trained with "
                "(n_select, recall_multiplier, max_parents)"
            )
        action, _ = self.model.predict(flat, deterministic=self.deterministic)
        a = np.asarray(action).reshape(-1)
        k = len(obs["candidate_mask"])
        return {"select": a[:k].astype(np.int8), "parent": int(a[k])}

    def state_dict(self) -> dict[str, Any]:
        return {"checkpoint": self.checkpoint, "numeric_keys": list(NUMERIC_KEYS)}
