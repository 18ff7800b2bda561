"""Run an agent (or a comparison of agents) over a task stream; log every step; print a table.

    python -m experiments.run experiment=demo                  # the offline demo
    python -m experiments.run agent=memrl tasks=level2 env.budget=30
    python -m experiments.run -m agent=qmemory,similarity,random,no_memory seed=0,1,2 \
        hydra/launcher=joblib
    python -m experiments.run hydra.run.dir=<an interrupted run> resume=true

Read top to bottom: ``main`` picks the runs; ``run_one`` builds the env and the agent and loops
over episodes and steps, appending to ``steps.jsonl`` as it goes. The run directory format is in
docs/run_format.md; ``python -m experiments.report <dir>`` re-analyses any run later.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict

from experiments.metrics import llm_spend as spent
from experiments.metrics import load_run, read_jsonl, round_metrics
from kernel_gym._version import __version__

STEP_KEYS = (
    *("compiled", "correct", "hacked", "error_class", "latency_s", "reference_latency_s"),
    # the measurement's uncertainty (kernel_gym.verify.result.VerifyResult)
    *("speedup_ci", "latency_iqr_s", "reference_latency_iqr_s", "timing_converged"),
)
#: Per-step LLM accounting copied from ``info["usage"]`` into steps.jsonl (prefixed ``llm_`` where ambiguous).
USAGE_KEYS = {
    "prompt_tokens": "prompt_tokens",
    "completion_tokens": "completion_tokens",
    "reasoning_tokens": "reasoning_tokens",
    "cost_usd": "cost_usd",
    "latency_s": "llm_latency_s",
    "attempts": "llm_attempts",
    "cached": "llm_cached",
}


class RunStopped(Exception):
    """A run ends early but cleanly (too many generation errors in a row)."""


class CleanStop:
    """Context manager that ends a run loop on a budget limit or a RunStopped, keeping the reason;
    every step finished before it is already logged, so ``resume=true`` continues from there."""

    def __init__(self) -> None:
        self.reason: str | None = None

    def __enter__(self) -> CleanStop:
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        from kernel_gym.llm import BudgetExhausted

        if exc is not None and isinstance(exc, (BudgetExhausted, RunStopped)):
            self.reason = str(exc)
            return True
        return False


# ----------------------------------------------------------------------------- building blocks
def config_dict(node: Any) -> dict[str, Any]:
    """A config mapping node as a plain dict (``OmegaConf.to_container`` is typed for any node)."""
    out = OmegaConf.to_container(node)
    if not isinstance(out, dict):
        raise TypeError(f"expected a mapping in the config, got {type(out).__name__}")
    return cast(dict[str, Any], out)


def task_list(cfg: DictConfig) -> Any:
    """The run's tasks: ids, a built-in suite's name, or (``tasks=kernelbench``) the TaskSpecs of a
    KernelBench checkout's level folders at ``tasks.root``."""
    if cfg.tasks.get("root"):
        from kernel_gym.tasks.kernelbench import load_kernelbench_dir

        specs = []
        for level in cfg.tasks.get("levels") or [1]:
            found = load_kernelbench_dir(
                str(cfg.tasks.root),
                level,
                max_elements=int(cfg.tasks.get("max_elements") or 2_000_000),
                shrink=bool(cfg.tasks.get("shrink", False)),
            )
            for failure in found.failures:
                print(f"[tasks] skipped {failure.path.name}: {failure.reason}", file=sys.stderr)
            specs.extend(found.tasks)
        if not specs:
            levels = list(cfg.tasks.get("levels") or [1])
            raise ValueError(f"tasks.root={cfg.tasks.root}: no KernelBench task loaded from levels {levels}")
        return specs
    return list(cfg.tasks.ids) if cfg.tasks.get("ids") else cfg.tasks.suite


