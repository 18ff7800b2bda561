"""Report of one run, a Hydra multirun sweep or a comparison run (docs/run_format.md).

    python -m experiments.report <dir> [--out DIR] [--group-by KEY ...] [--baseline AGENT]

Finds every run under ``<dir>`` (directories holding ``steps.jsonl``), groups them by agent and
by the config keys that vary across them (``env.recall_multiplier``, ``tasks.name``,
``experiment``, plus ``--group-by`` keys), and writes to ``--out`` (default ``<dir>``):

* ``report.md``: final metrics per group, mean ± sample std (ddof=1) over seeds, and accuracy
  at rounds 1, 2, 5, 10 and T;
* in it, every agent against a baseline (``--baseline``; default the first of similarity, random,
  no_memory present): the paired difference over the same (seed, task) pairs with its bootstrap
  CI and sign-flip permutation p-value, ``(n.s.)`` where p >= 0.05 (experiments/significance.py);
* ``report.csv``: the same numbers, mean and std in separate columns;
* ``accuracy_vs_iteration.png``: accuracy per round, one line per group with a ±std band;
* ``speedup_distribution.png``: best speedup per task per group (box + points, log scale);
* ``q_values.png``: Q1 / Q2 of the memory items each group ever used (``use_count > 0``),
  read from every run's ``memory.db``.

The final-metrics table and the paired-difference table are printed to stdout.
"""

from __future__ import annotations

import argparse
import csv
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from .metrics import (
    DEFAULT_GROUP_KEYS,
    METRICS,
    NoRunsError,
    Run,
    RunFormatError,
    aggregate,
    group_runs,
    llm_spend,
    load_runs,
    varying_keys,
)
from .significance import ALPHA, COMPARED, choose_baseline, compare_groups

__all__ = [
    "REPORT_ROUNDS",
    "build_report",
    "comparison_table",
    "markdown_tables",
    "write_csv",
    "plot_accuracy",
    "plot_speedups",
    "plot_q_values",
    "read_q_values",
    "main",
]

#: Rounds shown in the per-round accuracy table (those <= T, plus T).
REPORT_ROUNDS: tuple[int, ...] = (1, 2, 5, 10)
METRIC_HEADERS = {
    "compile_rate": "compile rate",
    "accuracy": "accuracy",
    "fast_0": "fast_0",
    "fast_1": "fast_1",
    "fast_1.5": "fast_1.5",
    "fast_2": "fast_2",
    "all_tasks_geomean_speedup": "geomean speedup, all tasks (x)",
    "median_speedup": "median speedup, solved (x)",
    "geomean_speedup": "geomean speedup, solved (x)",
}
#: Config keys of the stamp: what produced the numbers.
STAMP_KEYS: tuple[tuple[str, str], ...] = (
    ("generator", "llm.name"),
    ("model", "llm.model"),
    ("backend", "backend.name"),
    ("task suite", "tasks.name"),
)
FIGSIZE = (7.0, 4.5)
DPI = 120


# ====================================================================== tables


def _fmt(mean: float | None, std: float | None, digits: int) -> str:
    if mean is None:
        return "–"
    s = f"{mean:.{digits}f}"
    return s if std is None else f"{s} ± {std:.{digits}f}"


def _digits(metric: str) -> int:
    return 2 if metric.endswith("speedup") else 3


def _cell(row: dict[str, Any], m: str) -> str:
    """``mean ± std [95 % CI]``; a speedup defined in fewer runs than the group has (runs without a
    feasible kernel) gets ``[n/N runs]``."""
    cell = _fmt(row[f"{m}_mean"], row[f"{m}_std"], _digits(m))
    ci = row.get(f"{m}_ci")
    if ci is not None:
        d = _digits(m)
        cell += f" [{ci[0]:.{d}f}, {ci[1]:.{d}f}]"
    n = row[f"{m}_n"]
    if m.endswith("speedup") and 0 < n < row["n_seeds"]:
        cell += f" [{n}/{row['n_seeds']} runs]"
    return cell


