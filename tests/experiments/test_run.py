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

REPO = Path(__file__).resolve().parents[2]
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
    assert summary["package_version"] and summary["git_commit"]  # the report's stamp
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


@pytest.mark.parametrize("overrides, needle", [
    (["agent=nope"], "no config 'agent/nope'; available: adaexplore"),
    (["env.budgett=3"], "unknown config key 'env.budgett'"),
    (["llm=litellm"], "llm.model="), (["memory=shared"], "memory.path="), (["agent=ppo"], "agent.kwargs.checkpoint="),
    (["env.budget=abc"], "env.budget='abc': must be a positive integer"),
    (["tasks.suite=level9"], "unknown suite"), (["tasks.ids=[level1/nope]"], "no task 'level1/nope'"),
    (["-m", "agent=random,similarity", "env.n_select=0,2"], "env.n_select=0: must be a positive integer"),
])
def test_bad_overrides_are_one_line_naming_the_fix_and_exit_2(tmp_path, overrides, needle):
    p = run([*overrides, f"hydra.run.dir={tmp_path / 'bad'}", f"hydra.sweep.dir={tmp_path / 'sweep'}"])
    assert p.returncode == 2, p.stderr[-2000:]
    lines_ = p.stderr.strip().splitlines()
    assert len(lines_) == 1 and lines_[0].startswith("error: ") and needle in lines_[0], p.stderr[-2000:]
    assert not (tmp_path / "bad").exists() and not (tmp_path / "sweep").exists()  # refused before any work


def test_several_problems_are_listed_together():
    from experiments.config_check import check_command_line
    errors = check_command_line(["env.budget=0", "seed=x", "tasks.max_tasks=-1"])
    assert errors == ["env.budget=0: must be a positive integer", "seed='x': must be an integer",
                      "tasks.max_tasks=-1: must be null or a positive integer"]
    assert check_command_line(["agent=random", "env.budget=2"]) == []
    assert check_command_line(["--cfg", "job"]) == []  # Hydra's own flags are not checked here


def test_memory_backend_overrides_select_the_store(tmp_path):
    from hydra import compose, initialize_config_dir

    from experiments.config_check import check_command_line
    from experiments.run import memory_location
    assert check_command_line(["memory=postgres"]) == [
        "memory.backend=postgres needs a DSN: add memory.dsn=postgresql://USER@HOST:PORT/DATABASE"]
    assert "PGPASSWORD" in check_command_line(["memory.backend=postgres", "memory.dsn=postgresql://u:pw@h/db"])[0]
    assert "sqlite or postgres" in check_command_line(["memory.backend=mysql"])[0]
    dsn = "postgresql://kg@db.example:5432/kernel_gym"
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        pg = compose("config", overrides=["memory.backend=postgres", f"memory.dsn={dsn}"])
        sqlite = compose("config", overrides=["memory=shared", f"memory.path={tmp_path / 'sub' / 'm.db'}"])
    assert check_command_line(["memory=postgres", f"memory.dsn={dsn}"]) == []
    assert memory_location(pg, tmp_path) == dsn
    assert memory_location(sqlite, tmp_path) == tmp_path / "sub" / "m.db" and (tmp_path / "sub").is_dir()


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


