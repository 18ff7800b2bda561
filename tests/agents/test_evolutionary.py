"""EvolutionaryAgent: MAP-Elites insertion / replacement, ring migration, parent sampling, smoke run."""

from __future__ import annotations

import numpy as np

from agents import get_agent
from agents.archive import Archive, Member, log_bin
from agents.evolutionary import EvolutionaryAgent

from .helpers import cand, info, parent


def _arch(n_islands: int = 3) -> Archive:
    return Archive(n_islands=n_islands, bins=4, size_range=(100, 10000), speedup_range=(0.25, 4.0))


def test_log_bin():
    assert log_bin(100, 100, 10000, 4) == 0 and log_bin(9999, 100, 10000, 4) == 3
    assert log_bin(1000, 100, 10000, 4) == 2 and log_bin(1e9, 100, 10000, 4) == 3 and log_bin(None, 1, 2, 4) == 0
    assert log_bin(1.0, 0.25, 4.0, 4) == 2 and log_bin(0.3, 0.25, 4.0, 4) == 0


def test_insertion_and_cell_replacement():
    a = _arch()
    m1 = Member(1, fitness=1.2, code_size=1500, speedup=1.2)
    assert a.cell(m1) == (2, 2)
    assert a.insert(0, m1)
    assert not a.insert(0, Member(2, fitness=1.1, code_size=1500, speedup=1.1))   # same cell, worse: rejected
    assert a.cells[0]["2,2"] == 1
    assert a.insert(0, Member(3, fitness=1.5, code_size=1600, speedup=1.5))       # same cell, better: replaces
    assert a.cells[0]["2,2"] == 3
    assert a.insert(0, Member(4, fitness=1.5, code_size=1200, speedup=1.5))       # tie, shorter code: replaces
    assert a.cells[0]["2,2"] == 4
    assert a.insert(0, Member(5, fitness=3.0, code_size=150, speedup=3.0))        # another cell: coexists
    assert a.elites(0) == [5, 4] and a.elites(1) == []
    assert a.cell(a.members[5]) == (0, 3)


def test_ring_migration():
    a = _arch(3)
    a.insert(0, Member(1, 2.0, 1500, 2.0))
    a.insert(0, Member(2, 1.0, 150, 1.0))
    a.insert(1, Member(3, 0.5, 1500, 0.5))
    moved = a.migrate(n_migrants=1)
    # snapshot first: island 0 sends its best (1) to 1, island 1 its best (3) to 2, island 2 nothing
    assert sorted(moved) == [(1, 0, 1), (3, 1, 2)]
    assert a.elites(1) == [1, 3] and a.elites(2) == [3]
    assert a.island_of(1) == [0, 1]
    # member 1 (fitness 2.0) and 3 (0.5) share no cell: speedup bins differ; a second migration moves 1 on
    moved = a.migrate(n_migrants=1)
    assert (1, 1, 2) in moved and a.elites(2) == [1, 3]
    assert a.migrate(n_migrants=0) == [] and _arch(1).migrate() == []


def test_migration_respects_cells():
    a = _arch(2)
    a.insert(0, Member(1, 1.1, 1500, 1.1))
    a.insert(1, Member(2, 1.3, 1500, 1.3))    # same cell on island 1, fitter
    moved = a.migrate(1)
    assert (1, 0, 1) not in moved and a.cells[1]["2,2"] == 2   # worse migrant rejected
    assert (2, 1, 0) in moved and a.cells[0]["2,2"] == 2       # fitter migrant replaces


class _Rng:
    def __init__(self, values):
        self.values = list(values)

    def random(self):
        return self.values.pop(0)