def report_rounds(budget: int) -> list[int]:
    return sorted({r for r in REPORT_ROUNDS if r <= budget} | ({budget} if budget > 0 else set()))


def _tasks_cell(n_tasks: Sequence[int]) -> str:
    lo, hi = min(n_tasks, default=0), max(n_tasks, default=0)
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _md_table(header: list[str], body: list[list[str]]) -> str:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def markdown_tables(rows: Sequence[dict[str, Any]]) -> tuple[str, str]:
    """(final-metrics table, per-round accuracy table) in markdown."""
    keys: list[str] = list(rows[0]["group_keys"]) if rows else []
    header = ["agent", *keys, "seeds", "tasks", *(METRIC_HEADERS[m] for m in METRICS)]
    body = [
        [
            str(r["agent"]),
            *(str(r.get(k)) for k in keys),
            str(r["n_seeds"]),
            _tasks_cell(r["n_tasks"]),
            *(_cell(r, m) for m in METRICS),
        ]
        for r in rows
    ]
    final = _md_table(header, body)
    budget = max((r["budget"] for r in rows), default=0)
    rounds = report_rounds(budget)
    rheader = ["agent", *keys, *(f"r={x}" + (" (T)" if x == budget else "") for x in rounds)]
    rbody = []
    for r in rows:
        cells = []
        for x in rounds:
            rd = r["rounds"][x - 1] if x <= len(r["rounds"]) else None
            cells.append(_fmt(rd["accuracy_mean"], rd["accuracy_std"], 3) if rd else "–")
        rbody.append([str(r["agent"]), *(str(r.get(k)) for k in keys), *cells])
    return final, _md_table(rheader, rbody)


def comparison_table(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> str:
    """Markdown: per agent, the paired differences with the baseline (experiments.significance)."""
    header = ["agent", *keys, "vs", "seeds", "(seed, task) pairs", *(f"{h} difference" for _, h, _ in COMPARED)]
    body = [
        [
            str(r["agent"]),
            *(str(r.get(k)) for k in keys),
            str(r["baseline"]),
            str(len(r["seeds"])),
            str(r["n_units"]),
            *(r[m].cell() for m, _, _ in COMPARED),
        ]
        for r in rows
    ]
    return _md_table(header, body)


def comparison_note(baseline: str) -> str:
    return (
        f"Each agent minus {baseline} over the (seed, task) pairs both ran: accuracy and fast_1 as differences of "
        "shares of tasks, the all-tasks geomean speedup as a ratio; [95 % bootstrap CI over the pairs], "
        "p = two-sided paired sign-flip permutation test; (n.s.) = not significant at "
        f"p < {ALPHA:g}. The tasks of one run share the agent's memory, so pairs of one seed are not "
        "independent, and no correction for the several comparisons is made: read a p near the threshold "
        "as weak evidence."
    )


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    keys: list[str] = list(rows[0]["group_keys"]) if rows else []
    budget = max((r["budget"] for r in rows), default=0)
    rounds = report_rounds(budget)
    header = ["agent", *keys, "n_seeds", "seeds", "n_tasks_min", "n_tasks_max"]
    for m in METRICS:
        header += [f"{m}_mean", f"{m}_std", f"{m}_ci_low", f"{m}_ci_high"]
    for x in rounds:
        header += [f"accuracy_r{x}_mean", f"accuracy_r{x}_std"]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            line: list[Any] = [
                r["agent"],
                *(r.get(k) for k in keys),
                r["n_seeds"],
                " ".join(str(s) for s in r["seeds"]),
                min(r["n_tasks"], default=0),
                max(r["n_tasks"], default=0),
            ]
            for m in METRICS:
                ci = r.get(f"{m}_ci") or (None, None)
                line += [_csv_num(r[f"{m}_mean"]), _csv_num(r[f"{m}_std"]), _csv_num(ci[0]), _csv_num(ci[1])]
            for x in rounds:
                rd = r["rounds"][x - 1] if x <= len(r["rounds"]) else {}
                line += [_csv_num(rd.get("accuracy_mean")), _csv_num(rd.get("accuracy_std"))]
            w.writerow(line)


def _csv_num(v: float | None) -> str:
    return "" if v is None else repr(float(v))


# ====================================================================== plots


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 9,
            "xtick.labelsize": 9,
            "ytick.labelsize": 9,
        }
    )
    return plt


