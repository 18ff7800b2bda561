"""The real litellm path against a loopback OpenAI-compatible server: success, 429 with
Retry-After, persistent 500, a reply slower than the deadline, prose-only and reasoning replies,
usage fields, unpriced models, budgets and concurrent candidates. No mocks: litellm and the OpenAI
client talk HTTP to a server on 127.0.0.1 started by the test."""

from __future__ import annotations

import logging
import os
import time

import pytest

from kernel_gym.llm import BudgetExhausted, GenerationError, GenerationRequest
from kernel_gym.llm.litellm_generator import LiteLLMGenerator, split_reasoning
from kernel_gym.llm.loopback import LoopbackServer, Reply
from kernel_gym.tasks import get_task

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
pytest.importorskip("litellm")

KEY_VAR = "KG_LOOPBACK_TEST_KEY"
KEY = "sk-loopback-0123456789-secret"
ANSWER = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
REPLY = f"The plan: copy.\n\n```python\n{ANSWER}```\n"


@pytest.fixture(scope="module")
def task():
    return get_task("level1/021_relu")


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_VAR, KEY)


def gen_for(srv: LoopbackServer, tmp_path, model: str = "openai/gpt-4o-mini", **kw) -> LiteLLMGenerator:
    kw.setdefault("backoff_s", 0.01)
    kw.setdefault("max_retries", 2)
    kw.setdefault("timeout_s", 5.0)
    kw.setdefault("deadline_s", 10.0)
    return LiteLLMGenerator(model, api_base=srv.api_base, api_key_env=KEY_VAR, use_cache=False, **kw)


def req(task, seed: int = 0) -> GenerationRequest:
    return GenerationRequest(task=task, backend="ascend_sim", seed=seed)


def test_success_usage_cost_and_key_from_the_environment(tmp_path, task):
    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}
    with LoopbackServer(script=[Reply(REPLY, usage=usage)]) as srv:
        gen = gen_for(srv, tmp_path)
        out = gen.generate(req(task))
    assert out.source == ANSWER and not out.no_code and out.reasoning is None
    u = out.usage
    assert (u.prompt_tokens, u.completion_tokens, u.attempts, u.cached) == (1000, 200, 1, False)
    import litellm
    price = litellm.model_cost["gpt-4o-mini"]
    assert u.cost_usd == pytest.approx(1000 * price["input_cost_per_token"] + 200 * price["output_cost_per_token"])
    assert 0 < u.latency_s < 5
    (sent,) = srv.requests
    assert sent["headers"]["authorization"] == f"Bearer {KEY}"  # the key came from the named variable
    assert sent["body"]["model"] == "gpt-4o-mini" and sent["body"]["messages"][0]["role"] == "system"


def test_rate_limit_honours_retry_after(tmp_path, task):
    with LoopbackServer(reply=REPLY, script=[Reply(status=429, headers={"Retry-After": "0.4"})]) as srv:
        gen = gen_for(srv, tmp_path)
        t0 = time.monotonic()
        out = gen.generate(req(task))
        gap = srv.requests[1]["time"] - srv.requests[0]["time"]
    assert out.source == ANSWER and out.usage.attempts == 2 and len(srv.requests) == 2
    assert gap >= 0.4 and time.monotonic() - t0 < 3  # waited what the server asked, not the backoff
    assert "RateLimitError" in out.notes["retried"][0] and "Retry-After 0.4" in out.notes["retried"][0]
    assert gen.stats()["retries"] == 1


def test_persistent_server_error_is_a_generation_error(tmp_path, task):
    with LoopbackServer(reply=lambda body: Reply(status=500)) as srv:
        gen = gen_for(srv, tmp_path, max_retries=2)
        with pytest.raises(GenerationError) as info:
            gen.generate(req(task))
    assert info.value.error_class == "InternalServerError" and "500" in info.value.message
    assert info.value.usage.attempts == 3 and len(srv.requests) == 3  # litellm's own retries are off
    assert gen.stats()["failures"] == 1


def test_slow_replies_stop_at_the_deadline(tmp_path, task):
    with LoopbackServer(reply=lambda body: Reply(REPLY, delay_s=3.0)) as srv:
        gen = gen_for(srv, tmp_path, max_retries=10, timeout_s=0.3, deadline_s=0.8)
        t0 = time.monotonic()
        with pytest.raises(GenerationError) as info:
            gen.generate(req(task))
        took = time.monotonic() - t0
    assert info.value.error_class == "Timeout"
    assert took < 1.5, took  # bounded by the deadline, not by retries x timeout
    assert 2 <= info.value.usage.attempts <= 4


