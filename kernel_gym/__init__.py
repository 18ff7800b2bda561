"""kernel-gym: LLM kernel synthesis as a Gymnasium environment.

Importing the package registers the environment ids ``KernelBench-Ascend-v0`` and
``KernelBench-CPU-v0`` (the environment module itself is imported only by ``gym.make``).
"""

from kernel_gym._version import __version__
from kernel_gym.envs.registration import register_envs as _register_envs

__all__ = ["__version__"]

_register_envs()