def _colors(n: int) -> list[Any]:
    plt = _pyplot()
    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
    return [cmap(i % cmap.N) for i in range(n)]


def _short_label(row: dict[str, Any], sep: str = ", ") -> str:
    """``qmemory, recall_multiplier=2`` (legend) or with ``sep="\n"`` (tick labels)."""
    extra = [f"{k.rsplit('.', 1)[-1]}={row.get(k)}" for k in row.get("group_keys", [])]
    return sep.join([str(row["agent"]), *extra])


def _legend_below(fig: Any, ax: Any, n: int) -> None:
    """Legend inside the axes for a few short entries, else below the axes (constrained layout)."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if n <= 3 and max(len(lbl) for lbl in labels) <= 30:
        ax.legend(loc="best")
    else:
        fig.legend(handles, labels, loc="outside lower center", ncol=2 if n > 1 else 1, frameon=False)


def plot_accuracy(rows: Sequence[dict[str, Any]], path: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    for row, color in zip(rows, _colors(len(rows)), strict=True):
        rds = [rd for rd in row["rounds"] if rd["accuracy_mean"] is not None]
        if not rds:
            continue
        x = np.array([rd["round"] for rd in rds])
        y = np.array([rd["accuracy_mean"] for rd in rds])
        sd = np.array([rd["accuracy_std"] if rd["accuracy_std"] is not None else 0.0 for rd in rds])
        ax.plot(x, y, marker="o", markersize=3, color=color, label=f"{_short_label(row)} (n={row['n_seeds']})")
        if row["n_seeds"] > 1:
            ax.fill_between(x, np.clip(y - sd, 0, 1), np.clip(y + sd, 0, 1), color=color, alpha=0.15, lw=0)
    budget = max((r["budget"] for r in rows), default=1)
    ax.set_xlim(0.8, max(budget, 1) + 0.2)
    if budget <= 20:
        ax.set_xticks(range(1, budget + 1))
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("iteration (steps per task)")
    ax.set_ylabel("accuracy\n(share of tasks with a feasible kernel)")
    ax.set_title("Accuracy vs iteration (mean ± std over seeds)")
    ax.grid(True, alpha=0.3)
    _legend_below(fig, ax, len(rows))
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def plot_speedups(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Box (no fliers) + jittered points of every task's best speedup, per group, log scale.
    Vertical boxes for up to 4 short-named groups, horizontal ones otherwise."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    colors = _colors(len(rows))
    data = [r["best_speedups"] for r in rows]
    total = [sum(r["n_tasks"]) for r in rows]
    labels = [_short_label(r, "\n") + f"\n{len(d)}/{t} feasible" for r, d, t in zip(rows, data, total, strict=True)]
    vertical = len(rows) <= 4 and all(len(_short_label(r)) <= 14 for r in rows)
    positions = list(range(1, len(rows) + 1))
    if not vertical:  # first group on top
        positions = positions[::-1]
    nonempty = [(i, p, d) for i, (p, d) in enumerate(zip(positions, data, strict=True)) if d]
    if nonempty:
        box_kw = dict(
            positions=[p for _, p, _ in nonempty],
            widths=0.5,
            showfliers=False,
            patch_artist=True,
            medianprops={"color": "black"},
        )
        try:  # matplotlib >= 3.10
            bp = ax.boxplot([d for _, _, d in nonempty], orientation="vertical" if vertical else "horizontal", **box_kw)
        except TypeError:  # older matplotlib
            bp = ax.boxplot([d for _, _, d in nonempty], vert=vertical, **box_kw)
        for patch, (i, _, _) in zip(bp["boxes"], nonempty, strict=True):
            patch.set_facecolor(colors[i])
            patch.set_alpha(0.35)
        rng = np.random.default_rng(0)
        for i, p, d in nonempty:
            jitter = p + rng.uniform(-0.15, 0.15, len(d))
            xy = (jitter, d) if vertical else (d, jitter)
            ax.scatter(*xy, s=12, color=colors[i], edgecolors="black", linewidths=0.3, zorder=3)
    allv = [v for d in data for v in d]
    wide = bool(allv) and max(allv) / min(allv) > 100  # > 2 decades: label powers of ten only
    (ax.axhline if vertical else ax.axvline)(1.0, color="gray", linestyle="--", linewidth=1, label="1x (reference)")
    axis = ax.yaxis if vertical else ax.xaxis
    (ax.set_yscale if vertical else ax.set_xscale)("log")
    axis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 3.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    axis.set_minor_formatter(NullFormatter())
    value_label = "best speedup per task (x, log scale)"
    group_label = "agent (tasks pooled over seeds)"
    if vertical:
        ax.set_xticks(positions, labels)
        ax.set_xlim(0.4, len(rows) + 0.6)
        ax.set_ylabel(value_label)
        ax.set_xlabel(group_label)
    else:
        ax.set_yticks(positions, labels)
        ax.set_ylim(0.4, len(rows) + 0.6)
        ax.set_xlabel(value_label)
    ax.set_title("Best speedup per task")
    ax.grid(True, axis="y" if vertical else "x", which="major", alpha=0.3)
    ax.legend(loc="best")
    if not nonempty:
        ax.text(0.5, 0.5, "no feasible kernel in any run", transform=ax.transAxes, ha="center", va="center")
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def read_q_values(db: Path) -> dict[str, np.ndarray]:
    """``{"q1": ..., "q2": ...}`` of the items of a memory.db with ``use_count > 0`` (read-only
    SQLite; MemoryStore itself opens for writing)."""
    rows: list[tuple[float, float]] = []
    last_error: Exception | None = None
    for opts in ("mode=ro", "mode=ro&immutable=1"):  # immutable: no -shm needed (read-only dir)
        try:
            conn = sqlite3.connect(f"file:{quote(str(Path(db).resolve()))}?{opts}", uri=True, timeout=10)
            try:
                rows = conn.execute("SELECT q1, q2 FROM kg_items WHERE use_count > 0").fetchall()
            finally:
                conn.close()
            last_error = None
            break
        except sqlite3.Error as e:
            last_error = e
    if last_error is not None:
        raise RunFormatError(f"{db}: cannot read memory items ({last_error})")
    arr = np.array(rows, dtype=float).reshape(-1, 2)
    return {"q1": arr[:, 0], "q2": arr[:, 1]}


def plot_q_values(runs: Sequence[Run], rows: Sequence[dict[str, Any]], path: Path) -> list[str]:
    """Histograms of Q1 / Q2 of the used memory items, per group (overlaid step histograms,
    pooled over the group's runs). Returns notes (runs without memory.db, unreadable ones)."""
    notes: list[str] = []
    missing: list[str] = []
    keys = list(rows[0]["group_keys"]) if rows else []
    groups = group_runs(runs, keys)
    series: list[tuple[int, dict[str, np.ndarray]]] = []
    for i, group in enumerate(groups.values()):
        q1s, q2s = [], []
        for r in group:
            if r.memory_db is None:
                missing.append(str(r.path))
                continue
            try:
                q = read_q_values(r.memory_db)
            except RunFormatError as e:
                notes.append(f"{e}; skipped in q_values.png")
                continue
            q1s.append(q["q1"])
            q2s.append(q["q2"])
        if sum(a.size for a in q1s):
            series.append((i, {"q1": np.concatenate(q1s), "q2": np.concatenate(q2s)}))
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        notes.insert(0, f"{len(missing)} of {len(runs)} run(s) have no memory.db ({shown}); skipped in q_values.png")
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=FIGSIZE, sharey=True, layout="constrained")
    colors = _colors(len(rows))
    allv = np.concatenate([s[q] for _, s in series for q in ("q1", "q2")]) if series else np.zeros(0)
    lo, hi = (float(allv.min()), float(allv.max())) if allv.size else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    bins = np.linspace(lo, hi, 21)
    for ax, col, name in zip(axes, ("q1", "q2"), ("Q1 (drafting)", "Q2 (refining)"), strict=True):
        for i, s in series:
            ax.hist(
                s[col],
                bins=bins,
                histtype="step",
                linewidth=1.6,
                color=colors[i],
                label=f"{_short_label(rows[i])} ({s[col].size} items)",
            )
        ax.set_xlabel(f"{name} value")
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("memory items used (use_count > 0)")
    from matplotlib.ticker import MaxNLocator

    axes[0].yaxis.set_major_locator(MaxNLocator(integer=True))
    if series:
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 2), frameon=False)
    else:
        for ax in axes:
            ax.text(
                0.5,
                0.5,
                "no memory items used\n(no memory.db or use_count = 0)",
                transform=ax.transAxes,
                ha="center",
                va="center",
            )
    with_items = {i for i, _ in series}
    skipped = [_short_label(row) for i, row in enumerate(rows) if i not in with_items]
    title = "Q-values of the memory items used, per agent"
    if skipped and series:
        listed = "; ".join(skipped)
        title += "\n(no used items: " + (listed if len(listed) <= 80 else f"{len(skipped)} groups") + ")"
    fig.suptitle(title, fontsize=11)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return notes