def test_prose_only_reply_is_no_code(tmp_path, task):
    prose = "I would tile the input and use a vector ReLU, double-buffered."
    with LoopbackServer(script=[Reply(prose)]) as srv:
        out = gen_for(srv, tmp_path).generate(req(task))
    assert out.no_code and out.raw == prose and "no Python code block" in out.notes["extract_error"]


def test_reasoning_is_kept_apart_from_the_code(tmp_path, task):
    decoy = "```python\nclass ModelNew:  # a draft inside the thinking\n    pass\n```"
    usage = {"prompt_tokens": 50, "completion_tokens": 90, "total_tokens": 140,
             "completion_tokens_details": {"reasoning_tokens": 60}}
    with LoopbackServer(script=[Reply(REPLY, reasoning=f"Let me think. {decoy}", usage=usage),
                                Reply(f"<think>hmm {decoy}</think>\n{REPLY}")]) as srv:
        gen = gen_for(srv, tmp_path)
        field = gen.generate(req(task, 1))
        inline = gen.generate(req(task, 2))
    assert field.source == ANSWER and "draft inside the thinking" in field.reasoning
    assert field.usage.reasoning_tokens == 60 and field.usage.completion_tokens == 90
    assert inline.source == ANSWER and "draft inside the thinking" in inline.reasoning
    assert "<think>" not in inline.raw
    assert split_reasoning("no thinking") == ("no thinking", "")


def test_unpriced_model_warns_once_and_cost_limit_counts_tokens(tmp_path, task, caplog):
    usage = {"prompt_tokens": 400_000, "completion_tokens": 100_000, "total_tokens": 500_000}
    with LoopbackServer(reply=lambda body: Reply(REPLY, usage=usage)) as srv:
        gen = gen_for(srv, tmp_path, model="openai/kg-loopback-unpriced", cost_limit_usd=1.0,
                      fallback_usd_per_mtok=(1.0, 4.0))
        with caplog.at_level(logging.WARNING, logger="kernel_gym.llm.litellm_generator"):
            first = gen.generate(req(task, 1))
            second = gen.generate(req(task, 2))
        assert first.usage.cost_usd is None and second.usage.cost_usd is None
        assert first.notes["estimated_cost_usd"] == pytest.approx(0.4 + 0.4)
        assert sum("no price for model openai/kg-loopback-unpriced" in r.message for r in caplog.records) == 1
        with pytest.raises(BudgetExhausted, match="cost_limit_usd"):  # 1.6 estimated >= 1.0
            gen.generate(req(task, 3))
        assert len(srv.requests) == 2


def test_token_limit(tmp_path, task):
    usage = {"prompt_tokens": 600, "completion_tokens": 500, "total_tokens": 1100}
    with LoopbackServer(reply=lambda body: Reply(REPLY, usage=usage)) as srv:
        gen = gen_for(srv, tmp_path, token_limit=1000)
        gen.generate(req(task, 1))
        with pytest.raises(BudgetExhausted, match="token_limit"):
            gen.generate(req(task, 2))
        assert len(srv.requests) == 1


def test_candidates_are_requested_concurrently(tmp_path, task):
    with LoopbackServer(reply=REPLY, latency_s=0.4) as srv:
        gen = gen_for(srv, tmp_path, max_concurrency=4)
        gen.generate(req(task, 0))  # connection warm-up
        t0 = time.monotonic()
        outs = gen.generate_many([req(task, s) for s in range(1, 5)])
        took = time.monotonic() - t0
    assert [o.source for o in outs] == [ANSWER] * 4
    assert took < 1.2, took  # 4 x 0.4 s one after another would be 1.6 s


def test_generate_many_returns_errors_in_place(tmp_path, task):
    with LoopbackServer(reply=REPLY, script=[Reply(status=400)]) as srv:
        gen = gen_for(srv, tmp_path, max_concurrency=1)
        outs = gen.generate_many([req(task, 1), req(task, 2)])
    assert isinstance(outs[0], GenerationError) and outs[0].error_class == "BadRequestError"
    assert outs[1].source == ANSWER and len(srv.requests) == 2  # a 400 is not retried


def test_prompt_dir_overrides_files(tmp_path, task):
    (tmp_path / "system.md").write_text("You are a test system prompt.")
    with LoopbackServer(reply=REPLY) as srv:
        gen_for(srv, tmp_path, prompt_dir=tmp_path).generate(req(task))
        system = srv.requests[0]["body"]["messages"][0]["content"]
    assert system.strip() == "You are a test system prompt."
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "system.md").write_text("costs $5 now")
    with LoopbackServer(reply=REPLY) as srv:
        with pytest.raises(ValueError, match=r"\$\$"):
            gen_for(srv, tmp_path, prompt_dir=tmp_path / "bad").generate(req(task))
    with pytest.raises(ValueError, match="prompt_dir"):
        LiteLLMGenerator("openai/x", prompt_dir=tmp_path / "missing", use_cache=False)