def test_sample_parent_top_and_diverse():
    a = _arch(2)
    for i, (f, size) in enumerate([(3.0, 150), (2.0, 1500), (1.0, 5000), (0.3, 9000)], start=1):
        a.insert(0, Member(i, f, size, f))
    assert a.sample_parent(0, _Rng([0.1, 0.0]), 0.7, top_k=3) == (1, "top")
    assert a.sample_parent(0, _Rng([0.1, 0.99]), 0.7, top_k=3) == (3, "top")
    pid, how = a.sample_parent(0, _Rng([0.9, 0.99]), 0.7, top_k=3)
    assert how == "diverse" and pid == a.cells[0][sorted(a.cells[0])[-1]]
    assert a.sample_parent(1, _Rng([0.1, 0.0]), 0.7)[0] == 1          # empty island: whole archive
    assert _arch().sample_parent(0, np.random.default_rng(0)) == (None, "none")


def test_agent_maps_parent_and_migrates():
    agent = get_agent("evolutionary", n_islands=2, migration_interval=2, seed=0)
    cands = [cand(100, 0.9), cand(101, 0.8), cand(102, 0.7)]
    # drafting: no feasible kernel -> scratch
    act = agent.act({"stage": 0}, info(cands, [None, None], n_select=2))
    assert act["parent"] == 0 and act["mode"] == 0 and list(np.flatnonzero(act["select"])) == [0, 1]
    agent.update({}, act, 1.0, {}, {"task_id": "level1/t0", "feasible": True, "trace_id": 7, "parent_id": None,
                                    "verifier": {"speedup": 1.5, "latency_s": 1e-5}, "code": "x" * 2000})
    shown = [parent(7, 1e-5, 1.5), None]
    act = agent.act({"stage": 1}, info(cands, shown, stage="refining", n_select=2))
    assert act["parent"] == 1 and not agent.last_decision["approximated"]
    agent.update({}, act, 0.0, {}, {"task_id": "level1/t0", "feasible": False, "trace_id": 8, "parent_id": 7,
                                    "verifier": {"error_class": "compile_error"}})
    assert agent.last_migration == [(7, 0, 1)]       # step 2: migration from island 0 to 1
    # a member that is not shown maps to the shown kernel with the closest latency
    arch = agent.archive("level1/t0")
    arch.cells = [{}, {}]
    arch.insert(0, Member(9, 5.0, 3000, 5.0, 2e-6))
    act = agent.act({"stage": 1}, info(cands, [parent(7, 1e-5), parent(11, 3e-6)], stage="refining", n_select=2))
    assert agent.last_decision["sampled"] == 9 and agent.last_decision["approximated"] and act["parent"] == 2


def test_smoke_real_env(tmp_path):
    import gymnasium as gym
    import kernel_gym  # noqa: F401

    env = gym.make("KernelBench-Ascend-v0", memory=str(tmp_path / "memory.db"), generator="synthetic",
                   tasks=["level1/021_relu"], budget=6, max_parents=8, search_actions=True,
                   verify_settings={"correctness_trials": 2, "timing_trials": 3})
    agent = EvolutionaryAgent(n_islands=2, migration_interval=3, seed=0)
    agent.attach(env.unwrapped.memory)
    obs, inf = env.reset(seed=0)
    agent.reset(obs, inf)
    feasible = 0
    for _ in range(6):
        action = agent.act(obs, inf)
        assert env.action_space.contains(action)
        obs, r, term, trunc, inf = env.step(action)
        agent.update(obs, action, r, obs, inf)
        feasible += bool(inf["feasible"])
        if term:
            break
    arch = agent.archive("level1/021_relu")
    assert agent.steps["level1/021_relu"] == 6 and agent.stats["migrations"] == 2
    # every feasible step is offered once; members also keep the ones an elite beat (their ids stay
    # parents of later candidates), so the elites are a subset and each other member lost its cell
    occupants = {i for c in arch.cells for i in c.values()}
    assert occupants <= set(arch.members) and len(arch.members) <= feasible
    for i, m in arch.members.items():
        if i not in occupants:
            holders = [arch.members[c[arch._key(arch.cell(m))]] for c in arch.cells if arch._key(arch.cell(m)) in c]
            assert holders and max(h.fitness for h in holders) >= m.fitness
    env.close()
