"""The real-LLM recipe (docs/experiments.md): dict-valued options from the command line, the
estimate of a run's requests, and a run against the loopback OpenAI-compatible server that makes
exactly the estimated number of requests with the sampling options it was given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from experiments.config_check import CONF_DIR, check_command_line, merge_dict_overrides
from experiments.estimate import estimate_run, format_estimate
from kernel_gym.llm.loopback import LoopbackServer

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
REPO = Path(__file__).resolve().parents[2]
BROKEN = "```python\nclass ModelNew(torch.nn.Module:\n    pass\n```"  # verifies fast: a syntax error


def composed(*overrides: str):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3", job_name="test"):
        return compose(config_name="config", overrides=list(overrides))


def test_dict_options_merge_from_the_command_line():
    argv = [
        "llm=litellm",
        "llm.model=openai/m",
        "llm.options.extra_kwargs={top_p:0.9,reasoning_effort:low}",
        "backend.verify.backend_options={bounds_mode:strict}",
        "agent.kwargs={epsilon:0.2}",
        "env.budget=3",
    ]
    out = merge_dict_overrides(argv)
    assert out == ["llm=litellm", "llm.model=openai/m", "++" + argv[2], "++" + argv[3], "++" + argv[4], "env.budget=3"]
    assert check_command_line(out) == []
    cfg = composed(*out)
    assert dict(cfg.llm.options.extra_kwargs) == {"top_p": 0.9, "reasoning_effort": "low"}
    assert dict(cfg.backend.verify.backend_options) == {"soc": "Ascend910B2", "bounds_mode": "strict"}  # merged
    assert dict(cfg.agent.kwargs) == {"epsilon": 0.2, "alpha": 0.3}
    # without the rewrite Hydra refuses the new keys; a misspelt key is left for the check to name
    assert "unknown config key" in check_command_line(argv[:3])[0]
    typo = ["llm=litellm", "llm.model=openai/m", "llm.optionz.extra_kwargs={top_p:0.9}"]
    assert merge_dict_overrides(typo) == typo and "llm.optionz" in check_command_line(typo)[0]
    flags = ["--cfg", "job", "llm=litellm", "llm.options.extra_kwargs={top_p:0.9}"]  # flag values are not overrides
    assert merge_dict_overrides(flags)[-1].startswith("++")


def test_estimate_of_the_paper_scale_comparison():
    cfg = composed(
        "experiment=evokernel",
        "llm=litellm",
        "llm.model=openai/my-served-model",
        "llm.options.fallback_usd_per_mtok=[0.5,1.5]",
    )
    e = estimate_run(cfg)
    # EvoKernel's protocol as conf/experiment/evokernel.yaml sets it: 5 agents, level1 + level2, T = 30, 1 seed
    assert e["runs"] == 5 and e["tasks"] == 138 and e["budget"] == 30 and e["seeds"] == [0]
    assert e["steps"] == 5 * 138 * 30 == e["requests"]
    assert e["completion_tokens"] == e["requests"] * 2000 and e["prompt_tokens"] > e["requests"] * 500
    assert e["price_source"] == "llm.options.fallback_usd_per_mtok"
    assert e["cost_usd"] == pytest.approx(e["prompt_tokens"] * 0.5e-6 + e["completion_tokens"] * 1.5e-6)
    text = format_estimate(e)
    assert "requests:  20700 = 20700 step(s) x 1 candidate(s) per step" in text and "hours:" in text
    more = estimate_run(
        composed(
            "experiment=evokernel",
            "llm=litellm",
            "llm.model=openai/m",
            "env.candidates_per_step=4",
            "compare_seeds=[0,1,2]",
        )
    )
    assert more["requests"] == 4 * 3 * e["requests"]
    offline = estimate_run(composed("experiment=demo"))
    assert offline["requests"] == 0 and offline["steps"] == 4 * 3 * 16 * 10


def test_recipe_against_the_loopback_server(tmp_path):
    pytest.importorskip("litellm")
    out = tmp_path / "run"
    common = [
        "experiment=none",
        "agent=random",
        "tasks.ids=[level1/021_relu,level1/001_add]",
        "env.budget=2",
        "llm=litellm",
        "llm.model=openai/served-model",
        "llm.options.use_cache=false",
        "llm.options.extra_kwargs={top_p:0.9}",
    ]
    with LoopbackServer(reply=BROKEN) as srv:
        args = [*common, f"llm.options.api_base={srv.api_base}", f"hydra.run.dir={out}", "progress=false"]
        env = {**os.environ, "OPENAI_API_KEY": "loopback"}
        estimate = estimate_run(composed(*merge_dict_overrides(args)))  # what estimate=true prints
        assert estimate["requests"] == 4 and not srv.requests
        p = subprocess.run(
            [sys.executable, "-m", "experiments.run", *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert p.returncode == 0, p.stderr[-3000:]
        bodies = [r["body"] for r in srv.requests]
    assert len(bodies) == estimate["requests"] and all(
        b["top_p"] == 0.9 and b["model"] == "served-model" for b in bodies
    )
    steps = [json.loads(x) for x in (out / "steps.jsonl").read_text().splitlines()]
    assert len(steps) == 4 and sum(s["llm_attempts"] for s in steps) == 4


def test_estimate_true_prints_and_runs_nothing(tmp_path):
    out = tmp_path / "run"
    p = subprocess.run(
        [sys.executable, "-m", "experiments.run", "experiment=demo", "estimate=true", f"hydra.run.dir={out}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert "steps:     1920 = 192 episode(s) x T = 10" in p.stdout and "(no LLM: llm=synthetic)" in p.stdout
    assert not (out / "steps.jsonl").exists() and not list(out.rglob("steps.jsonl"))
