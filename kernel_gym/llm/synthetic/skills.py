"""The synthetic coder's knowledge: a fixed catalogue of skills found in its context.

A skill is *present* when at least one context item teaches it. Items are read the way a prompt
shows them: title, text, tags and (for traces) the code. Each skill has an explicit detection
rule (:data:`SKILL_RULES`, also tabulated in ``docs/synthetic_coder.md``). A failure experience
also teaches the skill that guards against its error class (:func:`skills_from_error`), and a
feasible trace's code teaches every skill its code shows.

Skills without an item may still be "remembered": each has a prior probability
(:data:`PRIORS`), drawn per request, which stands for what a model knows without being told.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kernel_gym.memory.types import MemoryItem

__all__ = [
    "SKILLS",
    "CUBE_SKILLS",
    "TACTICS",
    "PRIORS",
    "SKILL_RULES",
    "item_blob",
    "detect_skills",
    "skills_from_error",
    "skills_in_code",
]

#: Correctness skills: a missing one makes the coder commit the fault it guards against.
SKILLS: tuple[str, ...] = (
    "kernel_structure",  # __aicore__ kernel + GM_ADDR + launcher      -> else CUDA-isms (compile_error)
    "vector_api",  # count-form vector instructions Add/Muls/Exp  -> else operator overloads (compile_error)
    "activation_compose",  # sigmoid/tanh/gelu... from Exp/Reciprocal     -> else advanced APIs (compile_error)
    "compare_select",  # Compare(s) + Select masks                    -> else C++ ternary on tensors (compile_error)
    "queue_protocol",  # AllocTensor/EnQue/DeQue/FreeTensor pairing   -> else leaked tensors (queue_misuse)
    "datacopy_align",  # 32-byte rule of DataCopy                     -> else unaligned copies (misaligned_copy)
    "tail_handling",  # DataCopyPad + tail tiles -> else dropped tails (numerical_mismatch / misaligned_copy)
    "ub_budget",  # tiles within the 192 KB UB                   -> else huge tiles (ub_overflow)
    "dtype_rules",  # fp16 via Cast to float                       -> else half buffers read as float (gm_out_of_bounds)
    "reduction_workspace",  # ReduceSum/ReduceMax work buffer, atomics -> else tiny work buffer (local_out_of_bounds)
)
#: Cube-unit skills: with ``cube_api`` the coder writes matmuls on the cube unit; a missing other
#: one makes it commit that skill's fault in the cube kernel.
CUBE_SKILLS: tuple[str, ...] = (
    "cube_api",  # Mmad + LoadData + TQue on A1/B1/A2/B2/CO1   -> else vector matmul / Matmul<> (compile_error)
    "nz_layout",  # Nd2NzParams: GM rows -> L1 fractals (NZ)     -> else ND rows in L1 (numerical_mismatch)
    "fixpipe",  # Fixpipe L0C -> GM (NZ -> row-major)          -> else DataCopy out of CO1 (invalid_argument)
    "l0_budget",  # L0A/L0B 64 KB, L0C 128 KB                   -> else 256 x 128 tiles (cube_memory_overflow)
    "cube_sync",  # EnQue/DeQue between the cube stages          -> else DeQue of an empty A2 queue (queue_empty)
    "workspace_epilogue",  # __cube__ -> fp32 workspace -> vector epilogue -> else epilogue on L0C (numerical_mismatch)
)
#: Optimisation tactics: applied when refining.
TACTICS: tuple[str, ...] = ("multicore", "double_buffer", "large_tiles", "fusion")

#: Probability that the coder knows a skill without any context item teaching it (per request).
PRIORS: dict[str, float] = {
    "kernel_structure": 0.45,
    "vector_api": 0.65,
    "activation_compose": 0.40,
    "compare_select": 0.30,
    "queue_protocol": 0.45,
    "datacopy_align": 0.35,
    "tail_handling": 0.25,
    "ub_budget": 0.60,
    "dtype_rules": 0.35,
    "reduction_workspace": 0.30,
    "multicore": 0.40,
    "double_buffer": 0.25,
    "large_tiles": 0.30,
    "fusion": 0.20,
    # the cube unit is rarer in public code than the vector unit: low priors
    "cube_api": 0.15,
    "nz_layout": 0.15,
    "fixpipe": 0.20,
    "l0_budget": 0.30,
    "cube_sync": 0.35,
    "workspace_epilogue": 0.20,
}


def item_blob(item: MemoryItem) -> str:
    """Everything of an item a prompt would show: title, text, tags, a trace's code."""
    parts = [item.title or "", item.text or "", " ".join(item.tags or []) if hasattr(item, "tags") else ""]
    code = (item.payload or {}).get("code") if isinstance(item.payload, dict) else None
    if code and code not in (item.text or ""):
        parts.append(code)
    return "\n".join(parts)


def _has(*pats: str) -> Callable[[str], bool]:
    rx = [re.compile(p) for p in pats]
    return lambda s: all(r.search(s) for r in rx)


def _any(*fs: Callable[[str], bool]) -> Callable[[str], bool]:
    return lambda s: any(f(s) for f in fs)


