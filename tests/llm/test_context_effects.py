"""The synthetic coder's context effects (v2): each one acts, and its switch turns it off.

No verification here (fast): the effects are read from the coder's notes (skills, faults, knobs).
"""

from __future__ import annotations

from kernel_gym.llm.base import GenerationRequest, ParentKernel
from kernel_gym.llm.synthetic import SyntheticCoder
from kernel_gym.llm.synthetic.context import ContextEffects, family_of
from kernel_gym.memory import MemoryItem
from kernel_gym.backends.seeds.ascendc_vector import SEED_ITEMS
from kernel_gym.tasks import get_task

RELU = "level1/021_relu"


def seed(category: str | None = None) -> list[MemoryItem]:
    out = [
        MemoryItem(kind=s["kind"], title=s["title"], text=s["text"], category=s["category"], id=i + 1)
        for i, s in enumerate(SEED_ITEMS)
    ]
    return [it for it in out if category is None or it.category == category]


def draft(coder: SyntheticCoder, task_id: str, mems: list[MemoryItem], seed_: int = 0, **kw) -> dict:
    req = GenerationRequest(task=get_task(task_id), backend="ascend_sim", memories=mems, seed=seed_, **kw)
    return coder.generate(req).notes


def feasible_trace(item_id: int, task_id: str, coder_notes_source: str) -> MemoryItem:
    task = get_task(task_id)
    return MemoryItem(
        kind="trace",
        title=f"trace {task.name}",
        text="drafting step: ok",
        payload={"code": coder_notes_source, "feasible": True, "verifier": {"feasible": True}},
        task_id=task.id,
        category=task.category,
        id=item_id,
    )


def faulty_trace(item_id: int, error_class: str, category: str = "elementwise") -> MemoryItem:
    code = "__aicore__ void k(GM_ADDR x) { DataCopy(xl, xGm, n); }  // tile 32768"
    return MemoryItem(
        kind="trace",
        title="trace 001_add drafting: failed",
        text=f"drafting step on level1/001_add failed with {error_class}",
        payload={"code": code, "feasible": False, "error_class": error_class, "verifier": {"feasible": False}},
        task_id="level1/001_add",
        category=category,
        id=item_id,
    )


def test_options_reach_the_effects():
    coder = SyntheticCoder(seed=0, distraction=False, mislead=0.25)
    assert coder.effects == ContextEffects(distraction=False, mislead=0.25)
    assert SyntheticCoder(seed=0).effects == ContextEffects()  # every switch on by default
    assert family_of("activation") == family_of("elementwise") and family_of("matmul_epilogue") == "matmul"


def test_a_copied_faulty_trace_brings_its_fault_back():
    mems = seed() + [faulty_trace(999, "ub_overflow")]
    # mislead = 1: the failed trace's fault is always copied, even against the seed items teaching the budget
    on = draft(SyntheticCoder(seed=0, prior_scale=0.0, mislead=1.0, dilution=0.0), RELU, mems)
    assert "ub_huge" in on["faults"] and "ub_budget" in on["misled"]
    off = draft(SyntheticCoder(seed=0, prior_scale=0.0, distraction=False), RELU, mems)
    assert "ub_huge" not in off["faults"] and off["misled"] == []


def test_unrelated_items_dilute_what_the_context_teaches():
    mine = seed("general")
    others = [it for it in seed() if family_of(it.category) not in ("general", "elementwise")]
    assert len(others) >= 10

    def known(coder: SyntheticCoder, mems: list[MemoryItem]) -> int:
        return sum(len(draft(coder, RELU, mems, seed_=s)["skills"]) for s in range(20))

    coder = SyntheticCoder(seed=0, prior_scale=0.0, dilution=0.5)
    assert known(coder, mine + others) < known(coder, mine)  # more distractors, fewer skills picked up
    plain = SyntheticCoder(seed=0, prior_scale=0.0, distraction=False)
    assert known(plain, mine + others) >= known(plain, mine)  # without the effect, more items only add


def test_a_same_family_feasible_trace_is_adapted():
    writer = SyntheticCoder(seed=0, prior_scale=0.0, distraction=False)
    src = writer.generate(
        GenerationRequest(
            task=get_task("level1/001_add"),
            backend="ascend_sim",
            stage="refining",
            memories=seed(),
            step=1,
            parent=ParentKernel(
                code=writer.generate(
                    GenerationRequest(task=get_task("level1/001_add"), backend="ascend_sim", memories=seed())
                ).source,
                verifier={"feasible": True},
            ),
        )
    ).source
    trace = feasible_trace(999, "level1/001_add", src)
    on = draft(SyntheticCoder(seed=0, prior_scale=0.0), RELU, [trace])
    off = draft(SyntheticCoder(seed=0, prior_scale=0.0, copy_retrieved=False), RELU, [trace])
    assert on["knobs"]["blocks"] > 1 and on["knobs"]["bufn"] == 2  # the refined tiling is the starting point
    assert len(on["skills"]) > len(off["skills"])  # without copying, a trace only shows its API calls
    assert set(off["skills"]) <= {"kernel_structure", "vector_api", "activation_compose", "compare_select"}


def test_a_validated_kernel_of_this_task_is_reused():
    writer = SyntheticCoder(seed=0, prior_scale=0.0, distraction=False)
    src = writer.generate(GenerationRequest(task=get_task(RELU), backend="ascend_sim", memories=seed())).source
    trace = feasible_trace(999, RELU, src)
    noise = [faulty_trace(1000 + i, "ub_overflow") for i in range(3)]
    on = draft(SyntheticCoder(seed=0, prior_scale=0.0, validated_copy=1.0, mislead=1.0), RELU, [trace] + noise)
    assert on["validated"] and on["faults"] == [] and on["misled"] == []
    off = draft(SyntheticCoder(seed=0, prior_scale=0.0, validated_attempts=False, mislead=1.0), RELU, [trace] + noise)
    assert not off["validated"] and "ub_huge" in off["faults"]


def test_stage_specific_experience():
    tactics_only = [it for it in seed("general") if "double buffer" in it.text.lower() and "DataCopyPad" not in it.text]
    assert tactics_only
    mems = seed("elementwise") + tactics_only
    coder_on = SyntheticCoder(seed=0, prior_scale=0.0)
    coder_off = SyntheticCoder(seed=0, prior_scale=0.0, stage_specific=False)
    # drafting: optimisation-only items are off-stage, they count as distractors
    assert draft(coder_on, RELU, mems)["distractors"] > draft(coder_off, RELU, mems)["distractors"]
    # refining a feasible parent: a tactic in context is applied whatever else is in the context
    parent = ParentKernel(
        code=SyntheticCoder(seed=0)
        .generate(GenerationRequest(task=get_task(RELU), backend="ascend_sim", memories=seed()))
        .source,
        verifier={"feasible": True},
    )
    crowd = mems + [it for it in seed() if family_of(it.category) not in ("general", "elementwise")]
    applied = [
        "double_buffer" in draft(coder_on, RELU, crowd, seed_=s, stage="refining", parent=parent, step=1)["tactics"]
        for s in range(10)
    ]
    assert all(applied)


def test_deterministic_with_effects():
    mems = seed() + [faulty_trace(999, "misaligned_copy")]
    a = draft(SyntheticCoder(seed=4), RELU, mems, seed_=9)
    b = draft(SyntheticCoder(seed=4), RELU, mems, seed_=9)
    assert a == b
