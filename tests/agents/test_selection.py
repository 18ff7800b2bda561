"""Shared helpers: z-scores, PopArt statistics, epsilon-greedy top-N, parent rule, Q table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.selection import (PopArtStats, QTable, best_parent_slot, epsilon_greedy_top_n, filled_slots,
                              stage_name, top_n, zscore)
from tests.agents.helpers import cand, make_store, parent


def test_stage_name_accepts_codes_and_names():
    assert stage_name(0) == "drafting" and stage_name(np.int64(1)) == "refining"
    assert stage_name(np.array([1])) == "refining" and stage_name("drafting") == "drafting"
    with pytest.raises(ValueError):
        stage_name("polishing")


def test_zscore_by_hand_and_clip():
    # sims .9 .7 .5 .3: mean .6, population std sqrt(.05) = 0.2236068
    assert zscore([0.9, 0.7, 0.5, 0.3]) == pytest.approx([1.3416408, 0.4472136, -0.4472136, -1.3416408])
    # one outlier among 16: z = sqrt(15) = 3.873 -> clipped to 3; the rest -1/sqrt(15)
    z = zscore([0.0] * 15 + [1.0], clip=3.0)
    assert z[-1] == 3.0 and z[0] == pytest.approx(-1 / math.sqrt(15))
    assert zscore([0.0] * 15 + [1.0], clip=None)[-1] == pytest.approx(math.sqrt(15))
    assert np.all(zscore([0.4, 0.4, 0.4]) == 0.0)        # constant: no preference


def test_popart_welford_numbers():
    p = PopArtStats()                      # stats updated with r first, then r normalised
    assert p.normalize(1.0) == 0.0          # one reward: std 0 -> (1 - 1) / min_std = 0
    assert p.normalize(0.0) == pytest.approx(-1.0)   # mean .5, std .5
    # mean 1.4/3, var ((.5333)^2 + (.4667)^2 + (.0667)^2)/3 = 0.168889, std 0.410961
    assert p.normalize(0.4) == pytest.approx(-0.1622214, abs=1e-6)
    assert p.count == 3


def test_popart_ema_numbers():
    p = PopArtStats(beta=0.5)
    assert p.normalize(1.0) == 0.0          # debiased: mean 1, second moment 1 -> var 0
    # m1 = .25, m2 = .25, debias 1 - .25 = .75: mean 1/3, second 1/3, var 2/9 -> (0 - 1/3)/sqrt(2/9)
    assert p.normalize(0.0) == pytest.approx(-1 / math.sqrt(2))


def test_popart_min_std_floor_and_state_round_trip():
    p = PopArtStats(min_std=0.1)
    p.update(-1.0)
    assert p.normalize(-0.99) == pytest.approx((-0.99 - (-0.995)) / 0.1)   # std .005 < floor
    q = PopArtStats()
    q.load_state_dict(p.state_dict())
    assert (q.count, q.mean, q.std, q.min_std) == (p.count, p.mean, p.std, p.min_std)


def test_top_n_ties_by_similarity_then_slot():
    scores = [0.5, 0.5, 0.5, 0.9]
    sims = [0.1, 0.7, 0.7, 0.0]
    assert top_n([0, 1, 2, 3], 3, scores, sims) == [3, 1, 2]
    assert top_n([0, 1, 2, 3], 2, scores) == [3, 0]


def test_epsilon_greedy_zero_is_top_n_and_one_is_random_subset():
    rng = np.random.default_rng(0)
    scores = [0.1, 0.8, 0.3, 0.6, 0.2]
    assert epsilon_greedy_top_n([0, 1, 2, 3, 4], 2, scores, 0.0, rng) == [1, 3]
    seen = set()
    for _ in range(300):
        pick = epsilon_greedy_top_n([0, 2, 4], 2, scores, 1.0, rng)
        assert len(pick) == 2 and set(pick) <= {0, 2, 4}
        seen.update(pick)
    assert seen == {0, 2, 4}
    assert epsilon_greedy_top_n([0, 2], 5, scores, 1.0, rng) == [0, 2]    # fewer filled than N
    assert epsilon_greedy_top_n([], 2, scores, 0.0, rng) == []


def test_epsilon_greedy_explores_at_rate_epsilon():
    rng = np.random.default_rng(1)
    scores = [0.1, 0.8, 0.3, 0.6, 0.2]
    n = 4000
    off = sum(epsilon_greedy_top_n(range(5), 2, scores, 0.2, rng) != [1, 3] for _ in range(n))
    # a random 2-subset of 5 equals the greedy one with probability 1/10
    assert off / n == pytest.approx(0.2 * 0.9, abs=0.025)


def test_best_parent_slot():
    assert best_parent_slot([None, None]) is None and best_parent_slot([]) is None
    assert best_parent_slot([parent(1, 3e-3), None, parent(2, 1e-3), parent(3, 2e-3)]) == 2
    assert best_parent_slot([parent(1, None, 1.5), parent(2, None, 2.5)]) == 1   # no latency: speedup
    assert filled_slots([None, {}, None, {"id": 1}]) == [1, 3]


def test_qtable_local_mc_numbers():
    t = QTable()
    t.mc_update([7], 1.0, 0.3, "drafting")
    assert t.get(7, "q1") == pytest.approx(0.3)
    t.mc_update([7, 7], -1.0, 0.3, "drafting")          # repeated id: one update
    assert t.get(7, "q1") == pytest.approx(0.3 + 0.3 * (-1 - 0.3))   # -0.09
    assert t.get(7, "q2") == 0.0
    # first read of an unseen item starts from the value the env showed
    v = t.values([cand(9, q1=0.4), None], "q1")
    assert v[0] == pytest.approx(0.4) and np.isnan(v[1])


def test_qtable_store_reads_fresh_values(tmp_path):
    store, ids = make_store(tmp_path / "m.db", 2)
    t = QTable(store)
    t.mc_update(ids[:1], 1.0, 0.3, "refining")
    # the slot dict is stale (q2 = 0): the store's value wins
    assert t.values([cand(ids[0], q2=0.0), cand(ids[1])], "q2") == pytest.approx([0.3, 0.0])
    assert store.get(ids[0]).q1 == 0.0
    store.close()
