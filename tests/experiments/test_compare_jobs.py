"""compare_jobs=2 runs a comparison's runs in two processes with the results of one after another
(fixed verifier inputs, as the demo sets them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def steps(run_dir: Path) -> dict[str, list[tuple]]:
    out = {}
    for f in sorted(run_dir.rglob("steps.jsonl")):
        rows = [json.loads(x) for x in f.read_text().splitlines()]
        out[str(f.parent.relative_to(run_dir))] = [
            (r["code_hash"], r["outcome"], tuple(r["context_ids"]), r["reward"], r["speedup"]) for r in rows
        ]
    return out


@pytest.mark.slow  # two comparisons of 2 runs x 2 tasks x 3 steps on the simulator: about 90 s on 2 cores
def test_parallel_runs_give_the_results_of_sequential_ones(tmp_path):
    got = []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "experiments.run",
                "experiment=demo",
                "compare=[qmemory,random]",
                "compare_seeds=[0]",
                "tasks.max_tasks=2",
                "env.budget=3",
                f"compare_jobs={jobs}",
                "progress=false",
                f"hydra.run.dir={out}",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert p.returncode == 0, p.stderr[-3000:]
        got.append(steps(out))
        if jobs == 2:
            assert "finished qmemory seed 0" in p.stderr
    assert sorted(got[0]) == ["qmemory", "random"] and all(len(v) == 6 for v in got[0].values())
    assert got[0] == got[1]
