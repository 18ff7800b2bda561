"""Metrics over the run directories written by ``python -m experiments.run`` (docs/run_format.md).

Pure functions over step / episode records, plus loaders:

* :func:`load_run` reads one run directory into a :class:`Run`;
  :func:`find_runs` lists every run directory under a root (a run, a Hydra multirun sweep or a
  comparison run); :func:`load_runs` does both and refuses a root without runs.
* :func:`round_metrics` gives, for round ``r = 1..T`` (the first ``r`` steps of every task's
  episode), ``compile_rate``, ``accuracy``, ``fast_1``, ``median_speedup`` and
  ``geomean_speedup``; :func:`final_metrics` is round ``T``.
* :func:`aggregate` groups runs by agent (and by whitelisted config keys that vary across the
  runs, e.g. ``env.recall_multiplier``) and gives mean and standard deviation over seeds.

Conventions (see also the docstrings):

* Tasks counted = the episodes present in the run (a killed run counts the episodes it started;
  an unfinished episode counts with the steps it took).
* An episode shorter than ``r`` steps keeps its outcome for later rounds.
* Speedup statistics are over the tasks with a feasible kernel within ``r`` steps, of the best
  speedup within ``r`` steps; ``None`` when no task has one.
* Standard deviations over seeds are sample standard deviations (``ddof=1``); ``None`` for a
  single run. Means and deviations of a speedup statistic skip runs where it is ``None``.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "METRICS",
    "FAST_P",
    "DEFAULT_GROUP_KEYS",
    "bootstrap_ci",
    "RunFormatError",
    "RunFormatWarning",
    "NoRunsError",
    "Run",
    "read_jsonl",
    "load_run",
    "find_runs",
    "load_runs",
    "round_metrics",
    "final_metrics",
    "episode_best_speedups",
    "llm_spend",
    "run_round_metrics",
    "varying_keys",
    "group_runs",
    "group_label",
    "aggregate",
    "flatten_config",
]

#: The per-round metrics, in table order. ``fast_p`` is KernelBench's: the share of tasks with a
#: correct kernel faster than ``p`` times the reference. ``all_tasks_geomean_speedup`` is over every
#: task, a task without a correct kernel counted as the reference (1x); ``median_speedup`` and
#: ``geomean_speedup`` are over the solved tasks only.
METRICS: tuple[str, ...] = (
    "compile_rate",
    "accuracy",
    "fast_0",
    "fast_1",
    "fast_1.5",
    "fast_2",
    "all_tasks_geomean_speedup",
    "median_speedup",
    "geomean_speedup",
)
#: The thresholds p of the fast_p metrics.
FAST_P: tuple[float, ...] = (0.0, 1.0, 1.5, 2.0)
#: Bootstrap confidence intervals over seeds: level, resamples, resampling seed (fixed: a report
#: is reproducible).
CI_LEVEL, CI_RESAMPLES, CI_SEED = 0.95, 10_000, 0
#: Config keys (dotted) that split runs into groups besides the agent, when they vary across runs.
#: (conf/experiment/*.yaml are ``@package _global_``, so ``experiment`` is only there when a
#: config sets it.) Agent hyper-parameters are not listed: pass them as ``keys`` / ``--group-by``.
DEFAULT_GROUP_KEYS: tuple[str, ...] = (
    "env.recall_multiplier",
    "env.n_select",
    "env.budget",
    "env.task_stream",
    "tasks.name",
    "backend.name",
    "llm.name",
    "llm.model",
    "experiment",
)
#: Config keys tried, in order, for the per-task step budget when summary.json has none.
BUDGET_KEYS: tuple[str, ...] = ("budget", "env.budget", "env.max_steps", "env.steps_per_task", "steps_per_task")
#: Standard deviation over seeds: sample standard deviation.
DDOF = 1


class RunFormatError(ValueError):
    """A run directory or one of its files does not follow docs/run_format.md."""


class NoRunsError(RunFormatError):
    """A directory holds no run (no steps.jsonl anywhere under it)."""


class RunFormatWarning(UserWarning):
    """A tolerated defect of a run file (e.g. a truncated last line of a killed run)."""


def median_or_nan(values: Sequence[float]) -> float:
    """Median of ``values``; NaN (printed as "nan" in benchmark tables) when there are none."""
    return float(statistics.median(values)) if values else float("nan")


# ====================================================================== loading


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Records of a JSON-lines file. Blank lines are skipped. A last line that is not valid JSON
    (a run killed mid-write) is dropped with a :class:`RunFormatWarning`; any other invalid line
    raises :class:`RunFormatError` naming the file and the 1-based line number."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise RunFormatError(f"{path}: cannot read ({e})") from e
    lines = text.split("\n")
    numbered = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip()]
    out: list[dict[str, Any]] = []
    for k, (lineno, line) in enumerate(numbered):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            if k == len(numbered) - 1:
                warnings.warn(
                    f"{path}:{lineno}: ignoring a truncated last line ({e.msg}); was the run killed?",
                    RunFormatWarning,
                    stacklevel=2,
                )
                break
            raise RunFormatError(
                f"{path}:{lineno}: corrupt line, not valid JSON ({e.msg} at column {e.colno}): {line[:80]!r}"
            ) from e
        if not isinstance(rec, dict):
            raise RunFormatError(f"{path}:{lineno}: expected a JSON object, got {type(rec).__name__}")
        out.append(rec)
    return out


def _load_config(run_dir: Path) -> dict[str, Any]:
    for cand in (run_dir / "config.yaml", run_dir / ".hydra" / "config.yaml"):
        if not cand.is_file():
            continue
        try:
            from omegaconf import OmegaConf

            cfg = OmegaConf.load(cand)
            data: Any
            try:
                data = OmegaConf.to_container(cfg, resolve=True)
            except Exception:  # an interpolation that needs Hydra's resolvers
                data = OmegaConf.to_container(cfg, resolve=False)
        except ImportError:  # pragma: no cover - omegaconf comes with hydra-core
            import yaml

            data = yaml.safe_load(cand.read_text(encoding="utf-8"))
        except Exception as e:
            raise RunFormatError(f"{cand}: cannot parse the config ({e})") from e
        return data if isinstance(data, dict) else {}
    return {}


def flatten_config(cfg: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"env": {"recall_multiplier": 2}}`` -> ``{"env.recall_multiplier": 2}`` (lists kept)."""
    out: dict[str, Any] = {}
    for k, v in cfg.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten_config(v, key + "."))
        else:
            out[key] = v
    return out


