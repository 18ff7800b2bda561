"""KernelSynthesisEnv: kernel synthesis with a shared, growing memory as a Gymnasium environment."""

from __future__ import annotations

import math
import os
import shutil
import string
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from kernel_gym.envs.experience import code_hash, task_query_text, write_step
from kernel_gym.envs.features import (
    CANDIDATE_FEATURES,
    FEATURE_CLIP,
    PARENT_FEATURES,
    TaskProjection,
    candidate_row,
    clean_text,
    item_outcome,
    parent_row,
)
from kernel_gym.envs.info import (
    CandidateInfo,
    EnvInfo,
    ParentInfo,
    StepRecord,
    StepTiming,
)
from kernel_gym.envs.reward_shapes import check_reward_shapes, published_run_settings, reward_basis
from kernel_gym.envs.rewards import Reward, get_reward
from kernel_gym.envs.streams import TaskStream, resolve_tasks
from kernel_gym.llm.base import (
    STAGES,
    Generation,
    GenerationError,
    GenerationRequest,
    Generator,
    ParentKernel,
    Usage,
)
from kernel_gym.memory import ITEM_KINDS, MemoryItem, MemoryStore, load_seed_knowledge
from kernel_gym.tasks import TaskSpec
from kernel_gym.verify import VerifySettings
from kernel_gym.verify.verifiers import Verifier, VerifyJob, get_verifier

__all__ = ["KernelSynthesisEnv"]


def _outcome(result: dict[str, Any]) -> str:
    """How a step ended: "feasible", or the error class ("no_code", "generation_error", "compile_error"...)."""
    return "feasible" if result.get("feasible") else str(result.get("error_class") or "infeasible")


@dataclass
class _Choice:
    """A checked action: what goes into the generator's context and which kernel is refined."""

    context: list[MemoryItem]
    parent: ParentKernel | None
    mode: str
    pool: list[ParentKernel]
    invalid_ids: list[int]
    code: str | None  # code-action mode: the answer itself


def _stored_id(item: MemoryItem) -> int:
    """The id of an item read from the store (the store always sets it)."""
    assert item.id is not None
    return int(item.id)


@dataclass
class _Attempt:
    """What acting produced: the step's kernel, its verifier result and the generation's record."""

    code: str
    result: dict[str, Any]
    usage: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    generation_error: dict[str, Any] | None = None
    reply: str | None = None
    reasoning: str | None = None
    tried: list[dict[str, Any]] = field(default_factory=list)
    generate_s: float = 0.0
    verify_s: float = 0.0


TEXT_CHARSET = string.printable
TASK_TEXT_LIMIT = 12000
CANDIDATE_TEXT_LIMIT = 4000
CODE_TEXT_LIMIT = 200000
ID_HIGH = 2**53  # largest trace id an action can name (ids are SQLite rowids)
TASK_EMBED_DIM = 64
#: Kinds a candidate pool is recalled from (everything the memory holds).
RECALL_KINDS: tuple[str, ...] = (
    "api_template",
    "best_practice",
    "experience_success",
    "experience_failure",
    "trace",
    "validity_rule",
)