# ====================================================================== driver


def stamp(runs: Sequence[Run]) -> list[str]:
    """What produced the runs, one markdown line each: generator, model, backend, task suite (from
    the saved configs), seeds, and package version and git commit (from summary.json)."""

    def values(get: Any) -> str:
        found = sorted({str(v) for v in (get(r) for r in runs) if v not in (None, "", "???")})
        return ", ".join(found) if found else "unknown"

    lines = [f"- {label}: {values(lambda r, k=key: r.flat_config.get(k))}" for label, key in STAMP_KEYS]
    lines.append(f"- seeds: {values(lambda r: r.seed)}")
    lines.append(f"- kernel-gym version: {values(lambda r: (r.summary or {}).get('package_version'))}")
    lines.append(f"- git commit: {values(lambda r: (r.summary or {}).get('git_commit'))}")
    return lines


def timing_table(runs: Sequence[Run]) -> str:
    """Markdown: per agent, how certain its timed steps' speedups are ("" when no step carries an
    interval). Over the steps with a speedup and its 95 % interval (``speedup_ci``): how many, the
    median and largest half-width relative to the speedup, and the share whose adaptive timing
    converged (cpu; "n/a" where the trial count is fixed, as on the simulator and GPUs)."""
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        for s in run.steps:
            ci, sp = s.get("speedup_ci"), s.get("speedup")
            if ci and sp:
                by_agent.setdefault(run.agent, []).append(s)
    body = []
    for agent in sorted(by_agent):
        steps = by_agent[agent]
        widths = [(s["speedup_ci"][1] - s["speedup_ci"][0]) / (2.0 * s["speedup"]) for s in steps]
        conv = [bool(s["timing_converged"]) for s in steps if s.get("timing_converged") is not None]
        body.append(
            [
                agent,
                str(len(steps)),
                f"{100.0 * float(np.median(widths)):.1f} %",
                f"{100.0 * max(widths):.1f} %",
                f"{sum(conv) / len(conv):.2f}" if conv else "n/a",
            ]
        )
    if not body:
        return ""
    return _md_table(["agent", "timed steps", "median ± half-width", "largest ± half-width", "converged share"], body)