#: skill -> (rule over an item's text blob, human-readable description for the docs)
SKILL_RULES: dict[str, tuple[Callable[[str], bool], str]] = {
    "kernel_structure": (
        _any(
            _has(r"__aicore__", r"GM_ADDR"),
            _has(r'extern "C"', r"load_cpp"),
            _has(r'extern "C"', r"load_cuda", r"__global__"),
            _has(r"@triton\.jit", r"program_id"),
        ),
        '`__aicore__` and `GM_ADDR` both appear (cpu: `extern "C"` with `load_cpp`; cuda: `extern "C"`, '
        "`__global__` and `load_cuda`; triton: `@triton.jit` with `program_id`)",
    ),
    "vector_api": (
        _has(r"\b(Add|Mul|Muls|Adds|Exp|Sub|Maxs)\(\s*\w+\s*,\s*\w+"),
        "a count-form vector call such as `Add(z, x, y, n)` / `Muls(y, x, a, n)`",
    ),
    "activation_compose": (
        _any(_has(r"(?i)sigmoid", r"Reciprocal\(|Div\(", r"Exp\("), _has(r"(?i)sigmoid", r"\b(expf|tl\.exp)\(")),
        "sigmoid/tanh composed from `Exp` and `Reciprocal`/`Div` (cuda, triton: sigmoid with `expf(`/`tl.exp(`)",
    ),
    "compare_select": (_has(r"\bCompares?\(", r"\bSelect\("), "`Compare`/`Compares` together with `Select`"),
    "queue_protocol": (_has(r"EnQue", r"DeQue", r"FreeTensor"), "`EnQue`, `DeQue` and `FreeTensor` all appear"),
    "datacopy_align": (
        _has(r"DataCopy", r"(?i)32[- ]?(B\b|byte)|ALIGN\b"),
        "`DataCopy` together with the 32-byte rule (`32 B`, `32-byte`, `ALIGN`)",
    ),
    "tail_handling": (
        _any(
            _has(r"DataCopyPad"),
            _has(r"tl\.(load|store)\([^\n]*mask="),
            _has(r"threadIdx", r"if\s*\(\s*!?\(?\s*\w+\s*<\s*\w+"),
        ),
        "`DataCopyPad` appears (tail copies; triton: a masked `tl.load`/`tl.store`; cuda: a bounds guard "
        "`if (i < n)` in a kernel using `threadIdx`)",
    ),
    "ub_budget": (
        _any(_has(r"\bUB\b", r"(?i)192\s?KB|capacity"), _has(r"(?i)UB capacity|ub_overflow")),
        "UB capacity (`UB` with `192 KB` or `capacity`)",
    ),
    "dtype_rules": (
        _any(_has(r"\bCast\(", r"\bhalf\b"), _has(r"__half2float|__float2half")),
        "`Cast(` with `half` (cuda: `__half2float`/`__float2half`)",
    ),
    "reduction_workspace": (
        _any(
            _has(r"Reduce(Sum|Max|Min)\(\s*\w+\s*,\s*\w+\s*,\s*\w+"),
            _has(r"SetAtomicAdd"),
            _has(r"__shared__", r"__syncthreads\(\)"),
            _has(r"tl\.atomic_add"),
        ),
        "`ReduceSum/Max/Min(dst, src, work, n)` or `SetAtomicAdd` (cuda: `__shared__` with `__syncthreads()`; "
        "triton: `tl.atomic_add`)",
    ),
    "multicore": (_has(r"GetBlockIdx|GetBlockNum"), "`GetBlockIdx` or `GetBlockNum`"),
    "double_buffer": (
        _has(r"(?i)double[- ]buffer|BUFFER_NUM\s*=\s*2|BUFN\s*=\s*2"),
        "`double buffer` or a queue depth constant `= 2`",
    ),
    "large_tiles": (
        _has(r"(?i)(larger|large|longer|bigger) tiles?|tiles? (of|with) \d{4}|tile-size"),
        "advice about larger tiles (`larger tile`, `tile-size` tag)",
    ),
    "fusion": (_has(r"(?i)\bfus(e|ion|ing)\b"), "`fuse` / `fusion`"),
    "cube_api": (
        _has(r"\bMmad\(", r"\bLoadData", r"TPosition::(A1|A2|B1|B2|CO1)"),
        "`Mmad(`, `LoadData` and a queue at `TPosition::A1/A2/B1/B2/CO1`",
    ),
    "nz_layout": (_has(r"Nd2NzParams"), "`Nd2NzParams` (the GM -> L1 fractal copy)"),
    "fixpipe": (_has(r"\bFixpipe\("), "`Fixpipe(` (L0C -> GM)"),
    "l0_budget": (_has(r"\bL0[ABC]\b", r"(?i)\b(64|128)\s?KB"), "`L0A`/`L0B`/`L0C` with their `64 KB` / `128 KB`"),
    "cube_sync": (
        _has(r"TPosition::(A2|B2|CO1)", r"EnQue", r"DeQue"),
        "`EnQue`/`DeQue` on an `A2`/`B2`/`CO1` queue",
    ),
    "workspace_epilogue": (_has(r"__cube__", r"(?i)workspace"), "`__cube__` with a `workspace`"),
}

