"""Paired differences with a baseline (experiments.significance) and their place in the report."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from experiments import report as R
from experiments import significance as S
from tests.experiments.test_report import T, write_run

SOLVED = [1.5] + ["c"] * (T - 1)  # feasible at step 0, 1.5x
UNSOLVED = ["c"] * T


def comparison_dir(root: Path, agent_tasks, base_tasks, seeds=(0, 1, 2)) -> Path:
    for seed in seeds:
        write_run(root / "strong" / f"seed{seed}", "strong", seed, agent_tasks(seed))
        write_run(root / "similarity" / f"seed{seed}", "similarity", seed, base_tasks(seed))
    return root


def test_sign_flip_p_value_exact_and_sampled():
    assert S.sign_flip_p_value(np.array([1.0, 1.0, 1.0])) == pytest.approx(2 / 8)  # all +, or all -
    assert S.sign_flip_p_value(np.array([1.0, -1.0, 0.0])) == 1.0
    assert S.sign_flip_p_value(np.zeros(5)) == 1.0
    many = np.ones(40)  # sampled: (1 + hits) / (1 + resamples), hits ~ 0
    assert S.sign_flip_p_value(many) == pytest.approx(1 / (1 + S.RESAMPLES))
    mixed = np.array([1.0] * 12 + [-1.0] * 10 + [0.0] * 20)
    assert 0.5 < S.sign_flip_p_value(mixed) <= 1.0


def test_known_effect_is_significant(tmp_path: Path):
    # strong solves all 8 tasks of every seed at 1.5x; the baseline 2 of them: +0.75 accuracy over 24 pairs
    root = comparison_dir(tmp_path / "effect", lambda s: [SOLVED] * 8, lambda s: [SOLVED] * 2 + [UNSOLVED] * 6)
    res = R.build_report(root, plots=False)
    assert res["baseline"] == "similarity"
    (row,) = res["comparison_rows"]
    acc = row["accuracy"]
    assert row["agent"] == "strong" and row["n_units"] == 24 and row["seeds"] == [0, 1, 2]
    assert acc.estimate == pytest.approx(0.75) and acc.significant and acc.p_value < 1e-3
    assert 0.5 < acc.ci[0] <= 0.75 <= acc.ci[1] <= 1.0
    speed = row["all_tasks_geomean_speedup"]  # 1.5x on 18 more tasks of 24: ratio 1.5 ** 0.75
    assert speed.estimate == pytest.approx(1.5**0.75) and speed.significant
    assert "| strong | similarity | 3 | 24 | +0.750 [" in res["comparison"]
    assert "(n.s.)" not in res["comparison"].split("\n")[2]
    assert "## Paired differences vs similarity" in res["markdown"]


def test_no_effect_is_not_significant(tmp_path: Path):
    # both solve 4 of 8 tasks, different ones: per-pair differences +1 and -1 balance, mean 0
    root = comparison_dir(
        tmp_path / "none",
        lambda s: [SOLVED] * 4 + [UNSOLVED] * 4,
        lambda s: [UNSOLVED] * 4 + [SOLVED] * 4,
    )
    (row,) = R.build_report(root, plots=False)["comparison_rows"]
    acc = row["accuracy"]
    assert acc.estimate == pytest.approx(0.0) and not acc.significant and acc.p_value == pytest.approx(1.0)
    assert acc.ci[0] < 0 < acc.ci[1]
    assert acc.cell().endswith("(n.s.)")
    # a small effect on few pairs is not significant either: 1 task of 4 on one seed
    root2 = tmp_path / "small"
    write_run(root2 / "strong", "strong", 0, [SOLVED] * 2 + [UNSOLVED] * 2)
    write_run(root2 / "similarity", "similarity", 0, [SOLVED] + [UNSOLVED] * 3)
    (row2,) = R.build_report(root2, plots=False)["comparison_rows"]
    assert row2["accuracy"].estimate == pytest.approx(0.25) and row2["accuracy"].p_value == pytest.approx(1.0)


def test_pairs_only_common_seeds_and_tasks(tmp_path: Path):
    root = tmp_path / "partial"
    for seed in (0, 1):
        write_run(root / "strong" / f"seed{seed}", "strong", seed, [SOLVED] * 4)
    write_run(root / "similarity" / "seed0", "similarity", 0, [UNSOLVED] * 3)  # seed 0, 3 tasks only
    (row,) = R.build_report(root, plots=False)["comparison_rows"]
    assert row["n_units"] == 3 and row["seeds"] == [0]


def test_baseline_option_and_default(tmp_path: Path, capsys):
    root = comparison_dir(tmp_path / "c", lambda s: [SOLVED] * 4, lambda s: [UNSOLVED] * 4)
    write_run(root / "random" / "seed0", "random", 0, [SOLVED] * 4)
    assert S.choose_baseline(["strong", "random", "similarity"]) == "similarity"
    assert S.choose_baseline(["strong", "random"]) == "random"
    assert S.choose_baseline(["strong", "other"]) is None
    res = R.build_report(root, plots=False, baseline="random")
    assert sorted(r["agent"] for r in res["comparison_rows"]) == ["similarity", "strong"]
    assert R.main([str(root), "--no-plots", "--baseline", "nope"]) == 2
    assert "baseline 'nope' is not among the runs' agents" in capsys.readouterr().err
    assert R.main([str(root), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "Paired differences vs similarity:" in out and "p=" in out


def test_no_baseline_in_runs_gives_no_comparison(tmp_path: Path):
    write_run(tmp_path / "only" / "a", "qmemory", 0, [SOLVED] * 2)
    res = R.build_report(tmp_path / "only", plots=False)
    assert res["comparison"] == "" and res["baseline"] is None and "Paired differences" not in res["markdown"]


def test_readme_block_carries_the_comparison(tmp_path: Path, capsys):
    root = comparison_dir(tmp_path / "c", lambda s: [SOLVED] * 8, lambda s: [UNSOLVED] * 8)
    readme = tmp_path / "README.md"
    readme.write_text(f"x\n{R.README_START}\n{R.README_END}\n")
    assert R.main([str(root), "--no-plots", "--readme", str(readme)]) == 0
    printed = capsys.readouterr().out.strip()
    text = readme.read_text()
    assert printed in text and "Paired differences vs similarity:" in text and "sign-flip" in text
    assert math.isclose(float(text.split("| strong | similarity | 3 | 24 | ")[1].split()[0]), 1.0)