def llm_table(runs: Sequence[Run]) -> str:
    """Markdown: per run, the LLM API calls, tokens, cost and failed generations ("" when no run
    called an LLM). Cost "n/a" = a model litellm has no price for (its estimate is shown apart)."""
    body = []
    for run in runs:
        s = llm_spend(run.steps)
        if not s["llm_calls"]:
            continue
        cost = "n/a" if s["cost_usd"] is None else f"{s['cost_usd']:.4f}"
        body.append(
            [
                run.agent,
                str(run.seed),
                str(s["llm_calls"]),
                str(s["prompt_tokens"]),
                str(s["completion_tokens"]),
                str(s["reasoning_tokens"]),
                cost,
                f"{s['estimated_cost_usd']:.4f}",
                f"{s['llm_latency_s']:.1f}",
                str(s["generation_errors"]),
                str(s["no_code"]),
            ]
        )
    if not body:
        return ""
    return _md_table(
        [
            "agent",
            "seed",
            "API calls",
            "prompt tokens",
            "completion tokens",
            "reasoning tokens",
            "cost $",
            "unpriced estimate $",
            "LLM s",
            "generation errors",
            "no-code replies",
        ],
        body,
    )


def build_report(
    root: str | Path,
    out: str | Path | None = None,
    group_by: Sequence[str] = (),
    plots: bool = True,
    baseline: str | None = None,
) -> dict[str, Any]:
    """Aggregate the runs under ``root`` and write the report files to ``out`` (default ``root``);
    ``plots=False`` skips the PNGs; ``baseline`` is the agent the others are compared with
    (default: :func:`experiments.significance.choose_baseline`). Returns ``{"rows", "markdown",
    "table", "comparison", "comparison_rows", "baseline", "stamp", "files", "notes"}`` (``files``:
    the paths written; ``stamp``: the lines saying what produced the runs; ``comparison``: the
    paired-difference table with its note, "" without a baseline). Raises :class:`NoRunsError` /
    :class:`RunFormatError`, ValueError for a ``baseline`` not among the runs."""
    root = Path(root)
    out = Path(out) if out is not None else root
    runs = load_runs(root)
    keys = varying_keys(runs, [*DEFAULT_GROUP_KEYS, *(k for k in group_by if k not in DEFAULT_GROUP_KEYS)])
    rows = aggregate(runs, keys=keys)
    base = choose_baseline([r.agent for r in runs], baseline)
    comparison_rows = compare_groups(runs, keys, base) if base is not None else []
    comparison = ""
    if comparison_rows and base is not None:
        comparison = comparison_table(comparison_rows, keys) + "\n\n" + comparison_note(base)
    out.mkdir(parents=True, exist_ok=True)
    final, per_round = markdown_tables(rows)
    notes: list[str] = []
    names = ["report.md", "report.csv"]
    if plots:
        names += ["accuracy_vs_iteration.png", "speedup_distribution.png", "q_values.png"]
    files = {name: out / name for name in names}
    if plots:
        plot_accuracy(rows, files["accuracy_vs_iteration.png"])
        plot_speedups(rows, files["speedup_distribution.png"])
        notes += plot_q_values(runs, rows, files["q_values.png"])
    write_csv(rows, files["report.csv"])
    budget = max((r["budget"] for r in rows), default=0)
    stamped = stamp(runs)
    md = [
        f"# Report: {root}",
        "",
        *stamped,
        "",
        f"{len(runs)} run(s) in {len(rows)} group(s); T = {budget} steps per task. "
        "Cells: mean ± sample std (ddof=1) over seeds (runs), then the 95 % bootstrap confidence interval of "
        "the mean over seeds (with two or more seeds). Rates are shares of the tasks; fast_p is the share of "
        "tasks with a correct kernel more than p times faster than the reference (KernelBench). The all-tasks "
        "geomean speedup counts a task without a correct kernel as the reference (1x); the solved-task "
        "speedups are over the tasks with a feasible kernel, averaged over the runs that have one ([n/N runs] "
        "when not all do; – when none). T is the step budget per task.",
        "",
        "## Final metrics (round T)",
        "",
        final,
        "",
    ]
    if comparison:
        md += [f"## Paired differences vs {base}", "", comparison, ""]
    md += [
        "## Accuracy per round",
        "",
        per_round,
        "",
    ]
    timing = timing_table(runs)
    if timing:
        md += [
            "## Timing uncertainty of the speedups",
            "",
            timing,
            "",
            "Half-width: half the 95 % interval of a step's speedup, relative to the speedup (zero on the "
            "deterministic simulator). Converged: the adaptive cpu timing reached ± 5 % within its budget.",
            "",
        ]
    llm = llm_table(runs)
    if llm:
        md += ["## LLM calls, tokens and cost per run", "", llm, ""]
    if plots:
        md += [
            "## Plots",
            "",
            "![accuracy vs iteration](accuracy_vs_iteration.png)",
            "",
            "![speedup distribution](speedup_distribution.png)",
            "",
            "![Q-values](q_values.png)",
            "",
        ]
    if notes:
        md += ["## Notes", "", *(f"- {n}" for n in notes), ""]
    files["report.md"].write_text("\n".join(md), encoding="utf-8")
    return {
        "rows": rows,
        "markdown": "\n".join(md),
        "table": final,
        "comparison": comparison,
        "comparison_rows": comparison_rows,
        "baseline": base,
        "stamp": stamped,
        "files": files,
        "notes": notes,
    }