def test_agent_from_outside_the_package_in_a_multirun_with_built_in_agents(tmp_path):
    """A researcher's policy: a copy of agents/template.py in a directory of their own, with a
    config in their own conf dir, run by `-m` beside two built-in agents and compared by the report."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "my_policy.py").write_text((REPO / "agents" / "template.py").read_text()
                                       .replace("class TemplateAgent", "class MyPolicy")
                                       .replace('name = "template"', 'name = "mine"'))
    conf = tmp_path / "conf" / "agent"
    conf.mkdir(parents=True)
    (conf / "mine.yaml").write_text("name: mine\n_target_: my_policy:MyPolicy\nkwargs: {epsilon: 0.5}\n")
    sweep = tmp_path / "multi"
    env = {**os.environ, "PYTHONPATH": str(code)}
    p = run(["-m", "experiment=none", "agent=mine,similarity,random", "env.budget=2",
             "tasks.ids=[level1/021_relu,level1/001_add]", f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
             f"hydra.sweep.dir={sweep}", "report=false"], env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    agents = {json.loads(s.read_text())["agent"] for s in sweep.glob("*/summary.json")}
    assert agents == {"mine", "similarity", "random"}
    mine = next(s.parent for s in sweep.glob("*/summary.json") if json.loads(s.read_text())["agent"] == "mine")
    assert json.loads((mine / "agent.json").read_text())["state"]["totals"]  # it learned from its steps
    rep = subprocess.run([sys.executable, "-m", "experiments.report", str(sweep)], cwd=REPO, capture_output=True,
                         text=True, timeout=300)
    assert rep.returncode == 0, rep.stderr[-2000:]
    table = (sweep / "report.md").read_text()
    assert all(f"| {a} " in table for a in ("mine", "similarity", "random")), table[:2000]


def test_unknown_agent_target_is_one_clear_error(tmp_path):
    p = run(["experiment=none", "agent=random", "+agent._target_=no_such_module:Nope", "env.budget=1",
             "tasks.ids=[level1/021_relu]", f"hydra.run.dir={tmp_path / 'r'}"])
    assert p.returncode == 2 and p.stderr.strip().startswith("error:") and len(p.stderr.strip().splitlines()) == 1
    assert "no_such_module" in p.stderr and "PYTHONPATH" in p.stderr
    assert not (tmp_path / "r" / "steps.jsonl").exists()  # refused before any work


KB_TASK = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


def test_tasks_from_a_kernelbench_checkout(tmp_path):
    """tasks=kernelbench reads a checkout's level folders; at published shapes unless shrink=true."""
    from hydra import compose, initialize_config_dir

    from experiments.config_check import check_config
    from experiments.run import task_list

    (tmp_path / "level1").mkdir()
    (tmp_path / "level1" / "19_ReLU.py").write_text(KB_TASK)
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=["tasks=kernelbench", f"tasks.root={tmp_path}"])
        small = compose("config", overrides=["tasks=kernelbench", f"tasks.root={tmp_path}", "tasks.shrink=true",
                                             "tasks.max_elements=4096"])
        missing = compose("config", overrides=["tasks=kernelbench"])
    assert check_config(cfg) == []
    [full] = task_list(cfg)
    assert full.build(0)[1][0].shape == (16, 16384)  # KernelBench's own shape
    [shrunk] = task_list(small)
    assert shrunk.build(0)[1][0].numel() <= 4096
    assert any("tasks.root=None: not a directory" in e for e in check_config(missing))


def test_postgres_fresh_memory_is_a_schema_per_run_directory(tmp_path):
    """memory.backend=postgres with memory=fresh: each run directory (each agent of a comparison) gets a
    schema of its own, the same one on resume; a named schema is used as given; bad names are refused."""
    from hydra import compose, initialize_config_dir

    from experiments.config_check import check_command_line
    from experiments.run import memory_schema
    dsn = "postgresql://kg@db.example:5432/kernel_gym"
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        fresh = compose("config", overrides=["memory.backend=postgres", f"memory.dsn={dsn}"])
        shared = compose("config", overrides=["memory=postgres", f"memory.dsn={dsn}"])
        sqlite = compose("config")
    a, b = memory_schema(fresh, tmp_path / "run" / "qmemory"), memory_schema(fresh, tmp_path / "run" / "random")
    assert a and b and a != b and a.startswith("kg_run_") and a == memory_schema(fresh, tmp_path / "run" / "qmemory")
    assert memory_schema(shared, tmp_path / "x") == "public" and memory_schema(sqlite, tmp_path) is None
    assert "memory.schema='Bad-Name'" in check_command_line(
        ["memory.backend=postgres", f"memory.dsn={dsn}", "memory.schema=Bad-Name"])[0]
    assert "reconnect_timeout_s" in check_command_line(
        ["memory.backend=postgres", f"memory.dsn={dsn}", "memory.reconnect_timeout_s=-1"])[0]