@dataclass
class Run:
    """One run directory: one agent, one seed, one task stream."""

    path: Path
    agent: str
    seed: int | None
    config: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    episodes: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] | None = None

    @property
    def flat_config(self) -> dict[str, Any]:
        return flatten_config(self.config)

    @property
    def budget(self) -> int:
        """Steps per task ``T``: summary.json ``budget``, else a config key in :data:`BUDGET_KEYS`,
        else the longest episode seen."""
        if self.summary and isinstance(self.summary.get("budget"), int) and self.summary["budget"] > 0:
            return int(self.summary["budget"])
        flat = self.flat_config
        for k in BUDGET_KEYS:
            v = flat.get(k)
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                return v
        return _observed_budget(self.steps, self.episodes)

    @property
    def records(self) -> list[dict[str, Any]]:
        """What metrics are computed from: the steps, or the episodes when there are no steps."""
        return self.steps if self.steps else self.episodes

    @property
    def memory_db(self) -> Path | None:
        p = self.path / "memory.db"
        return p if p.is_file() else None


def _observed_budget(steps: Sequence[Mapping[str, Any]], episodes: Sequence[Mapping[str, Any]]) -> int:
    t = max((int(s.get("step", 0)) + 1 for s in steps), default=0)
    return max(t, max((int(e.get("steps") or 0) for e in episodes), default=0))


