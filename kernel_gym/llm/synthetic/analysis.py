"""Reading a task the way a prompt shows it: the PyTorch reference source and its traced ops.

The synthetic coder may read only what an LLM would get. This module looks at the task's
reference source (``task.source``, executed only to read its module-level constants, the
``get_init_inputs()`` values and the input shapes), its traced aten op names
(``task.torch_ops``, derived from that source), the category and the dtype. It never opens
``solutions/``.

The result is a :class:`Plan`: which kernel shape the coder will write (``map``: one output
element per input element; ``rows``: one row of the last dim per iteration; ``midreduce``:
reduce a middle dim; ``reduceall``: reduce everything to one scalar) and the compute recipe.
Ops the coder has no recipe for give ``kind = "unsupported"`` (it still writes plausible
code, which fails realistically).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, TypedDict

from kernel_gym.tasks.spec import TaskSpec

__all__ = ["Plan", "analyze", "MAP_RECIPES"]

# --------------------------------------------------------------------------- map recipes
# Each recipe: (vector lines, cpu expression, extra skills needed, number of temps).
# Vector lines use x0, x1, x2 (inputs), y (output), t0, t1 (float temps), n (count) and
# {a}, {b} (scalar constants, float literals). The cpu expression uses x0, x1, x2 and {a}, {b}.
# "compose" marks activations built from primitives (the activation_compose skill);
# "select" marks recipes that need Compare + Select.
MAP_RECIPES: dict[str, tuple[list[str], str, tuple[str, ...], int]] = {
    "add": (["Add(y, x0, x1, n);"], "x0 + x1", (), 0),
    "sub": (["Sub(y, x0, x1, n);"], "x0 - x1", (), 0),
    "mul": (["Mul(y, x0, x1, n);"], "x0 * x1", (), 0),
    "div": (["Div(y, x0, x1, n);"], "x0 / x1", (), 0),
    "muls": (["Muls(y, x0, {a}, n);"], "x0 * {a}", (), 0),
    "adds": (["Adds(y, x0, {a}, n);"], "x0 + {a}", (), 0),
    "abs": (["Abs(y, x0, n);"], "fabsf(x0)", (), 0),
    "square": (["Mul(y, x0, x0, n);"], "x0 * x0", (), 0),
    "sqrt": (["Sqrt(y, x0, n);"], "sqrtf(x0)", (), 0),
    "exp": (["Exp(y, x0, n);"], "expf(x0)", (), 0),
    "log": (["Ln(y, x0, n);"], "logf(x0)", (), 0),
    "reciprocal": (["Reciprocal(y, x0, n);"], "1.0f / x0", (), 0),
    "clamp": (["Maxs(y, x0, {a}, n);", "Mins(y, y, {b}, n);"], "fminf(fmaxf(x0, {a}), {b})", (), 0),
    "pow": (["Ln(y, x0, n);", "Muls(y, y, {a}, n);", "Exp(y, y, n);"], "powf(x0, {a})", ("compose",), 0),
    "neg": (["Muls(y, x0, -1.0f, n);"], "-x0", (), 0),
    "maximum": (["Max(y, x0, x1, n);"], "fmaxf(x0, x1)", (), 0),
    "where_gt0": (
        [
            "Compares(mask, x0, 0.0f, CMPMODE::GT, nc);",
            "Select(y, mask, x0, x1, SELMODE::VSEL_TENSOR_TENSOR_MODE, nc);",
        ],
        "x0 > 0.0f ? x0 : x1",
        ("select",),
        0,
    ),
    "lerp": (["Sub(y, x1, x0, n);", "Muls(y, y, {a}, n);", "Add(y, y, x0, n);"], "x0 + {a} * (x1 - x0)", (), 0),
    "addcmul": (["Mul(y, x1, x2, n);", "Muls(y, y, {a}, n);", "Add(y, y, x0, n);"], "x0 + {a} * x1 * x2", (), 0),
    "square_diff": (["Sub(y, x0, x1, n);", "Mul(y, y, y, n);"], "(x0 - x1) * (x0 - x1)", (), 0),
    "relu": (["Relu(y, x0, n);"], "x0 > 0.0f ? x0 : 0.0f", (), 0),
    "leaky_relu": (["LeakyRelu(y, x0, {a}, n);"], "x0 >= 0.0f ? x0 : {a} * x0", (), 0),
    "sigmoid": (
        ["Muls(t0, x0, -1.0f, n);", "Exp(t0, t0, n);", "Adds(t0, t0, 1.0f, n);", "Reciprocal(y, t0, n);"],
        "1.0f / (1.0f + expf(-x0))",
        ("compose",),
        1,
    ),
    "tanh": (
        [
            "Muls(t0, x0, -2.0f, n);",
            "Exp(t0, t0, n);",
            "Adds(t0, t0, 1.0f, n);",
            "Reciprocal(t0, t0, n);",
            "Muls(t0, t0, 2.0f, n);",
            "Adds(y, t0, -1.0f, n);",
        ],
        "tanhf(x0)",
        ("compose",),
        1,
    ),
    "gelu": (
        [
            "Mul(t0, x0, x0, n);",
            "Muls(t0, t0, 0.044715f, n);",
            "Adds(t0, t0, 1.0f, n);",
            "Mul(t0, t0, x0, n);",
            "Muls(t0, t0, -1.5957691f, n);",
            "Exp(t0, t0, n);",
            "Adds(t0, t0, 1.0f, n);",
            "Div(y, x0, t0, n);",
        ],
        "x0 / (1.0f + expf(-1.5957691f * (x0 + 0.044715f * x0 * x0 * x0)))",
        ("compose",),
        1,
    ),
    "silu": (
        ["Muls(t0, x0, -1.0f, n);", "Exp(t0, t0, n);", "Adds(t0, t0, 1.0f, n);", "Div(y, x0, t0, n);"],
        "x0 / (1.0f + expf(-x0))",
        ("compose",),
        1,
    ),
    "softplus": (
        [
            "Abs(t0, x0, n);",
            "Muls(t0, t0, -1.0f, n);",
            "Exp(t0, t0, n);",
            "Adds(t0, t0, 1.0f, n);",
            "Ln(t0, t0, n);",
            "Maxs(y, x0, 0.0f, n);",
            "Add(y, y, t0, n);",
        ],
        "fmaxf(x0, 0.0f) + log1pf(expf(-fabsf(x0)))",
        ("compose",),
        1,
    ),
    "elu": (
        [
            "Mins(t0, x0, 0.0f, n);",
            "Exp(t0, t0, n);",
            "Adds(t0, t0, -1.0f, n);",
            "Muls(t0, t0, {a}, n);",
            "Maxs(y, x0, 0.0f, n);",
            "Add(y, y, t0, n);",
        ],
        "x0 > 0.0f ? x0 : {a} * (expf(x0) - 1.0f)",
        ("compose",),
        1,
    ),
    "selu": (
        [
            "Mins(t0, x0, 0.0f, n);",
            "Exp(t0, t0, n);",
            "Adds(t0, t0, -1.0f, n);",
            "Muls(t0, t0, 1.6732632423543772f, n);",
            "Maxs(y, x0, 0.0f, n);",
            "Add(y, y, t0, n);",
            "Muls(y, y, 1.0507009873554805f, n);",
        ],
        "1.0507009873554805f * (x0 > 0.0f ? x0 : 1.6732632423543772f * (expf(x0) - 1.0f))",
        ("compose",),
        1,
    ),
    "hardtanh": (["Maxs(y, x0, {a}, n);", "Mins(y, y, {b}, n);"], "fminf(fmaxf(x0, {a}), {b})", (), 0),
    "hardsigmoid": (
        ["Muls(y, x0, 0.16666667f, n);", "Adds(y, y, 0.5f, n);", "Maxs(y, y, 0.0f, n);", "Mins(y, y, 1.0f, n);"],
        "fminf(fmaxf(x0 / 6.0f + 0.5f, 0.0f), 1.0f)",
        ("compose",),
        0,
    ),
    "hardswish": (
        [
            "Muls(t0, x0, 0.16666667f, n);",
            "Adds(t0, t0, 0.5f, n);",
            "Maxs(t0, t0, 0.0f, n);",
            "Mins(t0, t0, 1.0f, n);",
            "Mul(y, x0, t0, n);",
        ],
        "x0 * fminf(fmaxf(x0 / 6.0f + 0.5f, 0.0f), 1.0f)",
        ("compose",),
        1,
    ),
    "softsign": (
        ["Abs(t0, x0, n);", "Adds(t0, t0, 1.0f, n);", "Div(y, x0, t0, n);"],
        "x0 / (1.0f + fabsf(x0))",
        ("compose",),
        1,
    ),
    "mish": (
        [
            "Mins(t0, x0, 20.0f, n);",
            "Exp(t0, t0, n);",
            "Adds(t0, t0, 1.0f, n);",
            "Mul(t0, t0, t0, n);",
            "Adds(t1, t0, 1.0f, n);",
            "Adds(t0, t0, -1.0f, n);",
            "Div(t0, t0, t1, n);",
            "Mul(y, x0, t0, n);",
        ],
        "x0 * tanhf(log1pf(expf(x0)))",
        ("compose",),
        2,
    ),
    "log_sigmoid": (
        [
            "Abs(t0, x0, n);",
            "Muls(t0, t0, -1.0f, n);",
            "Exp(t0, t0, n);",
            "Adds(t0, t0, 1.0f, n);",
            "Ln(t0, t0, n);",
            "Mins(y, x0, 0.0f, n);",
            "Sub(y, y, t0, n);",
        ],
        "fminf(x0, 0.0f) - log1pf(expf(-fabsf(x0)))",
        ("compose",),
        1,
    ),
    # loss bodies (map part of a reduce-all): result in y, summed afterwards
    "abs_diff": (["Sub(y, x0, x1, n);", "Abs(y, y, n);"], "fabsf(x0 - x1)", (), 0),
    "huber": (
        [
            "Sub(y, x0, x1, n);",
            "Abs(y, y, n);",
            "Mins(t0, y, {a}, n);",
            "Muls(t1, t0, 0.5f, n);",
            "Sub(y, y, t1, n);",
            "Mul(y, y, t0, n);",
        ],
        "(fabsf(x0 - x1) - 0.5f * fminf(fabsf(x0 - x1), {a})) * fminf(fabsf(x0 - x1), {a})",
        ("compose",),
        2,
    ),
    "hinge": (
        ["Mul(y, x0, x1, n);", "Muls(y, y, -1.0f, n);", "Adds(y, y, 1.0f, n);", "Maxs(y, y, 0.0f, n);"],
        "fmaxf(1.0f - x0 * x1, 0.0f)",
        (),
        0,
    ),
    "identity": ([], "x0", (), 0),
}

# smooth_l1 (beta 1) is huber with delta 1 divided by delta: same as huber with a = 1.


@dataclass
class Plan:
    """What the coder will write for a task."""

    kind: str  # map | rows | midreduce | reduceall | scan | pool | norm | matmul | cube | unsupported
    recipe: str  # key of MAP_RECIPES or a row/reduce recipe name
    dtype: str  # "float" or "half" (element type in GM)
    n_inputs: int = 1
    shapes: list[tuple[int, ...]] = field(default_factory=list)
    out_shape: tuple[int, ...] = ()
    total: int = 0  # elements of the (first) input
    rows: int = 1  # rows: number of rows; midreduce: outer
    cols: int = 1  # rows: row length; midreduce: inner
    red: int = 1  # midreduce: length of the reduced dim
    consts: dict[str, float] = field(default_factory=dict)  # a, b
    scale: float = 1.0  # reduceall / rows: final scale (mean = 1/N)
    weight_attr: str | None = None  # rows: name of a per-column weight parameter of the model
    init_src: str = ""  # body of the reference __init__ to copy (parameters)
    init_sig: str = ""  # parameter list of the reference __init__
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # scan / pool / norm / matmul parameters

    @property
    def tail(self) -> bool:
        """Does a row or the whole tensor leave a remainder that is not a multiple of 32 B?"""
        esize = 2 if self.dtype == "half" else 4
        return (self.cols * esize) % 32 != 0 or (self.total * esize) % 32 != 0


def _fmt(v: float) -> str:
    s = repr(float(v))
    if "e" in s or "inf" in s or "nan" in s:
        s = f"{float(v):.9e}"
    return s + "f"


def _ref_info(task: TaskSpec) -> tuple[list[Any], list[tuple[int, ...]]]:
    """Init inputs and input shapes, read from the reference source (as a prompt shows it)."""
    init: list[Any] = []
    try:
        mod = task.module()
        init = list(mod.get_init_inputs())
    except Exception:  # noqa: BLE001 - a broken reference: no constants
        init = []
    return init, [tuple(int(d) for d in s) for s in task.input_shapes]


_SUPER_INIT = re.compile(r"super\([^)]*\)\.__init__")


def _init_parts(src: str) -> tuple[str, str]:
    """(signature, body) of the reference ``Model.__init__``, without its super call and docstring."""
    m = re.search(r"def __init__\(self(?P<sig>[^)]*)\)[^:]*:\n(?P<body>(?:[ \t]+.*\n|\n)+?)(?=[ \t]+def |\S)", src)
    if not m:
        return "", ""
    sig = m.group("sig").strip().lstrip(",").strip()
    lines, quote = [], ""
    for ln in m.group("body").splitlines():
        text = ln.strip()
        if quote:  # inside a docstring (KernelBench's run over several lines)
            quote = "" if quote in text else quote
            continue
        if text.startswith(('"""', "'''")):
            q = text[:3]
            quote = "" if text.count(q) >= 2 else q
            continue
        # either spelling of the super call: KernelBench's files write super(Model, self).__init__()
        if text and not _SUPER_INIT.search(ln):
            lines.append(ln)
    return sig, "\n".join(lines)


