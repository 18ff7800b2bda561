"""Which faults the synthetic coder commits, and its tiling choices: the :class:`Knobs`.

A missing skill sets the flag of the fault it guards against (the table in
``docs/synthetic_coder.md``). Tactics (multicore, double_buffer, large_tiles) change the tiling
when refining. Everything here is a pure function of the skills, the plan and a seeded rng.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from kernel_gym.llm.synthetic.analysis import MAP_RECIPES, Plan

__all__ = ["ADVANCED_API", "FAULT_OF_SKILL", "Knobs", "choose_knobs", "choose_plan", "UB_USABLE"]

#: usable UB bytes of the simulated 910B vector core (192 KB - 256 B - 8 KB)
UB_USABLE = 192 * 1024 - 256 - 8 * 1024

#: high-level APIs a coder without the composition skill reaches for (not in the simulator)
ADVANCED_API: dict[str, str] = {
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "gelu": "Gelu",
    "silu": "Silu",
    "softplus": "Softplus",
    "elu": "Elu",
    "selu": "Selu",
    "hardsigmoid": "HardSigmoid",
    "hardswish": "HardSwish",
    "softsign": "Softsign",
    "mish": "Mish",
    "log_sigmoid": "LogSigmoid",
    "pow": "Power",
    "huber": "SmoothL1",
}

#: skill -> the fault flag of :class:`Knobs` it prevents
FAULT_OF_SKILL: dict[str, str] = {
    "kernel_structure": "cuda",
    "vector_api": "ops_overload",
    "activation_compose": "advanced_api",
    "compare_select": "ternary",
    "queue_protocol": "leak",
    "datacopy_align": "unaligned",
    "tail_handling": "no_tail",
    "ub_budget": "ub_huge",
    "dtype_rules": "half_as_float",
    "reduction_workspace": "bad_workspace",
    "cube_api": "matmul_api",
    "nz_layout": "nd_layout",
    "fixpipe": "no_fixpipe",
    "l0_budget": "l0_huge",
    "cube_sync": "cube_nosync",
    "workspace_epilogue": "epilogue_in_l0c",
}
_FAULT_FLAGS = (
    "cuda",
    "ops_overload",
    "advanced_api",
    "ternary",
    "leak",
    "skip_enque",
    "unaligned",
    "no_tail",
    "ub_huge",
    "half_as_float",
    "bad_workspace",
    "matmul_api",
    "nd_layout",
    "no_fixpipe",
    "l0_huge",
    "cube_nosync",
    "epilogue_in_l0c",
)


@dataclass
class Knobs:
    """Tiling choices and fault flags of one generation."""

    tile: int = 2048
    blocks: int = 1
    bufn: int = 1
    use_block_idx: bool = False
    atomic: bool = True
    # faults
    cuda: bool = False
    ops_overload: bool = False
    advanced_api: bool = False
    ternary: bool = False
    leak: bool = False
    skip_enque: bool = False
    unaligned: bool = False
    no_tail: bool = False
    ub_huge: bool = False
    half_as_float: bool = False
    bad_workspace: bool = False
    # cube faults
    matmul_api: bool = False
    nd_layout: bool = False
    no_fixpipe: bool = False
    l0_huge: bool = False
    cube_nosync: bool = False
    epilogue_in_l0c: bool = False

    def faults(self) -> list[str]:
        return [f for f in _FAULT_FLAGS if getattr(self, f)]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def choose_plan(plan: Plan, have: set[str]) -> Plan:
    """The cube form of a level1 matmul when the coder knows the cube API, else ``plan``."""
    if plan.kind == "matmul" and plan.extra.get("cube") and "cube_api" in have:
        return replace(plan, kind="cube", extra={**plan.extra, "mode": "plain", "steps": []})
    return plan


def relevant_skills(plan: Plan) -> set[str]:
    """Skills whose absence can show up as a fault on this plan."""
    if plan.kind == "cube" or plan.extra.get("cube"):
        cube = {"kernel_structure", "nz_layout", "fixpipe", "l0_budget", "cube_sync"}
        if plan.kind == "cube" and plan.extra.get("mode") == "epilogue":
            cube |= {"cube_api", "workspace_epilogue", "vector_api", "queue_protocol"}
            if set(plan.extra["steps"]) & {"gelu", "sigmoid", "silu", "tanh"}:
                cube.add("activation_compose")
        if plan.kind == "cube":
            return cube
        # a level1 matmul: the vector template's skills, and the cube ones if it goes there
    s = {"kernel_structure", "vector_api", "queue_protocol", "datacopy_align", "tail_handling", "ub_budget"}
    if plan.kind in ("map", "reduceall"):
        needs = MAP_RECIPES.get(plan.recipe, ([], "", (), 0))[2]
        if "compose" in needs:
            s.add("activation_compose")
        if "select" in needs:
            s.add("compare_select")
    if plan.kind in ("rows", "midreduce", "reduceall", "scan", "norm", "matmul") or plan.recipe == "maxpool":
        s.add("reduction_workspace")
    if plan.dtype == "half":
        s.add("dtype_rules")
    return s


def _ub_bytes(plan: Plan, tile: int, bufn: int) -> int:
    esize = 2 if plan.dtype == "half" else 4
    if plan.kind in ("map", "reduceall"):
        nt = MAP_RECIPES.get(plan.recipe, ([], "", (), 0))[3]
        nf = nt + ((plan.n_inputs + 1) if plan.dtype == "half" else 0) + (1 if plan.kind == "reduceall" else 0)
        outq = 0 if plan.kind == "reduceall" else bufn * tile * esize
        return plan.n_inputs * bufn * tile * esize + outq + nf * tile * 4 + tile // 8 + 1024
    if plan.kind == "rows":
        c8 = (plan.cols + 15) // 16 * 16
        return 2 * bufn * c8 * esize + (2 * c8 * 4 if plan.dtype == "half" else 0) + c8 * 4 + 4096
    if plan.kind == "midreduce":
        t = min(plan.cols, tile)
        return (bufn + 2) * t * 4
    if plan.kind == "scan":
        return (
            2 * bufn * tile * esize
            + (bufn * tile if plan.recipe == "masked" else 0)
            + (2 * tile * 4 if plan.dtype == "half" else 0)
            + 1024
        )
    if plan.kind == "norm":
        return 2 * bufn * tile * esize + 3 * tile * 4 + 2048
    if plan.kind == "matmul" and plan.recipe == "diag":
        return 2 * bufn * tile * 4 + 1024
    return 0


def fit_tile(plan: Plan, tile: int, bufn: int) -> tuple[int, int]:
    """Shrink the tile (then the queue depth) until the UB budget holds."""
    while tile > 64 and _ub_bytes(plan, tile, bufn) > UB_USABLE:
        tile //= 2
    if _ub_bytes(plan, tile, bufn) > UB_USABLE and bufn > 1:
        bufn = 1
    return tile, bufn


def choose_knobs(
    plan: Plan,
    have: set[str],
    tactics: set[str],
    stage: str,
    rng: np.random.Generator,
    parent: dict[str, Any] | None = None,
    relevant: set[str] | None = None,
) -> tuple[Knobs, list[str]]:
    """Knobs for one generation: faults from missing skills, tiling from tactics.

    ``relevant`` overrides the skills whose absence causes a fault (default:
    :func:`relevant_skills` of the plan; the GPU templates pass their own). Returns the knobs and
    the list of tactics applied.
    """
    k = Knobs()
    applied: list[str] = []
    if parent:
        k.tile = int(parent.get("tile", k.tile))
        k.blocks = int(parent.get("blocks", k.blocks))
        k.bufn = int(parent.get("bufn", k.bufn))
    if "multicore" in have or "multicore" in tactics:
        k.use_block_idx = True
        k.blocks = max(k.blocks, 8)
    if stage == "refining":
        if "multicore" in tactics and k.blocks < 40:
            k.blocks = min(40, k.blocks * 3)
            k.use_block_idx = True
            applied.append("multicore")
        if "double_buffer" in tactics and k.bufn < 2:
            k.bufn = 2
            applied.append("double_buffer")
        if "large_tiles" in tactics and k.tile < 16384:
            k.tile = k.tile * 4
            applied.append("large_tiles")
        if not applied:  # no tactic in sight: a small random perturbation
            choice = int(rng.integers(3))
            if choice == 0:
                k.tile = int(max(256, min(16384, k.tile * (2 if rng.random() < 0.5 else 0.5))))
            elif choice == 1 and k.use_block_idx:
                k.blocks = int(max(1, min(40, k.blocks + int(rng.integers(-4, 5)))))
            else:
                k.bufn = 1 if k.bufn == 2 else 2
            applied.append("perturb")
    # faults: every relevant skill that is missing
    rel = relevant_skills(plan) if relevant is None else relevant
    for skill, flag in FAULT_OF_SKILL.items():
        if skill in rel and skill not in have:
            setattr(k, flag, True)
    if k.leak and rng.random() < 0.3:
        k.skip_enque, k.leak = True, False  # the other queue slip: no EnQue before DeQue
    if k.unaligned and k.use_block_idx is False:
        k.use_block_idx, k.blocks = True, 40  # splits over "all the cores" without 32 B units
    if k.ub_huge:
        k.tile = 32768  # a tile that cannot fit the UB
    else:
        k.tile, k.bufn = fit_tile(plan, k.tile, k.bufn)
    return k, applied
