"""The generator protocol: what the environment asks of anything that writes kernels.

A generator turns a :class:`GenerationRequest` (the task, the memories the agent chose, the
parent kernel to refine, the last verifier feedback, the stage) into a :class:`Generation`
(an answer source in the backend's format plus a usage record). The environment never looks
inside a generator; an LLM client and the offline synthetic coder are interchangeable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kernel_gym.memory.types import MemoryItem
from kernel_gym.tasks.spec import TaskSpec

__all__ = [
    "STAGES",
    "BudgetExhausted",
    "Generation",
    "GenerationError",
    "GenerationRequest",
    "Generator",
    "ParentKernel",
    "Usage",
]

#: The two stages of an episode: write a first feasible kernel, then make it faster.
STAGES: tuple[str, ...] = ("drafting", "refining")


@dataclass
class ParentKernel:
    """An earlier kernel of the same task to refine.

    Attributes:
        code: the answer source (Python defining ``ModelNew``).
        verifier: the verifier's result for it (``VerifyResult.to_dict()``), or None.
        item_id: the memory item (trace) that holds it, or None.
        depth: refinement depth (0 = a draft).
    """

    code: str
    verifier: dict[str, Any] | None = None
    item_id: int | None = None
    depth: int = 0


@dataclass
class GenerationRequest:
    """Everything a generator may read. Nothing else: no stored answers, no verifier internals.

    Attributes:
        task: the task (its ``source`` is the PyTorch reference a prompt shows).
        backend: target backend id (``"ascend_sim"``, ``"cpu"``, ...); fixes the answer format.
        stage: ``"drafting"`` or ``"refining"``.
        memories: the memory items the agent put into the context, in the agent's order.
        parent: the kernel to refine, or None to write from scratch.
        feedback: the verifier result (``VerifyResult.to_dict()``) of the previous step of this
            episode, or None on the first step.
        step: index of the step within the episode (0-based).
        seed: a per-step seed; a generator that samples must be deterministic given it.
        mode: ``"small"`` (edit the parent) or ``"large"`` (regenerate, e.g. from ``pool``);
            generators that do not distinguish the two may ignore it.
        pool: extra kernels for a large step (AdaExplore's diverse pool), best first.
        answer_format: the form of the answer: ``"python"`` (a module defining ``ModelNew``) or
            another of the backend's ``answer_formats`` (``"six_string"`` on ascend_sim).
    """

    task: TaskSpec
    backend: str
    stage: str = "drafting"
    memories: list[MemoryItem] = field(default_factory=list)
    parent: ParentKernel | None = None
    feedback: dict[str, Any] | None = None
    step: int = 0
    seed: int = 0
    mode: str = "small"
    pool: list[ParentKernel] = field(default_factory=list)
    answer_format: str = "python"

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, got {self.stage!r}")
        if self.mode not in ("small", "large"):
            raise ValueError(f"mode must be 'small' or 'large', got {self.mode!r}")


@dataclass
class Usage:
    """What one generation cost. Token counts are integers (``reasoning_tokens`` is the part of
    ``completion_tokens`` a thinking model spent thinking, 0 when the provider does not say);
    ``cost_usd`` in US dollars by litellm's price table, None when the model is not in it;
    ``latency_s`` wall-clock seconds of the calls (retries and backoff included, library import
    excluded); ``cached`` is True when the reply came from a cache; ``attempts`` counts API calls."""

    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def add(self, other: Usage) -> Usage:
        """The sum of two usage records (for several candidates of one step); cost None if either is."""
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Usage(
            model=self.model or other.model,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cost_usd=cost,
            latency_s=max(self.latency_s, other.latency_s),
            cached=self.cached and other.cached,
            attempts=self.attempts + other.attempts,
        )


@dataclass
class Generation:
    """A generator's answer: ``source`` in the backend's answer format, the ``usage`` record,
    the raw reply (for LLMs), the model's reasoning text kept apart from it (thinking models),
    and free ``notes`` (e.g. which skills the synthetic coder used). ``no_code`` is True when the
    reply held no code to verify (prose only); ``source`` is then the reply itself."""

    source: str
    usage: Usage = field(default_factory=Usage)
    raw: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    reasoning: str | None = None
    no_code: bool = False


class GenerationError(RuntimeError):
    """A generation that failed for good (retries and deadline spent, or an error not worth
    retrying). The environment turns it into a step with ``info["outcome"] == "generation_error"``.

    Attributes:
        error_class: the underlying exception's class name (``"RateLimitError"``, ``"Timeout"``...).
        message: its message (credentials never appear in it: they are not part of requests' text).
        usage: what the failed attempts cost (attempts, latency).
    """

    def __init__(self, error_class: str, message: str, usage: Usage | None = None) -> None:
        super().__init__(f"{error_class}: {message}")
        self.error_class = error_class
        self.message = message
        self.usage = usage or Usage(attempts=0)


class BudgetExhausted(RuntimeError):
    """A generator's cost or token limit is reached; no further API call is made. A run stops
    cleanly on it (its state saved, ``resume=true`` with a higher limit continues)."""

    def __init__(self, message: str, kind: str = "cost") -> None:
        super().__init__(message)
        self.kind = kind


@runtime_checkable
class Generator(Protocol):
    """Anything with a ``name`` and ``generate(request) -> Generation``."""

    name: str

    def generate(self, request: GenerationRequest) -> Generation: ...