def env_kwargs(cfg: DictConfig, seed: int) -> dict[str, Any]:
    """KernelSynthesisEnv arguments from the config groups (all but ``memory``)."""
    tasks = task_list(cfg)
    generator: Any
    if cfg.llm.name == "synthetic":
        generator = {"name": "synthetic", "seed": seed, **config_dict(cfg.llm.options)}
    elif cfg.llm.name == "litellm":
        generator = {"name": f"litellm:{cfg.llm.model}", **config_dict(cfg.llm.options)}
    else:
        raise ValueError(f"unknown llm {cfg.llm.name!r}; use llm=synthetic or llm=litellm")
    kw = config_dict(cfg.env)
    if cfg.get("agent") is not None and cfg.agent.get("env"):
        kw.update(config_dict(cfg.agent.env))  # what the agent needs (e.g. search actions)
    return dict(
        backend=cfg.backend.name,
        tasks=tasks,
        max_tasks=cfg.tasks.get("max_tasks"),
        seed_knowledge=cfg.memory.seed_knowledge,
        generator=generator,
        verify_settings=config_dict(cfg.backend.verify),
        verifier=config_dict(cfg.verifier) if cfg.get("verifier") is not None else "local",
        **kw,
    )


def memory_location(cfg: DictConfig, run_dir: Path) -> str | Path:
    """Where the run's memory store lives: the DSN of ``memory.backend=postgres``, else the SQLite
    file ``memory.path`` or ``<run dir>/memory.db`` (its directory is created)."""
    if cfg.memory.get("backend", "sqlite") == "postgres":
        return str(cfg.memory.dsn)
    path = Path(cfg.memory.path) if cfg.memory.get("path") else run_dir / "memory.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def memory_schema(cfg: DictConfig, run_dir: Path) -> str | None:
    """The PostgreSQL schema of the run's store: ``memory.schema``, or (null, as ``memory=fresh`` has
    it) ``kg_run_<hash of the run directory>``: a fresh store per run and per agent of a comparison,
    as the SQLite file in the run directory is, found again by ``resume=true``. None for SQLite."""
    if cfg.memory.get("backend", "sqlite") != "postgres":
        return None
    if cfg.memory.get("schema"):
        return str(cfg.memory.schema)
    digest = hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:16]
    return f"kg_run_{digest}"


def dsn_password(cfg: DictConfig) -> str | None:
    """The password written into ``memory.dsn``, if any (it would be saved with the run)."""
    dsn = cfg.memory.get("dsn") if "memory" in cfg else None
    if not isinstance(dsn, str) or "://" not in dsn:
        return None
    try:
        return urlsplit(dsn).password or None
    except ValueError:
        return None


def make_env(cfg: DictConfig, run_dir: Path, seed: int, search_actions: bool = False):
    """The KernelSynthesisEnv a run uses (its memory lives in the run directory unless shared)."""
    from kernel_gym.envs import KernelSynthesisEnv
    from kernel_gym.memory import MemoryStore, get_embedder

    memory = MemoryStore(
        memory_location(cfg, run_dir),
        embedder=get_embedder(cfg.memory.embedder),
        schema=memory_schema(cfg, run_dir),
        reconnect_timeout=float(
            60.0 if cfg.memory.get("reconnect_timeout_s") is None else cfg.memory.reconnect_timeout_s
        ),
    )
    kw = env_kwargs(cfg, seed)
    kw["search_actions"] = bool(kw.get("search_actions")) or search_actions
    return KernelSynthesisEnv(memory=memory, **kw)


def make_agent(cfg: DictConfig, seed: int):
    """The agent of ``cfg.agent``: its ``_target_`` (``"package.module:Class"``, any importable
    module) if given, else the built-in agent called ``name``; ``kwargs`` go to the constructor."""
    from agents import get_agent

    kwargs = cfg.agent.get("kwargs")
    target = cfg.agent.get("_target_") or cfg.agent.name
    return get_agent(target, seed=seed, **(config_dict(kwargs) if kwargs else {}))


def agent_config(name: str) -> DictConfig:
    """The agent config ``agent=<name>`` would select, looked up along Hydra's search path (a
    user's ``hydra.searchpath=[file://<dir>]`` first), or ``{name, _target_}`` for an import path."""
    for source in HydraConfig.get().runtime.config_sources:
        if source.schema == "file":
            path = Path(source.path) / "agent" / f"{name}.yaml"
            if path.is_file():
                loaded = OmegaConf.load(path)
                if not isinstance(loaded, DictConfig):
                    raise TypeError(f"{path}: an agent config must be a mapping")
                return loaded
    if ":" in name:
        return OmegaConf.create({"name": name.rpartition(":")[2], "_target_": name, "kwargs": {}})
    searched = [s.path for s in HydraConfig.get().runtime.config_sources if s.schema == "file"]
    raise SystemExit(
        f"error: compare: no agent config {name}.yaml under agent/ in {searched}; add "
        f"hydra.searchpath=[file://<your conf dir>] or name the agent 'package.module:Class'"
    )


