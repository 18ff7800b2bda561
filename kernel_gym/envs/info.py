"""The ``info`` dict of KernelSynthesisEnv as typed records.

``reset`` and ``step`` return :meth:`EnvInfo.to_dict`: the fields of :class:`EnvInfo` (always),
plus after a step the fields of :class:`StepRecord` at the top level. Candidates, parents and
timing are plain dicts with the fields of :class:`CandidateInfo`, :class:`ParentInfo` and
:class:`StepTiming`. docs/environment.md lists the same keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["CandidateInfo", "ParentInfo", "StepTiming", "StepRecord", "EnvInfo"]


def _fields(record: Any) -> dict[str, Any]:
    """A record's fields as a dict, values shared rather than deep-copied (``dataclasses.asdict``
    copies every nested dict and list, which costs more than the rest of the step's info)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


@dataclass(frozen=True)
class CandidateInfo:
    """One recalled memory item in a candidate slot."""

    id: int  #: memory item id
    kind: str  #: item kind (``api_template``, ``trace``, ``experience_success`` ...)
    title: str
    similarity: float  #: cosine similarity to the task, in [-1, 1]
    q1: float  #: drafting-stage value (Q-memory agents)
    q2: float  #: refining-stage value
    use_count: int  #: times the item was put into a context
    task_id: str | None
    category: str | None
    level: int | None
    outcome: float  #: +1 feasible trace / success experience, -1 failure, 0 knowledge
    speedup: float | None  #: a trace's speedup over the reference, if any
    age: int  #: store clock ticks since the item was written


@dataclass(frozen=True)
class ParentInfo:
    """One feasible kernel of the task in a parent slot."""

    id: int  #: trace item id
    latency_s: float  #: seconds
    speedup: float | None  #: over the eager reference
    depth: int  #: refinement steps from a draft
    code_hash: str | None
    q2: float = 0.0  #: refining-stage value of the trace


@dataclass(frozen=True)
class StepTiming:
    """Where the step's wall time went, seconds."""

    generate_s: float  #: generator calls (all candidates)
    verify_s: float  #: verification of every candidate
    overhead_s: float  #: the env's own work (recall, memory writes, observation)


@dataclass
class StepRecord:
    """What the last step did."""

    step_stage: str  #: stage the step was taken in (``drafting`` / ``refining``)
    context_ids: list[int]  #: memory items put into the context, in order
    parent_id: int | None  #: trace refined, or None for a draft
    mode: str  #: ``small`` or ``large`` (search actions)
    feasible: bool
    reward: float
    verifier: dict[str, Any]  #: ``VerifyResult.to_dict()`` of the chosen candidate
    trace_id: int | None  #: trace written to memory (None after a generation error)
    experience_id: int | None  #: success/failure experience written with it
    code_hash: str
    usage: dict[str, Any]  #: generator usage summed over the candidates (tokens, cost_usd, latency_s ...)
    generator_notes: dict[str, Any]
    first_feasible: bool  #: True on the step that switched the task to refining
    code: str  #: the kernel source that was verified ("" after a generation error)
    invalid_ids: list[int]  #: trace ids in the action that are not feasible kernels of the task
    outcome: str  #: ``feasible``, the verifier's error class, ``no_code`` or ``generation_error``
    generation_error: dict[str, Any] | None  #: ``{error_class, message}`` when every generation failed
    reply: str | None  #: the model's raw reply
    reasoning: str | None  #: the model's reasoning text, apart from the reply
    #: per candidate: ``outcome``, ``latency_s``, its raw ``reply`` and ``reasoning``; or the error
    candidates_tried: list[dict[str, Any]]
    timing: StepTiming
    #: what the reward was computed from (:func:`kernel_gym.envs.reward_shapes.reward_basis`):
    #: ``requested``, ``shapes`` ("published" / "simulated"), ``fallback`` (why not the published
    #: figure, or None), ``latency_s``, ``reference_latency_s``, ``speedup``, ``latency_bracket_s``, ``sampled``
    reward_basis: dict[str, Any] | None = None


@dataclass
class EnvInfo:
    """The env's state at a decision point, plus the last step when there was one."""

    task_id: str
    stage: str  #: stage of the next decision
    step: int  #: steps taken in this episode
    budget: int  #: T
    n_select: int  #: N
    candidates: list[CandidateInfo | None]  #: K slots, best first (None = empty)
    parents: list[ParentInfo | None]  #: P slots, fastest first (None = empty)
    best_latency_s: float | None
    best_speedup: float | None
    episode_key: str  #: id written into the episode's traces
    id_actions: bool  #: whether actions may name kernels by trace id (search_actions)
    last_step: StepRecord | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        """The flat dict the env returns (the step's fields at the top level)."""
        out: dict[str, Any] = {
            "task_id": self.task_id,
            "stage": self.stage,
            "step": self.step,
            "budget": self.budget,
            "n_select": self.n_select,
            "candidates": [None if c is None else _fields(c) for c in self.candidates],
            "parents": [None if p is None else _fields(p) for p in self.parents],
            "best_latency_s": self.best_latency_s,
            "best_speedup": self.best_speedup,
            "episode_key": self.episode_key,
            "id_actions": self.id_actions,
        }
        if self.last_step is not None:
            out.update(_fields(self.last_step))
            out["timing"] = _fields(self.last_step.timing)
        return out
