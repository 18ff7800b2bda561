"""What a run of ``experiments.run`` would cost, before it starts (``estimate=true``).

    python -m experiments.run experiment=evokernel llm=litellm llm.model=openai/<model> estimate=true

Counts come from the composed config: runs = agents of ``compare`` (or the one agent) x seeds
(``compare_seeds`` or ``seed``), tasks from the task list (``max_tasks``, ``passes``), steps = tasks
x T, requests = steps x ``env.candidates_per_step``. These are exact upper bounds: a run makes
fewer requests only when a step fails before generating (never with the built-in agents) and more
when a request is retried (``llm.options.max_retries``; the logs count retries as attempts).

Tokens are an estimate: the prompt of a drafting step is rendered for every task with N seed
memories (:func:`kernel_gym.llm.prompting.build_messages`, 4 characters a token, the ratio
litellm's fallback counter uses); a refining step also shows the parent kernel and its feedback,
taken as one completion plus ``feedback_tokens``. Completion tokens, LLM latency and verification
time per step are assumptions (``estimate_assumptions``), printed with the result; set them from a
short pilot run (``python -m experiments.report <pilot>`` shows tokens and latency per call).
Cost uses litellm's price table for the model, else ``llm.options.fallback_usd_per_mtok``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from omegaconf import DictConfig

__all__ = ["CHARS_PER_TOKEN", "estimate_run", "format_estimate", "model_prices"]

#: Characters per token for the prompt estimate (English and code, the usual rule of thumb).
CHARS_PER_TOKEN = 4.0


def _tasks(cfg: DictConfig) -> list[Any]:
    from kernel_gym.envs.streams import resolve_tasks

    from .run import task_list

    tasks = resolve_tasks(task_list(cfg))
    limit = cfg.tasks.get("max_tasks")
    return tasks[: int(limit)] if limit else tasks


def prompt_tokens(tasks: Sequence[Any], backend: str, n_select: int, answer_format: str) -> list[int]:
    """Estimated prompt tokens of a drafting step of each task, with ``n_select`` seed memories."""
    from kernel_gym.llm.base import GenerationRequest
    from kernel_gym.llm.prompting import build_messages
    from kernel_gym.memory.seed import seed_items

    seeds = seed_items(backend)
    out = []
    for i, task in enumerate(tasks):
        memories = [seeds[(i + k) % len(seeds)] for k in range(min(n_select, len(seeds)))] if seeds else []
        request = GenerationRequest(
            task=task, backend=backend, stage="drafting", memories=memories, answer_format=answer_format
        )
        chars = sum(len(m["content"]) for m in build_messages(request))
        out.append(math.ceil(chars / CHARS_PER_TOKEN))
    return out


def model_prices(model: str | None, fallback: Sequence[float]) -> tuple[float, float, str]:
    """(input, output) US dollars per token and where they come from."""
    if model:
        try:
            from kernel_gym.llm.litellm_generator import _litellm

            info = _litellm().get_model_info(model)
            inp, outp = info.get("input_cost_per_token"), info.get("output_cost_per_token")
            if inp is not None and outp is not None:
                return float(inp), float(outp), "litellm's price table"
        except Exception:  # noqa: BLE001 - litellm raises a bare Exception for unknown models
            pass
    return float(fallback[0]) / 1e6, float(fallback[1]) / 1e6, "llm.options.fallback_usd_per_mtok"


def estimate_run(cfg: DictConfig) -> dict[str, Any]:
    """The counts, tokens, cost and hours of the run ``cfg`` describes (see the module docstring)."""
    assume = cfg.get("estimate_assumptions") or {}
    completion = int(assume.get("completion_tokens", 2000))
    feedback = int(assume.get("feedback_tokens", 300))
    latency = float(assume.get("llm_latency_s", 30.0))
    verify = float(assume.get("verify_s", 2.0))
    compare = list(cfg.get("compare") or [])
    agents = compare or [str(cfg.agent.name)]
    seeds = list(cfg.get("compare_seeds") or []) if compare else []
    seeds = seeds or [int(cfg.seed)]
    tasks = _tasks(cfg)
    passes = int(cfg.get("passes") or 1)
    budget = int(cfg.env.budget)
    k = int(cfg.env.get("candidates_per_step") or 1)
    runs = len(agents) * len(seeds)
    episodes = runs * len(tasks) * passes
    steps = episodes * budget
    is_llm = cfg.llm.name == "litellm"
    requests = steps * k if is_llm else 0
    drafting = prompt_tokens(tasks, str(cfg.backend.name), int(cfg.env.n_select), str(cfg.env.answer_format))
    mean_prompt = sum(drafting) / len(drafting) if drafting else 0.0
    # the first step of a task drafts; later ones show a parent (an earlier answer) and feedback
    per_step_prompt = mean_prompt + (budget - 1) / budget * (completion + feedback)
    prompt_total = int(round(requests * per_step_prompt))
    completion_total = requests * completion
    model = str(cfg.llm.model) if is_llm and cfg.llm.get("model") not in (None, "???") else None
    fallback = list(cfg.llm.options.get("fallback_usd_per_mtok") or (1.0, 4.0)) if is_llm else [0.0, 0.0]
    p_in, p_out, price_source = model_prices(model, fallback) if is_llm else (0.0, 0.0, "no LLM")
    concurrency = max(1, int(cfg.llm.options.get("max_concurrency") or 1)) if is_llm else 1
    step_s = (math.ceil(k / concurrency) * latency if is_llm else 0.0) + k * verify
    return {
        "agents": agents,
        "seeds": seeds,
        "tasks": len(tasks),
        "passes": passes,
        "budget": budget,
        "candidates_per_step": k,
        "runs": runs,
        "episodes": episodes,
        "steps": steps,
        "requests": requests,
        "prompt_tokens_drafting_mean": mean_prompt,
        "prompt_tokens": prompt_total,
        "completion_tokens": completion_total,
        "cost_usd": prompt_total * p_in + completion_total * p_out,
        "price_source": price_source,
        "model": model,
        "hours": steps * step_s / 3600.0,
        "parallel_runs": min(max(1, int(cfg.get("compare_jobs") or 1)), runs) if compare else 1,
        "cost_limit_usd": cfg.llm.options.get("cost_limit_usd") if is_llm else None,
        "assumptions": {
            "completion_tokens": completion,
            "feedback_tokens": feedback,
            "llm_latency_s": latency,
            "verify_s": verify,
        },
    }


def format_estimate(e: dict[str, Any]) -> str:
    a = e["assumptions"]
    lines = [
        f"runs:      {e['runs']} = {len(e['agents'])} agent(s) ({', '.join(e['agents'])}) x "
        f"{len(e['seeds'])} seed(s) ({', '.join(str(s) for s in e['seeds'])})",
        f"episodes:  {e['episodes']} = {e['runs']} run(s) x {e['tasks']} task(s) x {e['passes']} pass(es)",
        f"steps:     {e['steps']} = {e['episodes']} episode(s) x T = {e['budget']}",
        f"requests:  {e['requests']} = {e['steps']} step(s) x {e['candidates_per_step']} candidate(s) per step"
        + ("" if e["requests"] else " (no LLM: llm=synthetic)"),
    ]
    if e["requests"]:
        cost = f"${e['cost_usd']:,.2f} ({e['model']}, {e['price_source']})"
        limit = e.get("cost_limit_usd")
        per_run = e["cost_usd"] / max(1, e["runs"])
        if limit is not None and per_run > float(limit):
            cost += (
                f"; ~${per_run:,.2f} a run, above llm.options.cost_limit_usd={limit}: each run stops there "
                "(resume=true with a higher limit continues)"
            )
        lines += [
            f"prompt tokens:     ~{e['prompt_tokens']:,} (drafting prompt ~{e['prompt_tokens_drafting_mean']:.0f} "
            f"tokens; a refining one adds the parent kernel and ~{a['feedback_tokens']} tokens of feedback)",
            f"completion tokens: ~{e['completion_tokens']:,} (assumed {a['completion_tokens']} a request)",
            f"cost:              ~{cost}",
        ]
    par = e.get("parallel_runs", 1)
    wall = f"~{e['hours'] / par:.1f} with compare_jobs={par} runs at once" if par > 1 else "one run after another"
    lines.append(
        f"hours:     ~{e['hours']:.1f} of runs, {wall} (assumed {a['llm_latency_s']:g} s a request, "
        f"{a['verify_s']:g} s a verification; compare_jobs=N or hydra/launcher=local|slurm run them in parallel)"
    )
    lines.append(
        "assumptions: estimate_assumptions.{completion_tokens,feedback_tokens,llm_latency_s,verify_s}=...; "
        "measure them with a short pilot run"
    )
    return "\n".join(lines)