def step_record(
    agent: str, seed: int, episode: int, info: dict[str, Any], reward: float, global_step: int, best: float | None
) -> dict[str, Any]:
    v = info["verifier"]
    rec = {
        "agent": agent,
        "seed": seed,
        "episode": episode,
        "task_id": info["task_id"],
        "level": None,
        "category": None,
        "step": info["step"] - 1,
        "global_step": global_step,
        "stage": info["step_stage"],
        "mode": info.get("mode", "small"),
        "context_ids": info["context_ids"],
        "parent_id": info["parent_id"],
        "trace_id": info["trace_id"],
        "experience_id": info["experience_id"],
        "code_hash": info["code_hash"],
        "reward": reward,
        "feasible": info["feasible"],
        "speedup": v.get("speedup") if info["feasible"] else None,
        "best_speedup": best,
        "generate_s": info["timing"]["generate_s"],
        "verify_s": info["timing"]["verify_s"],
        "outcome": info.get("outcome"),
        "generation_error": info.get("generation_error"),
    }
    rec.update({k: v.get(k) for k in STEP_KEYS})
    usage = info.get("usage") or {}
    rec.update({out: usage.get(key) for key, out in USAGE_KEYS.items()})
    rec["estimated_cost_usd"] = (info.get("generator_notes") or {}).get("estimated_cost_usd")
    return rec


def reply_record(rec: dict[str, Any], info: dict[str, Any]) -> dict[str, Any] | None:
    """The raw reply of a step (replies.jsonl, keyed like steps.jsonl), so a run can be re-scored offline."""
    if info.get("reply") is None and info.get("generation_error") is None:
        return None  # no LLM in this run (code actions, a generator without replies)
    notes = info.get("generator_notes") or {}
    return {
        "global_step": rec["global_step"],
        "episode": rec["episode"],
        "step": rec["step"],
        "task_id": rec["task_id"],
        "trace_id": rec["trace_id"],
        "outcome": info.get("outcome"),
        "reply": info.get("reply"),
        "reasoning": info.get("reasoning"),
        "code": info.get("code"),
        "cache_key": notes.get("cache_key"),
        "finish_reason": notes.get("finish_reason"),
        "retried": notes.get("retried"),
        "generation_error": info.get("generation_error"),
        "candidates_tried": info.get("candidates_tried"),
        "usage": info.get("usage"),
    }


def _spend_postfix(steps_spent: dict[str, Any]) -> dict[str, str]:
    """Progress-bar fields for the LLM spend so far (none for a run without LLM calls)."""
    tokens = steps_spent["prompt_tokens"] + steps_spent["completion_tokens"]
    if not tokens and not steps_spent["generation_errors"]:
        return {}
    cost = steps_spent["priced_cost_usd"] + steps_spent["estimated_cost_usd"]
    out = {"tok": f"{tokens / 1000:.1f}k", "usd": f"{cost:.3f}"}
    if steps_spent["generation_errors"]:
        out["gen_err"] = str(steps_spent["generation_errors"])
    return out


def remove_orphans(memory, logged: set[int], run_key: str) -> int:
    """Delete traces (and their experiences) this run wrote but never logged: the step that was
    in flight when the run was killed. Returns how many traces were removed."""
    orphans = [
        it.id
        for it in memory.iterate("trace")
        if str(it.payload.get("episode", "")).startswith(run_key) and it.id not in logged
    ]
    if not orphans:
        return 0
    exps = [
        it.id
        for kind in ("experience_success", "experience_failure")
        for it in memory.iterate(kind)
        if it.payload.get("trace_id") in set(orphans)
    ]
    memory.delete(orphans + exps)
    return len(orphans)


