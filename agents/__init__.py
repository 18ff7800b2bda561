"""Retrieval / search agents for kernel-gym environments.

```python
from agents import get_agent
agent = get_agent("qmemory", epsilon=0.1, seed=0)
```

``AGENTS`` maps each name to ``"module:Class"``; the module is imported only when the agent is
asked for, so an agent whose optional dependencies are missing breaks nothing else. To add one,
add a line to ``AGENTS`` (or call :func:`register_agent`).
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


def agent_class(name: str) -> type[Agent]:
    """The agent class registered as ``name`` (imports its module)."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; valid names: {', '.join(sorted(AGENTS))}")
    module, cls = AGENTS[name].split(":")
    try:
        mod = importlib.import_module(module, package=__name__ if module.startswith(".") else None)
    except ImportError as e:
        raise ImportError(f"agent {name!r} ({AGENTS[name]}) cannot be imported: {e}") from e
    return getattr(mod, cls)


def get_agent(name: str, **kwargs: Any) -> Agent:
    """Build the agent registered as ``name`` with constructor keywords ``kwargs``."""
    return agent_class(name)(**kwargs)
