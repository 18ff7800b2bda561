"""Paired comparison of an agent with a baseline over the same seeds and tasks.

The unit is one (seed, task) pair: both agents ran the task in a run with that seed. For each unit
the per-task outcome at round T is taken from :func:`experiments.metrics.final_metrics` of that
task's episode alone (solved 0/1, faster than the reference 0/1, log of the best speedup with an
unsolved task counted as 1x), and the agent's outcome minus the baseline's is the unit's difference.

* the estimate is the mean difference over the units (for the speedup: the ratio of the all-tasks
  geometric means, ``exp`` of the mean log difference);
* its 95 % confidence interval is a percentile bootstrap over the units;
* its p-value is a two-sided paired sign-flip permutation test: under "no difference" each unit's
  difference is as likely negated, so the observed mean is compared with the means of the
  differences with random signs (all 2^n sign patterns when n is small, else a fixed-seed sample).

Caveat, stated in the report: the tasks of one run share the agent's memory, so units of one seed
are not independent; the test treats them as if they were. Numpy only (scipy is not a dependency).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .metrics import Run, final_metrics, group_runs

__all__ = [
    "ALPHA",
    "BASELINE_PREFERENCE",
    "COMPARED",
    "PairedDifference",
    "choose_baseline",
    "compare_groups",
    "paired_difference",
    "sign_flip_p_value",
    "unit_outcomes",
]

#: Significance level: a difference with p >= ALPHA is marked not significant.
ALPHA = 0.05
#: The baseline used when none is named: the first of these agents present in the runs.
BASELINE_PREFERENCE: tuple[str, ...] = ("similarity", "random", "no_memory")
#: Compared per-task outcomes: (key, header, kind). ``rate``: a 0/1 outcome, the difference of
#: shares; ``log``: the log best speedup (unsolved = 1x), shown as a ratio of geometric means.
COMPARED: tuple[tuple[str, str, str], ...] = (
    ("accuracy", "accuracy", "rate"),
    ("fast_1", "fast_1", "rate"),
    ("all_tasks_geomean_speedup", "geomean speedup, all tasks", "log"),
)
RESAMPLES, SEED = 10_000, 0
#: Up to this many units with a non-zero difference the permutation test enumerates every sign pattern.
EXACT_UNITS = 16


@dataclass
class PairedDifference:
    """One agent minus the baseline on one outcome, over ``n`` paired units."""

    metric: str
    kind: str  # "rate" or "log"
    n: int
    estimate: float  # mean difference ("rate") or ratio of geometric means ("log")
    ci: tuple[float, float] | None
    p_value: float | None

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA

    def cell(self) -> str:
        """``+0.125 [0.021, 0.229] p=0.031`` (``(n.s.)`` appended when not significant)."""
        if self.n == 0:
            return "–"
        if self.kind == "log":
            text = f"{self.estimate:.2f}x"
            if self.ci is not None:
                text += f" [{self.ci[0]:.2f}, {self.ci[1]:.2f}]"
        else:
            text = f"{self.estimate:+.3f}"
            if self.ci is not None:
                text += f" [{self.ci[0]:+.3f}, {self.ci[1]:+.3f}]"
        if self.p_value is not None:
            text += " p<0.001" if self.p_value < 0.001 else f" p={self.p_value:.3f}"
        return text if self.significant else text + " (n.s.)"


def unit_outcomes(run: Run) -> dict[tuple[Any, str, int], dict[str, float]]:
    """Per-task outcomes of a run at its round T, keyed ``(seed, task_id, k)`` (``k`` counts the
    task's earlier episodes in the run, for passes > 1)."""
    by_episode: dict[Any, list[Mapping[str, Any]]] = {}
    for rec in run.records:
        by_episode.setdefault(rec.get("episode"), []).append(rec)
    out: dict[tuple[Any, str, int], dict[str, float]] = {}
    seen: dict[str, int] = {}
    for episode in sorted(by_episode, key=lambda e: (e is None, e)):
        recs = by_episode[episode]
        task = str(recs[0].get("task_id", episode))
        k = seen.get(task, 0)
        seen[task] = k + 1
        final = final_metrics(recs, run.budget)
        if not final:
            continue
        out[(run.seed, task, k)] = {
            "accuracy": float(final["accuracy"]),
            "fast_1": float(final["fast_1"]),
            "all_tasks_geomean_speedup": math.log(final["all_tasks_geomean_speedup"]),
        }
    return out


def sign_flip_p_value(diffs: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> float:
    """Two-sided p-value of a mean paired difference under random sign flips of each unit.

    Exact (every sign pattern of the non-zero differences) up to :data:`EXACT_UNITS` of them, else
    ``(1 + hits) / (1 + resamples)`` over ``resamples`` random patterns (never 0)."""
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        return 1.0
    observed = abs(d.mean())
    nonzero = d[d != 0]
    tol = 1e-12 * max(1.0, float(np.abs(d).max()))
    if nonzero.size == 0:
        return 1.0
    if nonzero.size <= EXACT_UNITS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=nonzero.size)))
        means = np.abs(signs @ nonzero) / d.size
        return float(np.mean(means >= observed - tol))
    rng = np.random.default_rng(seed)
    signs = rng.choice((1.0, -1.0), size=(resamples, nonzero.size))
    means = np.abs(signs @ nonzero) / d.size
    return float((1 + np.sum(means >= observed - tol)) / (1 + resamples))


