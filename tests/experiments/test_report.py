"""experiments.metrics / experiments.report on synthetic run directories (docs/run_format.md)."""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from experiments import metrics as M
from experiments import report as R

T = 5
# One task's trajectory: per step "x" = did not compile, "c" = compiled but not feasible, a number =
# feasible with that speedup.
BASE = [
    [0.5, 2.0, "c", 4.0, "x"],      # task 0: feasible at step 0; best 0.5, 2, 2, 4, 4
    ["x", "c", 1.5, "c", "c"],      # task 1: compiled at 1, feasible (and fast) at 2
    ["x", "x", "x", "x", "x"],      # task 2: never compiles
    ["c", "c", "c", "c", 0.8],      # task 3: compiled at 0, feasible (slow) at 4
]
QMEM = {
    0: BASE,                                                 # final accuracy 0.75
    1: BASE[:2] + [["x", "x", "x", "c", 3.0]] + BASE[3:],  # 1.00
    2: BASE[:3] + [["c", "c", "c", "c", "c"]],              # 0.50
}
NOMEM = [
    ["x", "c", "c", 1.0, "c"],
    ["x", "x", "c", 0.5, "c"],
    ["x", "x", "x", "x", "x"],
    ["x", "x", "x", "x", "x"],
]


def step_records(agent: str, seed: int, tasks: list[list[Any]]) -> list[dict[str, Any]]:
    out, g = [], 0
    for ep, traj in enumerate(tasks):
        best = None
        for i, o in enumerate(traj):
            feasible = not isinstance(o, str)
            sp = float(o) if feasible else None
            if feasible:
                best = sp if best is None else max(best, sp)
            out.append({
                "agent": agent, "seed": seed, "episode": ep, "task_id": f"L1/{ep}_task", "level": 1,
                "category": "elementwise", "step": i, "global_step": g, "stage": "refining" if best else "drafting",
                "mode": "small", "context_ids": [1, 2], "parent_id": None, "trace_id": 100 + g,
                "code_hash": f"h{g}", "reward": 1.0 if feasible else 0.0, "feasible": feasible,
                "compiled": o != "x", "correct": feasible, "hacked": False,
                "error_class": None if feasible else ("compile" if o == "x" else "mismatch"),
                "latency_s": (1e-3 / sp) if feasible else None, "reference_latency_s": 1e-3,
                "speedup": sp, "best_speedup": best, "generate_s": 0.01, "verify_s": 0.02,
            })
            g += 1
    return out


