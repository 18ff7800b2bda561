"""export_trajectories on a run directory built by driving the real env: hashes and gains match the step log."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import kernel_gym  # noqa: F401
from experiments.export_trajectories import export_trajectories, find_runs, main
from solutions import reference_answer
from kernel_gym.envs.experience import code_hash
from kernel_gym.llm.fixed import FixedGenerator

TASK = "level1/021_relu"


def _make_run(run_dir):
    """Steps: draft naive (scratch), fast child of naive, fast again from fast (gain ~1), broken child."""
    naive, fast = reference_answer(TASK, "ascend_sim_naive"), reference_answer(TASK, "ascend_sim")
    run_dir.mkdir(parents=True)
    env = gym.make("KernelBench-Ascend-v0", memory=str(run_dir / "memory.db"),
                   generator=FixedGenerator([naive, fast, fast, "def broken(:\n"]), tasks=[TASK], budget=4,
                   verify_settings={"correctness_trials": 2, "timing_trials": 3}, search_actions=True)
    obs, info = env.reset(seed=0)
    k = env.unwrapped.k
    steps = []
    for t in range(4):
        sel = np.zeros(k, np.int8)
        sel[:2] = 1
        # step 1 refines the naive draft; steps 2-3 refine the best (slot 0)
        parent = 0 if t == 0 else 1
        action = {"select": sel, "parent": parent, "mode": 0, "pool": np.zeros(env.unwrapped.p, np.int8)}
        obs, r, term, trunc, info = env.step(action)
        v = info["verifier"]
        steps.append({"agent": "scripted", "seed": 0, "episode": 0, "task_id": TASK, "level": 1,
                      "category": "elementwise", "step": t, "global_step": t, "stage": info["step_stage"],
                      "mode": info["mode"], "context_ids": info["context_ids"], "parent_id": info["parent_id"],
                      "trace_id": info["trace_id"], "code_hash": info["code_hash"], "reward": r,
                      "feasible": info["feasible"], "compiled": v.get("compiled"), "correct": v.get("correct"),
                      "hacked": v.get("hacked"), "error_class": v.get("error_class"), "latency_s": v.get("latency_s"),
                      "reference_latency_s": v.get("reference_latency_s"),
                      "speedup": v.get("speedup") if info["feasible"] else None})
    env.close()
    with open(run_dir / "steps.jsonl", "w") as fh:
        for s in steps:
            fh.write(json.dumps(s) + "\n")
        fh.write('{"half a line')   # an interrupted run's last line is skipped
    return steps, {"naive": code_hash(naive), "fast": code_hash(fast)}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    steps, hashes = _make_run(root / "compare" / "adaexplore")
    return root, steps, hashes


def test_records_match_step_log(run):
    root, steps, hashes = run
    rd = root / "compare" / "adaexplore"
    res = export_trajectories(rd, out=root / "t.jsonl", progress=False)
    recs = [json.loads(ln) for ln in open(root / "t.jsonl")]
    by_trace = {s["trace_id"]: s for s in steps}
    lat = {s["trace_id"]: s["latency_s"] for s in steps if s["feasible"]}
    assert steps[1]["parent_id"] == steps[0]["trace_id"] and steps[1]["feasible"]
    assert res["steps"] == 4 and res["bad_json"] == 1 and res["kept"] == len(recs) >= 1
    naive_to_fast = [r for r in recs if r["trace_id"] == steps[1]["trace_id"]]
    assert len(naive_to_fast) == 1
    r = naive_to_fast[0]
    assert r["code_hash"] == by_trace[r["trace_id"]]["code_hash"] == hashes["fast"]
    assert r["parent_code_hash"] == hashes["naive"] == code_hash(r["parent_code"])
    assert r["gain"] == pytest.approx(lat[steps[0]["trace_id"]] / lat[steps[1]["trace_id"]])
    assert r["gain"] > 5 and r["context_ids"] == steps[1]["context_ids"] and len(r["context"]) == 2
    assert all(c["text"] for c in r["context"])
    for rec in recs:   # every record: correctness-preserving, gain > 1, consistent with the log
        s = by_trace[rec["trace_id"]]
        assert s["feasible"] and s["parent_id"] in lat and rec["gain"] > 1.0
        assert rec["code_hash"] == s["code_hash"]
        assert rec["gain"] == pytest.approx(lat[s["parent_id"]] / s["latency_s"])
    assert steps[3]["trace_id"] not in {rec["trace_id"] for rec in recs}   # the broken step
    assert steps[0]["trace_id"] not in {rec["trace_id"] for rec in recs}   # a draft


def test_min_gain_drafts_and_multirun(run, capsys):
    root, steps, hashes = run
    res = export_trajectories(root, out=root / "all.jsonl", min_gain=0.0, include_drafts=True, progress=False)
    recs = [json.loads(ln) for ln in open(root / "all.jsonl")]
    assert res["runs"] == 1 and {r["run"] for r in recs} == {"compare/adaexplore"}
    traces = {r["trace_id"] for r in recs}
    assert steps[0]["trace_id"] in traces and steps[2]["trace_id"] in traces   # draft and the ~1x step
    draft = next(r for r in recs if r["trace_id"] == steps[0]["trace_id"])
    assert draft["parent_code"] is None and draft["gain"] == pytest.approx(steps[0]["speedup"])
    res = export_trajectories(root, out=root / "none.jsonl", min_gain=1e9, progress=False)
    assert res["kept"] == 0 and (root / "none.jsonl").read_text() == ""


def test_missing_steps_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="no steps.jsonl"):
        find_runs(tmp_path)
    assert main([str(tmp_path)]) == 2
    assert "no steps.jsonl" in capsys.readouterr().err