def _reduce_dim(src: str, init: list[Any], ndim: int) -> int | None:
    m = re.search(r"dim\s*=\s*(-?\d+)", src.split("def get_inputs")[0])
    if m:
        d = int(m.group(1))
    elif "dim=self.dim" in src.replace(" ", "") and init and isinstance(init[0], int):
        d = int(init[0])
    else:
        return None
    return d % ndim


class _PlanBase(TypedDict):
    """The :class:`Plan` fields every plan of one task shares."""

    dtype: str
    n_inputs: int
    shapes: list[tuple[int, ...]]
    total: int
    init_sig: str
    init_src: str


def analyze(task: TaskSpec) -> Plan:
    """Turn a task into a :class:`Plan` from its reference source and traced ops."""
    init, shapes = _ref_info(task)
    ops = tuple(o.replace("aten.", "") for o in task.torch_ops)
    src = task.source
    dtype = "half" if task.dtype == "float16" else ("float" if task.dtype == "float32" else task.dtype)
    shp: tuple[int, ...] = shapes[0] if shapes else ()
    total = int(math.prod(shp)) if shp else 0
    sig, body = _init_parts(src)
    fwd = src.split("def forward", 1)[-1].split("\n\n")[0]
    nums = [float(v) for v in init if isinstance(v, (int, float)) and not isinstance(v, bool)]
    base = _PlanBase(dtype=dtype, n_inputs=len(shapes), shapes=shapes, total=total, init_sig=sig, init_src=body)
    rows = total // shp[-1] if shp else 1
    cols = shp[-1] if shp else 1

    def mp(recipe: str, **consts: float) -> Plan:
        return Plan(kind="map", recipe=recipe, out_shape=shp, consts=consts, rows=rows, cols=cols, **base)

    cat = task.category
    if cat in ("elementwise", "activation"):
        one = ops[0] if len(ops) == 1 else None
        if ops == ("gt", "where"):
            return mp("where_gt0")
        if ops == ("sub", "mul"):
            return mp("square_diff")
        if ops == ("abs", "add", "div"):
            return mp("softsign")
        if one == "mul":
            if len(shapes) == 2:
                return mp("mul")
            if nums:
                return mp("muls", a=nums[0])
            return mp("square")
        if one == "add":
            return mp("add") if len(shapes) == 2 else mp("adds", a=nums[0] if nums else 0.0)
        if one in ("clamp", "hardtanh"):
            if nums and len(nums) >= 2:
                return mp("clamp", a=nums[0], b=nums[1])
            m = re.search(r"relu6", fwd)
            return mp("clamp", a=0.0, b=6.0) if m else mp("hardtanh", a=-1.0, b=1.0)
        if one == "pow":
            return mp("pow", a=nums[0] if nums else 2.0)
        if one in ("lerp", "addcmul", "leaky_relu"):
            return mp(one, a=nums[0] if nums else 0.01)
        if one == "elu":
            if "selu" in fwd:
                return mp("selu")
            return mp("elu", a=nums[0] if nums else 1.0)
        if one == "log_sigmoid_forward":
            return mp("log_sigmoid")
        if one in MAP_RECIPES:
            return mp(one)
        return Plan(kind="unsupported", recipe="+".join(ops), note="no recipe for this op chain", out_shape=shp, **base)

    if cat == "softmax":
        d = _reduce_dim(src, init, len(shp))
        if d == len(shp) - 1:
            rec = "log_softmax" if "_log_softmax" in ops else "softmax"
            return Plan(kind="rows", recipe=rec, out_shape=shp, rows=rows, cols=cols, **base)
        return Plan(kind="unsupported", recipe="softmax_middle_dim", out_shape=shp, **base)

    if cat == "reduction":
        op = ops[0] if ops else ""
        if op in ("argmax", "argmin"):
            return Plan(kind="unsupported", recipe=op, out_shape=shp, **base)
        if op == "mean" and "dim" not in fwd.split("return", 1)[-1]:
            return Plan(kind="reduceall", recipe="identity", out_shape=(), scale=1.0 / total, **base)
        d = _reduce_dim(fwd + src, init, len(shp))
        if d is None:
            return Plan(kind="unsupported", recipe=op, out_shape=shp, **base)
        kind_op = {"sum": "sum", "mean": "mean", "max": "max", "min": "min", "prod": "prod"}.get(op)
        if kind_op is None:
            return Plan(kind="unsupported", recipe=op, out_shape=shp, **base)
        keep = "keepdim=True" in fwd.replace(" ", "").replace("keepdim=True", "keepdim=True")
        out = (
            tuple(1 if i == d else s for i, s in enumerate(shp))
            if keep
            else tuple(s for i, s in enumerate(shp) if i != d)
        )
        if d == len(shp) - 1:
            return Plan(
                kind="rows",
                recipe="r" + kind_op,
                out_shape=out,
                rows=rows,
                cols=cols,
                scale=1.0 / cols if kind_op == "mean" else 1.0,
                **base,
            )
        outer = int(math.prod(shp[:d])) if d > 0 else 1
        inner = int(math.prod(shp[d + 1 :]))
        return Plan(
            kind="midreduce",
            recipe=kind_op,
            out_shape=out,
            rows=outer,
            cols=inner,
            red=shp[d],
            scale=1.0 / shp[d] if kind_op == "mean" else 1.0,
            **base,
        )

    if cat == "normalization":
        d = _reduce_dim(fwd + src, init, len(shp)) if shp else None
        last = d is None or d == len(shp) - 1
        if "mean" in ops and ("rsqrt" in ops or "sqrt" in ops) and last:
            eps = nums[-1] if nums else 1e-6
            weight = "weight" if "self.weight" in fwd else None
            return Plan(
                kind="rows",
                recipe="rmsnorm",
                out_shape=shp,
                rows=rows,
                cols=cols,
                consts={"a": eps},
                weight_attr=weight,
                **base,
            )
        if ops == ("abs", "sum", "div") and last:
            return Plan(kind="rows", recipe="l1norm", out_shape=shp, rows=rows, cols=cols, **base)
        if ops == ("linalg_vector_norm", "div") and "dim=1" in fwd and len(shp) == 2:
            return Plan(kind="rows", recipe="l2norm", out_shape=shp, rows=rows, cols=cols, **base)
        p = analyze_norm(src, fwd, ops, shp, nums, init, base)
        if p is not None:
            return p
        return Plan(kind="unsupported", recipe="+".join(ops), out_shape=shp, **base)

    if cat == "loss":
        c: dict[str, float]
        if ops == ("sub", "pow", "mean"):
            rec, c = "square_diff", {}
        elif ops == ("sub", "abs", "mean"):
            rec, c = "abs_diff", {}
        elif ops == ("smooth_l1_loss",):
            rec, c = "huber", {"a": 1.0}
        elif ops == ("huber_loss",):
            rec, c = "huber", {"a": nums[0] if nums else 1.0}
        elif ops == ("mul", "rsub", "clamp", "mean"):
            rec, c = "hinge", {}
        else:
            return Plan(kind="unsupported", recipe="+".join(ops), out_shape=(), **base)
        return Plan(kind="reduceall", recipe=rec, out_shape=(), consts=c, scale=1.0 / total, **base)

    if cat == "matmul_epilogue":
        ep = analyze_epilogue(src, ops, init, base)
        if ep is not None:
            return ep
    if cat in ("scan", "pooling", "matmul"):
        fn = {"scan": analyze_scan, "pooling": analyze_pool, "matmul": analyze_matmul}[cat]
        p = fn(src, fwd, ops, shapes, nums, init, base)
        if p is not None:
            return p

    return Plan(
        kind="unsupported", recipe="+".join(ops) or cat, out_shape=shp, note=f"no template for category {cat}", **base
    )