def episode_records(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    eps: dict[int, list[dict[str, Any]]] = {}
    for s in steps:
        eps.setdefault(s["episode"], []).append(s)
    out = []
    for ep, ss in eps.items():
        comp = [s["step"] for s in ss if s["compiled"]]
        feas = [s for s in ss if s["feasible"]]
        out.append({"agent": ss[0]["agent"], "seed": ss[0]["seed"], "episode": ep, "task_id": ss[0]["task_id"],
                    "level": 1, "category": "elementwise", "steps": len(ss),
                    "compiled_at": comp[0] if comp else None, "feasible_at": feas[0]["step"] if feas else None,
                    "first_speedup": feas[0]["speedup"] if feas else None,
                    "best_speedup": max(s["speedup"] for s in feas) if feas else None,
                    "best_latency_s": min(s["latency_s"] for s in feas) if feas else None,
                    "reference_latency_s": 1e-3})
    return out


def write_run(d: Path, agent: str, seed: int, tasks: list[list[Any]], recall_multiplier: float = 1.0,
              hydra: bool = False) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    steps = step_records(agent, seed, tasks)
    eps = episode_records(steps)
    (d / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    (d / "episodes.jsonl").write_text("".join(json.dumps(e) + "\n" for e in eps))
    final = M.final_metrics(steps, T)
    (d / "summary.json").write_text(json.dumps({"agent": agent, "seed": seed, "n_tasks": len(tasks), "budget": T,
                                                "rounds": M.round_metrics(steps, T), "final": final}))
    cfg = (f"seed: {seed}\nexperiment: synthetic\nagent:\n  name: {agent}\nenv:\n  budget: {T}\n"
           f"  recall_multiplier: {recall_multiplier}\ntasks:\n  name: synth4\n")
    (d / "config.yaml").write_text(cfg)
    if hydra:
        (d / ".hydra").mkdir(exist_ok=True)
        (d / ".hydra" / "config.yaml").write_text(cfg)
    return d


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    """A Hydra multirun sweep: jobs 0-5 = {qmemory, no_memory} x seeds {0, 1, 2}."""
    root = tmp_path / "sweep"
    job = 0
    for agent in ("qmemory", "no_memory"):
        for seed in range(3):
            write_run(root / str(job), agent, seed, QMEM[seed] if agent == "qmemory" else NOMEM, hydra=True)
            job += 1
    (root / "multirun.yaml").write_text("hydra: {}\n")
    return root


# ---------------------------------------------------------------------- per-run metrics


def test_fast_p_and_all_tasks_geomean_hand_computed():
    rows = M.round_metrics(step_records("qmemory", 0, BASE), budget=T)
    # round 1: only task 0, at 0.5x; round 2: task 0 at 2.0x (not faster than 2x); round 5: 4.0, 1.5, -, 0.8
    assert [rows[0][f"fast_{p}"] for p in ("0", "1", "1.5", "2")] == [0.25, 0.0, 0.0, 0.0]
    assert [rows[1][f"fast_{p}"] for p in ("0", "1", "1.5", "2")] == [0.25, 0.25, 0.25, 0.0]
    assert [rows[4][f"fast_{p}"] for p in ("0", "1", "1.5", "2")] == [0.75, 0.5, 0.25, 0.25]
    assert rows[0]["all_tasks_geomean_speedup"] == pytest.approx(0.5 ** 0.25)  # unsolved tasks count as 1x
    assert rows[4]["all_tasks_geomean_speedup"] == pytest.approx((4.0 * 1.5 * 1.0 * 0.8) ** 0.25)
    assert rows[4]["geomean_speedup"] == pytest.approx((4.0 * 1.5 * 0.8) ** (1 / 3))  # solved tasks only


def test_bootstrap_ci_over_seeds():
    assert M.bootstrap_ci([0.5]) is None and M.bootstrap_ci([None, 0.5]) is None  # one seed: no interval
    assert M.bootstrap_ci([0.25, 0.25, 0.25]) == (0.25, 0.25)
    lo, hi = M.bootstrap_ci([0.0, 1.0])
    assert (lo, hi) == (0.0, 1.0)  # means of two resampled seeds: 0, 0.5 or 1
    lo, hi = M.bootstrap_ci([0.5, 0.75, 1.0])
    assert 0.5 <= lo < 0.75 < hi <= 1.0 and M.bootstrap_ci([0.5, 0.75, 1.0]) == (lo, hi)  # reproducible


def test_report_is_stamped_with_what_produced_it(tmp_path: Path):
    root = tmp_path / "stamped"
    for seed in (0, 1):
        d = write_run(root / f"seed{seed}", "qmemory", seed, QMEM[seed])
        (d / "config.yaml").write_text((d / "config.yaml").read_text() +
                                       "llm:\n  name: litellm\n  model: openai/some-model\nbackend:\n  name: ascend_sim\n")
        summary = json.loads((d / "summary.json").read_text())
        summary.update({"package_version": "9.9.9", "git_commit": "abc123"})
        (d / "summary.json").write_text(json.dumps(summary))
    md = R.build_report(root, plots=False)["markdown"]
    for line in ("- generator: litellm", "- model: openai/some-model", "- backend: ascend_sim",
                 "- task suite: synth4", "- seeds: 0, 1", "- kernel-gym version: 9.9.9", "- git commit: abc123"):
        assert line in md, md[:800]


def test_round_metrics_hand_computed():
    rows = M.round_metrics(step_records("qmemory", 0, BASE), budget=T)
    assert [r["round"] for r in rows] == [1, 2, 3, 4, 5]
    assert all(r["n_tasks"] == 4 for r in rows)
    assert [r["compile_rate"] for r in rows] == [0.5, 0.75, 0.75, 0.75, 0.75]
    assert [r["accuracy"] for r in rows] == [0.25, 0.25, 0.5, 0.5, 0.75]
    assert [r["fast_1"] for r in rows] == [0.0, 0.25, 0.5, 0.5, 0.5]
    assert [r["median_speedup"] for r in rows] == [0.5, 2.0, 1.75, 2.75, 1.5]
    assert rows[0]["geomean_speedup"] == pytest.approx(0.5)
    assert rows[2]["geomean_speedup"] == pytest.approx(math.sqrt(3.0))
    assert rows[3]["geomean_speedup"] == pytest.approx(math.sqrt(6.0))
    assert rows[4]["geomean_speedup"] == pytest.approx((4.0 * 1.5 * 0.8) ** (1 / 3))
    assert M.final_metrics(step_records("qmemory", 0, BASE), T) == rows[-1]
    assert sorted(M.episode_best_speedups(step_records("qmemory", 0, BASE), T)) == [0.8, 1.5, 4.0]


def test_speedups_none_without_feasible_kernel_and_empty_run():
    rows = M.round_metrics(step_records("a", 0, [["x", "c"], ["c", "c"]]), budget=2)
    assert rows[-1]["accuracy"] == 0.0 and rows[-1]["compile_rate"] == 1.0
    assert rows[-1]["median_speedup"] is None and rows[-1]["geomean_speedup"] is None
    empty = M.round_metrics([], budget=3)
    assert len(empty) == 3 and empty[0]["accuracy"] is None and empty[0]["n_tasks"] == 0


def test_round_metrics_from_episodes_matches_at_T_and_budget_defaults():
    steps = step_records("qmemory", 0, BASE)
    eps = episode_records(steps)
    from_eps = M.round_metrics(eps, T)
    from_steps = M.round_metrics(steps, T)
    for m in M.METRICS:
        assert from_eps[-1][m] == pytest.approx(from_steps[-1][m])
    # rates are exact at every round from episode records too
    for a, b in zip(from_eps, from_steps):
        assert (a["compile_rate"], a["accuracy"]) == (b["compile_rate"], b["accuracy"])
    assert len(M.round_metrics(steps)) == T  # budget None: the longest episode


def test_partial_run_counts_started_episodes():
    steps = step_records("qmemory", 0, BASE)
    partial = [s for s in steps if s["episode"] < 3 or s["step"] < 2]  # killed after step 1 of episode 3
    rows = M.round_metrics(partial, budget=T)
    assert rows[-1]["n_tasks"] == 4
    assert rows[-1]["accuracy"] == 0.5  # task 3 not feasible within the 2 steps it got
    assert rows[-1]["compile_rate"] == 0.75


# ---------------------------------------------------------------------- loading


def test_find_and_load_runs(sweep: Path):
    for extra in (10, 7):  # natural order: 7 before 10; .hydra never counted
        write_run(sweep / str(extra), "random", 0, NOMEM)
    dirs = M.find_runs(sweep)
    assert [d.name for d in dirs] == ["0", "1", "2", "3", "4", "5", "7", "10"]
    run = M.load_run(sweep / "0")
    assert (run.agent, run.seed, run.budget) == ("qmemory", 0, T)
    assert run.config["env"]["recall_multiplier"] == 1.0 and run.flat_config["tasks.name"] == "synth4"
    assert len(run.steps) == 20 and len(run.episodes) == 4
    assert M.find_runs(sweep / "0") == [sweep / "0"]  # a run directory itself


def test_missing_steps_and_empty_dir(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(M.RunFormatError, match="steps.jsonl"):
        M.load_run(tmp_path / "empty")
    with pytest.raises(M.NoRunsError, match="no runs found"):
        M.load_runs(tmp_path / "empty")
    with pytest.raises(M.NoRunsError):
        M.load_runs(tmp_path / "does_not_exist")


def test_corrupt_line_names_file_and_line(tmp_path: Path):
    d = write_run(tmp_path / "run", "qmemory", 0, BASE)
    lines = (d / "steps.jsonl").read_text().splitlines()
    lines[6] = lines[6][:40]  # line 7 broken, not the last one
    (d / "steps.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(M.RunFormatError, match=r"steps\.jsonl:7: corrupt line"):
        M.load_run(d)


def test_truncated_last_line_tolerated(tmp_path: Path):
    d = write_run(tmp_path / "run", "qmemory", 0, BASE)
    text = (d / "steps.jsonl").read_text()
    (d / "steps.jsonl").write_text(text + '{"agent": "qmemory", "seed": 0, "episo')  # killed mid-write
    with pytest.warns(M.RunFormatWarning, match="truncated last line"):
        run = M.load_run(d)
    assert len(run.steps) == 20
    assert M.final_metrics(run.steps, run.budget)["accuracy"] == 0.75


# ---------------------------------------------------------------------- aggregation


def test_aggregate_mean_std_over_seeds(sweep: Path):
    runs = M.load_runs(sweep)
    rows = M.aggregate(runs)
    assert [r["agent"] for r in rows] == ["qmemory", "no_memory"]
    q, n = rows
    assert q["group_keys"] == [] and q["n_seeds"] == 3 and q["seeds"] == [0, 1, 2]
    # final accuracy per seed: 0.75, 1.0, 0.5 -> mean 0.75, sample std 0.25
    assert q["accuracy_mean"] == pytest.approx(0.75)
    assert q["accuracy_std"] == pytest.approx(0.25)
    assert q["accuracy_std"] == pytest.approx(np.std([0.75, 1.0, 0.5], ddof=1))
    # median speedup per seed: [4, 1.5, .8] -> 1.5; [4, 1.5, 3, .8] -> 2.25; [4, 1.5] -> 2.75
    assert q["median_speedup_mean"] == pytest.approx(statistics.mean([1.5, 2.25, 2.75]))
    assert q["median_speedup_std"] == pytest.approx(statistics.stdev([1.5, 2.25, 2.75]))
    g = [(4 * 1.5 * 0.8) ** (1 / 3), (4 * 1.5 * 3 * 0.8) ** 0.25, math.sqrt(6)]
    assert q["geomean_speedup_mean"] == pytest.approx(statistics.mean(g))
    assert q["fast_1_mean"] == pytest.approx(statistics.mean([0.5, 0.75, 0.5]))
    # round 2 accuracy is 0.25 in every seed
    assert q["rounds"][1]["accuracy_mean"] == pytest.approx(0.25) and q["rounds"][1]["accuracy_std"] == 0.0
    # no_memory: identical seeds -> std 0; accuracy 0.5 from round 4 on
    assert n["accuracy_mean"] == 0.5 and n["accuracy_std"] == 0.0
    assert [rd["accuracy_mean"] for rd in n["rounds"]] == [0.0, 0.0, 0.0, 0.5, 0.5]
    assert n["fast_1_mean"] == 0.0 and n["median_speedup_mean"] == pytest.approx(0.75)
    assert sorted(n["best_speedups"]) == [0.5] * 3 + [1.0] * 3
    # a single run has no std
    one = M.aggregate(runs[:1])[0]
    assert one["n_seeds"] == 1 and one["accuracy_std"] is None


def test_aggregate_splits_on_varying_config_key(tmp_path: Path):
    root = tmp_path / "sweep"
    job = 0
    for mult in (1.0, 4.0):
        for seed in range(2):
            write_run(root / str(job), "qmemory", seed, QMEM[seed] if mult == 1.0 else NOMEM, recall_multiplier=mult)
            job += 1
    runs = M.load_runs(root)
    assert M.varying_keys(runs) == ["env.recall_multiplier"]
    rows = M.aggregate(runs)
    assert [(r["agent"], r["env.recall_multiplier"], r["n_seeds"]) for r in rows] == [
        ("qmemory", 1.0, 2), ("qmemory", 4.0, 2)]
    assert rows[0]["label"] == "qmemory (recall_multiplier=1.0)"
    assert rows[0]["accuracy_mean"] == pytest.approx(0.875) and rows[1]["accuracy_mean"] == 0.5


# ---------------------------------------------------------------------- report


def _memory_db(path: Path, qs: list[tuple[float, float, int]]) -> None:
    from kernel_gym.memory import MemoryStore
    from kernel_gym.memory.types import MemoryItem

    with MemoryStore(path, save_index_on_close=False) as store:
        store.add([MemoryItem(kind="best_practice", text=f"tip {i}", q1=q1, q2=q2, use_count=u)
                   for i, (q1, q2, u) in enumerate(qs)])


def test_report_writes_files(sweep: Path, tmp_path: Path, capsys):
    _memory_db(sweep / "0" / "memory.db", [(0.2, 0.1, 3), (0.6, 0.4, 1), (0.9, 0.9, 0)])
    _memory_db(sweep / "1" / "memory.db", [(0.5, -0.2, 2)])
    assert R.read_q_values(sweep / "0" / "memory.db")["q1"].tolist() == [0.2, 0.6]  # use_count > 0 only
    out = tmp_path / "out"
    assert R.main([str(sweep), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "| agent | seeds | tasks | compile rate | accuracy |" in printed.out
    assert "| qmemory | 3 | 4 |" in printed.out and "0.750 ± 0.250" in printed.out
    assert "4 of 6 run(s) have no memory.db" in printed.err  # runs 2-5 have none
    for name in ("report.md", "report.csv", "accuracy_vs_iteration.png", "speedup_distribution.png", "q_values.png"):
        assert (out / name).stat().st_size > 0, name
    for name in ("accuracy_vs_iteration.png", "speedup_distribution.png", "q_values.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "report.md").read_text()
    assert "## Accuracy per round" in md and "r=5 (T)" in md and "r=2" in md
    with open(out / "report.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["agent"] for r in rows] == ["qmemory", "no_memory"]
    assert float(rows[0]["accuracy_mean"]) == pytest.approx(0.75)
    assert float(rows[0]["accuracy_std"]) == pytest.approx(0.25)
    assert float(rows[0]["accuracy_r2_mean"]) == pytest.approx(0.25)
    assert rows[0]["n_seeds"] == "3"


def test_report_single_run_and_comparison_dir(tmp_path: Path):
    comp = tmp_path / "compare"
    write_run(comp / "qmemory", "qmemory", 0, BASE)
    write_run(comp / "no_memory", "no_memory", 0, NOMEM)
    res = R.build_report(comp)
    assert [r["agent"] for r in res["rows"]] == ["no_memory", "qmemory"]
    assert (comp / "report.md").is_file() and (comp / "q_values.png").stat().st_size > 0
    assert "0.750 |" in res["table"]  # single seed: mean only, no ± std
    single = R.build_report(comp / "qmemory", tmp_path / "single", plots=False)
    assert len(single["rows"]) == 1 and (tmp_path / "single" / "report.csv").is_file()
    assert not (tmp_path / "single" / "q_values.png").exists()
    # comparison with seeds: <run dir>/<agent>/seed<k>/ (experiments.run with compare_seeds)
    comp2 = tmp_path / "compare_seeds"
    for agent in ("qmemory", "no_memory"):
        for seed in range(3):
            write_run(comp2 / agent / f"seed{seed}", agent, seed, QMEM[seed] if agent == "qmemory" else NOMEM)
    res2 = R.build_report(comp2, plots=False)
    assert [(r["agent"], r["n_seeds"]) for r in res2["rows"]] == [("no_memory", 3), ("qmemory", 3)]
    # a speedup defined in only some runs is flagged
    write_run(comp2 / "random" / "seed0", "random", 0, [["x"] * T] * 4)
    write_run(comp2 / "random" / "seed1", "random", 1, [["x"] * 4 + [2.0]] + [["x"] * T] * 3)
    table = R.build_report(comp2, plots=False)["table"]
    # seed 0 solves nothing, seed 1 one task of 4 at 2.0x: rates 0 and 0.25 (CI over the two seeds);
    # fast_2 needs more than 2x; the all-tasks geomean counts unsolved tasks as 1x: 1.0 and 2**0.25
    share = "0.125 ± 0.177 [0.000, 0.250]"
    assert (f"| random | 2 | 4 | {share} | {share} | {share} | {share} | {share} | 0.000 ± 0.000 [0.000, 0.000] | "
            "1.09 ± 0.13 [1.00, 1.19] | 2.00 [1/2 runs] | 2.00 [1/2 runs] |") in table


def test_group_by_extra_key(tmp_path: Path):
    root = tmp_path / "sweep"
    for job, eps in enumerate((0.1, 0.1, 0.5, 0.5)):
        d = write_run(root / str(job), "qmemory", job % 2, QMEM[job % 2])
        (d / "config.yaml").write_text((d / "config.yaml").read_text() + f"  kwargs:\n    epsilon: {eps}\n"
                                       .replace("  kwargs", "agent_kwargs"))
    res = R.build_report(root, group_by=["agent_kwargs.epsilon"], plots=False)
    assert [(r["agent_kwargs.epsilon"], r["n_seeds"]) for r in res["rows"]] == [(0.1, 2), (0.5, 2)]
    assert "| agent | agent_kwargs.epsilon | seeds |" in res["table"]
    assert len(R.build_report(root, plots=False)["rows"]) == 1  # not whitelisted: one group


def test_report_cli_empty_dir(tmp_path: Path, capsys):
    (tmp_path / "nothing").mkdir()
    assert R.main([str(tmp_path / "nothing")]) == 2
    assert "no runs found" in capsys.readouterr().err


def test_readme_block_is_rewritten_from_the_runs(sweep: Path, tmp_path: Path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n{R.README_START}\nold table\n{R.README_END}\nafter\n")
    assert R.main([str(sweep), "--out", str(tmp_path / "rep"), "--no-plots", "--readme", str(readme),
                   "--command", "python -m experiments.run experiment=demo"]) == 0
    text = readme.read_text()
    assert "old table" not in text and text.startswith("# title\n\nbefore\n") and text.endswith("after\n")
    block = text[text.index(R.README_START):text.index(R.README_END)]
    assert "`python -m experiments.run experiment=demo`" in block and "- seeds: 0, 1" in block
    table = capsys.readouterr().out.strip()  # the table the CLI printed is the one in the README
    assert table and table in block
    bare = tmp_path / "bare.md"
    bare.write_text("no markers\n")
    assert R.main([str(sweep), "--out", str(tmp_path / "rep2"), "--no-plots", "--readme", str(bare)]) == 2
    assert bare.read_text() == "no markers\n" and "add the two markers" in capsys.readouterr().err


def test_timing_table_reports_interval_width_and_convergence(tmp_path: Path) -> None:
    # two timed steps of one agent: speedup 2.0 with [1.8, 2.2] (10 %) and 0.5 with [0.49, 0.51] (2 %)
    d = write_run(tmp_path / "qmemory_0", "qmemory", 0, [[2.0, 0.5, "c", "x", "x"]])
    steps = [json.loads(line) for line in (d / "steps.jsonl").read_text().splitlines()]
    steps[0].update(speedup_ci=[1.8, 2.2], timing_converged=False)
    steps[1].update(speedup_ci=[0.49, 0.51], timing_converged=True)
    (d / "steps.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps))
    table = R.timing_table([M.load_run(d)])
    row = [line for line in table.splitlines() if line.startswith("| qmemory")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == ["qmemory", "2", "6.0 %", "10.0 %", "0.50"]
    report = R.build_report(tmp_path, plots=False)
    assert "Timing uncertainty of the speedups" in report["markdown"]


def test_timing_table_empty_without_intervals(tmp_path: Path) -> None:
    d = write_run(tmp_path / "qmemory_0", "qmemory", 0, BASE)
    assert R.timing_table([M.load_run(d)]) == ""