# ----------------------------------------------------------------------------- one run
def run_one(cfg: DictConfig, run_dir: Path, seed: int) -> Path:
    """Run ``cfg.agent`` with ``seed`` into ``run_dir``; resumable; returns ``run_dir``."""
    from tqdm import tqdm

    run_dir.mkdir(parents=True, exist_ok=True)
    steps_path, episodes_path = run_dir / "steps.jsonl", run_dir / "episodes.jsonl"
    cfg_path = run_dir / "config.yaml"
    if steps_path.exists() and not cfg.resume:
        raise FileExistsError(
            f"{run_dir} already holds a run; pass resume=true to continue it, or choose another hydra.run.dir"
        )
    with open_dict(cfg):
        cfg.seed = seed
        if memory_schema(cfg, run_dir) is not None:  # the run's config names the schema its store is in
            cfg.memory.schema = memory_schema(cfg, run_dir)
    OmegaConf.save(cfg, cfg_path, resolve=True)

    agent = make_agent(cfg, seed)
    needs_search = bool(getattr(agent, "needs_search_actions", False))
    env = make_env(cfg, run_dir, seed, search_actions=needs_search)
    agent.attach(env.memory)
    n_tasks = len(env.stream) * int(cfg.passes)
    budget = env.budget
    run_key = f"run{seed}:{cfg.agent.name}:"

    # resume: finished episodes are skipped, an unfinished one continues after its last logged step
    steps = read_jsonl(steps_path) if steps_path.exists() else []
    episodes = read_jsonl(episodes_path) if episodes_path.exists() else []
    logged = {s["trace_id"] for s in steps}
    removed = remove_orphans(env.memory, logged, run_key)
    if steps and (run_dir / "agent.json").exists():
        agent.load(run_dir / "agent.json")
    start_episode = len(episodes)
    if steps or removed:
        print(
            f"resuming {run_dir}: {len(episodes)} episodes and {len(steps)} steps logged"
            + (f", {removed} unlogged step(s) dropped from memory" if removed else ""),
            file=sys.stderr,
        )
    global_step = len(steps)
    restore = getattr(env.generator, "restore_totals", None)
    so_far = spent(steps)
    if steps and callable(restore):  # limits hold across resumes: start from the logged spend
        restore(
            so_far["prompt_tokens"],
            so_far["completion_tokens"],
            so_far["priced_cost_usd"],
            so_far["estimated_cost_usd"],
        )
    max_errors = int(cfg.llm.get("max_consecutive_errors") or 0)
    errors_in_a_row = 0
    stop = CleanStop()

    bar = tqdm(
        total=n_tasks * budget,
        initial=global_step,
        disable=not cfg.progress,
        file=sys.stderr,
        desc=f"{cfg.agent.name} seed {seed}",
        unit="step",
        dynamic_ncols=True,
        mininterval=2.0,
    )
    with (
        stop,
        open(steps_path, "a") as slog,
        open(episodes_path, "a") as elog,
        open(run_dir / "replies.jsonl", "a") as rlog,
    ):
        for episode in range(start_episode, n_tasks):
            done_here = [s for s in steps if s["episode"] == episode]
            if len(done_here) >= budget:  # killed between its last step and its episode record
                task = next(t for t in env.stream.tasks if t.id == done_here[0]["task_id"])
                elog.write(json.dumps(episode_record(cfg.agent.name, seed, episode, task, done_here)) + "\n")
                continue
            options = {
                "stream_position": episode % len(env.stream),
                "episode_key": f"{run_key}{episode}",
                "start_step": len(done_here),
            }
            obs, info = env.reset(seed=seed if episode == start_episode else None, options=options)
            agent.reset(obs, info)
            task = env.task
            best = max((s["speedup"] for s in done_here if s["speedup"]), default=None)
            ep_steps = list(done_here)
            terminated = False
            while not terminated:
                action = agent.act(obs, info)
                next_obs, reward, terminated, _, step_info = env.step(action)  # a BudgetExhausted: step undone
                agent.update(obs, action, reward, next_obs, step_info)
                if step_info["feasible"] and step_info["verifier"].get("speedup"):
                    best = max(best or 0.0, step_info["verifier"]["speedup"])
                rec = step_record(cfg.agent.name, seed, episode, step_info, reward, global_step, best)
                rec["level"], rec["category"] = task.level, task.category
                slog.write(json.dumps(rec) + "\n")
                slog.flush()
                reply = reply_record(rec, step_info)
                if reply is not None:
                    rlog.write(json.dumps(reply) + "\n")
                    rlog.flush()
                agent.save(run_dir / "agent.json.tmp")
                os.replace(run_dir / "agent.json.tmp", run_dir / "agent.json")
                ep_steps.append(rec)
                global_step += 1
                bar.update(1)
                so_far = {k: so_far[k] + v for k, v in spent([rec]).items() if k != "cost_usd"}
                bar.set_postfix(
                    task=task.name[:18], best=f"{best:.2f}x" if best else "-", refresh=False, **_spend_postfix(so_far)
                )
                obs, info = next_obs, step_info
                errors_in_a_row = errors_in_a_row + 1 if rec["outcome"] == "generation_error" else 0
                if max_errors and errors_in_a_row >= max_errors:
                    err = rec["generation_error"] or {}
                    raise RunStopped(
                        f"{errors_in_a_row} generation errors in a row (llm.max_consecutive_errors="
                        f"{max_errors}), the last {err.get('error_class')}: "
                        f"{str(err.get('message'))[:300]}; fix the endpoint, then resume=true"
                    )
            elog.write(json.dumps(episode_record(cfg.agent.name, seed, episode, task, ep_steps)) + "\n")
            elog.flush()
    bar.close()
    env.close()
    env.memory.close()
    if stop.reason:
        print(
            f"run stopped: {stop.reason}\n  every finished step is saved in {run_dir}; continue with "
            f"hydra.run.dir={run_dir} resume=true",
            file=sys.stderr,
        )
    write_summary(run_dir, cfg.agent.name, seed, budget, stopped=stop.reason)
    return run_dir


