"""LiteLLMGenerator: kernels written by any chat model reachable through litellm.

One :meth:`LiteLLMGenerator.generate` call renders the request into chat messages
(:func:`kernel_gym.llm.prompting.build_messages`), looks the request up in the on-disk
:class:`~kernel_gym.llm.response_cache.ResponseCache`, otherwise calls ``litellm.completion``
under the one retry policy of :mod:`kernel_gym.llm.retry`, accounts tokens, cost and latency,
stores the reply, and extracts the answer file from it (:func:`kernel_gym.llm.extract.extract_code`).

* **Failures.** litellm's and the OpenAI client's own retries are off (``num_retries=0``,
  ``max_retries=0``); rate limits (``Retry-After`` honoured), timeouts, connection and 5xx errors
  are retried with jittered exponential backoff within a total ``deadline_s`` per generation. A
  generation that still fails, or fails with an error not worth retrying (bad request, context too
  long, authentication), raises :class:`~kernel_gym.llm.base.GenerationError`; the environment
  turns it into a ``generation_error`` step.
* **Replies.** Reasoning text (``reasoning_content``, or ``<think>`` blocks in the content) is kept
  apart in ``Generation.reasoning`` and never searched for code. A reply with no code is
  ``Generation.no_code`` (the environment's ``no_code`` outcome), not a syntax error.
* **Replay.** The cache key covers model, messages, temperature, max tokens, seed and the sampling
  arguments in ``extra_kwargs``; a second run of the same requests reads every reply from disk and
  never touches the network (``usage.cached`` is True and ``usage.cost_usd`` 0 for a hit).
* **Seeds.** The key's seed is the constructor's ``seed`` when given (it is then also sent to the
  API), else the request's per-step seed (not sent: many providers reject it).
* **Accounting and limits.** Cost comes from litellm's price table; a model that is not in it gets
  one warning, ``cost_usd=None``, and its tokens are priced at ``fallback_usd_per_mtok`` for
  ``cost_limit_usd`` only. Before a call that would reach the API, a generator whose spend
  reached ``cost_limit_usd`` or whose tokens reached ``token_limit`` raises
  :class:`~kernel_gym.llm.base.BudgetExhausted`; cache hits stay free and allowed.
* **Secrets.** API keys are never taken from config (it is saved with every run): litellm reads the
  provider's variable (``OPENAI_API_KEY``...), or ``api_key_env`` names the variable to read.
* **Concurrency.** :meth:`generate_many` runs several requests at once on threads, at most
  ``max_concurrency`` in flight per generator (shared by every caller of this object).

litellm is imported when the generator is built, not on the first call, so no call's latency
includes the import, while ``import kernel_gym.llm`` stays cheap.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kernel_gym.llm.base import BudgetExhausted, Generation, GenerationError, GenerationRequest, Usage
from kernel_gym.llm.concurrency import slots_for_group
from kernel_gym.llm.extract import CodeExtractionError, extract_code
from kernel_gym.llm.prompting import build_messages
from kernel_gym.llm.response_cache import ResponseCache, cache_key
from kernel_gym.llm.retry import RetryPolicy, run_with_retries

__all__ = ["CostLimitExceeded", "LiteLLMGenerator", "retryable_errors", "split_reasoning"]

log = logging.getLogger(__name__)

#: litellm arguments that pick an endpoint or credentials rather than the sampled text; they are
#: left out of the cache key and of the stored request (so no secret lands on disk).
_NON_SAMPLING_KEYS = frozenset(
    {
        "api_key",
        "api_base",
        "base_url",
        "api_version",
        "organization",
        "headers",
        "extra_headers",
        "timeout",
        "request_timeout",
        "num_retries",
        "max_retries",
        "metadata",
        "custom_llm_provider",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "aws_region_name",
        "vertex_credentials",
        "vertex_project",
        "vertex_location",
    }
)
#: Credentials that must come from the environment, never from a config file.
_SECRET_KEYS = frozenset({"api_key", "aws_secret_access_key", "aws_session_token", "vertex_credentials"})

_CONFIG_KEYS = (
    "model",
    "temperature",
    "max_tokens",
    "cache_dir",
    "use_cache",
    "cost_limit_usd",
    "token_limit",
    "max_retries",
    "backoff_s",
    "max_backoff_s",
    "timeout_s",
    "deadline_s",
    "seed",
    "extra_kwargs",
    "api_base",
    "api_key_env",
    "max_concurrency",
    "fallback_usd_per_mtok",
    "prompt_dir",
)

_THINK = re.compile(r"<(think|thinking)>(.*?)(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)
_warned_unpriced: set[str] = set()
_warn_lock = threading.Lock()


class CostLimitExceeded(BudgetExhausted):
    """The generator's running cost reached its limit; no further API call is made."""

    def __init__(self, spent_usd: float, limit_usd: float, model: str) -> None:
        super().__init__(
            f"LLM cost limit reached for {model}: spent ${spent_usd:.4f} of the ${limit_usd:.4f} "
            "allowed (cost_limit_usd); raise the limit and resume, or replay from the cache",
            "cost",
        )
        self.spent_usd = spent_usd
        self.limit_usd = limit_usd
        self.model = model


