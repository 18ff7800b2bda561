"""experiments.run with llm=litellm against a loopback OpenAI-compatible server: the run survives
every kind of reply, its logs account for each call, generation errors and budgets stop it
cleanly, resume continues, and the API key appears nowhere in the run directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_gym.envs import KernelSynthesisEnv
from kernel_gym.llm.loopback import LoopbackServer, Reply

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
pytest.importorskip("litellm")

REPO = Path(__file__).resolve().parents[2]
KEY_VAR = "KG_LOOPBACK_RUN_KEY"
KEY = "sk-run-secret-9f8e7d6c5b4a"
BROKEN = "```python\nclass ModelNew(torch.nn.Module:\n    pass\n```"  # verifies fast: a syntax error
BIG = {"prompt_tokens": 1_000_000, "completion_tokens": 10_000, "total_tokens": 1_010_000}


def run(srv: LoopbackServer, out: Path, *extra: str) -> subprocess.CompletedProcess:
    args = ["experiment=none", "agent=random", "tasks.ids=[level1/021_relu]", "llm=litellm",
            "llm.model=openai/gpt-4o-mini", f"llm.options.api_base={srv.api_base}",
            f"llm.options.api_key_env={KEY_VAR}", "llm.options.use_cache=false", "llm.options.backoff_s=0.01",
            "llm.options.max_retries=1", "llm.options.timeout_s=1.0", "llm.options.deadline_s=2.0",
            f"hydra.run.dir={out}", "progress=false", *extra]
    env = {**os.environ, KEY_VAR: KEY}
    return subprocess.run([sys.executable, "-m", "experiments.run", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300, env=env)


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def no_key_in(run_dir: Path) -> None:
    for f in run_dir.rglob("*"):
        if f.is_file():
            assert KEY.encode() not in f.read_bytes(), f"the API key leaked into {f}"


def test_run_survives_every_reply_and_logs_each_call(tmp_path):
    script = [Reply(BROKEN),                                                        # step 0: syntax_error
              Reply(status=429, headers={"Retry-After": "0.1"}), Reply(BROKEN),     # step 1: retried, 2 calls
              Reply(status=500), Reply(status=500),                                 # step 2: generation_error
              Reply(BROKEN, delay_s=5.0), Reply(BROKEN, delay_s=5.0),               # step 3: deadline
              Reply("Use a vector ReLU."),                                          # step 4: no_code
              Reply(BROKEN, reasoning="think first",                                # step 5: reasoning
                    usage={"prompt_tokens": 10, "completion_tokens": 30, "total_tokens": 40,
                           "completion_tokens_details": {"reasoning_tokens": 20}})]
    out = tmp_path / "run"
    with LoopbackServer(script=script) as srv:
        p = run(srv, out, "env.budget=6")
        n_requests = len(srv.requests)
    assert p.returncode == 0, p.stderr[-3000:]
    steps = lines(out / "steps.jsonl")
    assert [s["outcome"] for s in steps] == ["syntax_error", "syntax_error", "generation_error",
                                             "generation_error", "no_code", "syntax_error"]
    assert [s["llm_attempts"] for s in steps] == [1, 2, 2, 2, 1, 1]
    assert sum(s["llm_attempts"] for s in steps) == n_requests == 9  # every call accounted for
    assert steps[2]["generation_error"]["error_class"] == "InternalServerError"
    assert steps[3]["generation_error"]["error_class"] == "Timeout"
    assert steps[2]["trace_id"] is None and steps[2]["reward"] == -1.0 and steps[2]["verify_s"] < 0.05
    assert steps[5]["reasoning_tokens"] == 20 and steps[5]["completion_tokens"] == 30
    assert all(s["cost_usd"] is not None for s in steps if s["outcome"] != "generation_error")
    replies = lines(out / "replies.jsonl")
    assert len(replies) == 6 and replies[4]["reply"] == "Use a vector ReLU." and replies[5]["reasoning"] == "think first"
    assert replies[1]["retried"] and "Retry-After" in replies[1]["retried"][0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["llm"]["llm_calls"] == 9 and summary["llm"]["generation_errors"] == 2
    assert summary["llm"]["no_code"] == 1 and summary["stopped"] is None
    from experiments.report import build_report
    report = build_report(out, tmp_path / "report", plots=False)["markdown"]
    assert "## LLM calls, tokens and cost per run" in report and "| random | 0 | 9 |" in report
    no_key_in(out)


def test_consecutive_generation_errors_stop_the_run(tmp_path):
    out = tmp_path / "run"
    with LoopbackServer(reply=lambda body: Reply(status=503)) as srv:
        p = run(srv, out, "env.budget=10", "llm.max_consecutive_errors=3")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "3 generation errors in a row" in p.stderr and "resume=true" in p.stderr
    steps = lines(out / "steps.jsonl")
    assert [s["outcome"] for s in steps] == ["generation_error"] * 3
    assert json.loads((out / "summary.json").read_text())["stopped"]


@pytest.mark.slow  # two experiments.run processes (stop, then resume): about 25 s on 2 cores
def test_cost_limit_stops_and_resume_continues(tmp_path):
    out = tmp_path / "run"
    # each call: 1M prompt tokens of gpt-4o-mini = $0.15 (+ a little output)
    with LoopbackServer(reply=lambda body: Reply(BROKEN, usage=BIG)) as srv:
        p = run(srv, out, "env.budget=4", "llm.options.cost_limit_usd=0.2")
        assert p.returncode == 0, p.stderr[-3000:]
        assert "cost limit" in p.stderr and len(lines(out / "steps.jsonl")) == 2 and len(srv.requests) == 2
        p2 = run(srv, out, "env.budget=4", "llm.options.cost_limit_usd=1.0", "resume=true")
        assert p2.returncode == 0, p2.stderr[-3000:]
        assert len(lines(out / "steps.jsonl")) == 4 and len(srv.requests) == 4
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] is None and summary["llm"]["cost_usd"] == pytest.approx(4 * 0.156, rel=0.05)
    no_key_in(out)


def test_a_key_in_config_is_refused_and_scrubbed(tmp_path):
    out = tmp_path / "run"
    with LoopbackServer(reply=BROKEN) as srv:
        p = run(srv, out, "env.budget=1", f"+llm.options.extra_kwargs.api_key={KEY}")
        assert not srv.requests
    assert p.returncode == 2 and "api_key_env" in p.stderr and KEY not in p.stderr
    no_key_in(out)


def test_env_best_of_k_candidates_concurrently(tmp_path, monkeypatch):
    """A 20-step run with 4 concurrent candidates per step: a failing candidate does not fail the step."""
    monkeypatch.setenv(KEY_VAR, KEY)
    state = {"n": 0}

    def reply(body):
        state["n"] += 1
        return Reply(status=500) if state["n"] % 4 == 0 else Reply(BROKEN if state["n"] % 3 else "prose only")

    with LoopbackServer(reply=reply, latency_s=0.05) as srv:
        env = KernelSynthesisEnv(backend="ascend_sim", tasks=["level1/021_relu"], budget=20, candidates_per_step=4,
                                 generator={"name": "litellm:openai/gpt-4o-mini", "api_base": srv.api_base,
                                            "api_key_env": KEY_VAR, "use_cache": False, "max_retries": 0,
                                            "max_concurrency": 4})
        try:
            obs, info = env.reset(seed=0)
            outcomes = []
            for _ in range(20):
                obs, reward, terminated, _, info = env.step(env.action_space.sample())
                outcomes.append(info["outcome"])
                assert len(info["candidates_tried"]) == 4 and info["usage"]["attempts"] == 4
                # every candidate's raw reply is kept, the losers' too
                for cand in info["candidates_tried"]:
                    if cand["outcome"] != "generation_error":
                        assert cand["reply"] in (BROKEN, "prose only")
            assert terminated and len(srv.requests) == 80
            assert set(outcomes) <= {"syntax_error", "no_code"}  # a verified candidate wins over errors
        finally:
            env.close()