def _agent_name(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, Mapping):
        for k in ("name", "_name_", "id"):
            if isinstance(value.get(k), str):
                return value[k]
    return None


def load_run(run_dir: str | Path) -> Run:
    """Read one run directory. ``steps.jsonl`` is required; ``episodes.jsonl``, ``summary.json``
    and ``config.yaml`` (or ``.hydra/config.yaml``) are optional.

    The agent name comes from the step records, else summary.json, else the config's ``agent``
    (a name or a group with a ``name``), else the directory name; the seed likewise (config
    ``seed``), else None.

    Raises :class:`RunFormatError` naming the file when steps.jsonl is missing or has a corrupt
    line (a truncated last line is only warned about).
    """
    run_dir = Path(run_dir)
    steps_path = run_dir / "steps.jsonl"
    if not steps_path.is_file():
        raise RunFormatError(f"{steps_path}: missing; {run_dir} is not a run directory (see docs/run_format.md)")
    steps = read_jsonl(steps_path)
    episodes = read_jsonl(run_dir / "episodes.jsonl") if (run_dir / "episodes.jsonl").is_file() else []
    summary = None
    if (run_dir / "summary.json").is_file():
        try:
            summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            warnings.warn(
                f"{run_dir / 'summary.json'}: ignoring an unreadable summary ({e.msg})", RunFormatWarning, stacklevel=2
            )
        if not isinstance(summary, dict):
            summary = None
    config = _load_config(run_dir)
    first = steps[0] if steps else (episodes[0] if episodes else {})
    agent = (
        _agent_name(first.get("agent"))
        or _agent_name((summary or {}).get("agent"))
        or _agent_name(config.get("agent"))
        or run_dir.name
    )
    seed = first.get("seed")
    if seed is None:
        seed = (summary or {}).get("seed", config.get("seed"))
    return Run(path=run_dir, agent=agent, seed=seed, config=config, steps=steps, episodes=episodes, summary=summary)


def _natural_key(p: Path) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(p))]


def find_runs(root: str | Path) -> list[Path]:
    """Every directory under ``root`` (itself included) that holds a ``steps.jsonl``, in natural
    order (``2`` before ``10``); hidden directories (``.hydra``) are skipped."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = {
        p.parent
        for p in root.rglob("steps.jsonl")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts[:-1])
    }
    return sorted(found, key=_natural_key)


def load_runs(root: str | Path) -> list[Run]:
    """:func:`load_run` of every run under ``root``; :class:`NoRunsError` when there is none."""
    root = Path(root)
    if not root.exists():
        raise NoRunsError(f"{root}: no such directory")
    dirs = find_runs(root)
    if not dirs:
        raise NoRunsError(f"{root}: no runs found (no steps.jsonl in it or any directory under it)")
    return [load_run(d) for d in dirs]


# ====================================================================== per-run metrics


def _is_steps(records: Sequence[Mapping[str, Any]]) -> bool:
    return bool(records) and "step" in records[0] and "feasible_at" not in records[0]


def _valid_speedup(v: Any) -> float | None:
    if v is None or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) and f > 0 else None


@dataclass
class _Outcome:
    """An episode's trajectory reduced to what the round metrics need."""

    n_steps: int
    compiled_at: int | None  # first step index with a compiled kernel
    feasible_at: int | None  # first step index with a feasible kernel
    best_by_step: list[float | None]  # best feasible speedup after steps 0..n_steps-1
    fast_at: int | None  # first step index with a feasible kernel with speedup > 1

    def best_within(self, r: int) -> float | None:
        if not self.best_by_step:
            return None
        return self.best_by_step[min(r, len(self.best_by_step)) - 1]


