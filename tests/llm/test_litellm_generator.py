"""LiteLLMGenerator offline: litellm mock responses, cache replay, retries, cost accounting,
prompt rendering, code extraction and the response cache. No network is touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from kernel_gym.llm import GenerationError, Generator, GenerationRequest, ParentKernel  # noqa: E402
from kernel_gym.llm.extract import CodeExtractionError, extract_code, find_code_blocks  # noqa: E402
from kernel_gym.llm.litellm_generator import CostLimitExceeded, LiteLLMGenerator  # noqa: E402
from kernel_gym.llm.prompting import PROMPT_DIR, PromptBudget, build_messages  # noqa: E402
from kernel_gym.llm.response_cache import ResponseCache, cache_key  # noqa: E402
from kernel_gym.memory.types import MemoryItem  # noqa: E402
from kernel_gym.tasks import get_task  # noqa: E402

litellm = pytest.importorskip("litellm")

MODEL = "gpt-4o-mini"  # priced in litellm's bundled cost map

ANSWER = '''import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""
extern "C" void relu_do(uint8_t* x, uint8_t* y, uint32_t n) {}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        y = torch.empty_like(x)
        self.mod.relu_do(x, y, x.numel())
        return y
'''

REPLY = f"Plan: one block per core, double-buffered tiles.\n\n```python\n{ANSWER}```\nDone."


class MockLLM:
    """A completion function that answers through ``litellm.completion(mock_response=...)``.

    ``script`` items are used in order (the last one repeats): a reply string, one of litellm's
    mock error strings (``"litellm.RateLimitError"``), or an exception instance to raise.
    """

    def __init__(self, *script: object) -> None:
        self.script = list(script) or [REPLY]
        self.calls: list[dict] = []

    def __call__(self, **kwargs):
        self.calls.append(kwargs)
        item = self.script[min(len(self.calls) - 1, len(self.script) - 1)]
        return litellm.completion(**kwargs, mock_response=item)


def refuse(**kwargs):
    raise AssertionError("the API must not be called (expected a cache hit or a cost-limit stop)")


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture(scope="module")
def task():
    return get_task("level1/021_relu")


@pytest.fixture
def request_(task):
    return GenerationRequest(task=task, backend="ascend_sim", seed=7)


def make(tmp_path, completion_fn, **kw) -> LiteLLMGenerator:
    kw.setdefault("sleep_fn", Sleeps())
    return LiteLLMGenerator(MODEL, cache_dir=tmp_path / "llm_cache", completion_fn=completion_fn, **kw)


# ---------------------------------------------------------------------------- generation
def test_mock_reply_source_usage_and_cost(tmp_path, request_):
    llm = MockLLM(REPLY)
    gen = make(tmp_path, llm, temperature=0.3, max_tokens=1234)
    assert isinstance(gen, Generator) and gen.name == f"litellm:{MODEL}"
    out = gen.generate(request_)

    assert out.source == ANSWER
    assert out.raw == REPLY and "extract_error" not in out.notes
    sent = llm.calls[0]
    assert sent["model"] == MODEL and sent["temperature"] == 0.3 and sent["max_tokens"] == 1234
    assert sent["messages"][0]["role"] == "system" and sent["messages"][1]["role"] == "user"
    assert "seed" not in sent  # the request seed only keys the cache

    # litellm's mock usage is 10 prompt + 20 completion tokens; the cost is litellm's price for them
    u = out.usage
    assert (u.model, u.prompt_tokens, u.completion_tokens, u.cached, u.attempts) == (MODEL, 10, 20, False, 1)
    prices = litellm.model_cost[MODEL]
    expected = 10 * prices["input_cost_per_token"] + 20 * prices["output_cost_per_token"]
    assert u.cost_usd == pytest.approx(expected) and u.cost_usd > 0
    assert u.latency_s >= 0

    gen.generate(GenerationRequest(task=request_.task, backend="ascend_sim", seed=8))
    s = gen.stats()
    assert (s["calls"], s["attempts"], s["cache_hits"], s["retries"]) == (2, 2, 0, 0)
    assert (s["total_prompt_tokens"], s["total_completion_tokens"]) == (20, 40)
    assert s["total_cost_usd"] == pytest.approx(2 * expected)
    json.dumps(s)


def test_cache_hit_on_replay(tmp_path, request_):
    first = make(tmp_path, MockLLM(REPLY)).generate(request_)

    replay = make(tmp_path, refuse)  # a fresh generator (new process, offline) on the same cache
    again = replay.generate(request_)
    assert again.source == first.source and again.raw == first.raw
    assert again.usage.cached and again.usage.cost_usd == 0.0 and again.usage.attempts == 0
    assert (again.usage.prompt_tokens, again.usage.completion_tokens) == (10, 20)
    assert again.notes["cached_cost_usd"] == pytest.approx(first.usage.cost_usd)
    assert again.notes["cache_key"] == first.notes["cache_key"]
    s = replay.stats()
    assert (s["cache_hits"], s["calls"], s["total_cost_usd"]) == (1, 0, 0.0)

    # anything that changes the reply misses: sampling settings, seed, prompt
    for gen, req in [(make(tmp_path, refuse, temperature=0.9), request_),
                     (make(tmp_path, refuse, max_tokens=100), request_),
                     (make(tmp_path, refuse, extra_kwargs={"top_p": 0.5}), request_),
                     (make(tmp_path, refuse), GenerationRequest(task=request_.task, backend="ascend_sim", seed=8)),
                     (make(tmp_path, refuse), GenerationRequest(task=request_.task, backend="cpu", seed=7))]:
        with pytest.raises(GenerationError, match="must not be called"):
            gen.generate(req)

    # endpoint arguments are not part of the key
    hit = make(tmp_path, refuse, extra_kwargs={"api_base": "http://x"}).generate(request_)
    assert hit.usage.cached
    assert len(list((tmp_path / "llm_cache").glob("??/*.json"))) == 1


def test_api_keys_are_refused_in_config(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="api_key_env"):
        make(tmp_path, refuse, extra_kwargs={"api_key": "sk-secret"})
    monkeypatch.delenv("KG_TEST_NO_SUCH_KEY", raising=False)
    with pytest.raises(ValueError, match="export KG_TEST_NO_SUCH_KEY"):
        make(tmp_path, refuse, api_key_env="KG_TEST_NO_SUCH_KEY")


def test_cache_disabled_calls_every_time(tmp_path, request_):
    llm = MockLLM(REPLY)
    gen = LiteLLMGenerator(MODEL, use_cache=False, completion_fn=llm)
    gen.generate(request_)
    gen.generate(request_)
    assert len(llm.calls) == 2 and gen.stats()["cache_hits"] == 0


def test_default_cache_dir_under_cache_root(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path / "root"))
    gen = LiteLLMGenerator(MODEL, completion_fn=refuse)
    assert gen.cache.directory == tmp_path / "root" / "llm_cache"


# ---------------------------------------------------------------------------- retries
def test_retry_on_rate_limit_then_success(tmp_path, request_):
    llm = MockLLM("litellm.RateLimitError", REPLY)
    sleeps = Sleeps()
    gen = make(tmp_path, llm, backoff_s=2.0, sleep_fn=sleeps)
    out = gen.generate(request_)
    assert out.source == ANSWER and out.usage.attempts == 2
    assert len(llm.calls) == 2 and len(sleeps) == 1 and 1.0 <= sleeps[0] < 3.0  # 2 s x jitter [0.5, 1.5)
    assert "RateLimitError" in out.notes["retried"][0]
    s = gen.stats()
    assert (s["calls"], s["attempts"], s["retries"]) == (1, 2, 1)
    assert s["total_prompt_tokens"] == 10  # the failed attempt costs nothing


def test_retry_backoff_grows_and_covers_timeouts_and_server_errors(tmp_path, request_):
    timeout = litellm.exceptions.Timeout("read timed out", model=MODEL, llm_provider="openai")
    llm = MockLLM(timeout, "litellm.InternalServerError", "litellm.RateLimitError", REPLY)
    sleeps = Sleeps()
    gen = make(tmp_path, llm, backoff_s=1.0, max_backoff_s=3.0, sleep_fn=sleeps)
    out = gen.generate(request_)
    assert out.usage.attempts == 4 and len(sleeps) == 3
    for delay, base in zip(sleeps, (1.0, 2.0, 3.0)):  # doubling, capped at max_backoff_s
        assert 0.5 * base <= delay < 1.5 * base


def test_retries_exhausted_raise_the_last_error(tmp_path, request_):
    llm = MockLLM("litellm.RateLimitError")
    sleeps = Sleeps()
    gen = make(tmp_path, llm, max_retries=2, sleep_fn=sleeps)
    with pytest.raises(GenerationError) as info:
        gen.generate(request_)
    assert info.value.error_class == "RateLimitError" and info.value.usage.attempts == 3
    assert len(llm.calls) == 3 and len(sleeps) == 2
    assert gen.stats()["calls"] == 0 and gen.stats()["failures"] == 1 and not list((tmp_path / "llm_cache").glob("??/*.json"))


def test_non_retryable_errors_propagate_at_once(tmp_path, request_):
    llm = MockLLM("litellm.ContextWindowExceededError")
    sleeps = Sleeps()
    gen = make(tmp_path, llm, sleep_fn=sleeps)
    with pytest.raises(GenerationError) as info:
        gen.generate(request_)
    assert info.value.error_class == "ContextWindowExceededError"
    assert len(llm.calls) == 1 and sleeps == []


# ---------------------------------------------------------------------------- cost limit
def test_cost_limit_stops_further_calls(tmp_path, request_):
    llm = MockLLM(REPLY)
    gen = make(tmp_path, llm, cost_limit_usd=1e-6)  # one mock call costs ~1.35e-5 USD
    first = gen.generate(request_)
    assert first.usage.cost_usd > gen.cost_limit_usd
    other = GenerationRequest(task=request_.task, backend="ascend_sim", seed=99)
    with pytest.raises(CostLimitExceeded, match="cost limit") as info:
        gen.generate(other)
    assert len(llm.calls) == 1  # raised before calling
    assert info.value.spent_usd == pytest.approx(first.usage.cost_usd) and info.value.limit_usd == 1e-6
    assert gen.generate(request_).usage.cached  # replaying from the cache stays allowed


def test_unpriced_model_costs_none_with_a_note(tmp_path, request_):
    def unpriced(**kwargs):
        kwargs["model"] = "openai/kernel-gym-unpriced-model"
        return litellm.completion(**kwargs, mock_response=REPLY)

    gen = LiteLLMGenerator("openai/kernel-gym-unpriced-model", cache_dir=tmp_path, completion_fn=unpriced)
    out = gen.generate(request_)
    assert out.usage.cost_usd is None and "cost_error" in out.notes and out.usage.completion_tokens == 20
    assert out.notes["estimated_cost_usd"] > 0  # what cost_limit_usd counts for it


# ---------------------------------------------------------------------------- extraction
def test_reply_without_code_fails_cleanly(tmp_path, request_):
    reply = "I cannot write this kernel."
    out = make(tmp_path, MockLLM(reply)).generate(request_)
    assert out.source == reply and "no Python code block" in out.notes["extract_error"] and out.no_code


def test_extract_prefers_last_parsing_model_new_block():
    draft = "class ModelNew:\n    def broken(:\n"
    fixed = "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"
    reply = (f"Draft:\n```python\n{draft}```\nHelper:\n```cpp\nint f();\n```\n"
             f"Fixed:\n```python\n{fixed}```\nAn older idea:\n```python\nclass ModelNew(object):\n    x = (\n```\n")
    assert extract_code(reply) == fixed
    assert [b.lang for b in find_code_blocks(reply)] == ["python", "cpp", "python", "python"]


def test_extract_fallbacks():
    body = "class ModelNew:\n    pass\n"
    assert extract_code(f"```py\n{body}") == body                       # cut off by max_tokens
    assert extract_code(body) == body                                    # bare code, no fence
    assert extract_code(f"```\n{body}```") == body                        # untagged fence
    assert extract_code("```python\nprint(1)\n```") == "print(1)\n"     # verifier says no_model_new
    # a sentence ahead of unfenced code (some models write one before a six-string answer)
    six = "model_src = '''\nclass ModelNew:\n    pass\n'''\n"
    assert extract_code(f"I have enough context. Writing it now.\n\n{six}") == six
    assert extract_code(f"Here it is:\n{body}") == body
    for bad in ("", "   ", "no code", "```cpp\nint x;\n```"):
        with pytest.raises(CodeExtractionError):
            extract_code(bad)


# ---------------------------------------------------------------------------- prompts
def test_prompt_files_exist_and_render_without_leftover_placeholders(task):
    for name in ("system.md", "drafting.md", "refining.md", "format_default.md", "mode_small.md", "mode_large.md"):
        assert (PROMPT_DIR / name).is_file(), name
    req = GenerationRequest(task=task, backend="cpu")
    system, user = build_messages(req)
    assert "$" not in system["content"]
    assert task.source.strip() in user["content"]
    assert "load_cpp" in user["content"]  # the cpu backend's answer format
    assert "write a correct kernel" in user["content"] and "Feedback" not in user["content"]


def test_drafting_prompt_shows_memories_and_feedback(task):
    rule = MemoryItem(kind="validity_rule", title="Align DataCopy", text="You cannot DataCopy 7 floats.")
    trace = MemoryItem(kind="trace", title="softmax draft", text="first try", task_id="level1/061_softmax",
                       payload={"code": "x = 1\n" * 2000,
                                "verifier": {"feasible": True, "latency_s": 2e-5, "speedup": 1.5}})
    feedback = {"feasible": False, "error_class": "compile_error", "message": "kernel did not compile",
                "compile_log": "noise\n" * 2000 + "error: 'Foo' was not declared"}
    req = GenerationRequest(task=task, backend="ascend_sim", memories=[rule, trace], feedback=feedback)
    user = build_messages(req, PromptBudget(trace_code=300, compile_log=200))[1]["content"]
    assert "ascend_sim" in user and "kernel_gym.ascendc" in user
    assert "[1] rule: Align DataCopy" in user and "You cannot DataCopy 7 floats." in user
    assert "level1/061_softmax" in user and "speedup 1.50x" in user
    assert "more characters omitted" in user and user.count("x = 1") < 100  # trace code cut to budget
    assert "compile_error: kernel did not compile" in user
    assert "error: 'Foo' was not declared" in user and user.count("noise") < 50  # log tail kept
    assert "previous attempt failed" in user
    assert user.index("Align DataCopy") < user.index("softmax draft")  # the agent's order


def test_refining_prompt_shows_parent_and_pool(task):
    parent = ParentKernel(code="class ModelNew:  # parent\n    pass\n",
                          verifier={"feasible": True, "latency_s": 4e-5, "reference_latency_s": 8e-5,
                                    "speedup": 2.0})
    small = GenerationRequest(task=task, backend="ascend_sim", stage="refining", parent=parent)
    user = build_messages(small)[1]["content"]
    assert "make a correct kernel faster" in user and "class ModelNew:  # parent" in user
    assert "latency 40.0 us" in user and "speedup 2.00x" in user and "Improve the current kernel" in user

    pool = [ParentKernel(code="class ModelNew:  # pool-a\n    pass\n", verifier={"feasible": True, "speedup": 3.0})]
    large = GenerationRequest(task=task, backend="ascend_sim", stage="refining", parent=parent, mode="large",
                              pool=pool)
    user = build_messages(large)[1]["content"]
    assert "structurally different" in user and "# pool-a" in user and "Other kernels" in user
    assert "# pool-a" not in build_messages(small)[1]["content"]

    scratch = GenerationRequest(task=task, backend="ascend_sim", stage="refining")
    assert "from scratch" in build_messages(scratch)[1]["content"]


# ---------------------------------------------------------------------------- cache store
def test_response_cache_roundtrip_atomic_and_corrupt_entries(tmp_path):
    cache = ResponseCache(tmp_path)
    msgs = [{"role": "user", "content": "hi"}]
    key = cache_key(MODEL, msgs, 0.2, 100, 1)
    assert key != cache_key(MODEL, msgs, 0.2, 100, 2) != cache_key(MODEL, msgs, 0.3, 100, 1)
    assert key == cache_key(MODEL, [dict(content="hi", role="user")], 0.2, 100, 1, {})
    assert cache.get(key) is None and len(cache) == 0
    path = cache.put(key, {"reply": "hello", "usage": {"prompt_tokens": 3}})
    assert path == tmp_path / key[:2] / f"{key}.json"
    assert cache.get(key)["reply"] == "hello" and key in cache and len(cache) == 1
    assert not [p for p in path.parent.iterdir() if p.suffix == ".tmp"]
    path.write_text("{not json")
    assert cache.get(key) is None
    with pytest.raises(ValueError):
        cache.put(key, {"usage": {}})


def test_from_config(tmp_path):
    gen = LiteLLMGenerator.from_config({"generator": "litellm", "model": "openai/x", "temperature": 0.7,
                                        "max_tokens": 512, "cache_dir": str(tmp_path), "cost_limit_usd": 2.5})
    assert (gen.name, gen.temperature, gen.max_tokens, gen.cost_limit_usd) == ("litellm:openai/x", 0.7, 512, 2.5)
    with pytest.raises(ValueError, match="unknown"):
        LiteLLMGenerator.from_config({"model": "x", "temprature": 0.1})
    with pytest.raises(ValueError, match="model"):
        LiteLLMGenerator.from_config({"temperature": 0.1})


def test_import_does_not_load_litellm():
    code = "import sys, kernel_gym.llm.litellm_generator; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"
