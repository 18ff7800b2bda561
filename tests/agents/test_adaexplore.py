"""AdaExplore: rule writer + dedup/threshold in a real store, UCB tree selection, step types, pool."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents import get_agent
from agents.adaexplore import AdaExploreAgent, choose_context, map_to_slot
from agents.rules import RuleBook, write_rule
from agents.tree import ROOT, SearchTree, shaped_reward
from kernel_gym.memory import MemoryItem, MemoryStore

from .helpers import cand, info, parent


def _compile_err(api: str, line: int) -> dict:
    msg = (
        f"AscendCCompileError: compilation failed: kernel.cpp:{line}:9: error: ‘{api}’ was not declared "
        f"in this scope (answer line {line + 40})"
    )
    log = f"kernel.cpp: In member function ‘void K::Compute()’:\nkernel.cpp:{line}:9: error: ‘{api}’ was not declared in this scope\n"
    return {"error_class": "compile_error", "feasible": False, "compiled": False, "message": msg, "compile_log": log}


def test_rule_writer_keys_are_normalised():
    a, b, c = (
        write_rule(_compile_err("Reluu", 55)),
        write_rule(_compile_err("Reluu", 81)),
        write_rule(_compile_err("Expp", 55)),
    )
    assert a.text.startswith("You cannot") and "Reluu" in a.text
    assert a.key == b.key == "compile_error/undeclared/reluu"
    assert c.key != a.key
    assert write_rule({"error_class": "ok", "feasible": True}) is None
    assert write_rule({"error_class": "internal_error"}) is None
    mism = {"error_class": "numerical_mismatch", "message": "max abs error 0.5"}
    assert write_rule(mism) is None and write_rule(mism, include_mismatch=True).text.startswith("You cannot")
    syn1 = write_rule({"error_class": "syntax_error", "message": "line 1: '(' was never closed"})
    syn2 = write_rule({"error_class": "syntax_error", "message": "line 7: '[' was never closed"})
    assert syn1.key == syn2.key and syn1.text.startswith("You cannot")
    hack = write_rule({"error_class": "hacked", "hack_rule": "torch_compute", "message": "uses torch.relu"})
    assert hack.key == "hacked/torch_compute"
    fault = write_rule({"error_class": "ub_overflow", "message": "InitBuffer exceeds UB capacity"})
    assert fault.key == "ub_overflow/initbuffer" and fault.text.startswith("You cannot")


def test_rulebook_dedup_and_threshold(tmp_path):
    store = MemoryStore(tmp_path / "memory.db")
    book = RuleBook(store, "ascend_sim", threshold=3)
    rid1, new1 = book.add(write_rule(_compile_err("Reluu", 55)))
    rid2, new2 = book.add(write_rule(_compile_err("Reluu", 90)))
    rid3, _ = book.add(write_rule(_compile_err("Expp", 12)))
    assert new1 and not new2 and rid1 == rid2 and rid3 != rid1
    assert store.get(rid1).count == 2 and book.active() == []
    book.add(write_rule(_compile_err("Reluu", 3)))
    item = store.get(rid1)
    assert (
        item.count == 3
        and item.kind == "validity_rule"
        and item.key == "rule/ascend_sim/compile_error/undeclared/reluu"
    )
    assert (
        item.payload["rule_key"] == "compile_error/undeclared/reluu" and item.payload["error_class"] == "compile_error"
    )
    assert [it.id for it in book.active()] == [rid1]
    assert len(book.rules()) == 2
    store.close()


def test_active_rules_forced_into_context(tmp_path):
    store = MemoryStore(tmp_path / "memory.db")
    book = RuleBook(store, "ascend_sim", threshold=3)
    hot, _ = book.add(write_rule(_compile_err("Reluu", 1)))
    store.increment([hot], "count", 2)  # count 3: active
    cold, _ = book.add(write_rule(_compile_err("Expp", 1)))  # count 1
    agent = AdaExploreAgent(seed=0)
    agent.attach(store)
    agent.backend = "ascend_sim"
    cands = [
        cand(100, 0.9),
        cand(101, 0.8),
        cand(cold, 0.7, kind="validity_rule"),
        cand(hot, 0.1, kind="validity_rule"),
    ]
    act = agent.act({"stage": 0}, info(cands, [], n_select=2))
    assert list(np.flatnonzero(act["select"])) == [0, 3]  # the active rule + the most similar other
    assert agent.last_decision["forced_rules"] == [hot] and act["parent"] == 0 and act["mode"] == 1
    # an active rule the recall did not surface is counted as missing
    act = agent.act({"stage": 0}, info(cands[:3], [], n_select=2))
    assert agent.last_decision["active_rules_missing"] == 1
    store.close()


def test_choose_context_and_map_to_slot():
    cands = [cand(1, 0.9), None, cand(3, 0.95), cand(4, 0.2)]
    assert choose_context(cands, 2) == [2, 0]
    assert choose_context(cands, 2, forced=[3]) == [3, 2]
    tree = SearchTree()
    tree.add(10, None, "large", 0.5, True, 4e-5)
    tree.add(11, 10, "small", 0.6, True, 3e-5)
    tree.add(12, 11, "small", 0.7, True, 1e-5)
    parents = [parent(12, 1e-5), parent(10, 4e-5)]
    assert map_to_slot(12, parents, tree) == (0, False)
    assert map_to_slot(11, parents, tree) == (1, True)  # nearest shown ancestor (10)
    assert map_to_slot(ROOT, parents, tree) == (None, False)


def test_shaped_reward():
    assert shaped_reward(False, False, None) == 0.0
    assert shaped_reward(True, False, None) == 0.05
    assert shaped_reward(True, True, 0.01) == pytest.approx(0.4)
    assert shaped_reward(True, True, 10.0) == pytest.approx(1.6)
    assert shaped_reward(True, True, 100.0) == pytest.approx(1.6)
    assert shaped_reward(True, True, 5.05) == pytest.approx(1.0)
    assert shaped_reward(True, True, 3.0, hacked=True) == 0.0


def _hand_tree() -> SearchTree:
    t = SearchTree(weight=0.3)
    t.add(1, None, "large", 0.5, True, 2e-5)  # A
    t.add(2, None, "large", 1.0, True, 1e-5)  # B
    t.add(3, 1, "small", 0.05, False)  # A's failed refinement
    return t


def test_ucb_values_hand_computed():
    t = _hand_tree()
    assert t.root.visits == 3 and t.root.value_sum == pytest.approx(1.55)
    arms = dict(t.ucb_arms(ROOT))
    ln3 = math.log(3)
    # expand arm: best child mean (B: 1.0) + c sqrt(ln N / k^2) over the root's k = 2 children
    assert arms[ROOT] == pytest.approx(1.0 + 0.3 * math.sqrt(ln3 / 4))  # 1.15722
    assert arms[1] == pytest.approx(0.55 / 2 + 0.3 * math.sqrt(ln3 / 2))  # 0.49734
    assert arms[2] == pytest.approx(1.0 + 0.3 * math.sqrt(ln3 / 1))  # 1.31444
    assert 3 not in arms  # infeasible: a leaf
    assert t.expand_value(2) == math.inf  # a node without children is always expanded
    assert t.select() == 2  # B beats the root's expand arm; B is a leaf: expand it
    assert t.select(allowed=[1]) == ROOT  # B not addressable: the root's expand arm beats A


def test_expand_arm_wins_only_when_strictly_higher():
    t = SearchTree(weight=0.0)  # c = 0: the expand arm is the best child's mean, a tie with that child
    t.add(1, None, "large", 0.5, True, 1e-5)
    t.add(2, 1, "small", 0.5, True, 1e-5)
    assert t.expand_value(ROOT) == pytest.approx(0.5) == dict(t.ucb_arms(ROOT))[1]
    assert t.select() == 2  # ties go to the child, all the way down to the leaf
    t2 = SearchTree(weight=0.3)
    t2.add(1, None, "large", 0.4, True, 1e-5)
    t2.add(2, 1, "small", 0.4, True, 1e-5)
    # root, one child visited twice: expand 0.4 + 0.3 sqrt(ln 2 / 1) = 0.650 > child 0.4 + 0.3 sqrt(ln 2 / 2) = 0.577
    assert t2.expand_value(ROOT) == pytest.approx(0.4 + 0.3 * math.sqrt(math.log(2)))
    assert t2.select() == ROOT


def test_published_constants():
    """AdaExplore's published configs (KB-l2/l3, 50 steps): exploration weight 0.3, p_large 0.2, at most
    2 small steps per node before a large one, pool of at most 5, rules shown from count 3."""
    from agents.tree import MAX_POOL, P_LARGE, SMALL_CHILDREN_LARGE, UCB_WEIGHT

    assert (UCB_WEIGHT, P_LARGE, SMALL_CHILDREN_LARGE, MAX_POOL) == (0.3, 0.2, 2, 5)
    a = AdaExploreAgent()
    assert a.rule_threshold == 3
    t = SearchTree()
    assert (t.weight, t.p_large, t.small_children_large, t.max_pool) == (0.3, 0.2, 2, 5)


def test_large_step_rules():
    t = _hand_tree()
    assert t.step_type(ROOT, 0.9) == "large"
    assert t.step_type(2, 0.9) == "small" and t.step_type(2, 0.1) == "large"
    t.add(4, 2, "small", 0.6, True, 1e-5)
    assert t.step_type(2, 0.9) == "small"
    t.add(5, 2, "small", 0.7, True, 1e-5)
    assert t.small_children(2) == 2 and t.step_type(2, 0.9) == "large"
    t.add(6, 2, "large", 0.7, True, 1e-5)  # large children do not count
    assert t.small_children(2) == 2


def test_diverse_pool():
    t = SearchTree(max_pool=5)
    t.add(1, None, "large", 0.5, True, 4.0)  # component A head
    t.add(2, 1, "small", 0.5, True, 2.0)
    t.add(3, 2, "small", 0.5, True, 1.5)  # best of component A
    t.add(8, 1, "small", 0.5, True, 1.0)  # a branch of A off the path: still A's component, and faster
    t.add(9, 1, "small", 0.5, False)  # infeasible: never in the pool
    t.add(4, 3, "large", 0.5, True, 3.0)  # component L head
    t.add(5, 4, "small", 0.5, True, 2.5)  # best of component L
    t.add(6, 5, "large", 0.5, True, 0.5)  # component M head (fastest of all)
    t.add(7, None, "large", 0.5, True, 0.1)  # another draft, not on the path
    assert t.path(6) == [1, 2, 3, 4, 5, 6]
    assert t.diverse_pool(5) == [8, 5]  # best of each component on the path, in path order
    assert t.diverse_pool(6) == [8, 5, 6]
    assert t.diverse_pool(ROOT) == []
    t.max_pool = 2
    assert t.diverse_pool(6) == [8, 5]  # no rng: the first max_pool
    samples = {tuple(t.diverse_pool(6, np.random.default_rng(s))) for s in range(20)}
    assert samples <= {(8, 5), (8, 6), (5, 6)} and len(samples) > 1  # a uniform sample, kept in path order


def test_agent_state_roundtrip(tmp_path):
    a = get_agent("adaexplore", seed=1)
    a.trees["t"] = _hand_tree()
    a.save(tmp_path / "a.json")
    b = AdaExploreAgent(seed=1)
    b.load(tmp_path / "a.json")
    assert b.trees["t"].select() == 2 and dict(b.trees["t"].ucb_arms(ROOT)) == dict(a.trees["t"].ucb_arms(ROOT))


@pytest.mark.slow  # a real env and verifier end to end: about 30 s on 2 cores
def test_smoke_real_env(tmp_path):
    import gymnasium as gym
    import kernel_gym  # noqa: F401

    env = gym.make(
        "KernelBench-Ascend-v0",
        memory=str(tmp_path / "memory.db"),
        generator="synthetic",
        tasks=["level1/021_relu"],
        budget=4,
        max_parents=8,
        search_actions=True,
        verify_settings={"correctness_trials": 1, "timing_trials": 1},
    )
    agent = AdaExploreAgent(seed=0)
    agent.attach(env.unwrapped.memory)
    obs, inf = env.reset(seed=0)
    agent.reset(obs, inf)
    modes = []
    for _ in range(4):
        action = agent.act(obs, inf)
        assert env.action_space.contains(action)
        modes.append(agent.last_decision["mode"])
        obs, r, term, trunc, inf = env.step(action)
        agent.update(obs, action, r, obs, inf)
        if term:
            break
    tree = agent.trees["level1/021_relu"]
    assert len(tree) == 4 and modes[0] == "large"
    assert tree.root.visits == 4
    env.close()