def _outcomes_from_steps(steps: Sequence[Mapping[str, Any]]) -> list[_Outcome]:
    by_ep: dict[Any, list[Mapping[str, Any]]] = defaultdict(list)
    for s in steps:
        by_ep[s.get("episode")].append(s)
    out = []
    for ep in sorted(by_ep, key=lambda e: (e is None, e)):
        seq = sorted(by_ep[ep], key=lambda s: int(s.get("step", 0)))
        compiled_at = feasible_at = fast_at = None
        best: float | None = None
        best_by_step: list[float | None] = []
        for i, s in enumerate(seq):
            feasible = bool(s.get("feasible"))
            if compiled_at is None and (s.get("compiled") or feasible):
                compiled_at = i
            if feasible:
                if feasible_at is None:
                    feasible_at = i
                sp = _valid_speedup(s.get("speedup"))
                if sp is not None:
                    best = sp if best is None else max(best, sp)
                    if fast_at is None and sp > 1.0:
                        fast_at = i
            best_by_step.append(best)
        out.append(_Outcome(len(seq), compiled_at, feasible_at, best_by_step, fast_at))
    return out


def _outcomes_from_episodes(episodes: Sequence[Mapping[str, Any]]) -> list[_Outcome]:
    """Episode records lack the per-step speedups: between the first feasible step and the end of
    the episode the best speedup is taken as ``first_speedup`` (a lower bound); from the episode's
    last step on it is ``best_speedup`` (exact). Prefer steps."""
    out = []
    for e in sorted(episodes, key=lambda e: (e.get("episode") is None, e.get("episode"))):
        fa = e.get("feasible_at")
        ca = e.get("compiled_at")
        if ca is None:
            ca = fa
        n = max(int(e.get("steps") or 0), (fa + 1) if fa is not None else 0, (ca + 1) if ca is not None else 0, 1)
        first, best = _valid_speedup(e.get("first_speedup")), _valid_speedup(e.get("best_speedup"))
        best = best if best is not None else first
        first = first if first is not None else best
        by_step: list[float | None] = [None] * n
        fast_at = None
        if fa is not None:
            for i in range(fa, n):
                by_step[i] = first
            by_step[n - 1] = best
            if first is not None and first > 1:
                fast_at = fa
            elif best is not None and best > 1:
                fast_at = n - 1
        out.append(_Outcome(n, ca, fa, by_step, fast_at))
    return out


def _outcomes(records: Sequence[Mapping[str, Any]]) -> list[_Outcome]:
    if not records:
        return []
    return _outcomes_from_steps(records) if _is_steps(records) else _outcomes_from_episodes(records)


def _geomean(xs: Sequence[float]) -> float:
    return float(math.exp(sum(math.log(x) for x in xs) / len(xs)))


def round_metrics(records: Sequence[Mapping[str, Any]], budget: int | None = None) -> list[dict[str, Any]]:
    """Metrics for rounds ``r = 1..T`` (docs/run_format.md), one dict per round:
    ``{"round", "n_tasks", "n_feasible"}`` and each metric of :data:`METRICS`.

    ``records`` are step records (grouped by ``episode``; works on partial runs) or, failing those,
    episode records (speedups at intermediate rounds are then lower bounds, see
    :func:`_outcomes_from_episodes`). Tasks counted = the episodes present. ``budget`` is ``T``;
    None: the longest episode seen. Rates are None when there are no tasks; speedup statistics
    are None when no task has a feasible kernel within ``r`` steps.
    """
    outcomes = _outcomes(records)
    if budget is None:
        budget = max((o.n_steps for o in outcomes), default=0)
    n = len(outcomes)
    rows = []
    for r in range(1, int(budget) + 1):
        compiled = sum(o.compiled_at is not None and o.compiled_at < r for o in outcomes)
        feasible = [o for o in outcomes if o.feasible_at is not None and o.feasible_at < r]
        fast = sum(o.fast_at is not None and o.fast_at < r for o in outcomes)
        speedups = [s for s in (o.best_within(r) for o in feasible) if s is not None]
        row: dict[str, Any] = {
            "round": r,
            "n_tasks": n,
            "compile_rate": compiled / n if n else None,
            "accuracy": len(feasible) / n if n else None,
        }
        for p in FAST_P:
            if p == 1.0:  # the first step faster than the reference, as logged
                count = fast
            else:
                count = sum(1 for s in speedups if s > p)
            row[f"fast_{p:g}"] = count / n if n else None
        solved_or_one = speedups + [1.0] * (n - len(speedups))
        row.update(
            {
                "n_feasible": len(feasible),
                "all_tasks_geomean_speedup": _geomean(solved_or_one) if n else None,
                "median_speedup": float(statistics.median(speedups)) if speedups else None,
                "geomean_speedup": _geomean(speedups) if speedups else None,
            }
        )
        rows.append(row)
    return rows


