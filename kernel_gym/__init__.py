"""kernel-gym: LLM kernel synthesis as a Gymnasium environment.

Importing the package registers one environment id per registered backend
(``KernelBench-Ascend-v0``, ``KernelBench-CPU-v0``, and those of plug-in backends); the
environment module itself is imported only by ``gym.make``.
"""

from kernel_gym._version import __version__
from kernel_gym.envs.registration import register_envs as _register_envs

__all__ = ["__version__", "register_backend"]


def register_backend(name: str, target: str) -> None:
    """Add a backend (``target`` = ``"module:Class"``, a kernel_gym.backends.Backend subclass) and
    register its environment id. Packages can instead declare it under the
    ``kernel_gym.backends`` entry-point group, which is read at import. See docs/backends.md."""
    from kernel_gym.backends import register_backend as _register

    _register(name, target)
    _register_envs()


_register_envs()