def consts_fmt(plan: Plan) -> dict[str, str]:
    """Scalar constants as C float literals for the templates."""
    return {k: _fmt(v) for k, v in plan.consts.items()} | {k: "0.0f" for k in ("a", "b") if k not in plan.consts}


# Structured families: scans, pooling, statistics normalisations and matmuls.
def analyze_scan(
    src: str,
    fwd: str,
    ops: tuple[str, ...],
    shapes: list[tuple[int, ...]],
    nums: list[float],
    init: list[Any],
    base: _PlanBase,
) -> Plan | None:
    shp: tuple[int, ...] = shapes[0] if shapes else ()
    if len(shp) < 1:
        return None
    d = int(nums[0]) % len(shp) if nums else len(shp) - 1
    if d != len(shp) - 1:
        return None
    if "cumprod" in ops:
        rec = "cumprod"
    elif "cumsum" not in ops:
        return None
    elif "flip" in ops:
        rec = "revcumsum"
    elif ops == ("cumsum", "sub"):
        rec = "exclusive"
    elif ops == ("mul", "cumsum") and len(shapes) == 2:
        rec = "masked"
    elif ops == ("cumsum",):
        rec = "cumsum"
    else:
        return None
    cols = shp[-1]
    return Plan(kind="scan", recipe=rec, out_shape=shp, rows=int(math.prod(shp)) // cols, cols=cols, **base)


def analyze_pool(
    src: str,
    fwd: str,
    ops: tuple[str, ...],
    shapes: list[tuple[int, ...]],
    nums: list[float],
    init: list[Any],
    base: _PlanBase,
) -> Plan | None:
    shp: tuple[int, ...] = shapes[0] if shapes else ()
    one_d = "pool1d" in fwd
    if (one_d and len(shp) != 3) or (not one_d and len(shp) != 4) or len(nums) < 2:
        return None
    op = "max" if "max_pool" in fwd else ("avg" if "avg_pool" in fwd else None)
    if op is None or "ceil_mode=True" in fwd.replace(" ", ""):
        return None
    k, s = int(nums[0]), int(nums[1])
    third = int(nums[2]) if len(nums) > 2 else 0
    dil, pad = (third, 0) if "dilation" in fwd else (1, third)
    if one_d:
        H, W = 1, shp[-1]
        KH, SH, PH, DH = 1, 1, 0, 1
    else:
        H, W = shp[-2], shp[-1]
        KH, SH, PH, DH = k, s, pad, dil
    Ho = (H + 2 * PH - DH * (KH - 1) - 1) // SH + 1
    Wo = (W + 2 * pad - dil * (k - 1) - 1) // s + 1
    planes = int(math.prod(shp[: -2 if not one_d else -1]))
    out = tuple(shp[:-1]) + (Wo,) if one_d else tuple(shp[:-2]) + (Ho, Wo)
    ex = dict(
        op=op,
        H=H,
        W=W,
        Ho=Ho,
        Wo=Wo,
        KH=KH,
        KW=k,
        SH=SH,
        SW=s,
        PH=PH,
        PW=pad,
        DH=DH,
        DW=dil,
        planes=planes,
        div=float(KH * k),
    )
    return Plan(kind="pool", recipe=f"{op}pool", out_shape=out, rows=planes, cols=H * W, extra=ex, **base)


def _attr(src: str, cls: str) -> str | None:
    m = re.search(r"self\.(\w+)\s*=\s*nn\." + cls, src)
    return m.group(1) if m else None


def analyze_norm(
    src: str,
    fwd: str,
    ops: tuple[str, ...],
    shp: tuple[int, ...],
    nums: list[float],
    init: list[Any],
    base: _PlanBase,
) -> Plan | None:
    """LayerNorm / GroupNorm / InstanceNorm / BatchNorm (eval) / Frobenius: per group statistics
    over `L` contiguous elements, then y = x * a + b per segment of `S` elements."""
    if not shp:
        return None
    total = int(math.prod(shp))
    eps = 1e-5
    ex: dict[str, Any] = {"eps": eps, "C": 1, "attr": None, "affine": None, "stats": True}
    if "native_layer_norm" in ops:
        attr = _attr(src, "LayerNorm")
        ns = init[0] if init else shp[-1]
        L = int(math.prod(ns)) if isinstance(ns, (tuple, list)) else int(ns)
        ex.update(
            mode="layer", L=L, S=L, attr=attr, affine="elem" if attr and "elementwise_affine=False" not in src else None
        )
    elif "native_group_norm" in ops and len(shp) >= 3:
        attr = _attr(src, "GroupNorm")
        g = int(nums[0]) if nums else 1
        C, HW = shp[1], int(math.prod(shp[2:]))
        if C % g:
            return None
        ex.update(
            mode="group",
            L=(C // g) * HW,
            S=HW,
            C=C,
            attr=attr,
            affine="chan" if attr and "affine=False" not in src else None,
        )
    elif "InstanceNorm" in src and len(shp) >= 3:
        attr = _attr(src, r"InstanceNorm\dd")
        C, HW = shp[1], int(math.prod(shp[2:]))
        ex.update(mode="instance", L=HW, S=HW, C=C, attr=attr, affine="chan" if attr and "affine=True" in src else None)
    elif "native_batch_norm" in ops and "training=False" in fwd.replace(" ", "") and len(shp) >= 2:
        attr = _attr(src, r"BatchNorm\dd")
        if attr is None:
            return None
        C, S = shp[1], int(math.prod(shp[2:])) if len(shp) > 2 else 1
        ex.update(mode="batch", L=S, S=S, C=C, attr=attr, affine="bn", stats=False)
    elif ops == ("linalg_vector_norm", "div") and "fro" in fwd:
        S = int(math.prod(shp[-2:])) if len(shp) >= 2 else total
        ex.update(mode="frobenius", L=total, S=S)
    else:
        return None
    if total % ex["L"] or total % ex["S"]:
        return None
    return Plan(
        kind="norm",
        recipe=ex["mode"] + "norm",
        out_shape=shp,
        rows=total // ex["S"],
        cols=ex["S"],
        consts={"a": eps},
        extra=ex,
        **base,
    )


def analyze_matmul(
    src: str,
    fwd: str,
    ops: tuple[str, ...],
    shapes: list[tuple[int, ...]],
    nums: list[float],
    init: list[Any],
    base: _PlanBase,
) -> Plan | None:
    f = fwd.split("return", 1)[-1]
    if ops == ("mul",) and len(shapes) == 1:
        shp = shapes[0]
        return Plan(
            kind="map",
            recipe="muls",
            out_shape=shp,
            consts={"a": nums[0] if nums else 1.0},
            rows=int(math.prod(shp)) // shp[-1],
            cols=shp[-1],
            **base,
        )
    if len(shapes) != 2:
        return None
    sa, sb = shapes
    if ops == ("unsqueeze", "mul") and len(sa) == 1 and len(sb) == 2 and sa[0] == sb[0]:
        return Plan(
            kind="matmul",
            recipe="diag",
            out_shape=sb,
            rows=sb[0],
            cols=sb[1],
            extra=dict(mode="diag", batch=1, M=sb[0], K=1, N=sb[1]),
            **base,
        )
    if not ({"mm", "bmm"} & set(ops)):
        return None
    ta = bool(re.search(r"\bA\.T\b|\bA\.t\(\)|A\.transpose", f))
    tb = bool(re.search(r"\bB\.T\b|\bB\.t\(\)|B\.transpose", f))
    tril = "tril" in ops
    if len(sa) == 3 and len(sb) == 3:
        if ta or tb or sa[0] != sb[0]:
            return None
        batch, M, K, N = sa[0], sa[1], sa[2], sb[2]
        sbatch = True
    elif len(sb) == 2 and len(sa) >= 2:
        batch, sbatch = 1, False
        if ta:
            if len(sa) != 2:
                return None
            K, M = sa
        else:
            M, K = int(math.prod(sa[:-1])), sa[-1]
        N = sb[0] if tb else sb[1]
        if (sb[1] if tb else sb[0]) != K:
            return None
    else:
        return None
    out = (tuple(sa[:-1]) + (N,)) if not ta else (M, N)
    if len(sa) == 3 and len(sb) == 3:
        out = (batch, M, N)
    form = "dot" if (tb or N == 1) else "axpy"
    # the cube templates take A row-major (no A^T) and a full product (no tril pass), N > 1
    cube = not ta and not tril and N > 1 and base["dtype"] == "float"
    return Plan(
        kind="matmul",
        recipe=f"mm_{form}",
        out_shape=out,
        rows=batch * M,
        cols=N,
        extra=dict(mode=form, batch=batch, M=M, K=K, N=N, ta=ta, tb=tb, tril=tril, sbatch=sbatch, cube=cube),
        **base,
    )


def _init_values(sig: str, init: list[Any]) -> dict[str, float]:
    """``__init__`` parameter name -> its numeric value from ``get_init_inputs()``."""
    names = [p.split(":")[0].split("=")[0].strip() for p in sig.split(",") if p.strip()]
    pairs = zip(names, init, strict=False)  # a shorter init list leaves the last names out
    return {n: float(v) for n, v in pairs if isinstance(v, (int, float)) and not isinstance(v, bool)}


def analyze_epilogue(task_source: str, ops: tuple[str, ...], init: list[Any], base: _PlanBase) -> Plan | None:
    """Level2 matmul + epilogue: C = A @ B (or x @ W^T of a Linear) on the cube unit into an fp32
    workspace, then the element-wise tail on the vector unit, one row of C at a time.

    ``extra["steps"]`` lists the epilogue: ``bias`` (Linear bias row), ``pbias`` (a bias
    parameter row), ``scale`` / ``div`` (constant), ``residual`` (+ the input x), ``clamp``, an
    activation recipe of :data:`MAP_RECIPES`, or ``rowsum`` (sum over the last dim, keepdim).
    """
    shapes = base["shapes"]
    if base["dtype"] != "float" or not shapes:
        return None
    src = task_source
    fwd = src.split("def forward", 1)[-1].split("\n\n")[0]
    vals = _init_values(base["init_sig"], init)
    lin = _attr(src, "Linear")
    steps: list[str] = []
    consts: dict[str, float] = {}
    if lin is not None and len(shapes) == 1 and "addmm" in ops:
        M, K = int(math.prod(shapes[0][:-1])), shapes[0][-1]
        N = int(vals.get("out_features", vals.get("features", 0)))
        batch, sbatch, tb = 1, False, True
        b_expr, steps = f"self.{lin}.weight", ["bias"]
        rest = ops[ops.index("addmm") + 1 :]
    elif ops[:1] in (("bmm",), ("mm",)) and len(shapes) == 2 and len(shapes[0]) == 3:
        batch, M, K = shapes[0]
        N = shapes[1][-1]
        sbatch, tb, lin, b_expr = True, False, None, "x1"
        rest = ops[1:]
    elif ops[:1] == ("mm",) and len(shapes) == 1 and re.search(r"self\.weight\s*=", src):
        M, K = int(math.prod(shapes[0][:-1])), shapes[0][-1]
        N = int(vals.get("out_features", 0))
        batch, sbatch, tb, b_expr = 1, False, False, "self.weight"
        rest = ops[1:]
    else:
        return None
    if N <= 0:
        return None
    for op in rest:
        if op in ("relu", "gelu", "sigmoid", "silu", "tanh"):
            steps.append(op)
        elif op == "mul":
            consts["s"] = vals.get("scale", 1.0)
            steps.append("scale")
        elif op == "div":
            consts["s"] = 1.0 / vals.get("divisor", 1.0)
            steps.append("scale")
        elif op == "add" and re.search(r"\+\s*x\b", fwd) and K == N:
            steps.append("residual")
        elif op == "add" and "self.bias" in fwd:
            steps.append("pbias")
        elif op == "clamp":
            consts["a"], consts["b"] = vals.get("min_val", 0.0), vals.get("max_val", 0.0)
            steps.append("clamp")
        elif op == "sum" and "dim=1" in fwd.replace(" ", "") and "keepdim=True" in fwd.replace(" ", ""):
            steps.append("rowsum")
        else:
            return None
    out = (batch, M, N) if sbatch else (M, 1 if "rowsum" in steps else N)
    return Plan(
        kind="cube",
        recipe="mm_" + "_".join(steps),
        out_shape=out,
        rows=batch * M,
        cols=N,
        consts=consts,
        extra=dict(
            mode="epilogue", batch=batch, M=M, K=K, N=N, tb=tb, sbatch=sbatch, steps=steps, b_expr=b_expr, cube=True
        ),
        **base,
    )
