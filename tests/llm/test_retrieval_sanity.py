"""Sanity test of the environment's offline stand-in, not of any agent: does retrieval matter?

Over a fixed set of 27 tasks and a fixed budget, short episodes (draft, then refine the best
feasible kernel, else redraft with the verifier's feedback) are run with three retrieval
policies that pick k items per step from one fixed memory pool:

- oracle: items known to help the task (feasible traces of other tasks of its op family, then
  seed items of its family, then general ones);
- random: k items drawn uniformly from the pool;
- adversarial: items known to mislead (failed traces whose code carries a fault, then seed items
  of unrelated op families).

The policies are fixtures of this test, not agents. Over 3 coder seeds, oracle must beat random
and random must beat adversarial, each by more than the seed-to-seed spread. The coder is
never tuned to make any agent win; this only checks that the context can matter at all.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable

import pytest

from kernel_gym.llm.base import GenerationRequest, ParentKernel
from kernel_gym.llm.synthetic import SyntheticCoder
from kernel_gym.llm.synthetic.context import family_of
from kernel_gym.memory import MemoryItem
from kernel_gym.backends.seeds.ascendc_vector import SEED_ITEMS
from kernel_gym.tasks import get_task
from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify import verify

FAST = dict(correctness_trials=1, timing_trials=1)
K = 6
BUDGET = 3
SEEDS = (0, 1, 2)
#: the episodes' tasks: one or two per op family
TASKS = (
    "level1/010_exp_tail",
    "level1/021_relu",
    "level1/023_sigmoid_tail",
    "level1/027_silu",
    "level1/041_mean_dim",
    "level1/047_sum_last_dim_tail",
    "level1/051_layer_norm",
    "level1/059_group_norm",
    "level1/061_softmax",
    "level1/064_softmax_tail",
    "level1/087_max_pool_2d",
    "level1/090_avg_pool_2d",
    "level1/093_cumsum",
    "level1/094_cumsum_tail",
    "level1/075_matmul_rectangular",
    "level1/077_bmm",
    "level2/001_matmul_bias_relu",
    "level2/006_linear_clamp",
    "level1/004_div",
    "level1/013_clamp",
    "level1/029_elu",
    "level1/042_max_dim",
    "level1/053_rms_norm_tail",
    "level1/085_max_pool_1d",
    "level1/097_exclusive_cumsum",
    "level1/079_matmul_transposed_b",
    "level2/009_linear_tanh_tail",
)
#: tasks whose traces fill the pool (other tasks of the same families: no answer to the task itself)
POOL_TASKS = (
    "level1/001_add",
    "level1/024_tanh",
    "level1/040_sum_dim",
    "level1/052_rms_norm",
    "level1/062_log_softmax",
    "level1/088_max_pool_2d_padded",
    "level1/095_cumprod",
    "level1/074_matmul_square",
    "level2/003_linear_sigmoid_scale",
)

#: verdicts by (task, source): the verifier is deterministic, and the policies often repeat a kernel
_VERDICTS: dict[tuple[str, str], dict] = {}


def verdict(task: TaskSpec, source: str) -> dict:
    key = (task.id, source)
    if key not in _VERDICTS:
        _VERDICTS[key] = verify(task, source, backend="ascend_sim", **FAST).to_dict()
    return _VERDICTS[key]


Policy = Callable[[TaskSpec, list[MemoryItem], random.Random], list[MemoryItem]]


def _trace(item_id: int, task: TaskSpec, code: str, res: dict) -> MemoryItem:
    feasible = bool(res.get("feasible"))
    return MemoryItem(
        kind="trace",
        title=f"trace {task.name} drafting: {'ok' if feasible else res.get('error_class')}",
        text=f"drafting step on {task.id} ({task.category}): {res.get('error_class') or 'ok'}",
        payload={"code": code, "verifier": res, "feasible": feasible, "error_class": res.get("error_class")},
        task_id=task.id,
        category=task.category,
        id=item_id,
    )


def build_pool() -> list[MemoryItem]:
    """Seed items and, per pool task, one feasible and one failed trace written by the coder."""
    pool = [
        MemoryItem(kind=s["kind"], title=s["title"], text=s["text"], category=s["category"], id=i + 1)
        for i, s in enumerate(SEED_ITEMS)
    ]
    seeds = list(pool)
    careful = SyntheticCoder(seed=100, prior_scale=0.0, distraction=False)  # every seed item used
    sloppy = SyntheticCoder(seed=101, prior_scale=1.0)  # priors only
    for tid in POOL_TASKS:
        task = get_task(tid)
        for coder, mems in ((careful, seeds), (sloppy, [])):
            gen = coder.generate(GenerationRequest(task=task, backend="ascend_sim", memories=mems))
            res = verdict(task, gen.source)
            pool.append(_trace(len(pool) + 1, task, gen.source, res))
    return pool


def _same(task: TaskSpec, it: MemoryItem) -> bool:
    return family_of(it.category) == family_of(task.category)


def oracle(task: TaskSpec, pool: list[MemoryItem], rng: random.Random) -> list[MemoryItem]:
    good = [it for it in pool if it.kind == "trace" and it.payload["feasible"] and _same(task, it)]
    fam = [it for it in pool if it.kind != "trace" and _same(task, it)]
    general = [it for it in pool if it.kind != "trace" and family_of(it.category) == "general"]
    return (good + fam + rng.sample(general, K))[:K]


def uniform(task: TaskSpec, pool: list[MemoryItem], rng: random.Random) -> list[MemoryItem]:
    return rng.sample(pool, K)


def adversarial(task: TaskSpec, pool: list[MemoryItem], rng: random.Random) -> list[MemoryItem]:
    bad = [it for it in pool if it.kind == "trace" and not it.payload["feasible"] and it.payload["code"]]
    other = [
        it for it in pool if it.kind != "trace" and family_of(it.category) not in (family_of(task.category), "general")
    ]
    rng.shuffle(bad)
    return (bad + rng.sample(other, K))[:K]


def run_policy(policy: Policy, pool: list[MemoryItem], seed: int) -> float:
    """Fraction of feasible steps over every task's episode of BUDGET steps."""
    coder = SyntheticCoder(seed=seed)
    feasible_steps = 0
    for tid in TASKS:
        task = get_task(tid)
        rng = random.Random(f"{seed}/{tid}")
        parent: ParentKernel | None = None
        feedback: dict | None = None
        for step in range(BUDGET):
            req = GenerationRequest(
                task=task,
                backend="ascend_sim",
                stage="refining" if parent else "drafting",
                memories=policy(task, pool, rng),
                parent=parent,
                feedback=feedback,
                step=step,
                seed=seed * 1000 + step,
            )
            gen = coder.generate(req)
            res = verdict(task, gen.source)
            feasible_steps += bool(res.get("feasible"))
            if res.get("feasible") and parent is None:
                parent = ParentKernel(code=gen.source, verifier=res)
            feedback = res
    return feasible_steps / (len(TASKS) * BUDGET)


@pytest.mark.slow
def test_oracle_beats_random_beats_adversarial_retrieval():
    pool = build_pool()
    assert any(it.kind == "trace" and it.payload["feasible"] for it in pool)
    assert any(it.kind == "trace" and not it.payload["feasible"] for it in pool)
    rates = {
        name: [run_policy(p, pool, s) for s in SEEDS]
        for name, p in (("oracle", oracle), ("random", uniform), ("adversarial", adversarial))
    }
    mean = {n: statistics.mean(v) for n, v in rates.items()}
    spread = max(max(v) - min(v) for v in rates.values())  # the widest seed-to-seed range
    print({n: (round(mean[n], 3), [round(x, 3) for x in v]) for n, v in rates.items()}, "spread", round(spread, 3))
    assert mean["oracle"] - mean["random"] > spread, rates
    assert mean["random"] - mean["adversarial"] > spread, rates
