"""MemRLAgent: composite z-score ranking, threshold / floor, epsilon-greedy, MC update."""

from __future__ import annotations

import numpy as np
import pytest

from agents.memrl import MemRLAgent
from tests.agents.helpers import cand, info, make_store, obs, parent, step_info


def _pool():
    # sims .9 .7 .5 .3 -> z [1.3416, .4472, -.4472, -1.3416]; Q1 1 0 0 -1 -> z [1.4142, 0, 0, -1.4142]
    return [cand(1, 0.9, q1=1.0), cand(2, 0.7, q1=0.0), None, cand(3, 0.5, q1=0.0), cand(4, 0.3, q1=-1.0)]


def test_composite_scores_by_hand():
    agent = MemRLAgent(w_sim=0.5, w_q=0.5)
    keep, score = agent.scores(_pool(), "drafting")
    assert keep == [0, 1, 3]                                  # sim .3 < threshold .5 dropped
    assert np.isnan(score[2])
    assert score[[0, 1, 3, 4]] == pytest.approx([1.3779272, 0.2236068, -0.2236068, -1.3779272])


def test_z_clipping_in_scores():
    cands = [cand(i, 0.6, q1=0.0) for i in range(15)] + [cand(15, 0.6, q1=1.0)]
    _, score = MemRLAgent(w_sim=0.0, w_q=1.0).scores(cands, "drafting")
    assert score[15] == 3.0                                   # sqrt(15) = 3.87 clipped
    assert score[0] == pytest.approx(-1 / np.sqrt(15))
    _, score = MemRLAgent(w_sim=0.0, w_q=1.0, z_clip=10.0).scores(cands, "drafting")
    assert score[15] == pytest.approx(np.sqrt(15))


def test_threshold_relaxed_when_it_empties_the_pool_and_q_floor():
    low = [cand(1, 0.2, q1=0.5), cand(2, 0.1, q1=-0.5)]
    assert MemRLAgent().scores(low, "drafting")[0] == [0, 1]
    assert MemRLAgent(q_floor=0.0).scores(low, "drafting")[0] == [0]
    assert MemRLAgent(q_floor=0.9).scores(low, "drafting")[0] == []   # floor may empty the context
    act = MemRLAgent(q_floor=0.9, epsilon=0.0).act(obs(), info(low))
    assert act["select"].tolist() == [0, 0]


def test_greedy_selection_and_stage_column():
    agent = MemRLAgent(epsilon=0.0)
    act = agent.act(obs(), info(_pool(), n_select=2))
    assert np.flatnonzero(act["select"]).tolist() == [0, 1] and act["parent"] == 0
    # Q weight only, refining: ranks by Q2 among the eligible (sim >= .5)
    pool = [cand(1, 0.9, q2=-1.0), cand(2, 0.6, q2=0.8), cand(3, 0.5, q2=0.2), cand(4, 0.2, q2=5.0)]
    ps = [parent(7, 2e-3), parent(8, 1e-3)]
    act = MemRLAgent(w_sim=0.0, w_q=1.0, epsilon=0.0, topk=2).act(obs("refining"),
                                                                  info(pool, ps, stage="refining", n_select=4))
    assert np.flatnonzero(act["select"]).tolist() == [1, 2] and act["parent"] == 2   # best so far


def test_epsilon_one_random_subset_of_eligible():
    agent = MemRLAgent(epsilon=1.0, seed=0)
    seen = set()
    for _ in range(100):
        sel = np.flatnonzero(agent.act(obs(), info(_pool(), n_select=2))["select"]).tolist()
        assert len(sel) == 2 and set(sel) <= {0, 1, 3}
        seen.update(sel)
    assert seen == {0, 1, 3}


def test_mc_update_by_hand(tmp_path):
    store, ids = make_store(tmp_path / "m.db", 3)
    agent = MemRLAgent(alpha=0.3)
    agent.attach(store)
    assert all(it.q1 == 0.0 and it.q2 == 0.0 for it in store.get_many(ids))   # new items start at 0
    agent.update(obs(), {}, 1.0, obs(), step_info(ids[:2], 1.0))
    agent.update(obs(), {}, -1.0, obs(), step_info(ids[:1], -1.0))
    assert [it.q1 for it in store.get_many(ids)] == pytest.approx([-0.09, 0.3, 0.0])
    # refining: raw reward (no normalisation), Q2 only, the parent is not updated
    agent.update(obs("refining"), {}, 0.5, obs("refining"), step_info(ids[1:2], 0.5, "refining", parent_id=ids[2]))
    assert [it.q2 for it in store.get_many(ids)] == pytest.approx([0.0, 0.15, 0.0])
    store.close()


def test_save_load_round_trip(tmp_path):
    agent = MemRLAgent(epsilon=0.5, seed=4)
    agent.update(obs(), {}, 1.0, obs(), step_info([1, 2], 1.0))
    agent.act(obs(), info(_pool()))
    agent.save(tmp_path / "m.json")
    clone = MemRLAgent(epsilon=0.5, seed=99)
    clone.load(tmp_path / "m.json")
    assert clone.q.local == agent.q.local
    for _ in range(10):
        assert agent.act(obs(), info(_pool()))["select"].tolist() == clone.act(obs(), info(_pool()))["select"].tolist()
