"""Value updates of memory items: EvoKernel's Monte-Carlo Q rule and the usage counters.

Every item carries two values and two counters (columns of the store):

* ``q1``: drafting value (did having the item in context help produce a feasible kernel);
* ``q2``: refining value (did it help make the kernel faster);
* ``use_count``: how many times the item was put into a context;
* ``count``: occurrence count (validity rules: how many failures matched the rule).

The Monte-Carlo update after a step with reward ``r`` is ``Q <- Q + alpha (r - Q)`` on the
column of the step's stage (:func:`mc_step` is the rule; a backend evaluates the same
expression inside its write transaction, so concurrent updates are never lost). Which items are
updated, and with what reward, is the agents' policy (``agents/selection.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["DEFAULT_ALPHA", "STAGE_COLUMNS", "counter_column", "mc_step", "per_id_values", "q_column"]

#: Learning rate of :meth:`MemoryStore.mc_update` when none is given.
DEFAULT_ALPHA = 0.3
#: Stage name (or column name) -> value column.
STAGE_COLUMNS: dict[str, str] = {"drafting": "q1", "q1": "q1", "refining": "q2", "q2": "q2"}


def q_column(stage: str) -> str:
    """The value column a stage updates: ``"drafting"`` -> ``"q1"``, ``"refining"`` -> ``"q2"``."""
    col = STAGE_COLUMNS.get(stage)
    if col is None:
        raise ValueError("stage must be 'drafting' or 'refining'")
    return col


def mc_step(q: float, reward: float, alpha: float) -> float:
    """One Monte-Carlo step of a value: ``q + alpha * (reward - q)`` (float64, as the database computes it).

    Args:
        q: the current value (unitless, the scale of the reward).
        reward: the step's reward.
        alpha: learning rate, usually in ``(0, 1]``; 0 leaves ``q`` unchanged, 1 sets it to ``reward``.
    """
    return q + alpha * (reward - q)


def counter_column(field: str) -> str:
    """Check that ``field`` is a counter column (``"use_count"`` or ``"count"``) and return it."""
    if field not in ("use_count", "count"):
        raise ValueError("field must be 'use_count' or 'count'")
    return field


def per_id_values(name: str, value: float | Sequence[float], n: int) -> list[float]:
    """``value`` as ``n`` floats: a scalar is repeated, a sequence must have ``n`` entries."""
    if isinstance(value, (int, float, np.generic)):
        vals = [float(value)] * n
    else:
        vals = [float(x) for x in value]
    if len(vals) != n:
        raise ValueError(f"{name} has {len(vals)} values for {n} ids")
    return vals
