"""Chat prompts for LLM generators, rendered from the template files in ``prompts/``.

:func:`build_messages` turns a :class:`GenerationRequest` into ``[system, user]`` chat messages.
The wording lives in ``kernel_gym/llm/prompts/*.md`` (``string.Template`` files with ``$name``
placeholders); this module only selects templates and fills them. A ``prompt_dir`` (config:
``llm.options.prompt_dir``) holds a user's files that replace the package's of the same name:

* ``drafting.md`` / ``refining.md``: the user message of each stage;
* ``format_default.md`` wraps the backend's own ``answer_format()`` (the backend owns its format and
  its example answer, for an operator that no task of any suite computes: tests/llm/
  test_prompt_leaks.py checks it against every task); a ``format_<backend>.md`` replaces it for
  that backend;
* ``mode_small.md`` / ``mode_large.md`` / ``mode_scratch.md``: what a refining step asks for;
* ``sections/*.md``: memories, parent kernel, pool, verifier feedback.

Long material is cut to budgets (:class:`PromptBudget`), so a prompt stays bounded however long
the memories' code or the compiler's log is. The parent kernel is never cut: it is what the model
edits.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

from kernel_gym.llm.base import GenerationRequest, ParentKernel
from kernel_gym.memory.types import MemoryItem

__all__ = [
    "PROMPT_DIR",
    "PromptBudget",
    "answer_format",
    "build_messages",
    "load_template",
    "render_feedback",
    "render_memory",
    "summarize_verifier",
    "truncate",
]

#: Directory of the prompt template files.
PROMPT_DIR = Path(__file__).resolve().parent / "prompts"

_KIND_LABELS = {
    "api_template": "API template",
    "best_practice": "best practice",
    "experience_success": "what worked before",
    "experience_failure": "what failed before",
    "trace": "earlier attempt",
    "validity_rule": "rule",
}


@dataclass(frozen=True)
class PromptBudget:
    """Character budgets for the parts of a prompt that can grow without bound.

    Attributes:
        memory_text: text of one memory item.
        trace_code: code of one memory trace (an earlier attempt stored in the memory).
        pool_code: code of one pool kernel in a large refining step.
        message: the verifier's message in feedback and result lines.
        compile_log: the tail of the compiler log shown as feedback.
        reference: the task's reference source (generous: the model must see the operator).
    """

    memory_text: int = 3000
    trace_code: int = 2500
    pool_code: int = 6000
    message: int = 1500
    compile_log: int = 2500
    reference: int = 20000


def load_template(name: str, prompt_dir: str | Path | None = None) -> Template:
    """The template ``<prompt_dir>/<name>`` when that file exists (a user's override), else the
    package's ``prompts/<name>`` (e.g. ``"drafting.md"``, ``"sections/parent.md"``)."""
    if prompt_dir is not None and (Path(prompt_dir) / name).is_file():
        return _read_template(str(Path(prompt_dir) / name))
    return _read_template(str(PROMPT_DIR / name))


@functools.cache
def _read_template(file: str) -> Template:
    path = Path(file)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"prompt template {path} is missing; the package data of kernel_gym/llm/prompts was not installed"
        ) from None
    if not Template(text).is_valid():  # a user's file: fail on a stray $ now, with the fix
        raise ValueError(f"prompt file {path} has a '$' that is not a $name placeholder; write a literal $ as $$")
    return Template(text.strip("\n"))


def _fill(name: str, _dir: str | Path | None = None, **values: Any) -> str:
    return load_template(name, _dir).substitute({k: str(v) for k, v in values.items()})


def truncate(text: str, limit: int, *, keep: str = "head") -> str:
    """``text`` cut to about ``limit`` characters with a marker saying how much was left out.

    ``keep="head"`` keeps the start (code, messages), ``keep="tail"`` the end (compiler logs,
    whose last lines name the error).
    """
    text = text.rstrip()
    if len(text) <= limit:
        return text
    dropped = len(text) - limit
    if keep == "tail":
        return f"[... {dropped} earlier characters omitted ...]\n" + text[-limit:]
    return text[:limit] + f"\n[... {dropped} more characters omitted ...]"


