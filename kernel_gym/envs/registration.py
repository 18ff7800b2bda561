"""The one place where kernel-gym's environment ids are registered with Gymnasium: one per
registered backend that declares an ``env_id`` (kernel_gym.backends)."""

from __future__ import annotations

import gymnasium as gym

from kernel_gym.backends import BACKENDS, backend_class


def env_ids() -> dict[str, dict]:
    """Environment id -> the env's keyword arguments, from the backend registry."""
    out: dict[str, dict] = {}
    for name in sorted(BACKENDS):
        env_id = backend_class(name).env_id
        if env_id:
            out[env_id] = {"backend": name}
    return out


def register_envs() -> None:
    """Register the id of every registered backend that has one (idempotent)."""
    for env_id, kwargs in env_ids().items():
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