def final_metrics(records: Sequence[Mapping[str, Any]], budget: int | None = None) -> dict[str, Any]:
    """:func:`round_metrics` at round ``T`` (the last round); ``{}`` when there is no round."""
    rows = round_metrics(records, budget)
    return rows[-1] if rows else {}


def episode_best_speedups(records: Sequence[Mapping[str, Any]], budget: int | None = None) -> list[float]:
    """Best feasible speedup of every episode (task) within ``budget`` steps, for the episodes
    that have one."""
    outs = _outcomes(records)
    if budget is None:
        budget = max((o.n_steps for o in outs), default=0)
    return [
        s
        for s in (o.best_within(budget) for o in outs if o.feasible_at is not None and o.feasible_at < budget)
        if s is not None
    ]


def run_round_metrics(run: Run) -> list[dict[str, Any]]:
    """:func:`round_metrics` of a :class:`Run` with its budget."""
    return round_metrics(run.records, run.budget)


# ====================================================================== aggregation over seeds

_MISSING = "<unset>"


def _hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


def varying_keys(runs: Sequence[Run], keys: Iterable[str] = DEFAULT_GROUP_KEYS) -> list[str]:
    """The keys of ``keys`` (dotted config paths) with more than one value across ``runs``."""
    flats = [r.flat_config for r in runs]
    out = []
    for k in keys:
        if k == "agent":
            continue
        if len({_hashable(f.get(k, _MISSING)) for f in flats}) > 1:
            out.append(k)
    return out


def group_runs(runs: Sequence[Run], keys: Sequence[str]) -> dict[tuple[Any, ...], list[Run]]:
    """Runs grouped by ``(agent, *values of keys)``, groups in first-seen order."""
    groups: dict[tuple[Any, ...], list[Run]] = {}
    for r in runs:
        flat = r.flat_config
        gk = (r.agent, *(_hashable(flat.get(k)) for k in keys))
        groups.setdefault(gk, []).append(r)
    return groups


def group_label(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    """``qmemory`` or ``qmemory (recall_multiplier=2)`` for a row of :func:`aggregate`."""
    if not keys:
        return str(row["agent"])
    extra = ", ".join(f"{k.rsplit('.', 1)[-1]}={row.get(k)}" for k in keys)
    return f"{row['agent']} ({extra})"


def _mean_std(values: Sequence[float | None]) -> tuple[float | None, float | None, int]:
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return None, None, 0
    mean = float(np.mean(xs))
    std = float(np.std(xs, ddof=DDOF)) if len(xs) > DDOF else None
    return mean, std, len(xs)


def bootstrap_ci(
    values: Sequence[float | None], level: float = CI_LEVEL, resamples: int = CI_RESAMPLES, seed: int = CI_SEED
) -> tuple[float, float] | None:
    """Percentile bootstrap confidence interval of the mean of ``values`` (one per seed; None
    skipped): resample the seeds with replacement ``resamples`` times. None with fewer than two
    values (no spread to resample)."""
    xs = np.array([float(v) for v in values if v is not None])
    if len(xs) < 2:
        return None
    rng = np.random.default_rng(seed)
    means = xs[rng.integers(0, len(xs), size=(resamples, len(xs)))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))


