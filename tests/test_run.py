"""experiments.run end to end: the run directory, compare mode, resume after a kill, bad overrides."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernel_gym.memory import MemoryStore

REPO = Path(__file__).resolve().parent.parent
TASKS = "tasks.ids=[level1/021_relu,level1/001_add,level1/008_square]"


def run(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.run", *args, "progress=false"], cwd=REPO,
                          capture_output=True, text=True, timeout=600, **kw)


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_single_run_writes_the_run_directory(tmp_path):
    out = tmp_path / "run"
    p = run(["experiment=none", "agent=random", "env.budget=2", TASKS, f"hydra.run.dir={out}"])
    assert p.returncode == 0, p.stderr[-2000:]
    steps = lines(out / "steps.jsonl")
    assert len(steps) == 6 and [s["global_step"] for s in steps] == list(range(6))
    assert {"task_id", "stage", "context_ids", "parent_id", "trace_id", "code_hash", "reward", "feasible",
            "error_class", "speedup"} <= set(steps[0])
    assert len(lines(out / "episodes.jsonl")) == 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["agent"] == "random" and len(summary["rounds"]) == 2
    assert (out / "config.yaml").exists() and (out / "agent.json").exists()
    with MemoryStore(out / "memory.db") as mem:  # every logged step is a trace in the run's memory
        assert {it.id for it in mem.all("trace")} == {s["trace_id"] for s in steps}
    assert "| random | 0 | 2 |" in p.stdout
    p2 = run(["experiment=none", "agent=random", "env.budget=2", TASKS, f"hydra.run.dir={out}"])
    assert p2.returncode != 0 and "resume=true" in p2.stderr


def test_compare_mode_runs_each_agent_and_reports(tmp_path):
    out = tmp_path / "cmp"
    p = run(["compare=[similarity,no_memory]", "compare_seeds=[0,1]", "env.budget=2",
             "tasks.ids=[level1/021_relu,level1/001_add]", f"hydra.run.dir={out}"])
    assert p.returncode == 0, p.stderr[-2000:]
    for agent in ("similarity", "no_memory"):
        for seed in (0, 1):
            assert len(lines(out / agent / f"seed{seed}" / "steps.jsonl")) == 4
    assert (out / "report.md").exists() and (out / "accuracy_vs_iteration.png").stat().st_size > 0
    assert "similarity" in p.stdout and "no_memory" in p.stdout


@pytest.mark.slow
def test_killed_run_resumes_without_repeating_steps(tmp_path):
    out = tmp_path / "killed"
    args = ["experiment=none", "agent=qmemory", "env.budget=5", TASKS, f"hydra.run.dir={out}"]
    proc = subprocess.Popen([sys.executable, "-m", "experiments.run", *args, "progress=false"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    steps_path = out / "steps.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline:
        if steps_path.exists() and len(steps_path.read_text().splitlines()) >= 7:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    n_before = len(lines(steps_path))
    assert 7 <= n_before < 15, "the run should have been killed part-way"
    p = run([*args, "resume=true"])
    assert p.returncode == 0, p.stderr[-2000:]
    assert "resuming" in p.stderr
    steps = lines(steps_path)
    assert len(steps) == 15  # = 3 tasks x budget 5, as an uninterrupted run
    assert [s["global_step"] for s in steps] == list(range(15))
    assert sorted((s["episode"], s["step"]) for s in steps) == [(e, t) for e in range(3) for t in range(5)]
    assert len(lines(out / "episodes.jsonl")) == 3
    with MemoryStore(out / "memory.db") as mem:  # the step in flight at the kill left no orphan trace
        assert {it.id for it in mem.all("trace")} == {s["trace_id"] for s in steps}


@pytest.mark.parametrize("override, needle", [
    ("agent=nope", "agent"), ("env.budgett=3", "budgett"), ("llm=litellm", "llm.model="),
    ("memory=shared", "memory.path="), ("agent=ppo", "agent.kwargs.checkpoint="),
])
def test_bad_overrides_fail_with_hydra_message(tmp_path, override, needle):
    p = run([override, f"hydra.run.dir={tmp_path / 'bad'}"])
    assert p.returncode != 0 and needle in p.stderr


@pytest.mark.slow
def test_train_ppo_then_evaluate_as_agent(tmp_path):
    train = tmp_path / "ppo"
    p = subprocess.run([sys.executable, "-m", "experiments.train_ppo", "total_timesteps=40", "ppo.n_steps=10",
                        "ppo.batch_size=10", "n_envs=2", "checkpoint_every=20", "env.budget=2",
                        "tasks.max_tasks=2", f"hydra.run.dir={train}"],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    ckpt = train / "ppo_final.zip"
    assert ckpt.exists() and list((train / "checkpoints").glob("ppo_*_steps.zip"))
    assert list((train / "tb").rglob("events.out.tfevents.*"))
    out = tmp_path / "eval"
    p = run(["experiment=none", "agent=ppo", f"agent.kwargs.checkpoint={ckpt}", "env.budget=2", "tasks.max_tasks=2",
             f"hydra.run.dir={out}"])
    assert p.returncode == 0, p.stderr[-2000:]
    steps = lines(out / "steps.jsonl")
    assert len(steps) == 4 and {s["agent"] for s in steps} == {"ppo"}
    # a policy for another observation size is refused with a message naming the fix
    p = run(["experiment=none", "agent=ppo", f"agent.kwargs.checkpoint={ckpt}", "env.n_select=2", "env.budget=1",
             "tasks.max_tasks=1", f"hydra.run.dir={tmp_path / 'bad'}"])
    assert p.returncode != 0 and "trained with" in p.stderr