def _bootstrap(
    diffs: np.ndarray, level: float = 0.95, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = diffs[rng.integers(0, diffs.size, size=(resamples, diffs.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))


def paired_difference(metric: str, kind: str, diffs: Sequence[float]) -> PairedDifference:
    """The estimate, bootstrap CI (two or more units) and sign-flip p-value of ``diffs``."""
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        return PairedDifference(metric, kind, 0, float("nan"), None, None)
    mean = float(d.mean())
    ci = _bootstrap(d) if d.size > 1 else None
    p = sign_flip_p_value(d)
    if kind == "log":
        return PairedDifference(
            metric, kind, int(d.size), math.exp(mean), (math.exp(ci[0]), math.exp(ci[1])) if ci else None, p
        )
    return PairedDifference(metric, kind, int(d.size), mean, ci, p)


def choose_baseline(agents: Sequence[str], requested: str | None = None) -> str | None:
    """``requested`` (ValueError naming the agents present when absent), else the first agent of
    :data:`BASELINE_PREFERENCE` present; None when the runs hold none of them."""
    if requested is not None:
        if requested not in agents:
            raise ValueError(f"baseline {requested!r} is not among the runs' agents: {', '.join(sorted(set(agents)))}")
        return requested
    return next((a for a in BASELINE_PREFERENCE if a in agents), None)


def compare_groups(runs: Sequence[Run], keys: Sequence[str], baseline: str) -> list[dict[str, Any]]:
    """One row per group (agent and values of ``keys``) other than the baseline's: the paired
    differences with the baseline group of the same key values, over their common units.

    Row keys: ``agent``, each key, ``baseline``, ``n_units``, ``seeds`` (common seeds) and, per
    compared outcome, a :class:`PairedDifference` under its key."""
    groups = group_runs(runs, keys)
    outcomes = {gk: _merge(unit_outcomes(r) for r in group) for gk, group in groups.items()}
    rows = []
    for gk, units in outcomes.items():
        if gk[0] == baseline:
            continue
        base = outcomes.get((baseline, *gk[1:]))
        if base is None:
            continue
        common = sorted(set(units) & set(base), key=lambda u: (str(u[0]), u[1], u[2]))
        row: dict[str, Any] = {"agent": gk[0], "baseline": baseline, "n_units": len(common)}
        for k, v in zip(keys, gk[1:], strict=True):
            row[k] = v
        row["seeds"] = sorted({u[0] for u in common}, key=str)
        for metric, _, kind in COMPARED:
            row[metric] = paired_difference(metric, kind, [units[u][metric] - base[u][metric] for u in common])
        rows.append(row)
    return rows


def _merge(parts: Any) -> dict[tuple[Any, str, int], dict[str, float]]:
    out: dict[tuple[Any, str, int], dict[str, float]] = {}
    for p in parts:
        out.update(p)
    return out