class KernelSynthesisEnv(gym.Env):
    """
    ## Description
    An agent writes a kernel for a PyTorch reference operator (a KernelBench-format task) on a
    target backend, helped by a memory of past experience shared by every task, episode, process
    and run. One episode is one task with a budget of T generation steps. At every step the
    environment recalls K = lambda * N candidate memories by embedding similarity to the task;
    the agent chooses which of them (at most N) go into the generator's context and which
    earlier feasible kernel of the task to refine. The generator (the offline synthetic coder,
    an LLM through litellm, or the agent itself in code-action mode) writes the kernel, the
    verifier compiles, checks and times it, and the step is written to the memory as a trace
    plus a summarised success or failure experience (EvoKernel's memory-augmented MDP).

    ## Action Space
    ``Dict``:
    - ``"select"``: ``MultiBinary(K)``, candidate slots to put into the context. Empty slots are
      ignored; if more than N slots are set, the N most similar are kept.
    - ``"parent"``: ``Discrete(P + 1)``, 0 = write from scratch, i = refine parent slot i - 1
      (an empty slot counts as 0).
    - ``"code"`` (code-action mode, ``generator="code"``): ``Text``, the answer source itself.
    - ``"mode"``, ``"pool"``, ``"parent_id"``, ``"pool_ids"`` (``search_actions=True``):
      ``Discrete(2)`` small (0) or large (1) step; ``MultiBinary(P)`` parent slots passed to the
      generator as a pool for a large step (AdaExplore); ``parent_id`` (int64, -1 = use the slot)
      and ``pool_ids`` (int64[P], -1 = empty) name feasible kernels of the task by trace id, for
      search agents whose tree or archive holds more than the P shown; an id that is not a
      feasible kernel of the task is ignored and listed in ``info["invalid_ids"]``. Without these
      keys every step is small and the pool empty.

    ## Observation Space
    ``Dict`` with text for LLM policies and numbers for neural ones:
    - ``"task_text"`` (``Text``): task id, category, dtype, description and reference source.
    - ``"candidate_text"`` (``Tuple`` of K ``Text``): title and text of each candidate, "" if empty.
    - ``"task_embedding"`` (``Box(64,)``): fixed random projection of the task's embedding.
    - ``"stage"`` (``Discrete(2)``): 0 drafting, 1 refining.
    - ``"budget_left"`` (``Box(1,)`` in [0, 1]): remaining steps / T.
    - ``"best_speedup"`` (``Box(1,)``): log2 of the best speedup on the task so far (0 if none).
    - ``"candidates"`` (``Box(K, 15)``): per candidate similarity, kind one-hot (6), level match,
      category match, outcome, log2 speedup, log1p(age)/10, log1p(use count)/5, Q1, Q2.
    - ``"candidate_mask"`` (``MultiBinary(K)``), ``"parents"`` (``Box(P, 4)``: log10 latency in
      seconds, log2 speedup, depth, Q2), ``"parent_mask"`` (``MultiBinary(P)``).
    Numeric features are clipped to [-10, 10]. ``info["candidates"]`` / ``info["parents"]`` give
    the same slots as dicts with the memory item ids.

    ## Rewards
    Chosen by ``reward`` (:mod:`kernel_gym.envs.rewards`). ``"evokernel"`` (default): drafting +1
    for a feasible kernel (no hack, compiles, correct), -1 otherwise; refining -1 if infeasible,
    else tanh(log b - log latency) with b the best latency before the step. ``"adaexplore"``:
    0 no compile, 0.05 wrong, 0.4 to 1.6 linear in the speedup clipped to [0.1, 10].
    ``"speedup"``: the speedup over the eager reference, 0 if infeasible. ``reward_shapes``
    (``"published"``, default, or ``"simulated"``) chooses the shapes whose latency and speedup the
    reward sees: a task's published shapes where the verifier ran them (a shrunk KernelBench task
    on a backend with published-shape runs), else the verified shapes, with the reason in
    ``info["reward_basis"]`` (:mod:`kernel_gym.envs.reward_shapes`).

    ## Starting State
    ``reset`` takes the next task of the task stream. ``reset(seed=s)`` seeds the env's random
    generator (and, before the first task, the order of ``task_stream="mixed"``) without
    rewinding the stream: an agent that reseeds every episode still walks the task list.
    Options: ``task`` or ``task_id`` (work on this task),
    ``stream_position`` (skip to this position of the stream first), ``episode_key`` (the id
    written into the episode's traces) and ``start_step`` (resume an interrupted episode after
    this many steps; its last feedback is read back from the memory). The stage is drafting unless the memory already
    holds a feasible kernel of the task on this backend (from an earlier episode or run); those
    kernels are the initial parents.

    ## Episode End
    The episode terminates when the budget of T steps is spent. There is no truncation.

    ## Arguments
    ``backend`` ("ascend_sim"), ``tasks`` (suite name or task ids), ``task_stream`` ("single",
    "suite", "curriculum", "mixed"), ``max_tasks``, ``budget`` (T = 30), ``n_select`` (N = 4),
    ``recall_multiplier`` (lambda = 4), ``max_parents`` (P = 4), ``memory`` (a store path, a
    ``postgresql://`` DSN, or a MemoryStore; None = a temporary store), ``seed_knowledge`` (load M0), ``generator``
    ("synthetic", "litellm:<model>", "code", or a Generator), ``generator_options``,
    ``verify_settings`` (VerifySettings overrides), ``search_actions``, ``shard`` ((i, n): this copy
    streams tasks i, i + n, ... of the list, for vectorised copies), ``task_slots`` (candidate
    slots reserved for the task's own items, default K // 4), ``pin_rules`` (validity rules with
    at least this count are always among the candidates, at most N of them; AdaExplore),
    ``render_mode`` ("ansi" or "human"), ``answer_format`` ("python": a module defining ModelNew;
    "six_string": a MultiKernelBench answer, ascend_sim only, for generators that write it),
    ``candidates_per_step`` (the generator writes this many candidates per step, concurrently when
    it can (``generate_many``); each is verified and the best is the step's kernel: best-of-k),
    ``reward`` (a name of :data:`~kernel_gym.envs.rewards.REWARDS` or a callable), ``verifier``
    ("local", "ray", ``{"name": "ray", "address": "auto", ...}`` or a Verifier: where verifications
    run; a step's candidates are verified together). See docs/environment.md.

    ## Outcomes
    ``info["outcome"]`` says how the step ended: ``"feasible"``, the verifier's error class
    (``"compile_error"``, ``"syntax_error"``, ...), ``"no_code"`` (the reply held no code; not
    verified) or ``"generation_error"`` (the LLM call failed for good: retries and deadline spent;
    ``info["generation_error"]`` holds its ``error_class`` and ``message``; nothing is verified or
    written to memory). Both of the last two get the reward of an invalid answer, -1. A generator's
    cost or token limit (:class:`~kernel_gym.llm.base.BudgetExhausted`) is raised by ``step``
    before anything changes.

    ## Version History
    - v0: initial version.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        backend: str = "ascend_sim",
        tasks: str | Sequence[str | TaskSpec] = "level1",
        task_stream: str = "suite",
        max_tasks: int | None = None,
        budget: int = 30,
        n_select: int = 4,
        recall_multiplier: int = 4,
        max_parents: int = 4,
        memory: str | os.PathLike[str] | MemoryStore | None = None,
        seed_knowledge: bool = True,
        generator: str | Generator | dict[str, Any] | None = "synthetic",
        generator_options: dict[str, Any] | None = None,
        verify_settings: dict[str, Any] | None = None,
        search_actions: bool = False,
        shard: tuple[int, int] | None = None,
        task_slots: int | None = None,
        pin_rules: int | None = None,
        render_mode: str | None = None,
        answer_format: str = "python",
        candidates_per_step: int = 1,
        reward: str | Reward = "evokernel",
        verifier: str | Mapping[str, Any] | Verifier | None = "local",
        reward_shapes: str = "published",
    ) -> None:
        for name, value in (
            ("budget", budget),
            ("n_select", n_select),
            ("recall_multiplier", recall_multiplier),
            ("max_parents", max_parents),
        ):
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        from kernel_gym.backends import get_backend

        self.backend = get_backend(backend).name  # raises a clear error for unknown backends
        self._backend_impl = get_backend(self.backend)
        self._backend_impl.check_answer_format(answer_format)
        self.answer_format = answer_format
        if not isinstance(candidates_per_step, (int, np.integer)) or candidates_per_step < 1:
            raise ValueError(f"candidates_per_step must be a positive integer, got {candidates_per_step!r}")
        self.candidates_per_step = int(candidates_per_step)
        self.reward_fn: Reward = get_reward(reward)
        self.budget = int(budget)
        self.n_select = int(n_select)
        self.recall_multiplier = int(recall_multiplier)
        self.k = self.n_select * self.recall_multiplier
        self.task_slots = self.k // 4 if task_slots is None else int(task_slots)
        self.pin_rules = None if pin_rules is None else int(pin_rules)
        if not 0 <= self.task_slots <= self.k:
            raise ValueError(f"task_slots must be in [0, K={self.k}], got {task_slots}")
        self.p = int(max_parents)
        self.render_mode = render_mode
        self.search_actions = bool(search_actions)
        self.reward_shapes = check_reward_shapes(reward_shapes)
        self._verify_kwargs = published_run_settings(
            dict(verify_settings or {}), self.reward_shapes, self._backend_impl.published_shapes
        )
        self.verify_settings = VerifySettings(**self._verify_kwargs)  # validates the overrides now
        # where verifications run: this process (local) or a Ray cluster; a verifier built here is ours to close
        self._owns_verifier = not isinstance(verifier, Verifier) or isinstance(verifier, (str, Mapping))
        self._verifier: Verifier = get_verifier(verifier)
        self.stream = TaskStream(resolve_tasks(tasks), task_stream, max_tasks, shard)

        # memory: a path or DSN (each process opens its own connection) or an open store
        self._tmpdir: str | None = None
        if memory is None:
            self._tmpdir = tempfile.mkdtemp(prefix="kernel_gym_mem_")
            memory = Path(self._tmpdir) / "memory.db"
        self._owns_memory = not isinstance(memory, MemoryStore)
        self.memory: MemoryStore = memory if isinstance(memory, MemoryStore) else MemoryStore(memory)
        if seed_knowledge:  # the backend's own M0 (none for cpu)
            load_seed_knowledge(self.memory, backend=self.backend, entries=self._backend_impl.seed_items())
        self._projection = TaskProjection(self.memory.embedder.dim, TASK_EMBED_DIM)

        # generator
        self.code_actions = generator == "code" or generator is None
        self.generator: Generator | None = None
        if not self.code_actions:
            from kernel_gym.llm.registry import get_generator

            assert generator is not None  # None means code actions
            self.generator = get_generator(generator, **(generator_options or {}))
            writes = getattr(self.generator, "answer_formats", ("python",))
            if answer_format not in writes:
                raise ValueError(
                    f"generator {self.generator.name!r} writes answer_format {' or '.join(writes)}, not "
                    f"{answer_format!r}: use answer_format=python, or an LLM generator (litellm:<model>)"
                )

        self.observation_space = self._make_observation_space()
        self.action_space = self._make_action_space()

        self.task: TaskSpec | None = None
        self._episode = 0
        self._episode_key = ""
        self._t = 0
        self._stage = "drafting"
        self._parents: list[dict[str, Any]] = []
        self._candidates: list[tuple[MemoryItem, float]] = []
        self._best_latency: float | None = None
        self._best_speedup: float | None = None
        #: best latency per shapes the reward was computed at ("published" / "simulated"): a step's
        #: reward compares its latency only with one at the same shapes
        self._reward_best: dict[str, float] = {}
        self._reference_latency: float | None = None
        self._last_feedback: dict[str, Any] | None = None
        self._last_step: StepRecord | None = None
        self._task_vec_cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    # ------------------------------------------------------------------ spaces
    def _make_observation_space(self) -> spaces.Dict:
        k, p, c = self.k, self.p, FEATURE_CLIP
        text = spaces.Text(max_length=TASK_TEXT_LIMIT, min_length=0, charset=TEXT_CHARSET)
        cand_text = spaces.Text(max_length=CANDIDATE_TEXT_LIMIT, min_length=0, charset=TEXT_CHARSET)
        return spaces.Dict(
            {
                "task_text": text,
                "candidate_text": spaces.Tuple([cand_text] * k),
                "task_embedding": spaces.Box(-1.0, 1.0, (TASK_EMBED_DIM,), np.float32),
                "stage": spaces.Discrete(2),
                "budget_left": spaces.Box(0.0, 1.0, (1,), np.float32),
                "best_speedup": spaces.Box(-c, c, (1,), np.float32),
                "candidates": spaces.Box(-c, c, (k, len(CANDIDATE_FEATURES)), np.float32),
                "candidate_mask": spaces.MultiBinary(k),
                "parents": spaces.Box(-c, c, (p, len(PARENT_FEATURES)), np.float32),
                "parent_mask": spaces.MultiBinary(p),
            }
        )

    def _make_action_space(self) -> spaces.Dict:
        d: dict[str, spaces.Space] = {"select": spaces.MultiBinary(self.k), "parent": spaces.Discrete(self.p + 1)}
        if self.search_actions:
            d["mode"] = spaces.Discrete(2)
            d["pool"] = spaces.MultiBinary(self.p)
            # trace ids, for search agents whose tree/archive holds kernels beyond the P shown slots
            d["parent_id"] = spaces.Box(-1, ID_HIGH, (), np.int64)
            d["pool_ids"] = spaces.Box(-1, ID_HIGH, (self.p,), np.int64)
        if self.code_actions:
            d["code"] = spaces.Text(max_length=CODE_TEXT_LIMIT, min_length=0, charset=TEXT_CHARSET)
        return spaces.Dict(d)

    # ------------------------------------------------------------------ reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self.stream.seed(seed)  # draws the "mixed" order once; never rewinds the stream
        options = dict(options or {})
        unknown = set(options) - {"task", "task_id", "stream_position", "episode_key", "start_step"}
        if unknown:
            raise ValueError(
                f"unknown reset options {sorted(unknown)}; known: task (or task_id), stream_position, "
                "episode_key, start_step"
            )
        if "task" in options:
            options["task_id"] = options.pop("task")
        if "stream_position" in options:
            self.stream.seek(int(options["stream_position"]))
        if "task_id" in options:
            task = next((t for t in self.stream.tasks if t.id == options["task_id"]), None)
            if task is None:
                raise ValueError(f"options['task_id']={options['task_id']!r} is not in this env's task list")
            self.task = task
        else:
            self.task = self.stream.next()
        self._episode += 1
        self._episode_key = str(options.get("episode_key") or f"{os.getpid()}-{id(self)}-{self._episode}")
        self._t = int(options.get("start_step", 0))
        if not 0 <= self._t < self.budget:
            raise ValueError(f"options['start_step'] must be in [0, budget={self.budget}), got {self._t}")
        self._last_feedback = None
        self._last_step = None
        if self._t:  # resuming an interrupted episode: the feedback of its last logged step
            done = [
                it
                for it in self.memory.iterate("trace", task_id=self.task.id, backend=self.backend)
                if it.payload.get("episode") == self._episode_key
            ]
            if done:
                self._last_feedback = max(done, key=lambda it: it.payload.get("step") or 0).payload.get("verifier")
        self._load_parents()
        self._stage = "refining" if self._parents else "drafting"
        self._recall()
        return self._observation(), self._info()

    def _load_parents(self) -> None:
        """Feasible kernels of the task already in memory (earlier episodes or runs)."""
        assert self.task is not None
        self._parents = []
        self._best_latency = self._best_speedup = self._reference_latency = None
        self._reward_best = {}
        for item in self.memory.iterate("trace", task_id=self.task.id, backend=self.backend):
            if item.payload.get("feasible") and item.payload.get("latency_s"):
                self._add_parent(_stored_id(item), item.payload)

    def _add_parent(self, item_id: int, payload: dict[str, Any]) -> None:
        h = payload.get("code_hash")
        if h is not None and any(p["code_hash"] == h for p in self._parents):
            return  # the same kernel again: one parent slot per distinct code
        lat = float(payload["latency_s"])
        ver = payload.get("verifier") or {}
        ref = ver.get("reference_latency_s")
        self._parents.append(
            {
                "id": int(item_id),
                "latency_s": lat,
                "speedup": payload.get("speedup"),
                "depth": int(payload.get("depth", 0)),
                "code_hash": payload.get("code_hash"),
            }
        )
        if self._best_latency is None or lat < self._best_latency:
            self._best_latency = lat
            self._best_speedup = payload.get("speedup")
        _, basis = reward_basis({"feasible": True, "latency_s": lat, **ver}, self.reward_shapes)
        if basis["latency_s"] is not None:
            shapes, at = basis["shapes"], float(basis["latency_s"])
            self._reward_best[shapes] = min(at, self._reward_best.get(shapes, at))
            self._reference_latency = ref if isinstance(ref, (int, float)) else self._reference_latency

    def _task_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        assert self.task is not None
        key = self.task.id
        if key not in self._task_vec_cache:
            vec = np.asarray(self.memory.embedder.embed([task_query_text(self.task)])[0], dtype=np.float32)
            vec = vec / max(float(np.linalg.norm(vec)), 1e-12)
            self._task_vec_cache[key] = (vec, self._projection(vec))
        return self._task_vec_cache[key]

    def _recall(self) -> None:
        """The K candidates: frequent validity rules first when ``pin_rules`` is set (at most N),
        then up to ``task_slots`` of the task's own most similar items (its traces and experiences,
        so per-task repair stays possible in a large memory), then the most similar of the rest;
        after the pinned rules, best first."""
        assert self.task is not None
        vec, _ = self._task_vectors()
        pinned: list[tuple[MemoryItem, float]] = []
        if self.pin_rules is not None:
            rules = [
                c
                for c in self.memory.recall(vec, k=256, kinds="validity_rule", backend=[self.backend, None])
                if c[0].count >= self.pin_rules
            ]
            pinned = sorted(rules, key=lambda c: (-c[0].count, c[0].id))[: self.n_select]
        taken = {c[0].id for c in pinned}
        own: list[tuple[MemoryItem, float]] = []
        if self.task_slots:
            own = [
                c
                for c in self.memory.recall(
                    vec,
                    k=self.task_slots + len(pinned),
                    kinds=list(RECALL_KINDS),
                    task_id=self.task.id,
                    backend=self.backend,
                )
                if c[0].id not in taken
            ][: self.task_slots]
            taken |= {c[0].id for c in own}
        room = self.k - len(pinned) - len(own)
        rest = [
            c
            for c in self.memory.recall(vec, k=self.k, kinds=list(RECALL_KINDS), backend=[self.backend, None])
            if c[0].id not in taken
        ][:room]
        self._candidates = pinned + sorted(own + rest, key=lambda c: (-c[1], c[0].id))

    def _shown_parents(self) -> list[dict[str, Any]]:
        """The P best parents (lowest latency first), with fresh Q2 values from the store."""
        shown = sorted(self._parents, key=lambda p: (p["latency_s"], p["id"]))[: self.p]
        if shown:
            q2 = {it.id: it.q2 for it in self.memory.get_many([p["id"] for p in shown])}
            shown = [{**p, "q2": float(q2.get(p["id"], 0.0))} for p in shown]
        return shown

    # ------------------------------------------------------------------ observation / info
    def _observation(self) -> dict[str, Any]:
        assert self.task is not None
        _, proj = self._task_vectors()
        clock = self.memory.clock
        cand = np.zeros((self.k, len(CANDIDATE_FEATURES)), np.float32)
        cmask = np.zeros(self.k, np.int8)
        texts = [""] * self.k
        for i, (item, sim) in enumerate(self._candidates):
            cand[i] = candidate_row(item, sim, self.task.level, self.task.category, clock)
            cmask[i] = 1
            texts[i] = clean_text(f"[{item.kind}] {item.title}\n{item.text}", CANDIDATE_TEXT_LIMIT)
        par = np.zeros((self.p, len(PARENT_FEATURES)), np.float32)
        pmask = np.zeros(self.p, np.int8)
        self._parent_slots = self._shown_parents()
        for i, p in enumerate(self._parent_slots):
            par[i] = parent_row(p["latency_s"], p["speedup"], p["depth"], p["q2"])
            pmask[i] = 1
        best = math.log2(self._best_speedup) if self._best_speedup else 0.0
        task_text = (
            f"task {self.task.id} ({self.task.category}, {self.task.dtype}, level {self.task.level})\n"
            f"{self.task.description}\n{self.task.source}"
        )
        return {
            "task_text": clean_text(task_text, TASK_TEXT_LIMIT),
            "candidate_text": tuple(texts),
            "task_embedding": proj.copy(),
            "stage": STAGES.index(self._stage),
            "budget_left": np.array([(self.budget - self._t) / self.budget], np.float32),
            "best_speedup": np.array([max(-FEATURE_CLIP, min(FEATURE_CLIP, best))], np.float32),
            "candidates": cand,
            "candidate_mask": cmask,
            "parents": par,
            "parent_mask": pmask,
        }

    def _info(self) -> dict[str, Any]:
        assert self.task is not None
        clock = self.memory.clock
        cands: list[CandidateInfo | None] = [None] * self.k
        for i, (item, sim) in enumerate(self._candidates):
            cands[i] = CandidateInfo(
                id=_stored_id(item),
                kind=item.kind,
                title=item.title,
                similarity=float(sim),
                q1=item.q1,
                q2=item.q2,
                use_count=item.use_count,
                task_id=item.task_id,
                category=item.category,
                level=item.level,
                outcome=item_outcome(item),
                speedup=item.payload.get("speedup"),
                age=clock - (item.created_at or 0),
            )
        parents: list[ParentInfo | None] = [None] * self.p
        for i, p in enumerate(self._parent_slots):
            parents[i] = ParentInfo(**p)
        return EnvInfo(
            task_id=self.task.id,
            stage=self._stage,
            step=self._t,
            budget=self.budget,
            n_select=self.n_select,
            candidates=cands,
            parents=parents,
            best_latency_s=self._best_latency,
            best_speedup=self._best_speedup,
            episode_key=self._episode_key,
            id_actions=self.search_actions,
            last_step=self._last_step,
        ).to_dict()

    # ------------------------------------------------------------------ step
    def step(self, action: dict[str, Any]) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        t0 = time.perf_counter()
        # 1. check the action (nothing changes when it is refused)
        choice = self._check_action(action)
        # 2. act: write the kernel (or take the action's code) and verify it
        attempt = self._act(choice)
        # 3. reward, against the best latency before this step
        stage = self._stage
        view, basis = reward_basis(attempt.result, self.reward_shapes)
        reward = float(self.reward_fn(view, stage, self._reward_best.get(basis["shapes"])))
        # 4. remember: the step's trace and experience, a new parent, the stage
        trace_id, experience_id, first_feasible = self._remember(choice, attempt, reward)
        # 5. terminate when the budget is spent (there is no truncation)
        self._t += 1
        terminated = self._t >= self.budget

        self._recall()
        timing = StepTiming(generate_s=attempt.generate_s, verify_s=attempt.verify_s, overhead_s=0.0)
        self._last_step = StepRecord(
            step_stage=stage,
            context_ids=[_stored_id(it) for it in choice.context],
            parent_id=choice.parent.item_id if choice.parent else None,
            mode=choice.mode,
            feasible=bool(attempt.result.get("feasible")),
            reward=reward,
            verifier=attempt.result,
            trace_id=trace_id,
            experience_id=experience_id,
            code_hash=code_hash(attempt.code),
            usage=attempt.usage,
            generator_notes=attempt.notes,
            first_feasible=first_feasible,
            code=attempt.code,
            invalid_ids=list(choice.invalid_ids),
            outcome=_outcome(attempt.result),
            generation_error=attempt.generation_error,
            reply=attempt.reply,
            reasoning=attempt.reasoning,
            candidates_tried=attempt.tried,
            timing=timing,
            reward_basis=basis,
        )
        obs = self._observation()
        info = self._info()
        info["timing"]["overhead_s"] = time.perf_counter() - t0 - attempt.generate_s - attempt.verify_s
        if self.render_mode == "human":
            print(self._render_text())
        return obs, reward, terminated, False, info

    def _check_action(self, action: dict[str, Any]) -> _Choice:
        """The action decoded against the current slots; a malformed one raises ValueError."""
        if self.task is None:
            raise RuntimeError("call reset() before step()")
        if self._t >= self.budget:
            raise RuntimeError("the episode is over (budget spent); call reset()")
        if not isinstance(action, dict) or "select" not in action or "parent" not in action:
            raise ValueError(
                "an action is a dict with keys 'select' (K zeros/ones) and 'parent' (int); see env.action_space"
            )
        if self.code_actions and "code" not in action:
            raise ValueError("this env is in code-action mode (generator='code'): the action needs a 'code' string")
        select = np.asarray(action["select"]).reshape(-1)
        if select.shape[0] != self.k:
            raise ValueError(
                f"action['select'] must have {self.k} entries (K = n_select * recall_multiplier), got {select.shape[0]}"
            )
        slot = int(action["parent"])
        if not 0 <= slot <= self.p:
            raise ValueError(f"action['parent'] must be in [0, {self.p}], got {slot}")
        chosen = [i for i in range(len(self._candidates)) if select[i]][: self.n_select]  # best first
        parent = self._parent_slots[slot - 1] if 0 < slot <= len(self._parent_slots) else None
        mode = "large" if self.search_actions and int(action.get("mode", 0)) == 1 else "small"
        pool: list[dict[str, Any]] = []
        invalid: list[int] = []
        if self.search_actions:
            if "pool" in action:
                pool_mask = np.asarray(action["pool"]).reshape(-1)
                pool = [p for i, p in enumerate(self._parent_slots) if i < len(pool_mask) and pool_mask[i]]
            pid = int(np.asarray(action.get("parent_id", -1)))
            if pid >= 0:
                parent = self._parent_by_id(pid, invalid) or parent
            ids = [int(i) for i in np.asarray(action.get("pool_ids", [])).reshape(-1) if int(i) >= 0]
            if ids:
                pool = [p for p in (self._parent_by_id(i, invalid) for i in ids) if p is not None]
        return _Choice(
            context=[self._candidates[i][0] for i in chosen],
            parent=self._parent_kernel(parent) if parent else None,
            mode=mode,
            pool=[self._parent_kernel(p) for p in pool],
            invalid_ids=invalid,
            code=str(action["code"]) if self.code_actions else None,
        )

    def _parent_by_id(self, trace_id: int, invalid: list[int]) -> dict[str, Any] | None:
        """A parent named by trace id: any feasible kernel of this task in memory (not only the P
        shown). An id that is not one is appended to ``invalid`` (``info["invalid_ids"]``)."""
        found = next((p for p in self._parents if p["id"] == trace_id), None)
        if found is None:
            invalid.append(trace_id)
        return found

    def _parent_kernel(self, parent: dict[str, Any]) -> ParentKernel:
        item = self.memory.get(parent["id"])
        return ParentKernel(
            code=item.payload.get("code", ""),
            verifier=item.payload.get("verifier"),
            item_id=item.id,
            depth=int(item.payload.get("depth", 0)),
        )

    def _act(self, choice: _Choice) -> _Attempt:
        """The step's kernel and its verifier result: the action's code, or the best of the
        generator's ``candidates_per_step`` candidates (feasible and fastest first)."""
        if choice.code is not None:
            t = time.perf_counter()
            result = self._verify(choice.code)
            return _Attempt(code=choice.code, result=result, verify_s=time.perf_counter() - t)
        assert self.generator is not None and self.task is not None
        t_gen = time.perf_counter()
        requests = [
            GenerationRequest(
                task=self.task,
                backend=self.backend,
                stage=self._stage,
                memories=choice.context,
                parent=choice.parent,
                feedback=self._last_feedback,
                step=self._t,
                seed=int(self.np_random.integers(2**31 - 1)),
                mode=choice.mode,
                pool=choice.pool,
                answer_format=self.answer_format,
            )
            for _ in range(self.candidates_per_step)
        ]
        gens = self._generate(requests)  # a BudgetExhausted leaves the step undone
        total = Usage(model=getattr(self.generator, "model", self.generator.name), attempts=0)
        for g in gens:
            total = total.add(g.usage)
        t_ver = time.perf_counter()
        tried: list[dict[str, Any]] = []
        best: tuple[tuple[int, float, int], Generation, dict[str, Any]] | None = None
        # the candidates with code are verified together (concurrently on a Ray verifier)
        to_verify = [g.source for g in gens if not isinstance(g, GenerationError) and not g.no_code]
        verified = iter(self._verify_many(to_verify) if to_verify else [])
        for i, g in enumerate(gens):
            if isinstance(g, GenerationError):
                tried.append({"outcome": "generation_error", "error_class": g.error_class, "message": g.message})
                continue
            res = self._no_code_result(g) if g.no_code else next(verified)
            # every candidate's reply is kept, not only the chosen one's: a run is re-scored from them
            tried.append(
                {"outcome": _outcome(res), "latency_s": res.get("latency_s"), "reply": g.raw, "reasoning": g.reasoning}
            )
            # best-of-k: a feasible kernel, fastest first; else one that was verified; else no_code
            rank = (
                0 if res.get("feasible") else 1 if not g.no_code else 2,
                float(res.get("latency_s") or math.inf) if res.get("feasible") else 0.0,
                i,
            )
            if best is None or rank < best[0]:
                best = (rank, g, res)
        generate_s, verify_s = t_ver - t_gen, time.perf_counter() - t_ver
        if best is None:  # every candidate failed to generate
            err = next(g for g in gens if isinstance(g, GenerationError))
            result = {
                "feasible": False,
                "compiled": False,
                "correct": False,
                "hacked": False,
                "error_class": "generation_error",
                "message": f"{err.error_class}: {err.message}",
            }
            return _Attempt(
                code="",
                result=result,
                usage=total.to_dict(),
                tried=tried,
                generation_error={"error_class": err.error_class, "message": err.message},
                generate_s=generate_s,
                verify_s=verify_s,
            )
        _, chosen, result = best
        return _Attempt(
            code=chosen.source,
            result=result,
            usage=total.to_dict(),
            notes=dict(chosen.notes),
            reply=chosen.raw,
            reasoning=chosen.reasoning,
            tried=tried,
            generate_s=generate_s,
            verify_s=verify_s,
        )

    def _verify(self, code: str) -> dict[str, Any]:
        return self._verify_many([code])[0]

    def _verify_many(self, codes: list[str]) -> list[dict[str, Any]]:
        """Verify several answers at once (on a Ray verifier they run concurrently)."""
        assert self.task is not None
        jobs = [
            VerifyJob(
                self.task, self._backend_impl.answer_source(c, self.answer_format), self.backend, self._verify_kwargs
            )
            for c in codes
        ]
        return [r.to_dict() for r in self._verifier.verify_many(jobs)]

    @staticmethod
    def _no_code_result(gen: Generation) -> dict[str, Any]:
        why = gen.notes.get("extract_error") or "the reply holds no code"
        return {
            "feasible": False,
            "compiled": False,
            "correct": False,
            "hacked": False,
            "error_class": "no_code",
            "message": f"{why}; answer with the complete file in one fenced code block",
        }

    def _generate(self, requests: list[GenerationRequest]) -> list[Generation | GenerationError]:
        """One generation per request: concurrently through the generator's ``generate_many`` when
        it has one, else one after another. A failed generation is returned as its error."""
        assert self.generator is not None
        many = getattr(self.generator, "generate_many", None)
        if len(requests) > 1 and callable(many):
            return list(many(requests))
        out: list[Generation | GenerationError] = []
        for r in requests:
            try:
                out.append(self.generator.generate(r))
            except GenerationError as exc:
                out.append(exc)
        return out

    def _remember(self, choice: _Choice, attempt: _Attempt, reward: float) -> tuple[int | None, int | None, bool]:
        """Write the step to memory (a trace plus an experience; nothing after a generation error,
        which says nothing about kernels), count the context's use, make a feasible kernel a parent
        and move a drafting task to refining. Returns (trace id, experience id, first feasible)."""
        assert self.task is not None
        if attempt.generation_error is not None:
            return None, None, False  # the next prompt's feedback stays the last kernel's
        result = attempt.result
        parent = choice.parent
        context_ids = [_stored_id(it) for it in choice.context]
        depth = parent.depth + 1 if parent else 0
        trace_id, experience_id = write_step(
            self.memory,
            self.task,
            self.backend,
            stage=self._stage,
            code=attempt.code,
            verifier=result,
            reward=reward,
            context_ids=context_ids,
            parent_id=parent.item_id if parent else None,
            depth=depth,
            episode=self._episode_key,
            step=self._t,
            extra={"mode": choice.mode} if self.search_actions else None,
        )
        if context_ids:
            self.memory.increment(context_ids, "use_count", 1)
        self._last_feedback = result
        first_feasible = False
        latency = result.get("latency_s")
        if result.get("feasible") and latency and trace_id is not None:
            self._add_parent(
                trace_id,
                {
                    "latency_s": latency,
                    "speedup": result.get("speedup"),
                    "depth": depth,
                    "code_hash": code_hash(attempt.code),
                    "verifier": result,
                },
            )
            if self._stage == "drafting":
                self._stage, first_feasible = "refining", True
        return trace_id, experience_id, first_feasible

    # ------------------------------------------------------------------ render / close
    def _render_text(self) -> str:
        if self.task is None:
            return "KernelSynthesisEnv: not reset"
        head = f"[{self.task.id}] step {self._t}/{self.budget} stage {self._stage}"
        best = f"best speedup {self._best_speedup:.2f}x" if self._best_speedup else "no feasible kernel yet"
        if self._last_step is None:
            return f"{head} | {best} | {len(self._candidates)} candidates, {len(self._parents)} parents"
        s = self._last_step
        ver = s.verifier
        outcome = (
            f"feasible, latency {ver['latency_s'] * 1e6:.1f} us, speedup {ver.get('speedup') or 0:.2f}x"
            if s.feasible
            else f"{ver.get('error_class')}: {str(ver.get('message', ''))[:120]}"
        )
        titles = [self.memory.get(i).title[:60] for i in s.context_ids]
        return (
            f"{head} | took a {s.step_stage} step (parent {s.parent_id}) | {outcome} | "
            f"reward {s.reward:+.3f} | {best}\n  context: " + ("; ".join(titles) if titles else "(none)")
        )

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human' to gym.make")
            return None
        text = self._render_text()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def memory_stats(self) -> dict[str, int]:
        """Items in the memory store by kind, plus ``"total"`` (every process sharing the store
        sees the same counts)."""
        stats = {kind: self.memory.count(kind) for kind in ITEM_KINDS}
        stats["total"] = sum(stats.values())
        return stats

    def close(self) -> None:
        if getattr(self, "memory", None) is not None and self._owns_memory:
            self.memory.close()
        if getattr(self, "_verifier", None) is not None and self._owns_verifier:
            self._verifier.close()
        tmpdir = getattr(self, "_tmpdir", None)
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
            self._tmpdir = None
        super().close()
