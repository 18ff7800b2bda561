"""Sweeps through Hydra's launchers: a multirun over agents x seeds with the joblib launcher
(``hydra/launcher=local``) and with submitit's local executor (``hydra/launcher=submitit_local``, the
SLURM launcher's code path without SLURM) writes the same run directories, and a resumed sweep skips
the finished jobs' work and completes an interrupted one."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_gym.memory import MemoryStore

REPO = Path(__file__).resolve().parents[2]
AGENTS, SEEDS = ("random", "similarity"), (0, 1)
SUBMITIT = importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is not None


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _jobs(sweep: Path) -> dict[tuple[str, int], Path]:
    """(agent, seed) -> the job's run directory, read from each job's saved config."""
    import yaml

    out = {}
    for cfg in sweep.glob("*/config.yaml"):
        c = yaml.safe_load(cfg.read_text())
        out[(c["agent"]["name"], int(c["seed"]))] = cfg.parent
    return out


def _traces(run_dir: Path) -> set[int]:
    with MemoryStore(run_dir / "memory.db", save_index_on_close=False) as mem:
        return {int(it.id) for it in mem.all("trace") if it.id is not None}


@pytest.mark.slow
@pytest.mark.parametrize(
    "launcher",
    [
        "local",
        pytest.param(
            "submitit_local",
            marks=pytest.mark.skipif(
                not SUBMITIT,
                reason="hydra-submitit-launcher is not installed (the slurm extra: pip install -e '.[slurm]'; "
                "scripts/setup.sh installs it)",
            ),
        ),
    ],
)
def test_multirun_run_dirs_and_resume_skip_finished_work(tmp_path, launcher):
    sweep = tmp_path / "sweep"
    args = [sys.executable, "-m", "experiments.run", "-m", f"hydra/launcher={launcher}", "experiment=none",
            f"agent={','.join(AGENTS)}", f"seed={','.join(map(str, SEEDS))}", "env.budget=2",
            "tasks.ids=[level1/021_relu,level1/001_add]", f"hydra.sweep.dir={sweep}", "report=false", "progress=false"]
    if launcher == "submitit_local":
        args += ["hydra.launcher.timeout_min=20", "hydra.launcher.cpus_per_task=1"]
    p = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    jobs = _jobs(sweep)
    assert set(jobs) == {(a, s) for a in AGENTS for s in SEEDS}
    assert sorted(d.name for d in jobs.values()) == ["0", "1", "2", "3"]  # <sweep dir>/<job num>/ either way
    for run_dir in jobs.values():
        steps = _lines(run_dir / "steps.jsonl")
        assert len(steps) == 4 and len(_lines(run_dir / "episodes.jsonl")) == 2
        assert (run_dir / "summary.json").exists() and (run_dir / ".hydra" / "overrides.yaml").exists()
        assert _traces(run_dir) == {s["trace_id"] for s in steps}

    # interrupt one job as a kill during its last step would: the step's trace is in the memory,
    # its log line and the episode record are not
    broken = jobs[("similarity", 1)]
    steps_text = (broken / "steps.jsonl").read_text().splitlines(keepends=True)
    (broken / "steps.jsonl").write_text("".join(steps_text[:-1]))
    episodes_text = (broken / "episodes.jsonl").read_text().splitlines(keepends=True)
    (broken / "episodes.jsonl").write_text("".join(episodes_text[:-1]))
    before = {k: ((d / "steps.jsonl").read_bytes(), _traces(d)) for k, d in jobs.items() if d != broken}

    p = subprocess.run([*args, "resume=true"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    assert _jobs(sweep) == jobs  # the same job lands in the same directory
    for key, (log, traces) in before.items():  # finished jobs: no step run again, nothing written to memory
        assert (jobs[key] / "steps.jsonl").read_bytes() == log and _traces(jobs[key]) == traces
    steps = _lines(broken / "steps.jsonl")
    assert [s["global_step"] for s in steps] == [0, 1, 2, 3] and len(_lines(broken / "episodes.jsonl")) == 2
    assert _traces(broken) == {s["trace_id"] for s in steps}  # the orphan trace was dropped, one new one logged
