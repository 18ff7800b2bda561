"""Gymnasium environments: KernelSynthesisEnv (KernelBench-Ascend-v0, KernelBench-CPU-v0) and wrappers."""

from kernel_gym.envs.registration import env_ids, register_envs

__all__ = ["FlatKernelEnv", "KernelSynthesisEnv", "env_ids", "register_envs"]


def __getattr__(name: str):  # lazy: `import kernel_gym` must not import torch
    if name == "KernelSynthesisEnv":
        from kernel_gym.envs.kernel_synthesis import KernelSynthesisEnv

        return KernelSynthesisEnv
    if name == "FlatKernelEnv":
        from kernel_gym.envs.wrappers import FlatKernelEnv

        return FlatKernelEnv
    raise AttributeError(name)