class TokenLimitExceeded(BudgetExhausted):
    """The generator's running token count reached its limit."""

    def __init__(self, spent: int, limit: int, model: str) -> None:
        super().__init__(
            f"LLM token limit reached for {model}: {spent} of the {limit} tokens allowed "
            "(token_limit); raise the limit and resume",
            "tokens",
        )
        self.spent = spent
        self.limit = limit


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
    import litellm

    litellm.suppress_debug_info = True  # its "Give Feedback" banner on every error drowns the log
    return litellm


def retryable_errors() -> tuple[type[BaseException], ...]:
    """The litellm exceptions worth retrying: rate limits, timeouts, connection and server errors."""
    exc = _litellm().exceptions
    return (
        exc.RateLimitError,
        exc.Timeout,
        exc.APIConnectionError,
        exc.ServiceUnavailableError,
        exc.InternalServerError,
        exc.BadGatewayError,
    )


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key ``name`` of a litellm response object or a plain dict."""
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def split_reasoning(content: str) -> tuple[str, str]:
    """``(reply without <think> blocks, their text)``: local thinking models (served by vLLM,
    SGLang, Ollama) often put their reasoning inline, where a code fence in it is not the answer."""
    parts = [m.group(2).strip() for m in _THINK.finditer(content)]
    if not parts:
        return content, ""
    return _THINK.sub("", content).strip(), "\n\n".join(parts)


class LiteLLMGenerator:
    """A :class:`~kernel_gym.llm.base.Generator` backed by ``litellm.completion``.

    It writes whichever answer form the request asks for (``answer_formats``); the prompt says which.

    Args:
        model: any litellm model string (``"gpt-4o-mini"``, ``"openai/<name>"`` on an OpenAI-compatible
            server with ``api_base``, ``"ollama/qwen2.5-coder"``, ...).
        temperature: sampling temperature.
        max_tokens: most tokens in one reply.
        cache_dir: directory of the response cache; None = ``<kernel_gym cache_root()>/llm_cache``.
        cost_limit_usd: most US dollars this generator may spend; None = no limit.
        max_retries: retries after a retryable error (at most ``max_retries + 1`` attempts).
        backoff_s, max_backoff_s: the backoff (see :class:`~kernel_gym.llm.retry.RetryPolicy`).
        timeout_s: most seconds of one attempt.
        deadline_s: most seconds of one generation, attempts and waits together.
        seed: a fixed sampling seed sent to the API; None = the request's seed keys the cache only.
        completion_fn: the completion function (default ``litellm.completion``).
        extra_kwargs: more ``litellm.completion`` arguments (``top_p``, ``reasoning_effort``, ...);
            the sampling ones are part of the cache key. No credentials (see ``api_key_env``).
        use_cache: False disables the cache (every request calls the API).
        sleep_fn: how to wait between retries (default ``time.sleep``).
        api_base: URL of an OpenAI-compatible server (vLLM, SGLang, Ollama, a proxy).
        api_key_env: name of the environment variable holding the API key; None = litellm's
            provider default (``OPENAI_API_KEY``...).
        token_limit: most tokens (prompt + completion) this generator may use; None = no limit.
        max_concurrency: most requests in flight at once (:meth:`generate_many`, threads).
        concurrency_group: a name shared by generators in several processes (the copies of a
            vector env: ``make_vec`` sets one) that keep ``max_concurrency`` requests in flight
            together, through lock files under the cache root; None = this object's limit only.
        fallback_usd_per_mtok: (input, output) US dollars per million tokens charged against
            ``cost_limit_usd`` for a model litellm has no price for.
        prompt_dir: a directory of prompt files overriding the package's by name.
    """

    answer_formats = ("python", "six_string")

    def __init__(
        self,
        model: str,
        temperature: float = 0.2,
        max_tokens: int = 4096,
        cache_dir: str | Path | None = None,
        cost_limit_usd: float | None = None,
        max_retries: int = 4,
        backoff_s: float = 2.0,
        timeout_s: float = 120,
        seed: int | None = None,
        completion_fn: Callable[..., Any] | None = None,
        extra_kwargs: Mapping[str, Any] | None = None,
        *,
        use_cache: bool = True,
        max_backoff_s: float = 60.0,
        sleep_fn: Callable[[float], None] | None = None,
        deadline_s: float = 600.0,
        api_base: str | None = None,
        api_key_env: str | None = None,
        token_limit: int | None = None,
        max_concurrency: int = 4,
        concurrency_group: str | None = None,
        fallback_usd_per_mtok: Sequence[float] = (1.0, 4.0),
        prompt_dir: str | Path | None = None,
    ) -> None:
        if not model or not isinstance(model, str):
            raise ValueError(f"model must be a litellm model string, got {model!r}")
        if max_retries < 0 or backoff_s < 0:
            raise ValueError("max_retries and backoff_s must be >= 0")
        self.extra_kwargs = dict(extra_kwargs or {})
        secrets = sorted(_SECRET_KEYS & set(self.extra_kwargs))
        if secrets:
            raise ValueError(
                f"{', '.join(secrets)} must not be given in config (it would be saved with the run): "
                "export the key in an environment variable and set api_key_env=<its name>"
            )
        if api_key_env is not None and not os.environ.get(str(api_key_env)):
            raise ValueError(
                f"api_key_env={api_key_env!r} names an environment variable that is not set: "
                f"export {api_key_env}=<your key> before the run"
            )
        if int(max_concurrency) < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if len(tuple(fallback_usd_per_mtok)) != 2:
            raise ValueError("fallback_usd_per_mtok must be [input, output] US dollars per million tokens")
        self.model = model
        self.name = f"litellm:{model}"
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.cost_limit_usd = None if cost_limit_usd is None else float(cost_limit_usd)
        self.token_limit = None if token_limit is None else int(token_limit)
        self.max_retries = int(max_retries)
        self.policy = RetryPolicy(
            max_attempts=self.max_retries + 1,
            backoff_s=float(backoff_s),
            max_backoff_s=float(max_backoff_s),
            timeout_s=float(timeout_s),
            deadline_s=float(deadline_s),
        )
        self.seed = seed
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.max_concurrency = int(max_concurrency)
        self.fallback_usd_per_mtok = tuple(float(x) for x in fallback_usd_per_mtok)
        self.prompt_dir = None if prompt_dir is None else Path(prompt_dir)
        if self.prompt_dir is not None and not self.prompt_dir.is_dir():
            raise ValueError(
                f"prompt_dir {str(self.prompt_dir)!r} is not a directory: point it at a folder of "
                "prompt files (copy kernel_gym/llm/prompts and edit)"
            )
        self.sleep_fn = time.sleep if sleep_fn is None else sleep_fn
        self._completion_fn = completion_fn
        self._lib = _litellm()  # imported now, so no call's latency includes the import
        if use_cache:
            if cache_dir is None:
                from kernel_gym.native import cache_root

                cache_dir = cache_root() / "llm_cache"
            self.cache: ResponseCache | None = ResponseCache(cache_dir)
        else:
            self.cache = None
        self._rng = random.Random()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        # generators of every process that name the same group share max_concurrency (a vector env)
        self.concurrency_group = concurrency_group
        self._shared_slots = (
            None if concurrency_group is None else slots_for_group(concurrency_group, self.max_concurrency)
        )
        self.total_cost_usd = 0.0  # priced spend (litellm's table)
        self.total_estimated_usd = 0.0  # unpriced tokens at fallback_usd_per_mtok
        self.total_prompt_tokens = 0
        self.total_completion_tokens = 0
        self.total_reasoning_tokens = 0
        self.calls = 0  # API calls that returned a reply
        self.attempts = 0  # API calls made, failed ones included
        self.retries = 0  # retryable errors that led to another attempt
        self.failures = 0  # generations that raised GenerationError
        self.cache_hits = 0

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], **overrides: Any) -> LiteLLMGenerator:
        """Build from a config mapping (e.g. a Hydra node) with the constructor's keyword names;
        a ``generator`` key (the generator choice, ``"litellm"``) is ignored."""
        values = {k: v for k, v in dict(cfg).items() if k != "generator"}
        values.update(overrides)
        unknown = sorted(set(values) - set(_CONFIG_KEYS) - {"completion_fn", "sleep_fn"})
        if unknown:
            raise ValueError(
                f"unknown LiteLLMGenerator config key(s) {', '.join(unknown)}; valid keys: {', '.join(_CONFIG_KEYS)}"
            )
        if not values.get("model"):
            raise ValueError("LiteLLMGenerator config needs 'model' (a litellm model string)")
        if values.get("extra_kwargs") is not None:
            values["extra_kwargs"] = dict(values["extra_kwargs"])
        return cls(**values)

    # ------------------------------------------------------------------ public API
    def generate(self, request: GenerationRequest) -> Generation:
        """Write a kernel for ``request`` (see the module docstring for cache, retries and costs).

        Raises:
            GenerationError: the call failed for good.
            BudgetExhausted: the cost or token limit is reached (before any call).
        """
        messages = build_messages(request, prompt_dir=self.prompt_dir)
        sampling = {k: v for k, v in self.extra_kwargs.items() if k not in _NON_SAMPLING_KEYS}
        key_seed = self.seed if self.seed is not None else int(request.seed)
        key = cache_key(self.model, messages, self.temperature, self.max_tokens, key_seed, sampling)
        notes: dict[str, Any] = {"cache_key": key, "stage": request.stage, "mode": request.mode}

        start = time.perf_counter()
        record = self.cache.get(key) if self.cache is not None else None
        if record is not None:
            with self._lock:
                self.cache_hits += 1
            rec_usage = record.get("usage") or {}
            usage = Usage(
                model=self.model,
                prompt_tokens=int(rec_usage.get("prompt_tokens", 0)),
                completion_tokens=int(rec_usage.get("completion_tokens", 0)),
                reasoning_tokens=int(rec_usage.get("reasoning_tokens", 0) or 0),
                cost_usd=0.0,
                latency_s=time.perf_counter() - start,
                cached=True,
                attempts=0,
            )
            notes["cached_cost_usd"] = rec_usage.get("cost_usd")
            reply, reasoning = record["reply"], record.get("reasoning") or ""
            notes["finish_reason"] = record.get("finish_reason")
        else:
            reply, reasoning, usage, call_notes = self._call_full(messages)
            notes.update(call_notes)
            if self.cache is not None:
                self.cache.put(
                    key,
                    {
                        "model": self.model,
                        "reply": reply,
                        "reasoning": reasoning,
                        "finish_reason": call_notes.get("finish_reason"),
                        "usage": {
                            "prompt_tokens": usage.prompt_tokens,
                            "completion_tokens": usage.completion_tokens,
                            "reasoning_tokens": usage.reasoning_tokens,
                            "cost_usd": usage.cost_usd,
                        },
                        "request": {
                            "messages": messages,
                            "temperature": self.temperature,
                            "max_tokens": self.max_tokens,
                            "seed": key_seed,
                            "extra": sampling,
                        },
                    },
                )
        no_code = False
        try:
            source = extract_code(reply)
        except CodeExtractionError as exc:
            source, no_code = reply, True
            notes["extract_error"] = str(exc)
        return Generation(
            source=source, usage=usage, raw=reply, notes=notes, reasoning=reasoning or None, no_code=no_code
        )

    def generate_many(self, requests: Sequence[GenerationRequest]) -> list[Generation | GenerationError]:
        """Generate for every request at once (threads, at most ``max_concurrency`` in flight).

        Returns one entry per request, in order: its Generation, or the GenerationError it ended
        with. A BudgetExhausted is raised (after the others finish)."""
        if len(requests) <= 1:
            return [self._safe(r) for r in requests]
        with ThreadPoolExecutor(max_workers=min(len(requests), self.max_concurrency), thread_name_prefix="llm") as pool:
            out = list(pool.map(self._safe_or_budget, requests))
        results: list[Generation | GenerationError] = []
        for item in out:
            if isinstance(item, BudgetExhausted):
                raise item
            results.append(item)
        return results

    def _safe(self, request: GenerationRequest) -> Generation | GenerationError:
        try:
            return self.generate(request)
        except GenerationError as exc:
            return exc

    def _safe_or_budget(self, request: GenerationRequest) -> Generation | GenerationError | BudgetExhausted:
        try:
            return self._safe(request)
        except BudgetExhausted as exc:
            return exc

    def stats(self) -> dict[str, Any]:
        """Running totals of this generator (JSON-able)."""
        with self._lock:
            return {
                "model": self.model,
                "calls": self.calls,
                "attempts": self.attempts,
                "retries": self.retries,
                "failures": self.failures,
                "cache_hits": self.cache_hits,
                "total_prompt_tokens": self.total_prompt_tokens,
                "total_completion_tokens": self.total_completion_tokens,
                "total_reasoning_tokens": self.total_reasoning_tokens,
                "total_cost_usd": self.total_cost_usd,
                "total_estimated_usd": self.total_estimated_usd,
                "cost_limit_usd": self.cost_limit_usd,
                "token_limit": self.token_limit,
            }

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its lock, in-flight slots and litellm module (a vector env's worker):
        they are made anew on load; the totals, the cache directory and the shared group travel."""
        state = self.__dict__.copy()
        for key in ("_lock", "_slots", "_lib"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lib = _litellm()
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(self.max_concurrency)

    def restore_totals(
        self, prompt_tokens: int = 0, completion_tokens: int = 0, cost_usd: float = 0.0, estimated_usd: float = 0.0
    ) -> None:
        """Start the running totals from a resumed run's logged spend, so limits hold across resumes."""
        with self._lock:
            self.total_prompt_tokens = int(prompt_tokens)
            self.total_completion_tokens = int(completion_tokens)
            self.total_cost_usd = float(cost_usd)
            self.total_estimated_usd = float(estimated_usd)

    # ------------------------------------------------------------------ internals
    def _check_budget(self) -> None:
        with self._lock:
            spent = self.total_cost_usd + self.total_estimated_usd
            tokens = self.total_prompt_tokens + self.total_completion_tokens
        if self.cost_limit_usd is not None and spent >= self.cost_limit_usd:
            raise CostLimitExceeded(spent, self.cost_limit_usd, self.model)
        if self.token_limit is not None and tokens >= self.token_limit:
            raise TokenLimitExceeded(tokens, self.token_limit, self.model)

    def _call(self, messages: list[dict[str, str]]) -> tuple[str, Usage, dict[str, Any]]:
        """One completion under the retry policy: (reply text, usage, notes). For callers that
        want the bare text (the LLM rule writer); raises GenerationError on failure."""
        reply, _, usage, notes = self._call_full(messages)
        return reply, usage, notes

    def _call_full(self, messages: list[dict[str, str]]) -> tuple[str, str, Usage, dict[str, Any]]:
        self._check_budget()
        completion = self._completion_fn or self._lib.completion
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            **self.extra_kwargs,
            "num_retries": 0,
            "max_retries": 0,
        }  # the retry policy here is the only one
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key_env:
            kwargs["api_key"] = os.environ.get(self.api_key_env, "")
        if self.seed is not None:
            kwargs["seed"] = self.seed

        def attempt(timeout: float) -> Any:
            with self._lock:
                self.attempts += 1
            return completion(**kwargs, timeout=timeout)

        state: dict[str, Any] = {}
        start = time.perf_counter()
        with self._slots, self._shared_slots.hold() if self._shared_slots else contextlib.nullcontext():
            try:
                response = run_with_retries(
                    attempt, self.policy, retryable_errors(), sleep=self.sleep_fn, rng=self._rng, state=state
                )
            except Exception as exc:  # noqa: BLE001 - every failure becomes a structured step outcome
                latency = time.perf_counter() - start
                with self._lock:
                    self.retries += max(0, state.get("attempts", 1) - 1)
                    self.failures += 1
                message = " ".join(str(exc).split())[:1000]
                if state.get("deadline_hit"):
                    message += f" (gave up: the next retry would pass deadline_s={self.policy.deadline_s:g})"
                usage = Usage(model=self.model, cost_usd=None, latency_s=latency, attempts=state.get("attempts", 1))
                raise GenerationError(type(exc).__name__, message, usage) from exc
        latency = time.perf_counter() - start
        notes: dict[str, Any] = {}
        if state["retried"]:
            notes["retried"] = list(state["retried"])

        choices = _get(response, "choices") or []
        reply = _get(choices[0], "message") if choices else None
        content = _get(reply, "content")
        content = content if isinstance(content, str) else ""
        reasoning = _get(reply, "reasoning_content")
        reasoning = reasoning if isinstance(reasoning, str) else ""
        content, inline = split_reasoning(content)
        reasoning = "\n\n".join(x for x in (reasoning, inline) if x)
        notes["finish_reason"] = _get(choices[0], "finish_reason") if choices else None
        raw_usage = _get(response, "usage")
        prompt_tokens = int(_get(raw_usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(_get(raw_usage, "completion_tokens", 0) or 0)
        reasoning_tokens = int(_get(_get(raw_usage, "completion_tokens_details"), "reasoning_tokens", 0) or 0)
        cost = self._cost(response, notes)
        estimated = 0.0
        if cost is None:
            estimated = (
                prompt_tokens * self.fallback_usd_per_mtok[0] + completion_tokens * self.fallback_usd_per_mtok[1]
            ) / 1e6
            notes["estimated_cost_usd"] = estimated
        with self._lock:
            self.calls += 1
            self.retries += state["attempts"] - 1
            self.total_prompt_tokens += prompt_tokens
            self.total_completion_tokens += completion_tokens
            self.total_reasoning_tokens += reasoning_tokens
            self.total_cost_usd += cost or 0.0
            self.total_estimated_usd += estimated
        usage = Usage(
            model=self.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            reasoning_tokens=reasoning_tokens,
            cost_usd=cost,
            latency_s=latency,
            cached=False,
            attempts=state["attempts"],
        )
        return content, reasoning, usage, notes

    def _cost(self, response: Any, notes: dict[str, Any]) -> float | None:
        """US dollars of one response by litellm's price table; None (and one warning per model)
        when the model is not in it."""
        try:
            cost = float(self._lib.completion_cost(completion_response=response, model=self.model) or 0.0)
        except Exception as exc:  # noqa: BLE001 - an unpriced model must not stop a run
            notes["cost_error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
            with _warn_lock:
                first = self.model not in _warned_unpriced
                _warned_unpriced.add(self.model)
            if first:
                log.warning(
                    "litellm has no price for model %s: its cost is recorded as None, and cost_limit_usd "
                    "counts its tokens at fallback_usd_per_mtok=%s (US dollars per million input, output "
                    "tokens)",
                    self.model,
                    list(self.fallback_usd_per_mtok),
                )
            return None
        return cost if cost >= 0.0 else 0.0