def _run_job(job: tuple[DictConfig, Path, int]) -> Path:
    cfg, run_dir, seed = job
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)
    return run_one(cfg, run_dir, seed)


def _prepare_backend(name: str, verify_settings: dict[str, Any]) -> None:
    """What a judge builds before its first job (the backend's ``setup_judge``), in a pool worker."""
    from kernel_gym.backends import get_backend

    options = dict(verify_settings.get("backend_options") or {})
    try:
        get_backend(name).setup_judge(options)
    except Exception as exc:  # noqa: BLE001 - only a head start: each judge builds what it lacks
        print(
            f"note: building {name}'s artefacts ahead of the runs failed ({exc}); each run builds them", file=sys.stderr
        )


def run_comparison(jobs: list[tuple[DictConfig, Path, int]], n_jobs: int) -> list[Path]:
    """The runs ``(config, run dir, seed)`` of a comparison, one after another or ``n_jobs`` at
    once in processes started with spawn (the parent holds faiss and verifier threads, which a
    fork would copy mid-state). Each run's results are its own either way: runs share no state
    but the verification cache, whose verdicts do not depend on who computed them first."""
    if n_jobs <= 1 or len(jobs) <= 1:
        return [_run_job(job) for job in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    quiet = []
    for cfg, run_dir, seed in jobs:  # one tqdm bar per process would interleave: a line per run instead
        c = cfg.copy()
        with open_dict(c):
            c.progress = False
        quiet.append((c, run_dir, seed))
    done: list[Path] = []
    with ProcessPoolExecutor(min(n_jobs, len(jobs)), mp_context=multiprocessing.get_context("spawn")) as pool:
        first = jobs[0][0]
        # in a fresh cache every run would build the backend's shared artefacts (the simulator's
        # runtime library, a minute of g++) at the same time: build them once first
        pool.submit(_prepare_backend, str(first.backend.name), config_dict(first.backend.verify)).result()
        for job, run_dir in zip(quiet, pool.map(_run_job, quiet), strict=True):
            print(f"finished {job[0].agent.name} seed {job[2]}: {run_dir}", file=sys.stderr)
            done.append(run_dir)
    return done


def episode_record(agent: str, seed: int, episode: int, task, steps: list[dict[str, Any]]) -> dict[str, Any]:
    first = lambda key: next((s["step"] for s in steps if s[key]), None)  # noqa: E731
    feas = [s for s in steps if s["feasible"]]
    best = min(feas, key=lambda s: s["latency_s"]) if feas else None
    return {
        "agent": agent,
        "seed": seed,
        "episode": episode,
        "task_id": task.id,
        "level": task.level,
        "category": task.category,
        "steps": len(steps),
        "compiled_at": first("compiled"),
        "feasible_at": first("feasible"),
        "first_speedup": feas[0]["speedup"] if feas else None,
        "best_speedup": best["speedup"] if best else None,
        "best_latency_s": best["latency_s"] if best else None,
        "reference_latency_s": best["reference_latency_s"] if best else None,
    }


def git_commit() -> str | None:
    """The commit of the checkout this package runs from (``-dirty`` when it has local changes),
    or None outside a git checkout."""
    repo = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def write_summary(run_dir: Path, agent: str, seed: int, budget: int, stopped: str | None = None) -> dict[str, Any]:
    run = load_run(run_dir)
    rounds = round_metrics(run.steps, budget)
    summary = {
        "agent": agent,
        "seed": seed,
        "n_tasks": len({s["episode"] for s in run.steps}),
        "budget": budget,
        "rounds": rounds,
        "final": rounds[-1] if rounds else {},
        "package_version": __version__,
        "git_commit": git_commit(),
        "llm": spent(run.steps),
        "stopped": stopped,
    }
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


# ----------------------------------------------------------------------------- tables
def _fmt(x: Any, pct: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{100 * x:.1f}%" if pct else f"{x:.2f}x"


def round_table(run_dirs: list[Path], rounds_shown: list[int]) -> str:
    """Markdown: one row per (run, round): compile rate, accuracy, fast_1, median / geomean speedup."""
    rows = [
        "| agent | seed | round | compile rate | accuracy | fast_1 | median speedup | geomean speedup |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for d in run_dirs:
        s = json.loads((d / "summary.json").read_text())
        budget = s["budget"]
        for r in sorted({r for r in rounds_shown if r <= budget} | {budget}):
            m = s["rounds"][r - 1]
            rows.append(
                f"| {s['agent']} | {s['seed']} | {r} | {_fmt(m['compile_rate'], True)} | "
                f"{_fmt(m['accuracy'], True)} | {_fmt(m['fast_1'], True)} | {_fmt(m['median_speedup'])} | "
                f"{_fmt(m['geomean_speedup'])} |"
            )
    return "\n".join(rows)


# ----------------------------------------------------------------------------- entry point
def agent_named_on_command_line() -> bool:
    return any(o.split("=", 1)[0].lstrip("+~") == "agent" for o in HydraConfig.get().overrides.task)


#: Config keys that would hold a credential; keys come from the environment only (api_key_env).
SECRET_KEYS = ("api_key", "aws_secret_access_key", "aws_session_token", "vertex_credentials")


def find_secrets(node: Any, path: str = "") -> list[tuple[str, str]]:
    """(dotted path, value) of every credential-like key set in a config (DictConfig or plain)."""
    if isinstance(node, (DictConfig, ListConfig)):
        node = OmegaConf.to_container(node, resolve=False)
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            sub = f"{path}.{key}" if path else str(key)
            if isinstance(value, (dict, list)):
                found += find_secrets(value, sub)
            elif str(key) in SECRET_KEYS and value not in (None, "", "???"):
                found.append((sub, str(value)))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            found += find_secrets(item, f"{path}[{i}]")
    return found


def scrub_secrets(run_dir: Path, values: list[str]) -> None:
    """Blank credentials Hydra already wrote into the run directory (.hydra/*.yaml) before main ran."""
    for file in list((run_dir / ".hydra").glob("*.yaml")) + list(run_dir.glob("*.log")):
        text = file.read_text(errors="replace")
        clean = text
        for value in values:
            clean = clean.replace(value, "<removed>")
        if clean != text:
            file.write_text(clean)


def config_problem(cfg: DictConfig) -> str | None:
    """One sentence naming the fix for a config that cannot run, or None."""
    if cfg.llm.name == "litellm" and OmegaConf.is_missing(cfg.llm, "model"):
        return "llm=litellm needs a model: add llm.model=<litellm model string>, e.g. llm.model=openai/gpt-4o-mini"
    if cfg.agent.name == "ppo" and OmegaConf.is_missing(cfg.agent.kwargs, "checkpoint"):
        return "agent=ppo needs a checkpoint: add agent.kwargs.checkpoint=<train dir>/ppo_final.zip"
    from kernel_gym.memory.postgres_backend import valid_schema_name

    memory_backend = cfg.memory.get("backend", "sqlite")
    if memory_backend not in ("sqlite", "postgres"):
        return f"memory.backend must be sqlite or postgres, got {memory_backend!r}"
    if memory_backend == "postgres":
        if not cfg.memory.get("dsn"):
            return "memory.backend=postgres needs a DSN: add memory.dsn=postgresql://USER@HOST:PORT/DATABASE"
        if not str(cfg.memory.dsn).startswith(("postgresql://", "postgres://")):
            return f"memory.dsn must be a URI starting with postgresql://, got {cfg.memory.dsn!r}"
        schema = cfg.memory.get("schema")
        if schema is not None and not valid_schema_name(schema):
            return f"memory.schema={schema!r}: use a lower-case name of letters a-z, digits and _ (or null)"
        timeout = cfg.memory.get("reconnect_timeout_s", 60)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            return f"memory.reconnect_timeout_s={timeout!r}: must be a number of seconds >= 0"
        if dsn_password(cfg):
            return (
                "memory.dsn holds a password, which would be saved with the run: remove it from the DSN "
                "and export PGPASSWORD (or use ~/.pgpass), which PostgreSQL clients read"
            )
    elif cfg.memory.get("path") is None and OmegaConf.is_missing(cfg.memory, "path"):
        return "memory=shared needs a path: add memory.path=<file>.db"
    from agents import agent_class

    try:  # before any work: an agent that cannot be built is a config error
        agent_class(cfg.agent.get("_target_") or cfg.agent.name)
    except (ImportError, TypeError, ValueError) as exc:
        return str(exc)
    return None


@hydra.main(config_path="../conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)  # its INFO lines drown the progress bar
    secrets = find_secrets(cfg)
    if secrets:
        scrub_secrets(Path(HydraConfig.get().runtime.output_dir), [v for _, v in secrets])
        print(
            f"error: {', '.join(p for p, _ in secrets)} holds a credential, which would be saved with the run: "
            "remove it, export the key in an environment variable and set llm.options.api_key_env=<its name> "
            "(or use the provider's own variable, e.g. OPENAI_API_KEY)",
            file=sys.stderr,
        )
        sys.exit(2)
    problem = config_problem(cfg)
    password = dsn_password(cfg)
    if password:
        scrub_secrets(Path(HydraConfig.get().runtime.output_dir), [password])
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(2)
    if cfg.get("estimate"):
        from experiments.estimate import estimate_run, format_estimate

        if not agent_named_on_command_line() or not cfg.compare:
            print(format_estimate(estimate_run(cfg)))
        else:  # agent=... runs just that agent
            with open_dict(cfg):
                cfg.compare = []
            print(format_estimate(estimate_run(cfg)))
        return
    out = Path(HydraConfig.get().runtime.output_dir)
    if cfg.compare and not agent_named_on_command_line():
        seeds = list(cfg.compare_seeds) or [cfg.seed]
        jobs: list[tuple[DictConfig, Path, int]] = []
        for name in cfg.compare:
            agent_cfg = agent_config(name)
            label = agent_cfg.name
            for seed in seeds:
                sub = cfg.copy()
                with open_dict(sub):
                    sub.agent = agent_cfg
                jobs.append((sub, out / (f"{label}" if len(seeds) == 1 else f"{label}/seed{seed}"), seed))
        run_comparison(jobs, int(cfg.get("compare_jobs") or 1))
        if cfg.report:
            from experiments.report import build_report

            rep = build_report(out, out)
            print("\n" + rep["table"])
            if rep["comparison"]:
                print(f"\nPaired differences vs {rep['baseline']}:\n\n{rep['comparison']}")
            print(f"\nreport with per-round table and plots: {rep['files']['report.md']}")
    else:
        run_dir = run_one(cfg, out, int(cfg.seed))
        if cfg.report:
            print(round_table([run_dir], list(cfg.rounds_shown)))
    print(f"\nrun directory: {out}")


if __name__ == "__main__":
    from experiments.config_check import check_command_line, merge_dict_overrides

    sys.argv[1:] = merge_dict_overrides(sys.argv[1:])  # key={...} on a mapping merges its new keys too
    problems = check_command_line(sys.argv[1:])  # before any work: one line per problem, exit 2
    if problems:
        print("\n".join(f"error: {p}" for p in problems), file=sys.stderr)
        sys.exit(2)
    main()
