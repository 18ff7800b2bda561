"""The one place where kernel-gym's environment ids are registered with Gymnasium."""

from __future__ import annotations

import gymnasium as gym

ENV_IDS: dict[str, dict] = {
    "KernelBench-Ascend-v0": {"backend": "ascend_sim"},
    "KernelBench-CPU-v0": {"backend": "cpu"},
}


def register_envs() -> None:
    """Register every id of :data:`ENV_IDS` (idempotent)."""
    for env_id, kwargs in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point="kernel_gym.envs.kernel_synthesis:KernelSynthesisEnv",
                # make_vec: copies share one store and split the task stream (envs/vector.py)
                vector_entry_point="kernel_gym.envs.vector:make_vector_env",
                kwargs=dict(kwargs),
                disable_env_checker=False,
                # the shared memory grows with every step, so the same seed and action
                # after a second reset meet a different memory: declared, not hidden
                nondeterministic=True,
            )
