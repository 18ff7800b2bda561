"""The agent registry: names, kwargs, unknown names, lazily imported optional agents."""

from __future__ import annotations

import pytest

import agents
from agents import AGENTS, Agent, agent_class, get_agent, register_agent

NAMES = ["qmemory", "similarity", "random", "no_memory", "refinement", "memrl"]


@pytest.mark.parametrize("name", NAMES)
def test_every_agent_builds_and_is_named_like_its_key(name):
    agent = get_agent(name, seed=3)
    assert isinstance(agent, Agent) and agent.name == name and agent.seed == 3


def test_kwargs_reach_the_constructor():
    assert get_agent("qmemory", epsilon=0.25, alpha=0.1).alpha == 0.1
    assert get_agent("memrl", sim_threshold=0.2).sim_threshold == 0.2


def test_unknown_name_lists_valid_names():
    with pytest.raises(ValueError) as e:
        get_agent("nope")
    for name in NAMES:
        assert name in str(e.value)


def test_missing_optional_agent_only_fails_when_asked(monkeypatch):
    monkeypatch.setattr(agents, "AGENTS", dict(AGENTS))      # keep the global registry clean
    register_agent("ghost", "agents.does_not_exist:GhostAgent")
    register_agent("random2", "agents.baselines:RandomAgent")
    assert isinstance(get_agent("random2"), Agent)
    assert agent_class("random").name == "random"             # others unaffected
    with pytest.raises(ImportError, match="ghost"):
        get_agent("ghost")
    with pytest.raises(ValueError):
        register_agent("bad", "no_colon")
