"""Value updates: the Monte-Carlo Q rule, its argument checks, and no lost update across processes."""

from __future__ import annotations

import multiprocessing as mp

import numpy as np
import pytest

from kernel_gym.memory import MemoryItem, MemoryStore
from kernel_gym.memory.values import counter_column, mc_step, per_id_values, q_column
from tests.memory.backends import BACKEND_NAMES, new_location, require_server


@pytest.fixture(params=BACKEND_NAMES)
def location(request, tmp_path):
    """A new store location (a SQLite path or a PostgreSQL DSN) for each backend."""
    require_server(request.param, request)
    return new_location(request.param, tmp_path)


def test_rule_and_arguments():
    assert mc_step(0.25, 1.0, 0.5) == 0.625
    assert mc_step(0.4, -1.0, 0.0) == 0.4 and mc_step(0.5, -1.0, 1.0) == -1.0
    assert [q_column(s) for s in ("drafting", "refining", "q1", "q2")] == ["q1", "q2", "q1", "q2"]
    with pytest.raises(ValueError):
        q_column("polishing")
    assert counter_column("count") == "count"
    with pytest.raises(ValueError):
        counter_column("q1")
    assert per_id_values("q1", 0.5, 3) == [0.5, 0.5, 0.5]
    assert per_id_values("q1", np.float32(0.5), 2) == [0.5, 0.5]
    assert per_id_values("q2", [1, 2], 2) == [1.0, 2.0]
    with pytest.raises(ValueError, match="q2 has 1 values for 2 ids"):
        per_id_values("q2", [1.0], 2)


def test_store_value_updates_follow_the_rule(location):
    with MemoryStore(location) as s:
        ids = s.add([MemoryItem(kind="best_practice", text=f"note {i}", q1=0.1 * i, q2=-0.2) for i in range(4)])
        rewards = [1.0, -1.0, 0.5, 0.0]
        expected = {i: (it_q1, -0.2) for i, it_q1 in zip(ids, [0.1 * i for i in range(4)], strict=True)}
        for r in rewards:
            s.mc_update(ids[:2], reward=r, alpha=0.3, stage="drafting")
            s.mc_update(ids[2:], reward=r, alpha=0.3, stage="refining")
            for i in ids[:2]:
                expected[i] = (mc_step(expected[i][0], r, 0.3), expected[i][1])
            for i in ids[2:]:
                expected[i] = (expected[i][0], mc_step(expected[i][1], r, 0.3))
        got = {it.id: (it.q1, it.q2) for it in s.get_many(ids)}
        for i in ids:
            assert got[i] == pytest.approx(expected[i], rel=1e-12), i
        gen = s.generation
        s.mc_update([], reward=1.0)  # nothing to do: no transaction
        s.update_q([], q1=1.0)
        assert s.generation == gen
        with pytest.raises(ValueError):
            s.mc_update(ids, reward=1.0, stage="polishing")
        with pytest.raises(ValueError):
            s.increment(ids, "q1")


def test_two_processes_updating_one_item_lose_nothing(location):
    """Identical steps commute, so 2n Monte-Carlo updates from two processes give one exact value."""
    from tests.memory._workers import store_value_steps

    with MemoryStore(location) as s:
        item = s.add(MemoryItem(kind="best_practice", text="shared", q2=0.0))
    n, reward, alpha = 150, 1.0, 0.01
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=store_value_steps, args=(location, item, n, reward, alpha)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    q = [0.0]
    for _ in range(2 * n):
        q.append(mc_step(q[-1], reward, alpha))
    with MemoryStore(location) as s:
        got = s.get(item)
    assert got.use_count == 2 * n
    assert got.q2 == pytest.approx(q[2 * n], rel=1e-12)
    assert got.q2 != pytest.approx(q[2 * n - 1], rel=1e-6)