#: the README block that ``--readme`` rewrites
README_START, README_END = "<!-- demo-results:start -->", "<!-- demo-results:end -->"


def update_readme(readme: str | Path, report: dict[str, Any], command: str) -> None:
    """Replace the block between :data:`README_START` and :data:`README_END` in ``readme`` with the
    report's stamp, its final-metrics table and the ``command`` that produced the runs. Raises
    ValueError naming the markers when the file lacks them (nothing is written then)."""
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    a, b = text.find(README_START), text.find(README_END)
    if a < 0 or b < a:
        raise ValueError(f"{path} has no {README_START} ... {README_END} block to fill; add the two markers")
    block = [
        README_START,
        f"Produced by `{command}`, then `python -m experiments.report <run dir> --readme README.md`:",
        "",
        *report["stamp"],
        "",
        report["table"],
        "",
    ]
    if report.get("comparison"):  # as the CLI prints it
        block += [f"Paired differences vs {report['baseline']}:", "", report["comparison"], ""]
    block += [
        "Cells: mean ± sample std over seeds, then the 95 % bootstrap confidence interval of the mean.",
        README_END,
    ]
    path.write_text(text[:a] + "\n".join(block) + text[b + len(README_END) :], encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.report", description=__doc__.split("\n\n")[0])
    p.add_argument("dir", help="a run, a Hydra multirun sweep dir or a comparison run dir")
    p.add_argument("--out", default=None, help="where to write the report (default: <dir>)")
    p.add_argument(
        "--group-by",
        action="append",
        default=[],
        metavar="KEY",
        help="extra dotted config key to group by when it varies (repeatable)",
    )
    p.add_argument("--no-plots", action="store_true", help="tables only")
    p.add_argument(
        "--baseline",
        default=None,
        metavar="AGENT",
        help="the agent the others are compared with (default: the first of similarity, random, no_memory present)",
    )
    p.add_argument(
        "--readme",
        default=None,
        metavar="PATH",
        help=f"also write the final table into PATH between {README_START} and {README_END}",
    )
    p.add_argument(
        "--command",
        default="bash scripts/demo.sh",
        help="the command that produced the runs, quoted in the README block (with --readme)",
    )
    args = p.parse_args(argv)
    try:
        res = build_report(args.dir, args.out, args.group_by, plots=not args.no_plots, baseline=args.baseline)
    except (NoRunsError, RunFormatError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(res["table"])
    if res["comparison"]:
        print(f"\nPaired differences vs {res['baseline']}:\n\n{res['comparison']}")
    if args.readme:
        try:
            update_readme(args.readme, res, args.command)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"updated {args.readme}", file=sys.stderr)
    for n in res["notes"]:
        print(f"note: {n}", file=sys.stderr)
    print(f"wrote {', '.join(str(f) for f in res['files'].values())}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
