"""The one retry policy of LLM calls: exponential backoff with jitter, ``Retry-After`` honoured,
and a total deadline per generation.

litellm and the OpenAI client are called with their own retries off (``num_retries=0``,
``max_retries=0``), so this is the only place a request is repeated and a step's worst case is
bounded by ``deadline_s`` (plus at most one attempt's connect time), never retries times timeouts.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["RetryPolicy", "retry_after_s", "run_with_retries"]

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How one generation retries.

    Attributes:
        max_attempts: most API calls for one generation (1 = no retry).
        backoff_s: first backoff delay; the i-th retry waits ``min(max_backoff_s, backoff_s * 2**(i-1))``
            times a jitter factor in [0.5, 1.5).
        max_backoff_s: cap of one backoff delay.
        timeout_s: most seconds one attempt may take (cut to what is left of the deadline).
        deadline_s: most seconds the whole generation (attempts and waits) may take.
    """

    max_attempts: int = 5
    backoff_s: float = 2.0
    max_backoff_s: float = 60.0
    timeout_s: float = 120.0
    deadline_s: float = 600.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1 (1 = no retry), got {self.max_attempts}")
        if self.backoff_s < 0 or self.max_backoff_s < 0:
            raise ValueError("backoff_s and max_backoff_s must be >= 0")
        if self.timeout_s <= 0 or self.deadline_s <= 0:
            raise ValueError("timeout_s and deadline_s must be > 0 seconds")

    def backoff(self, retry: int, rng: random.Random) -> float:
        """The jittered wait before retry number ``retry`` (1-based)."""
        return min(self.max_backoff_s, self.backoff_s * 2 ** (retry - 1)) * (0.5 + rng.random())


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds a server asked to wait (``Retry-After``, seconds or an HTTP date), or None.

    litellm keeps the provider's response headers on ``litellm_response_headers``; the OpenAI
    client's exception carries ``response.headers``.
    """
    for headers in (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    ):
        if not headers:
            continue
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except AttributeError:
            continue
        if value is None:
            continue
        value = str(value).strip()
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError):
            continue
    return None


def run_with_retries(
    attempt: Callable[[float], T],
    policy: RetryPolicy,
    retryable: tuple[type[BaseException], ...],
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    rng: random.Random | None = None,
    state: dict[str, Any] | None = None,
) -> T:
    """Call ``attempt(timeout_s)`` until it returns, following ``policy``, and return its result.

    A retryable error is retried after the larger of the backoff and the server's ``Retry-After``,
    unless that wait would pass the deadline; then (or on a non-retryable error, or after
    ``max_attempts``) the last error is raised. ``state`` (a dict) receives ``attempts``,
    ``retried`` (one line per retry) and ``deadline_hit``, also when the call fails.
    """
    rng = rng or random.Random()
    state = {} if state is None else state
    state.update(attempts=0, retried=[], deadline_hit=False)
    start = clock()
    while True:
        state["attempts"] += 1
        left = policy.deadline_s - (clock() - start)
        try:
            return attempt(max(0.001, min(policy.timeout_s, left)))
        except retryable as exc:
            wait = policy.backoff(state["attempts"], rng)
            asked = retry_after_s(exc)
            if asked is not None:
                wait = max(wait, asked)
            left = policy.deadline_s - (clock() - start)
            if state["attempts"] >= policy.max_attempts:
                raise
            if wait >= left:
                state["deadline_hit"] = True
                raise
            state["retried"].append(
                f"{type(exc).__name__} (waited {wait:.2f} s"
                + (f", Retry-After {asked:g} s)" if asked is not None else ")")
            )
            sleep(wait)