def answer_format(backend: str, form: str = "python", prompt_dir: str | Path | None = None) -> str:
    """The answer-format section for ``backend``: ``format_<backend>.md`` around the backend's
    own ``answer_format()`` text, or ``format_<form>.md`` for another answer form (six_string)."""
    from kernel_gym.backends import get_backend  # imports the backend module on first use

    get_backend(backend).check_answer_format(form)
    if form != "python":
        return _fill(f"format_{form}.md", prompt_dir, backend=backend)
    backend_text = get_backend(backend).answer_format()
    own = f"format_{backend}.md"
    known = (PROMPT_DIR / own).is_file() or (prompt_dir is not None and (Path(prompt_dir) / own).is_file())
    name = own if known else "format_default.md"
    return _fill(name, prompt_dir, backend=backend, backend_format=backend_text)


def _num(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def summarize_verifier(result: Mapping[str, Any] | None, budget: PromptBudget = PromptBudget()) -> str:
    """One line for a ``VerifyResult.to_dict()``: latency and speedup when feasible, else the
    error class and message."""
    if not result:
        return "not verified"
    if result.get("feasible"):
        parts = ["correct"]
        lat, ref, speedup = (_num(result.get(k)) for k in ("latency_s", "reference_latency_s", "speedup"))
        if lat is not None:
            parts.append(f"latency {lat * 1e6:.1f} us")
        if ref is not None:
            parts.append(f"reference {ref * 1e6:.1f} us")
        if speedup is not None:
            parts.append(f"speedup {speedup:.2f}x over the reference")
        return ", ".join(parts)
    error = str(result.get("error_class") or "failed")
    if result.get("hack_rule"):
        error += f" ({result['hack_rule']})"
    message = " ".join(str(result.get("message") or "").split())
    return f"{error}: {truncate(message, min(budget.message, 300))}" if message else error


def render_feedback(result: Mapping[str, Any], budget: PromptBudget = PromptBudget()) -> str:
    """The verifier feedback block: error class, message, numerical errors and the compiler
    log's tail."""
    lines = [f"Result: {summarize_verifier(result, budget)}"]
    if not result.get("feasible"):
        message = str(result.get("message") or "").strip()
        if len(message) > 300:  # the summary line only shows the start
            lines += ["Message:", truncate(message, budget.message)]
        nums = [(k, _num(result.get(k))) for k in ("max_abs_error", "max_rel_error", "mismatch_fraction")]
        errs = [f"{k} = {v:.3g}" for k, v in nums if v is not None]
        if errs:
            lines.append("Numerical errors: " + ", ".join(errs))
        if result.get("first_mismatch_index") is not None:
            lines.append(f"First mismatching element: index {result['first_mismatch_index']}")
        trials = result.get("trials_run")
        if trials:
            lines.append(f"Correctness trials passed: {result.get('trials_passed', 0)} of {trials}")
    log = str(result.get("compile_log") or "").strip()
    if log:
        lines += ["Compiler log (end):", "```", truncate(log, budget.compile_log, keep="tail"), "```"]
    return "\n".join(lines)


def render_memory(
    item: MemoryItem, index: int, budget: PromptBudget = PromptBudget(), prompt_dir: str | Path | None = None
) -> str:
    """One memory item: kind, title and text; a trace also shows its (truncated) code and result."""
    text = truncate(item.text or "", budget.memory_text)
    payload = item.payload if isinstance(item.payload, dict) else {}
    code = payload.get("code")
    if item.kind == "trace" and isinstance(code, str) and code.strip():
        return _fill(
            "sections/memory_trace.md",
            prompt_dir,
            index=index,
            title=item.title or "untitled",
            task=item.task_id or "another task",
            text=text,
            verifier=summarize_verifier(payload.get("verifier"), budget),
            code=truncate(code, budget.trace_code),
        )
    return _fill(
        "sections/memory_item.md",
        prompt_dir,
        index=index,
        kind=_KIND_LABELS.get(item.kind, item.kind),
        title=item.title or "untitled",
        text=text,
    )


def _parent_section(
    parent: ParentKernel | None, heading: str, budget: PromptBudget, prompt_dir: str | Path | None
) -> str:
    if parent is None:
        return ""
    return "\n\n" + _fill(
        "sections/parent.md",
        prompt_dir,
        heading=heading,
        verifier=summarize_verifier(parent.verifier, budget),
        code=parent.code.rstrip(),
    )


def _pool_section(pool: list[ParentKernel], budget: PromptBudget, prompt_dir: str | Path | None) -> str:
    if not pool:
        return ""
    items = "\n\n".join(
        _fill(
            "sections/pool_item.md",
            prompt_dir,
            index=i,
            verifier=summarize_verifier(k.verifier, budget),
            code=truncate(k.code, budget.pool_code),
        )
        for i, k in enumerate(pool, 1)
    )
    return "\n\n" + _fill("sections/pool.md", prompt_dir, pool=items)


def _task_line(request: GenerationRequest) -> str:
    task = request.task
    desc = task.description.strip() or "(no description)"
    return f"{desc} (level {task.level}, category {task.category}, dtype {task.dtype}, backend {request.backend})"


def build_messages(
    request: GenerationRequest, budget: PromptBudget = PromptBudget(), prompt_dir: str | Path | None = None
) -> list[dict[str, str]]:
    """The chat messages (``[{"role": "system", ...}, {"role": "user", ...}]``) for ``request``.

    Drafting asks for a correct kernel and shows an earlier failed attempt (``parent``) and the
    last feedback when there are any; refining shows the parent kernel with its latency and
    speedup and asks for a faster one (``mode="large"``: a structurally different one, with the
    ``pool`` kernels). Files in ``prompt_dir`` replace the package's prompt files of the same name.
    """
    memories = ""
    if request.memories:
        rendered = "\n\n".join(render_memory(m, i, budget, prompt_dir) for i, m in enumerate(request.memories, 1))
        memories = "\n\n" + _fill("sections/memories.md", prompt_dir, memories=rendered)
    feedback = ""
    if request.feedback:
        feedback = "\n\n" + _fill(
            "sections/feedback.md", prompt_dir, feedback=render_feedback(request.feedback, budget)
        )
    common = dict(
        task_id=request.task.id,
        task_line=_task_line(request),
        reference=truncate(request.task.source, budget.reference),
        answer_format=answer_format(request.backend, request.answer_format, prompt_dir),
        memories_section=memories,
        feedback_section=feedback,
    )
    if request.stage == "drafting":
        failed = bool(request.feedback and not request.feedback.get("feasible"))
        user = _fill(
            "drafting.md",
            prompt_dir,
            **common,
            parent_section=_parent_section(request.parent, "Your earlier attempt", budget, prompt_dir),
            fix_hint="\n" + _fill("fix_hint.md", prompt_dir) if failed else "",
        )
    else:
        large = request.mode == "large"
        if request.parent is None and not (large and request.pool):
            mode = _fill("mode_scratch.md", prompt_dir)
        else:
            mode = _fill("mode_large.md" if large else "mode_small.md", prompt_dir)
        user = _fill(
            "refining.md",
            prompt_dir,
            **common,
            parent_section=_parent_section(request.parent, "Current kernel", budget, prompt_dir),
            pool_section=_pool_section(request.pool, budget, prompt_dir) if large else "",
            mode_instructions=mode,
        )
    user = user.strip() + "\n"
    return [{"role": "system", "content": _fill("system.md", prompt_dir) + "\n"}, {"role": "user", "content": user}]
