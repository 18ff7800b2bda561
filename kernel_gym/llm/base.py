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

__all__ = ["STAGES", "Generation", "GenerationRequest", "Generator", "ParentKernel", "Usage"]

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
    """What one generation cost. Token counts are integers; ``cost_usd`` in US dollars;
    ``latency_s`` wall-clock seconds; ``cached`` is True when the reply came from a cache."""

    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = False
    attempts: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Generation:
    """A generator's answer: ``source`` in the backend's answer format, the ``usage`` record,
    the raw reply (for LLMs) and free ``notes`` (e.g. which skills the synthetic coder used)."""

    source: str
    usage: Usage = field(default_factory=Usage)
    raw: str | None = None
    notes: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Generator(Protocol):
    """Anything with a ``name`` and ``generate(request) -> Generation``."""

    name: str

    def generate(self, request: GenerationRequest) -> Generation:
        ...
