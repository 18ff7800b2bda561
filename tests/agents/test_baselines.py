"""Similarity, random, no-memory (pass@k) and per-task refinement baselines."""

from __future__ import annotations

import numpy as np

from agents.baselines import NoMemoryAgent, RandomAgent, RefinementAgent, SimilarityAgent
from tests.agents.helpers import cand, info, obs, parent


def _sel(action):
    return np.flatnonzero(action["select"]).tolist()


def test_similarity_top_n_and_best_so_far():
    cands = [cand(1, 0.2, q1=9.0), None, cand(2, 0.8), cand(3, 0.5), cand(4, 0.8)]
    ps = [parent(10, 3e-3), None, parent(11, 1e-3), parent(12, 2e-3)]
    act = SimilarityAgent().act(obs("refining"), info(cands, ps, stage="refining", n_select=2))
    assert _sel(act) == [2, 4] and act["parent"] == 3       # slot 2: 1 ms
    act = SimilarityAgent().act(obs(), info(cands, [None, None], n_select=3))
    assert _sel(act) == [2, 3, 4] and act["parent"] == 0


def test_random_agent_filled_slots_and_reproducible():
    cands = [None, cand(1), cand(2), None, cand(3), cand(4)]
    ps = [parent(10), None, parent(11)]
    a, b = RandomAgent(seed=5), RandomAgent(seed=5)
    parents, seen = set(), set()
    for _ in range(200):
        x, y = a.act(obs(), info(cands, ps, n_select=2)), b.act(obs(), info(cands, ps, n_select=2))
        assert _sel(x) == _sel(y) and x["parent"] == y["parent"]
        assert len(_sel(x)) == 2 and set(_sel(x)) <= {1, 2, 4, 5}
        seen.update(_sel(x))
        parents.add(x["parent"])
    assert seen == {1, 2, 4, 5} and parents == {0, 1, 3}     # none, slot 0, slot 2


def test_no_memory_fixed_demonstration():
    agent = NoMemoryAgent()
    first = [cand(1, 0.9, kind="trace"), cand(2, 0.6, kind="api_template"), cand(3, 0.7, kind="api_template")]
    i0 = info(first, n_select=4)
    agent.reset(obs(), i0)
    act = agent.act(obs(), i0)
    assert _sel(act) == [2] and act["parent"] == 0 and agent.demo_id == 3
    # later step: the pool changed order and a more similar template appeared; same item, new slot
    later = [cand(4, 0.95, kind="api_template"), cand(5, 0.9), cand(3, 0.7, kind="api_template")]
    act = agent.act(obs("refining"), info(later, [parent(20)], stage="refining"))
    assert _sel(act) == [2] and act["parent"] == 0           # never a parent, even when refining
    # demonstration missing from this pool: the best template of this step, demo kept
    act = agent.act(obs(), info([cand(6, 0.3), cand(7, 0.4, kind="api_template")]))
    assert _sel(act) == [1] and agent.demo_id == 3
    assert _sel(agent.act(obs(), info(later))) == [2]
    # a new episode picks again
    agent.reset(obs(), info(later))
    assert agent.demo_id == 4


def test_no_memory_without_template_uses_first_filled_slot():
    agent = NoMemoryAgent()
    i0 = info([None, cand(5, 0.2), cand(6, 0.9)])
    agent.reset(obs(), i0)
    assert _sel(agent.act(obs(), i0)) == [1] and agent.demo_id == 5
    empty = NoMemoryAgent()
    empty.reset(obs(), info([None, None]))
    assert _sel(empty.act(obs(), info([None, None]))) == [] and empty.demo_id is None


def test_refinement_drafting_uses_only_same_task_failures_most_recent_first():
    task = "level1/t0"
    cands = [
        cand(1, 0.99, kind="api_template", task_id=None),                           # knowledge: never
        cand(2, 0.95, kind="trace", task_id="level1/other", outcome=-1, age=0),     # other task: never
        cand(3, 0.50, kind="trace", task_id=task, outcome=-1, age=6),
        cand(4, 0.40, kind="experience_failure", task_id=task, outcome=-1, age=1),
        cand(5, 0.30, kind="trace", task_id=task, outcome=-1, age=2),
        cand(6, 0.90, kind="trace", task_id=task, outcome=1, age=0),                # earlier episode's success
        None,
    ]
    agent = RefinementAgent()
    act = agent.act(obs(), info(cands, n_select=2, task_id=task))
    assert _sel(act) == [3, 4] and act["parent"] == 0       # ages 1, 2: the latest failure's pair
    act = agent.act(obs(), info(cands, n_select=4, task_id=task))
    assert _sel(act) == [2, 3, 4, 5]                         # then the task's other items
    act = agent.act(obs(), info(cands, n_select=4, task_id="level1/none"))
    assert _sel(act) == []


def test_refinement_refining_best_parent_recent_context_without_the_parent():
    task = "level1/t0"
    cands = [cand(10, 0.9, kind="trace", task_id=task, outcome=1, age=0),      # is the best parent
             cand(11, 0.5, kind="trace", task_id=task, outcome=1, age=3),
             cand(12, 0.4, kind="experience_failure", task_id=task, outcome=-1, age=1),
             cand(13, 0.99, kind="best_practice", task_id=None)]
    ps = [parent(11, 2e-3), parent(10, 1e-3)]
    act = RefinementAgent().act(obs("refining"), info(cands, ps, stage="refining", n_select=2, task_id=task))
    assert act["parent"] == 2 and _sel(act) == [1, 2]
