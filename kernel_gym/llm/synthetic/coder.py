"""The SyntheticCoder: an offline, seeded stand-in for an LLM that writes kernels.

It reads only what a prompt would show (the task's reference source and traced ops, the chosen
memories, the parent kernel, the last verifier feedback), finds the skills its context teaches
(:mod:`.skills`), commits the fault of every relevant missing skill (:mod:`.faults`) and fills a
per-category template (:mod:`.ascendc_templates`, :mod:`.cpu_templates`). See
``docs/synthetic_coder.md``. It is a test double and an ablation tool, not a model of any LLM.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import numpy as np

from kernel_gym.llm.base import Generation, GenerationRequest, Usage
from kernel_gym.llm.synthetic.analysis import Plan, analyze
from kernel_gym.llm.synthetic.ascendc_templates import render_ascendc
from kernel_gym.llm.synthetic.cpu_templates import render_cpu
from kernel_gym.llm.synthetic.faults import choose_knobs, relevant_skills
from kernel_gym.llm.synthetic.skills import (
    PRIORS,
    SKILLS,
    TACTICS,
    detect_skills,
    skills_from_error,
    skills_in_code,
)

__all__ = ["SyntheticCoder"]

_KNOBS_RX = re.compile(r"synthetic-coder knobs: (\{.*?\})")


def _unit(*parts: Any) -> float:
    """A uniform number in [0, 1) from a hash of ``parts`` (no global state)."""
    h = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") / 2.0**64


class SyntheticCoder:
    """Seeded template coder whose knowledge is the set of skills found in its context.

    Args:
        seed: base seed; with the request's (task id, step, seed) it fixes every random choice.
        prior_scale: multiplies the skill priors (0 = knows nothing it is not shown; 1 = default).
        priors: override of :data:`~kernel_gym.llm.synthetic.skills.PRIORS` entries.
        feedback_fix: probability that a failure in the last feedback teaches the skill that
            guards against its error class (an LLM reading the error message).
    """

    name = "synthetic"

    def __init__(
        self,
        seed: int = 0,
        *,
        prior_scale: float = 1.0,
        priors: dict[str, float] | None = None,
        feedback_fix: float = 0.5,
        **options: Any,
    ) -> None:
        self.seed = int(seed)
        self.prior_scale = float(prior_scale)
        self.priors = {**PRIORS, **(priors or {})}
        self.feedback_fix = float(feedback_fix)
        self.options = options

    # ------------------------------------------------------------------ knowledge
    def knowledge(self, request: GenerationRequest) -> tuple[set[str], dict[str, Any]]:
        """The skills and tactics the coder has for this request, with where each came from."""
        task = request.task
        found = detect_skills(request.memories)
        have = set(found.sources)
        origin: dict[str, Any] = {s: ("context", ids) for s, ids in found.sources.items()}
        par = request.parent
        if par is not None and par.code and (par.verifier or {}).get("feasible"):
            for s in skills_in_code(par.code) - have:
                have.add(s)
                origin[s] = ("parent", None)
        fb = request.feedback or {}
        if fb and not fb.get("feasible", False):
            hint = f"{task.id} {task.category} {task.dtype}"
            for s in sorted(
                skills_from_error(
                    fb.get("error_class"), str(fb.get("message", "")) + str(fb.get("compile_log", "")), hint
                )
            ):
                if (
                    s not in have
                    and _unit(self.seed, task.id, request.step, request.seed, "feedback", s) < self.feedback_fix
                ):
                    have.add(s)
                    origin[s] = ("feedback", fb.get("error_class"))
        for s in SKILLS + TACTICS:
            if s in have:
                continue
            if (
                _unit(self.seed, task.id, request.step, request.seed, "prior", s)
                < self.priors.get(s, 0.0) * self.prior_scale
            ):
                have.add(s)
                origin[s] = ("prior", None)
        return have, origin

    # ------------------------------------------------------------------ generation
    def generate(self, request: GenerationRequest) -> Generation:
        task = request.task
        plan: Plan = analyze(task)
        have, origin = self.knowledge(request)
        tactics = {t for t in TACTICS if t in have}
        parent_knobs = None
        if request.parent is not None and request.parent.code:
            m = _KNOBS_RX.search(request.parent.code)
            if m:
                try:
                    parent_knobs = json.loads(m.group(1))
                except ValueError:
                    parent_knobs = None
        rng = np.random.default_rng(
            [
                self.seed & 0xFFFFFFFF,
                request.seed & 0xFFFFFFFF,
                request.step,
                int(hashlib.blake2b(task.id.encode(), digest_size=4).hexdigest(), 16),
            ]
        )
        knobs, applied = choose_knobs(plan, have, tactics, request.stage, rng, parent_knobs)
        if request.backend == "cpu":
            source = render_cpu(plan, knobs)
        else:
            source = render_ascendc(plan, knobs)
        rel = relevant_skills(plan)
        notes = {
            "plan": plan.kind,
            "recipe": plan.recipe,
            "unsupported": plan.kind == "unsupported",
            "skills": sorted(s for s in have if s in SKILLS),
            "tactics_known": sorted(tactics),
            "tactics": applied,
            "missing": sorted(s for s in rel if s not in have),
            "faults": knobs.faults(),
            "origin": {s: origin[s][0] for s in sorted(origin)},
            "knobs": {"tile": knobs.tile, "blocks": knobs.blocks, "bufn": knobs.bufn},
        }
        usage = Usage(
            model=f"synthetic-{self.seed}",
            prompt_tokens=sum(len((m.text or "").split()) for m in request.memories),
            completion_tokens=len(source.split()),
        )
        return Generation(source=source, usage=usage, raw=None, notes=notes)