#: error class of a failure -> skills that guard against it (a failure experience teaches them)
_ERROR_SKILLS: dict[str, tuple[str, ...]] = {
    "ub_overflow": ("ub_budget",),
    "misaligned_copy": ("datacopy_align",),
    "unaligned_local_tensor": ("datacopy_align",),
    "queue_misuse": ("queue_protocol",),
    "queue_full": ("queue_protocol",),
    "queue_empty": ("queue_protocol",),
    "foreign_free": ("queue_protocol",),
    "tensor_leak": ("queue_protocol",),
    "too_many_tensors": ("queue_protocol",),
    "local_out_of_bounds": ("reduction_workspace",),
    "gm_race": ("reduction_workspace",),
    "unsupported_dtype": ("dtype_rules",),
    "cube_memory_overflow": ("l0_budget",),
    "local_memory_overflow": ("l0_budget",),
    "fractal_layout": ("nz_layout",),
    "pipe_race": ("cube_sync",),
    "wrong_position": ("fixpipe",),
}


def skills_from_error(error_class: str | None, message: str = "", task_hint: str = "") -> set[str]:
    """Skills that a failure with ``error_class`` (and its message) points at."""
    if not error_class:
        return set()
    out = set(_ERROR_SKILLS.get(error_class, ()))
    msg = message or ""
    if error_class == "compile_error":
        if re.search(r"threadIdx|blockIdx|blockDim|__syncthreads|cuda", msg):
            out.add("kernel_structure")
        if re.search(r"Sigmoid|Tanh|Gelu|Silu|Softplus|Mish|Elu|Softsign|HardSigmoid|HardSwish|LogSigmoid|Pow\b", msg):
            out.add("activation_compose")
        if re.search(
            r"operator\s?[-+*/<>]|no match for|\b(expf|logf|sqrtf|fabsf|fmaxf|fminf|tanhf|log1pf|powf)\b", msg
        ):
            out.add("vector_api")
        if re.search(r"\?|ternary|operands to", msg):
            out.add("compare_select")
    if error_class == "gm_out_of_bounds":
        out.add("dtype_rules" if ("float16" in task_hint or "fp16" in task_hint) else "tail_handling")
    if error_class == "numerical_mismatch" and "tail" in task_hint:
        out.add("tail_handling")
    # the cube unit's failures, told apart by the message or the task
    if error_class in ("queue_empty", "queue_full") and re.search(r"\((A1|A2|B1|B2|CO1)\)", msg):
        out.discard("queue_protocol")
        out.add("cube_sync")
    if error_class == "invalid_argument" and re.search(r"must be in UB|CO1|L0C", msg):
        out.add("fixpipe")
    if error_class == "numerical_mismatch" and "matmul" in task_hint:
        out.add("nz_layout")
        if "matmul_epilogue" in task_hint:
            out.add("workspace_epilogue")
    return out


#: skills whose absence shows up at compile time: a trace that compiled demonstrates them
COMPILE_SKILLS: frozenset[str] = frozenset({"kernel_structure", "vector_api", "activation_compose", "compare_select"})


def skills_in_code(code: str) -> set[str]:
    """Skills that a piece of working code shows (a feasible trace or parent)."""
    return {s for s, (rule, _) in SKILL_RULES.items() if rule(code)}


@dataclass
class Found:
    """Skills found in a context: skill -> ids (or titles) of the items that taught it."""

    sources: dict[str, list[Any]]

    def __contains__(self, skill: str) -> bool:
        return skill in self.sources


def detect_skills(memories: Iterable[MemoryItem]) -> Found:
    """Skills taught by the context items (rules, failure experiences' error classes, traces)."""
    src: dict[str, list[Any]] = {}

    def add(skill: str, item: MemoryItem) -> None:
        src.setdefault(skill, []).append(item.id if item.id is not None else item.title)

    for item in memories:
        payload = item.payload if isinstance(item.payload, dict) else {}
        if item.kind == "trace":
            code = payload.get("code") or ""
            ver = payload.get("verifier") or {}
            if payload.get("feasible") or ver.get("feasible"):
                for s in skills_in_code(code):
                    add(s, item)
            else:  # a failed trace: its error class is the lesson, its code is not trusted ...
                for s in skills_from_error(
                    payload.get("error_class"), str(ver.get("message", "")), f"{item.task_id} {item.text[:200]}"
                ):
                    add(s, item)
                # ... except that code which compiled shows a valid kernel skeleton and API calls
                if ver.get("compiled") and payload.get("error_class") not in (None, "compile_error"):
                    for s in skills_in_code(code) & COMPILE_SKILLS:
                        add(s, item)
            continue
        if item.kind == "experience_failure":
            for s in skills_from_error(payload.get("error_class"), item.text, f"{item.task_id} {item.text}"):
                add(s, item)
            continue
        if item.kind == "experience_success":
            continue  # a success summary names no API; its trace carries the code
        blob = item_blob(item)
        for s, (rule, _) in SKILL_RULES.items():
            if rule(blob):
                add(s, item)
    return Found(src)
