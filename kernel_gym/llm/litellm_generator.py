"""LiteLLMGenerator: kernels written by any chat model reachable through litellm.

One :meth:`LiteLLMGenerator.generate` call renders the request into chat messages
(:func:`kernel_gym.llm.prompting.build_messages`), looks the request up in the on-disk
:class:`~kernel_gym.llm.response_cache.ResponseCache`, otherwise calls ``litellm.completion``
(retrying rate limits, timeouts and transient server errors with exponential backoff and jitter),
accounts tokens and cost, stores the reply, and extracts the answer file from it
(:func:`kernel_gym.llm.extract.extract_code`).

* **Replay.** The cache key covers model, messages, temperature, max tokens, seed and the
  sampling arguments in ``extra_kwargs``; a second run of the same requests reads every reply from
  disk and never touches the network (``usage.cached`` is True and ``usage.cost_usd`` 0 for a hit;
  the token counts are those the reply took when it was made).
* **Seeds.** The key's seed is the constructor's ``seed`` when given (it is then also sent to the
  API), else the request's per-step seed (not sent: many providers reject it), so replays of a run
  hit the cache while different steps with the same prompt still sample independently.
* **Cost limit.** Before a call that would reach the API, a generator whose running cost has
  reached ``cost_limit_usd`` raises :class:`CostLimitExceeded`; cache hits stay free and allowed.
* **Extraction failures** do not raise: the raw reply becomes the source (the verifier then fails
  it cleanly as a syntax error or missing ``ModelNew``) and ``notes["extract_error"]`` says why.

litellm is imported on first use (with ``LITELLM_LOCAL_MODEL_COST_MAP`` set so that import does not
fetch the price map over the network), so ``import kernel_gym.llm`` stays cheap.
"""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from kernel_gym.llm.base import Generation, GenerationRequest, Usage
from kernel_gym.llm.extract import CodeExtractionError, extract_code
from kernel_gym.llm.prompting import build_messages
from kernel_gym.llm.response_cache import ResponseCache, cache_key

__all__ = ["CostLimitExceeded", "LiteLLMGenerator", "retryable_errors"]

#: litellm arguments that pick an endpoint or credentials rather than the sampled text; they are
#: left out of the cache key and of the stored request (so no secret lands on disk).
_NON_SAMPLING_KEYS = frozenset({
    "api_key", "api_base", "base_url", "api_version", "organization", "headers", "extra_headers",
    "timeout", "request_timeout", "num_retries", "max_retries", "metadata", "custom_llm_provider",
    "aws_access_key_id", "aws_secret_access_key", "aws_session_token", "aws_region_name",
    "vertex_credentials", "vertex_project", "vertex_location",
})

_CONFIG_KEYS = ("model", "temperature", "max_tokens", "cache_dir", "use_cache", "cost_limit_usd",
                "max_retries", "backoff_s", "max_backoff_s", "timeout_s", "seed", "extra_kwargs")


class CostLimitExceeded(RuntimeError):
    """The generator's running cost reached its limit; no further API call is made."""

    def __init__(self, spent_usd: float, limit_usd: float, model: str) -> None:
        super().__init__(f"LLM cost limit reached for {model}: spent ${spent_usd:.4f} of the "
                         f"${limit_usd:.4f} allowed (cost_limit_usd); raise the limit or replay from the cache")
        self.spent_usd = spent_usd
        self.limit_usd = limit_usd
        self.model = model


def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
    import litellm

    return litellm


def retryable_errors() -> tuple[type[BaseException], ...]:
    """The litellm exceptions worth retrying: rate limits, timeouts, transient server errors."""
    exc = _litellm().exceptions
    return (exc.RateLimitError, exc.Timeout, exc.APIConnectionError, exc.ServiceUnavailableError,
            exc.InternalServerError)


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key ``name`` of a litellm response object or a plain dict."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


