"""Retrieval / search agents for kernel-gym environments.

```python
from agents import get_agent
agent = get_agent("qmemory", epsilon=0.1, seed=0)
```

``AGENTS`` maps each name to ``"module:Class"``; the module is imported only when the agent is
asked for, so an agent whose optional dependencies are missing breaks nothing else. An agent
outside this package needs no registration: name it by its import path, ``"pkg.module:Class"``
(or ``"pkg.module.Class"``), here or as ``_target_`` in a Hydra agent config (agents/template.py
is a policy to copy). To give it a short name, call :func:`register_agent`.
"""

from __future__ import annotations

import importlib
from typing import Any

from .base import Agent

__all__ = ["Agent", "AGENTS", "agent_class", "get_agent", "register_agent"]

#: name -> "module:Class" (module relative to this package when it starts with ".").
AGENTS: dict[str, str] = {
    "qmemory": ".qmemory:QMemoryAgent",
    "similarity": ".baselines:SimilarityAgent",
    "random": ".baselines:RandomAgent",
    "no_memory": ".baselines:NoMemoryAgent",
    "refinement": ".baselines:RefinementAgent",
    "memrl": ".memrl:MemRLAgent",
    "adaexplore": ".adaexplore:AdaExploreAgent",
    "evolutionary": ".evolutionary:EvolutionaryAgent",
    "ppo": ".ppo:PPOAgent",
}


def register_agent(name: str, target: str) -> None:
    """Make ``get_agent(name)`` build ``target`` (``"package.module:Class"``)."""
    if ":" not in target:
        raise ValueError(f"target must look like 'module:Class', got {target!r}")
    AGENTS[name] = target


def _split_target(target: str) -> tuple[str, str]:
    if ":" in target:
        module, _, cls = target.partition(":")
    else:
        module, _, cls = target.rpartition(".")
    if not module or not cls:
        raise ValueError(f"agent target must look like 'package.module:Class', got {target!r}")
    return module, cls


def agent_class(name: str) -> type[Agent]:
    """The agent class registered as ``name``, or at the import path ``name``
    (``"package.module:Class"`` or ``"package.module.Class"``); imports its module."""
    target = AGENTS.get(name)
    if target is None and (":" in name or "." in name):
        target = name
    if target is None:
        raise ValueError(
            f"unknown agent {name!r}; valid names: {', '.join(sorted(AGENTS))}, or an import path "
            f"'package.module:Class' of an Agent subclass"
        )
    module, cls = _split_target(target)
    try:
        mod = importlib.import_module(module, package=__name__ if module.startswith(".") else None)
    except ImportError as e:
        raise ImportError(f"agent {name!r} ({target}) cannot be imported: {e} (is its directory on PYTHONPATH?)") from e
    found = getattr(mod, cls, None)
    if not (isinstance(found, type) and issubclass(found, Agent)):
        raise TypeError(f"agent {name!r}: {target} is not a subclass of agents.Agent")
    return found


def get_agent(name: str, **kwargs: Any) -> Agent:
    """Build the agent registered as ``name`` with constructor keywords ``kwargs``."""
    return agent_class(name)(**kwargs)
