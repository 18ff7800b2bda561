"""The SyntheticCoder: an offline, seeded stand-in for an LLM that writes kernels.

It reads only what a prompt would show (the task's reference source and traced ops, the chosen
memories, the parent kernel, the last verifier feedback), finds the skills its context teaches
(:mod:`.skills`), commits the fault of every relevant missing skill (:mod:`.faults`) and fills a
per-category template (:mod:`.ascendc_templates`, :mod:`.cpu_templates`, :mod:`.gpu_templates`). See
``docs/synthetic_coder.md``. It is a test double and an ablation tool, not a model of any LLM.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from kernel_gym.llm.base import Generation, GenerationRequest, Usage
from kernel_gym.llm.synthetic.analysis import Plan, analyze
from kernel_gym.llm.synthetic.ascendc_templates import render_ascendc
from kernel_gym.llm.synthetic.context import ContextEffects, ContextReading, parse_knobs, read_context, unit
from kernel_gym.llm.synthetic.cpu_templates import render_cpu
from kernel_gym.llm.synthetic.faults import choose_knobs, choose_plan, relevant_skills
from kernel_gym.llm.synthetic.gpu_templates import GPU_KINDS, gpu_relevant_skills, render_cuda, render_triton
from kernel_gym.llm.synthetic.skills import (
    CUBE_SKILLS,
    PRIORS,
    SKILLS,
    TACTICS,
    skills_from_error,
)

__all__ = ["LANGUAGES", "SyntheticCoder", "coder_language"]

#: kernel languages the coder has templates for
LANGUAGES = ("cpp", "ascendc", "cuda", "triton")


def _relevant_for(plan: Plan) -> Callable[[str], set[str]]:
    """Skills a validated kernel of this task stands for: those of its form (cube or vector)."""

    def relevant(code: str) -> set[str]:
        if plan.extra.get("cube") and "Mmad(" in code:
            return relevant_skills(choose_plan(plan, {"cube_api"})) | {"cube_api"}
        return relevant_skills(plan)

    return relevant


class SyntheticCoder:
    """Seeded template coder whose knowledge is the set of skills found in its context.

    Args:
        seed: base seed; with the request's (task id, step, seed) it fixes every random choice.
        prior_scale: multiplies the skill priors (0 = knows nothing it is not shown; 1 = default).
        priors: override of :data:`~kernel_gym.llm.synthetic.skills.PRIORS` entries.
        feedback_fix: probability that a failure in the last feedback teaches the skill that
            guards against its error class (an LLM reading the error message).
        **options: the context-effect switches and strengths of
            :class:`~kernel_gym.llm.synthetic.context.ContextEffects` (``copy_retrieved``,
            ``distraction``, ``validated_attempts``, ``stage_specific``, all on by default;
            ``cross_family``, ``dilution``, ``mislead``, ``off_stage``, ``validated_copy``).
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
        self.effects = ContextEffects.from_options(options)
        self.options = options

    # ------------------------------------------------------------------ knowledge
    def knowledge(self, request: GenerationRequest, plan: Plan | None = None) -> tuple[set[str], dict[str, Any]]:
        """The skills and tactics the coder has for this request, with where each came from."""
        have, origin, _ = self._read(request, plan or analyze(request.task))
        return have, origin

    def _read(self, request: GenerationRequest, plan: Plan) -> tuple[set[str], dict[str, Any], ContextReading]:
        task = request.task
        par = request.parent
        key = (self.seed, task.id, request.step, request.seed)
        reading = read_context(
            request.memories,
            task_id=task.id,
            category=task.category,
            stage=request.stage,
            relevant=_relevant_for(plan),
            parent_code=par.code if par is not None else None,
            parent_feasible=bool(par is not None and par.code and (par.verifier or {}).get("feasible")),
            effects=self.effects,
            draw_key=key,
        )
        have = set(reading.have)
        origin: dict[str, Any] = dict(reading.origin)
        fb = request.feedback or {}
        if fb and not fb.get("feasible", False):
            hint = f"{task.id} {task.category} {task.dtype}"
            for s in sorted(
                skills_from_error(
                    fb.get("error_class"), str(fb.get("message", "")) + str(fb.get("compile_log", "")), hint
                )
            ):
                if s not in have and unit(*key, "feedback", s) < self.feedback_fix:
                    have.add(s)
                    origin[s] = ("feedback", fb.get("error_class"))
        for s in SKILLS + TACTICS + CUBE_SKILLS:
            if s in have or s in reading.misled:  # a copied fault is repeated whatever the coder knew
                continue
            if unit(*key, "prior", s) < self.priors.get(s, 0.0) * self.prior_scale:
                have.add(s)
                origin[s] = ("prior", None)
        return have, origin, reading

    # ------------------------------------------------------------------ generation
    def generate(self, request: GenerationRequest) -> Generation:
        task = request.task
        plan: Plan = analyze(task)
        have, origin, reading = self._read(request, plan)
        language = coder_language(request.backend)
        gpu = language in ("cuda", "triton")
        if language == "cpp":  # the cube unit is an NPU engine: C++ for a CPU has no cube form
            if plan.kind == "cube":
                plan = replace(plan, kind="unsupported", note="no cpu template for matmul + epilogue")
        elif gpu:  # GPU templates: the C++ families; no cube form, no statistics normalisation
            if plan.kind not in GPU_KINDS or (plan.kind == "matmul" and plan.dtype != "float"):
                plan = replace(plan, kind="unsupported", note=f"no {language} template for {plan.kind}")
        else:
            plan = choose_plan(plan, have)
        tactics = {t for t in TACTICS if t in have}
        parent_knobs = parse_knobs(request.parent.code) if request.parent is not None else None
        if parent_knobs is None:
            parent_knobs = reading.knobs  # the adapted trace's tiling
        rng = np.random.default_rng(
            [
                self.seed & 0xFFFFFFFF,
                request.seed & 0xFFFFFFFF,
                request.step,
                int(hashlib.blake2b(task.id.encode(), digest_size=4).hexdigest(), 16),
            ]
        )
        rel = gpu_relevant_skills(plan, language) if gpu else relevant_skills(plan)
        knobs, applied = choose_knobs(plan, have, tactics, request.stage, rng, parent_knobs, rel if gpu else None)
        if language == "cpp":
            source = render_cpu(plan, knobs)
        elif language == "cuda":
            source = render_cuda(plan, knobs)
        elif language == "triton":
            source = render_triton(plan, knobs)
        else:
            source = render_ascendc(plan, knobs)
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
            "misled": sorted(reading.misled),
            "validated": reading.validated,
            "distractors": reading.distractors,
        }
        usage = Usage(
            model=f"synthetic-{self.seed}",
            prompt_tokens=sum(len((m.text or "").split()) for m in request.memories),
            completion_tokens=len(source.split()),
        )
        return Generation(source=source, usage=usage, raw=None, notes=notes)


def coder_language(backend: str) -> str:
    """The language the synthetic coder writes for ``backend``: its ``language`` if the coder has
    templates for it (:data:`LANGUAGES`); otherwise one clear error."""
    from kernel_gym.backends import backend_class

    language = backend_class(backend).language
    if language not in LANGUAGES:
        raise ValueError(
            f"the synthetic coder writes {', '.join(LANGUAGES)} kernels; backend {backend!r} takes {language!r}: "
            "use an LLM generator (generator=litellm) or add templates for it"
        )
    return language