class LiteLLMGenerator:
    """A :class:`~kernel_gym.llm.base.Generator` backed by ``litellm.completion``.

    It writes whichever answer form the request asks for (``answer_formats``); the prompt says which.

    Args:
        model: any litellm model string (``"gpt-4o-mini"``, ``"anthropic/claude-3-5-sonnet-20240620"``,
            ``"ollama/qwen2.5-coder"``, ...).
        temperature: sampling temperature.
        max_tokens: most tokens in one reply.
        cache_dir: directory of the response cache; None = ``<kernel_gym cache_root()>/llm_cache``.
        use_cache: False disables the cache (every request calls the API).
        cost_limit_usd: most US dollars this generator may spend; None = no limit.
        max_retries: retries after a retryable error (so at most ``max_retries + 1`` attempts).
        backoff_s: first backoff delay; attempt ``i`` waits ``min(max_backoff_s, backoff_s * 2**(i-1))``
            times a jitter factor in [0.5, 1.5).
        max_backoff_s: cap of one backoff delay.
        timeout_s: per-call timeout passed to litellm.
        seed: a fixed sampling seed sent to the API; None = use the request's seed for the cache
            key only.
        completion_fn: the completion function (default ``litellm.completion``); tests inject one.
        extra_kwargs: more ``litellm.completion`` arguments (``api_base``, ``top_p``, ...); the
            sampling ones are part of the cache key.
        sleep_fn: how to wait between retries (default ``time.sleep``); tests inject a recorder.
    """

    answer_formats = ("python", "six_string")

    def __init__(self, model: str, temperature: float = 0.2, max_tokens: int = 4096,
                 cache_dir: str | Path | None = None, cost_limit_usd: float | None = None,
                 max_retries: int = 4, backoff_s: float = 2.0, timeout_s: float = 120,
                 seed: int | None = None, completion_fn: Callable[..., Any] | None = None,
                 extra_kwargs: Mapping[str, Any] | None = None, *, use_cache: bool = True,
                 max_backoff_s: float = 60.0, sleep_fn: Callable[[float], None] | None = None) -> None:
        if not model or not isinstance(model, str):
            raise ValueError(f"model must be a litellm model string, got {model!r}")
        if max_retries < 0 or backoff_s < 0:
            raise ValueError("max_retries and backoff_s must be >= 0")
        self.model = model
        self.name = f"litellm:{model}"
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.cost_limit_usd = None if cost_limit_usd is None else float(cost_limit_usd)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.timeout_s = float(timeout_s)
        self.seed = seed
        self.extra_kwargs = dict(extra_kwargs or {})
        self.sleep_fn = time.sleep if sleep_fn is None else sleep_fn
        self._completion_fn = completion_fn
        if use_cache:
            if cache_dir is None:
                from kernel_gym.native import cache_root

                cache_dir = cache_root() / "llm_cache"
            self.cache: ResponseCache | None = ResponseCache(cache_dir)
        else:
            self.cache = None
        self._rng = random.Random()
        self._lock = threading.Lock()
        self.total_cost_usd = 0.0
        self.total_prompt_tokens = 0
        self.total_completion_tokens = 0
        self.calls = 0          # API calls that returned a reply
        self.attempts = 0       # API calls made, failed ones included
        self.retries = 0        # retryable errors that led to another attempt
        self.cache_hits = 0

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any], **overrides: Any) -> "LiteLLMGenerator":
        """Build from a config mapping (e.g. a Hydra node): keys ``model`` (required),
        ``temperature``, ``max_tokens``, ``cache_dir``, ``use_cache``, ``cost_limit_usd``,
        ``max_retries``, ``backoff_s``, ``max_backoff_s``, ``timeout_s``, ``seed``, ``extra_kwargs``;
        a ``generator`` key (the generator choice, ``"litellm"``) is ignored."""
        values = {k: v for k, v in dict(cfg).items() if k != "generator"}
        values.update(overrides)
        unknown = sorted(set(values) - set(_CONFIG_KEYS) - {"completion_fn", "sleep_fn"})
        if unknown:
            raise ValueError(f"unknown LiteLLMGenerator config key(s) {', '.join(unknown)}; "
                             f"valid keys: {', '.join(_CONFIG_KEYS)}")
        if not values.get("model"):
            raise ValueError("LiteLLMGenerator config needs 'model' (a litellm model string)")
        if values.get("extra_kwargs") is not None:
            values["extra_kwargs"] = dict(values["extra_kwargs"])
        return cls(**values)

    # ------------------------------------------------------------------ public API
    def generate(self, request: GenerationRequest) -> Generation:
        """Write a kernel for ``request`` (see the module docstring for cache, retries and costs)."""
        messages = build_messages(request)
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
            usage = Usage(model=self.model, prompt_tokens=int(rec_usage.get("prompt_tokens", 0)),
                          completion_tokens=int(rec_usage.get("completion_tokens", 0)), cost_usd=0.0,
                          latency_s=time.perf_counter() - start, cached=True, attempts=0)
            notes["cached_cost_usd"] = float(rec_usage.get("cost_usd", 0.0))
            reply = record["reply"]
            notes["finish_reason"] = record.get("finish_reason")
        else:
            reply, usage, call_notes = self._call(messages)
            usage.latency_s = time.perf_counter() - start
            notes.update(call_notes)
            if self.cache is not None:
                self.cache.put(key, {
                    "model": self.model, "reply": reply, "finish_reason": call_notes.get("finish_reason"),
                    "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                              "cost_usd": usage.cost_usd},
                    "request": {"messages": messages, "temperature": self.temperature,
                                "max_tokens": self.max_tokens, "seed": key_seed, "extra": sampling},
                })
        try:
            source = extract_code(reply)
        except CodeExtractionError as exc:
            source = reply
            notes["extract_error"] = str(exc)
        return Generation(source=source, usage=usage, raw=reply, notes=notes)

    def stats(self) -> dict[str, Any]:
        """Running totals of this generator (JSON-able)."""
        with self._lock:
            return {"model": self.model, "calls": self.calls, "attempts": self.attempts,
                    "retries": self.retries, "cache_hits": self.cache_hits,
                    "total_prompt_tokens": self.total_prompt_tokens,
                    "total_completion_tokens": self.total_completion_tokens,
                    "total_cost_usd": self.total_cost_usd, "cost_limit_usd": self.cost_limit_usd}

    # ------------------------------------------------------------------ internals
    def _check_budget(self) -> None:
        with self._lock:
            spent = self.total_cost_usd
        if self.cost_limit_usd is not None and spent >= self.cost_limit_usd:
            raise CostLimitExceeded(spent, self.cost_limit_usd, self.model)

    def _backoff(self, attempt: int) -> float:
        base = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
        return base * (0.5 + self._rng.random())

    def _call(self, messages: list[dict[str, str]]) -> tuple[str, Usage, dict[str, Any]]:
        """One completion with retries; returns the reply text, its usage and notes."""
        self._check_budget()
        completion = self._completion_fn or _litellm().completion
        retryable = retryable_errors()
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature,
                                  "max_tokens": self.max_tokens, "timeout": self.timeout_s, **self.extra_kwargs}
        if self.seed is not None:
            kwargs["seed"] = self.seed
        notes: dict[str, Any] = {}
        attempt = 0
        while True:
            attempt += 1
            with self._lock:
                self.attempts += 1
            try:
                response = completion(**kwargs)
                break
            except retryable as exc:
                if attempt > self.max_retries:
                    raise
                delay = self._backoff(attempt)
                notes.setdefault("retried", []).append(f"{type(exc).__name__} (waited {delay:.2f} s)")
                with self._lock:
                    self.retries += 1
                self.sleep_fn(delay)

        choices = _get(response, "choices") or []
        message = _get(choices[0], "message") if choices else None
        reply = _get(message, "content") if message is not None else None
        reply = reply if isinstance(reply, str) else ""
        notes["finish_reason"] = _get(choices[0], "finish_reason") if choices else None
        raw_usage = _get(response, "usage") or {}
        prompt_tokens = int(_get(raw_usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(_get(raw_usage, "completion_tokens", 0) or 0)
        cost = self._cost(response, notes)
        with self._lock:
            self.calls += 1
            self.total_prompt_tokens += prompt_tokens
            self.total_completion_tokens += completion_tokens
            self.total_cost_usd += cost
        usage = Usage(model=self.model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                      cost_usd=cost, cached=False, attempts=attempt)
        return reply, usage, notes

    def _cost(self, response: Any, notes: dict[str, Any]) -> float:
        """US dollars of one response by litellm's price map; 0.0 and a note when unknown."""
        try:
            cost = float(_litellm().completion_cost(completion_response=response) or 0.0)
        except Exception as exc:  # noqa: BLE001 - an unpriced model must not stop a run
            notes["cost_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            return 0.0
        return cost if cost >= 0.0 else 0.0