def aggregate(
    runs: Sequence[Run], keys: Sequence[str] | None = None, candidate_keys: Iterable[str] = DEFAULT_GROUP_KEYS
) -> list[dict[str, Any]]:
    """One row per group of runs (agent, plus the config keys that vary across ``runs``, or
    ``keys`` when given), with mean and sample standard deviation (ddof=1) over the group's runs
    (seeds) of each final metric.

    Row keys: ``agent``, each group key, ``label``, ``group_keys``, ``n_seeds`` (runs in the
    group), ``seeds``, ``paths``, ``n_tasks`` (list, per run), ``budget`` (max over runs), for each
    metric ``m`` of :data:`METRICS` ``m_mean``, ``m_std``, ``m_n`` (runs where it is defined) and
    ``m_ci`` (95 % bootstrap confidence interval of the mean over the runs, None for one run),
    ``rounds`` (per round ``r``: ``{"round", m_mean, m_std, m_n}`` over the runs that reached
    ``r``) and ``best_speedups`` (every task's best speedup, pooled over the group's runs).
    """
    if keys is None:
        keys = varying_keys(runs, candidate_keys)
    keys = list(keys)
    rows = []
    for gk, group in group_runs(runs, keys).items():
        per_run = [run_round_metrics(r) for r in group]
        finals = [rm[-1] if rm else {} for rm in per_run]
        row: dict[str, Any] = {"agent": gk[0]}
        for k, v in zip(keys, gk[1:], strict=True):
            row[k] = v
        row["group_keys"] = keys
        row["label"] = group_label(row, keys)
        row["n_seeds"] = len(group)
        row["seeds"] = [r.seed for r in group]
        row["paths"] = [str(r.path) for r in group]
        row["n_tasks"] = [f.get("n_tasks", 0) for f in finals]
        row["budget"] = max((len(rm) for rm in per_run), default=0)
        for m in METRICS:
            values = [f.get(m) for f in finals]
            mean, std, n = _mean_std(values)
            row[f"{m}_mean"], row[f"{m}_std"], row[f"{m}_n"] = mean, std, n
            row[f"{m}_ci"] = bootstrap_ci(values)
        rounds = []
        for r in range(1, row["budget"] + 1):
            rd: dict[str, Any] = {"round": r}
            reached = [rm[r - 1] for rm in per_run if len(rm) >= r]
            for m in METRICS:
                rd[f"{m}_mean"], rd[f"{m}_std"], rd[f"{m}_n"] = _mean_std([x.get(m) for x in reached])
            rounds.append(rd)
        row["rounds"] = rounds
        row["best_speedups"] = [s for r in group for s in episode_best_speedups(r.records, r.budget)]
        rows.append(row)
    return rows


def llm_spend(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """LLM totals of logged steps: tokens, priced cost (None when any call was unpriced), the
    fallback-priced estimate of unpriced calls, API calls, generation errors and no-code replies."""
    costs = [s.get("cost_usd") for s in steps if s.get("llm_attempts")]
    return {
        "prompt_tokens": sum(s.get("prompt_tokens") or 0 for s in steps),
        "completion_tokens": sum(s.get("completion_tokens") or 0 for s in steps),
        "reasoning_tokens": sum(s.get("reasoning_tokens") or 0 for s in steps),
        "cost_usd": None if any(c is None for c in costs) else sum(costs),
        "priced_cost_usd": sum(c or 0.0 for c in costs),
        "estimated_cost_usd": sum(s.get("estimated_cost_usd") or 0.0 for s in steps),
        "llm_calls": sum(s.get("llm_attempts") or 0 for s in steps),
        "llm_latency_s": sum(s.get("llm_latency_s") or 0.0 for s in steps),
        "generation_errors": sum(1 for s in steps if s.get("outcome") == "generation_error"),
        "no_code": sum(1 for s in steps if s.get("outcome") == "no_code"),
    }
