"""How the synthetic coder uses its context: the v2 context effects.

Each effect stands for a published finding about LLM coders (sources in
``docs/synthetic_coder.md``) and has a switch in :class:`ContextEffects` (all on by default):

- ``copy_retrieved``: a feasible trace of the same op family is adapted: every skill its code
  shows is taken and its tiling knobs are the starting point (retrieval-augmented generation
  copies structure from relevant retrieved code). Off: traces only show their API calls.
- ``distraction``: items of an unrelated op family teach at a reduced weight and every
  distractor in the context lowers the chance that any item is attended to (irrelevant context
  dilutes the relevant one); a failed trace of another task whose code carries a fault is
  copied with probability ``mislead`` times its attention, its fault with it, instead of being
  read as a lesson.
- ``validated_attempts``: a feasible parent or a feasible trace of this very task is reused:
  with probability ``validated_copy`` every skill the plan needs is present and no misleading
  item can override it.
- ``stage_specific``: drafting uses correctness experience, refining optimisation experience:
  items that only teach tactics are off-stage (distractors) when drafting, and when refining a
  feasible parent, correctness-only items (validity rules, failure summaries) are off-stage while
  tactic items are always applied.

Everything is a pure function of the request and hashes of (seed, task, step, request seed).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kernel_gym.llm.synthetic.skills import (
    COMPILE_SKILLS,
    SKILLS,
    TACTICS,
    detect_skills,
    skills_from_error,
    skills_in_code,
)
from kernel_gym.memory.types import MemoryItem

__all__ = ["ContextEffects", "ContextReading", "family_of", "read_context", "unit"]

KNOBS_RX = re.compile(r"synthetic-coder knobs: (\{.*?\})")

#: task category -> op family (the template family a kernel of that category is written with)
_FAMILY: dict[str, str] = {
    "elementwise": "elementwise",
    "activation": "elementwise",
    "elementwise_chain": "elementwise",
    "reduction": "reduction",
    "loss": "reduction",
    "elementwise_reduction": "reduction",
    "softmax": "softmax",
    "attention_softmax": "softmax",
    "normalization": "normalization",
    "norm_activation": "normalization",
    "residual_norm": "normalization",
    "matmul": "matmul",
    "matmul_epilogue": "matmul",
    "scan": "scan",
    "pooling": "pooling",
}


def family_of(category: str | None) -> str:
    """The op family of a task category; ``"general"`` for task-independent knowledge."""
    if not category or category == "general":
        return "general"
    return _FAMILY.get(category, category)


def unit(*parts: Any) -> float:
    """A uniform number in [0, 1) from a hash of ``parts`` (no global state)."""
    h = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2.0**64


@dataclass
class ContextEffects:
    """Switches and strengths of the context effects (see the module docstring).

    The strengths are the coder's own choices (documented, not fitted to any model): they set
    the direction the published findings report, not their size.
    """

    copy_retrieved: bool = True
    distraction: bool = True
    validated_attempts: bool = True
    stage_specific: bool = True
    #: weight of an item of an unrelated op family (1.0 = as useful as a same-family one)
    cross_family: float = 0.5
    #: each distractor in context divides every item's attention by (1 + dilution * distractors)
    dilution: float = 0.1
    #: probability that a failed trace's fault is copied rather than its lesson learnt
    mislead: float = 0.5
    #: weight of an off-stage item (tactics when drafting, correctness summaries when refining)
    off_stage: float = 0.5
    #: probability that a validated kernel of this task is reused with all its skills
    validated_copy: float = 0.9

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> ContextEffects:
        """Pick this dataclass's fields out of a coder's keyword options (config keys)."""
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in options.items() if k in names})


@dataclass
class ContextReading:
    """What the coder took from its context."""

    have: set[str] = field(default_factory=set)
    origin: dict[str, tuple[str, Any]] = field(default_factory=dict)
    #: skills a copied faulty trace made the coder forget (its fault is repeated)
    misled: set[str] = field(default_factory=set)
    #: tiling knobs of the adapted trace (or the parent), the starting point of the new kernel
    knobs: dict[str, Any] | None = None
    #: a validated kernel of this task (parent or trace) was reused
    validated: bool = False
    #: tactics that context items teach (applied when refining)
    context_tactics: set[str] = field(default_factory=set)
    distractors: int = 0


def _payload(item: MemoryItem) -> dict[str, Any]:
    return item.payload if isinstance(item.payload, dict) else {}


def _trace_feasible(item: MemoryItem) -> bool:
    p = _payload(item)
    return bool(p.get("feasible") or (p.get("verifier") or {}).get("feasible"))


def parse_knobs(code: str | None) -> dict[str, Any] | None:
    """The tiling knobs a synthetic-coder kernel records in a comment, if any."""
    m = KNOBS_RX.search(code or "")
    if not m:
        return None
    try:
        out = json.loads(m.group(1))
    except ValueError:
        return None
    return out if isinstance(out, dict) else None


def _item_key(item: MemoryItem, index: int) -> Any:
    return item.id if item.id is not None else f"#{index}:{item.title}"


def _off_stage(item: MemoryItem, taught: set[str], stage: str, parent_feasible: bool) -> bool:
    correctness = taught & set(SKILLS)
    tactics = taught & set(TACTICS)
    if stage == "drafting":
        return bool(tactics) and not correctness and item.kind != "trace"
    return parent_feasible and item.kind in ("validity_rule", "experience_failure") and not tactics


def read_context(
    memories: Iterable[MemoryItem],
    *,
    task_id: str,
    category: str,
    stage: str,
    relevant: Callable[[str], set[str]],
    parent_code: str | None,
    parent_feasible: bool,
    effects: ContextEffects,
    draw_key: tuple[Any, ...],
) -> ContextReading:
    """The skills and tactics a request's context (and parent) gives, with the v2 effects."""
    out = ContextReading()
    items = list(memories)
    fam = family_of(category)
    # ---- what every item teaches on its own (the v1 rules), and how it is weighted
    taught: list[set[str]] = []
    weight: list[float] = []
    distractor: list[bool] = []
    faulty: list[set[str]] = []  # skills a failed trace's code lacks (the guard of its error class)
    for item in items:
        p = _payload(item)
        skills = set(detect_skills([item]).sources)
        bad: set[str] = set()
        if item.kind == "trace":
            code = p.get("code") or ""
            if _trace_feasible(item):
                if not effects.copy_retrieved:  # not adapted: only the API calls the code shows
                    skills &= COMPILE_SKILLS | set(TACTICS)
            elif code:
                ver = p.get("verifier") or {}
                hint = f"{item.task_id} {item.category} {item.text[:200]}"
                bad = skills_from_error(p.get("error_class"), str(ver.get("message", "")), hint)
        same = family_of(item.category) in (fam, "general")
        w = 1.0
        is_distractor = False
        if effects.distraction and not same:
            w *= effects.cross_family
            is_distractor = True
        if effects.stage_specific and _off_stage(item, skills, stage, parent_feasible):
            w *= effects.off_stage
            is_distractor = True
        taught.append(skills)
        weight.append(w)
        distractor.append(is_distractor)
        faulty.append(bad)
    n_dis = sum(distractor)
    out.distractors = n_dis
    # ---- validated attempts: a feasible parent, or a feasible trace of this very task
    same_task = [
        i for i, it in enumerate(items) if it.kind == "trace" and it.task_id == task_id and _trace_feasible(it)
    ]
    from_parent = bool(parent_code and parent_feasible)
    validated_code = parent_code if from_parent else None
    if validated_code is None and same_task and effects.validated_attempts:
        validated_code = _payload(items[same_task[0]]).get("code")
    if validated_code and effects.validated_attempts and unit(*draw_key, "validated") < effects.validated_copy:
        out.validated = True
        for s in relevant(validated_code):
            out.have.add(s)
            out.origin[s] = ("validated", None)
    if from_parent and parent_code:  # a feasible parent's code is read whatever the switches (v1)
        for s in skills_in_code(parent_code) - out.have:
            out.have.add(s)
            out.origin[s] = ("parent", None)
    if validated_code:
        out.knobs = parse_knobs(validated_code)
    # ---- misleading items: a failed trace of another task whose fault is copied. Only an item the
    # coder attends to can mislead it; a failed attempt at this very task comes with its verdict
    # and is read as a lesson (as a reflection on one's own failure is).
    for i, item in enumerate(items):
        if not faulty[i] or item.task_id == task_id:
            continue
        others = n_dis - (1 if distractor[i] else 0)
        att = weight[i] / (1.0 + (effects.dilution * others if effects.distraction else 0.0))
        if effects.distraction and unit(*draw_key, "mislead", _item_key(item, i)) < effects.mislead * att:
            out.misled |= faulty[i]
            taught[i] = taught[i] - faulty[i]  # copied, so not read as a lesson
    if out.validated:
        out.misled.clear()
    # ---- every other skill: attended to with probability 1 - prod(1 - attention of its teachers)
    miss: dict[str, float] = {}
    teachers: dict[str, list[Any]] = {}
    for i, item in enumerate(items):
        others = n_dis - (1 if distractor[i] else 0)
        att = weight[i] / (1.0 + (effects.dilution * others if effects.distraction else 0.0))
        for s in taught[i]:
            if s in TACTICS and stage == "refining" and effects.stage_specific:
                att_s = 1.0  # an optimisation experience is applied when refining
            else:
                att_s = att
            miss[s] = miss.get(s, 1.0) * (1.0 - min(1.0, att_s))
            teachers.setdefault(s, []).append(_item_key(item, i))
    for s, m in miss.items():
        if s in out.have or s in out.misled:
            continue
        if m <= 0.0 or unit(*draw_key, "attend", s) < 1.0 - m:
            out.have.add(s)
            out.origin[s] = ("context", teachers[s])
            if s in TACTICS:
                out.context_tactics.add(s)
    # ---- copying a retrieved feasible trace of the same family: its tiling is the start
    if out.knobs is None and effects.copy_retrieved:
        for i, item in enumerate(items):
            if item.kind == "trace" and _trace_feasible(item) and family_of(item.category) == fam:
                k = parse_knobs(_payload(item).get("code"))
                if k is not None and unit(*draw_key, "adapt", _item_key(item, i)) < 1.0 / (
                    1.0 + (effects.dilution * n_dis if effects.distraction else 0.0)
                ):
                    out.knobs = k
                    break
    return out
