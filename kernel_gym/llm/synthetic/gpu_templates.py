"""CUDA and Triton templates of the synthetic coder (``cuda`` and ``triton`` backends).

Same plans as the C++ templates (:mod:`.cpu_templates`): ``map`` (elementwise and activations),
``reduceall`` (global mean, losses), ``rows`` (last-dim reductions, softmax, log-softmax, RMS/L1/L2
normalisation), ``midreduce``, ``scan``, ``pool`` and the simple ``matmul`` forms. Statistics
normalisations (``norm``) and matmul + epilogue (``cube``) have no GPU template: they are written
as plausible code that fails (``unsupported``).

The faults of the GPU languages (:func:`gpu_relevant_skills` says which apply to a plan):

- ``kernel_structure`` missing: CUDA host launcher without ``extern "C"`` (the loader binds
  nothing: init_error); Triton kernel without ``@triton.jit`` (``kernel[grid]`` fails at the call);
- ``tail_handling`` missing: grids rounded down and no bounds guard / mask (sizes that do not
  divide the block lose their tail: numerical_mismatch);
- ``activation_compose`` missing: an activation function the language does not have
  (CUDA ``geluf(x)``, Triton ``tl.gelu(x)``; compile_error); none where the coder's guess is real
  (CUDA ``tanhf``/``powf``, Triton ``tl.sigmoid``);
- ``dtype_rules`` missing (CUDA, fp16 tasks): the half tensors declared ``float*`` (the loader
  refuses the call); Triton loads any dtype, so no fault;
- ``reduction_workspace`` missing: CUDA block reductions without ``__syncthreads()`` between the
  tree steps and a plain ``+=`` instead of ``atomicAdd`` across blocks (races); Triton whole-tensor
  reductions storing each program's partial instead of ``tl.atomic_add``.

Knobs: ``tile`` sets the block size (CUDA: ``tile / 8`` threads per block, 64-1024; Triton:
``BLOCK = tile``, a power of two in 128-8192; matmul tiles 32 or, from ``tile`` 4096, 64); Triton
takes ``bufn`` as its warps per program (4 or 8); ``blocks`` is recorded only (a GPU grid covers
the tensor). The knobs are recorded in a comment so a refinement starts from the parent's.
"""

from __future__ import annotations

import json
import re
import textwrap

from kernel_gym.llm.synthetic.analysis import MAP_RECIPES, Plan, _fmt, consts_fmt
from kernel_gym.llm.synthetic.faults import ADVANCED_API, Knobs, relevant_skills

__all__ = ["GPU_KINDS", "TRITON_MAP", "gpu_relevant_skills", "render_cuda", "render_triton"]

#: plan kinds the GPU templates write
GPU_KINDS = ("map", "reduceall", "rows", "midreduce", "scan", "pool", "matmul")

#: activation guesses that are real functions of the language (no fault without the skill)
_REAL_GUESS = {"cuda": {"tanh", "pow"}, "triton": {"sigmoid"}}

#: recipe -> Triton statements over x0, x1, x2 (float32 blocks) and {a}, {b}; the last sets y
TRITON_MAP: dict[str, list[str]] = {
    "add": ["y = x0 + x1"],
    "sub": ["y = x0 - x1"],
    "mul": ["y = x0 * x1"],
    "div": ["y = x0 / x1"],
    "muls": ["y = x0 * {a}"],
    "adds": ["y = x0 + {a}"],
    "abs": ["y = tl.abs(x0)"],
    "square": ["y = x0 * x0"],
    "sqrt": ["y = tl.sqrt(x0)"],
    "exp": ["y = tl.exp(x0)"],
    "log": ["y = tl.log(x0)"],
    "reciprocal": ["y = 1.0 / x0"],
    "clamp": ["y = tl.minimum(tl.maximum(x0, {a}), {b})"],
    "pow": ["y = tl.exp({a} * tl.log(x0))"],
    "neg": ["y = -x0"],
    "maximum": ["y = tl.maximum(x0, x1)"],
    "where_gt0": ["y = tl.where(x0 > 0.0, x0, x1)"],
    "lerp": ["y = x0 + {a} * (x1 - x0)"],
    "addcmul": ["y = x0 + {a} * x1 * x2"],
    "square_diff": ["t0 = x0 - x1", "y = t0 * t0"],
    "relu": ["y = tl.maximum(x0, 0.0)"],
    "leaky_relu": ["y = tl.where(x0 >= 0.0, x0, {a} * x0)"],
    "sigmoid": ["y = 1.0 / (1.0 + tl.exp(-x0))"],
    "tanh": ["y = 2.0 / (1.0 + tl.exp(-2.0 * x0)) - 1.0"],
    "gelu": ["t0 = x0 + 0.044715 * x0 * x0 * x0", "y = x0 / (1.0 + tl.exp(-1.5957691 * t0))"],
    "silu": ["y = x0 / (1.0 + tl.exp(-x0))"],
    "softplus": ["y = tl.maximum(x0, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x0)))"],
    "elu": ["y = tl.where(x0 > 0.0, x0, {a} * (tl.exp(tl.minimum(x0, 0.0)) - 1.0))"],
    "selu": [
        "t0 = 1.6732632423543772 * (tl.exp(tl.minimum(x0, 0.0)) - 1.0)",
        "y = 1.0507009873554805 * tl.where(x0 > 0.0, x0, t0)",
    ],
    "hardtanh": ["y = tl.minimum(tl.maximum(x0, {a}), {b})"],
    "hardsigmoid": ["y = tl.minimum(tl.maximum(x0 / 6.0 + 0.5, 0.0), 1.0)"],
    "hardswish": ["y = x0 * tl.minimum(tl.maximum(x0 / 6.0 + 0.5, 0.0), 1.0)"],
    "softsign": ["y = x0 / (1.0 + tl.abs(x0))"],
    "mish": ["t0 = tl.exp(tl.minimum(x0, 20.0)) + 1.0", "t0 = t0 * t0", "y = x0 * (t0 - 1.0) / (t0 + 1.0)"],
    "log_sigmoid": ["y = tl.minimum(x0, 0.0) - tl.log(1.0 + tl.exp(-tl.abs(x0)))"],
    "abs_diff": ["y = tl.abs(x0 - x1)"],
    "huber": ["t0 = tl.abs(x0 - x1)", "t1 = tl.minimum(t0, {a})", "y = (t0 - 0.5 * t1) * t1"],
    "hinge": ["y = tl.maximum(1.0 - x0 * x1, 0.0)"],
    "identity": ["y = x0"],
}


def gpu_relevant_skills(plan: Plan, language: str) -> set[str]:
    """Skills whose absence shows up as a fault in this language's kernel for ``plan``."""
    if plan.kind not in GPU_KINDS:
        return set()
    base = relevant_skills(plan)
    s = {"kernel_structure", "tail_handling"}
    if "activation_compose" in base and plan.recipe not in _REAL_GUESS.get(language, set()):
        s.add("activation_compose")
    if language == "cuda" and plan.dtype == "half":
        s.add("dtype_rules")
    reduces = ("rows", "reduceall") if language == "cuda" else ("reduceall",)
    if plan.kind in reduces:
        s.add("reduction_workspace")
    return s


def _pow2(v: int, lo: int, hi: int) -> int:
    p = lo
    while p * 2 <= min(max(v, lo), hi):
        p *= 2
    return p


def _next_pow2(v: int) -> int:
    p = 16
    while p < v:
        p *= 2
    return p


NEG_INF = "float('-inf')"


def _knob_note(knobs: Knobs) -> str:
    return json.dumps({"tile": knobs.tile, "blocks": knobs.blocks, "bufn": knobs.bufn}, sort_keys=True)


def _hallucinated(recipe: str, language: str) -> str:
    name = ADVANCED_API.get(recipe, recipe).lower()
    return f"{name}f" if language == "cuda" else f"tl.{name}"


# --------------------------------------------------------------------------- CUDA
def _wrap_cuda(plan: Plan, knobs: Knobs, cuda: str, fn: str, call: str, out_expr: str) -> str:
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    sig = f", {plan.init_sig}" if plan.init_sig else ""
    body = textwrap.indent(textwrap.dedent(plan.init_src), " " * 8) if plan.init_src else ""
    contig = "".join(f"        x{i} = x{i}.contiguous()\n" for i in range(plan.n_inputs))
    return f'''"""CUDA kernel for {plan.recipe} (written by the synthetic coder)."""
import torch
import torch.nn as nn
from kernel_gym.backends.cuda import load_cuda

# synthetic-coder knobs: {_knob_note(knobs)}
CUDA = r"""
{cuda}
"""


class ModelNew(nn.Module):
    def __init__(self{sig}):
        super().__init__()
{body}
        self.lib = load_cuda(CUDA, functions=["{fn}"])

    def forward(self, {args}):
{contig}        y = {out_expr}
        {call}
        return y
'''


def _cuda_prelude(plan: Plan, knobs: Knobs) -> tuple[str, str]:
    """(prelude, host element type): includes, ``T`` and the float conversions."""
    if plan.dtype == "half" and not knobs.half_as_float:
        return (
            "#include <cstdint>\n#include <cmath>\n#include <cuda_fp16.h>\ntypedef __half T;\n"
            "__device__ __forceinline__ float to_f(T v) { return __half2float(v); }\n"
            "__device__ __forceinline__ T from_f(float v) { return __float2half(v); }\n",
            "__half",
        )
    return (
        "#include <cstdint>\n#include <cmath>\ntypedef float T;\n"
        "__device__ __forceinline__ float to_f(T v) { return v; }\n"
        "__device__ __forceinline__ T from_f(float v) { return v; }\n",
        "float",
    )


def _grid(knobs: Knobs, n: str, threads: int) -> str:
    if knobs.no_tail:  # whole blocks only
        return f"(unsigned)(({n}) / {threads})"
    return f"(unsigned)((({n}) + {threads - 1}) / {threads})"


def _guard(knobs: Knobs, cond: str) -> str:
    return "" if knobs.no_tail else f"if (!({cond})) return;\n    "


def _block_reduce(knobs: Knobs) -> str:
    sync = "" if knobs.bad_workspace else "__syncthreads();"
    return (
        "template <int OP> __device__ float block_reduce(float s, float* red) {\n"
        f"    red[threadIdx.x] = s; {sync}\n"
        "    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {\n"
        "        if (threadIdx.x < k) {\n"
        "            float a = red[threadIdx.x], b = red[threadIdx.x + k];\n"
        "            red[threadIdx.x] = OP == 0 ? a + b : OP == 1 ? fmaxf(a, b) : OP == 2 ? fminf(a, b) : a * b;\n"
        "        }\n"
        f"        {sync}\n"
        "    }\n"
        f"    float r = red[0]; {sync}\n    return r;\n}}\n"
    )


def _map_expr_cuda(plan: Plan, knobs: Knobs) -> str:
    if knobs.advanced_api:
        return f"{_hallucinated(plan.recipe, 'cuda')}(x0)"
    return MAP_RECIPES[plan.recipe][1].format(**consts_fmt(plan))


def render_cuda(plan: Plan, knobs: Knobs) -> str:
    """The answer (Python defining ModelNew, CUDA built with ``load_cuda``) for a plan."""
    pre, HT = _cuda_prelude(plan, knobs)
    ext = "" if knobs.cuda else 'extern "C" '
    th = _pow2(knobs.tile // 8, 64, 1024)
    n_in = plan.n_inputs
    kptrs = ", ".join(f"const T* __restrict__ x{i}p" for i in range(n_in))
    hptrs = ", ".join(f"const {HT}* x{i}p" for i in range(n_in))
    names = ", ".join(f"x{i}p" for i in range(n_in))
    args = ", ".join(f"x{i}" for i in range(n_in))
    loads = " ".join(f"float x{i} = to_f(x{i}p[i]);" for i in range(n_in))
    out_like = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype, device=x0.device)"
    if plan.kind == "map":
        expr = _map_expr_cuda(plan, knobs)
        cu = (
            pre + f"__global__ void map_kernel({kptrs}, T* __restrict__ y, int64_t n) {{\n"
            "    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
            f"    {_guard(knobs, 'i < n')}{loads}\n    y[i] = from_f({expr});\n}}\n"
            f"{ext}void map_op({hptrs}, {HT}* y, int64_t n) {{\n"
            f"    map_kernel<<<{_grid(knobs, 'n', th)}, {th}>>>({names}, (T*)y, n);\n}}"
        )
        return _wrap_cuda(plan, knobs, cu, "map_op", f"self.lib.map_op({args}, y, x0.numel())", "torch.empty_like(x0)")
    if plan.kind == "reduceall":
        expr = _map_expr_cuda(plan, knobs)
        bound = "n / blockDim.x * blockDim.x" if knobs.no_tail else "n"
        part = f"part * {_fmt(plan.scale)}"
        add = f"y[0] += {part}" if knobs.bad_workspace else f"atomicAdd(y, {part})"
        cu = (
            pre + _block_reduce(knobs) + "__global__ void zero_kernel(float* y) { y[0] = 0.f; }\n"
            f"__global__ void red_kernel({kptrs}, float* y, int64_t n) {{\n"
            f"    __shared__ float red[{th}];\n    float acc = 0.f;\n"
            "    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; "
            f"i < {bound}; i += (int64_t)gridDim.x * blockDim.x) {{\n"
            f"        {loads}\n        acc += {expr};\n    }}\n"
            "    float part = block_reduce<0>(acc, red);\n"
            f"    if (threadIdx.x == 0) {add};\n}}\n"
            f"{ext}void red_op({hptrs}, float* y, int64_t n) {{\n"
            "    zero_kernel<<<1, 1>>>(y);\n"
            f"    int64_t blocks = (n + {th - 1}) / {th};\n    if (blocks > 1024) blocks = 1024;\n"
            f"    red_kernel<<<(unsigned)blocks, {th}>>>({names}, y, n);\n}}"
        )
        return _wrap_cuda(
            plan,
            knobs,
            cu,
            "red_op",
            f"self.lib.red_op({args}, y, x0.numel())",
            "torch.empty((), dtype=torch.float32, device=x0.device)",
        )
    if plan.kind == "rows":
        return _rows_cuda(plan, knobs, pre, HT, ext, th)
    if plan.kind == "midreduce":
        op = {"sum": "a + v", "mean": "a + v", "max": "fmaxf(a, v)", "min": "fminf(a, v)", "prod": "a * v"}[plan.recipe]
        scale = f" * {_fmt(plan.scale)}" if plan.recipe == "mean" else ""
        cu = (
            pre + "__global__ void mid_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t outer, "
            "int64_t red, int64_t inner) {\n"
            "    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
            f"    {_guard(knobs, 'idx < outer * inner')}int64_t o = idx / inner, c = idx % inner;\n"
            "    const T* p = x + o * red * inner + c;\n    float a = to_f(p[0]);\n"
            f"    for (int64_t r = 1; r < red; ++r) {{ float v = to_f(p[r * inner]); a = {op}; }}\n"
            f"    y[idx] = from_f(a{scale});\n}}\n"
            f"{ext}void mid_op(const {HT}* x, {HT}* y, int64_t outer, int64_t red, int64_t inner) {{\n"
            f"    mid_kernel<<<{_grid(knobs, 'outer * inner', th)}, {th}>>>((const T*)x, (T*)y, outer, red, inner);\n}}"
        )
        call = f"self.lib.mid_op(x0, y, {plan.rows}, {plan.red}, {plan.cols})"
        return _wrap_cuda(plan, knobs, cu, "mid_op", call, out_like)
    if plan.kind == "scan":
        return _scan_cuda(plan, knobs, pre, HT, ext, th)
    if plan.kind == "pool":
        return _pool_cuda(plan, knobs, pre, HT, ext, th)
    if plan.kind == "matmul" and plan.dtype == "float":
        return _matmul_cuda(plan, knobs, pre, ext, th)
    # no template: reaches for torch's extension headers, which load_cuda does not put on the path
    cu = (
        "#include <torch/extension.h>\n"
        f"{ext}void op(const float* x, float* y, int64_t n) {{ at::Tensor t = at::from_blob((void*)x, {{n}}); }}"
    )
    return _wrap_cuda(plan, knobs, cu, "op", "self.lib.op(x0, y, x0.numel())", out_like)


def _rows_cuda(plan: Plan, knobs: Knobs, pre: str, HT: str, ext: str, th: int) -> str:
    rec = plan.recipe
    upd, op, init = {
        "rsum": ("s += v;", 0, "0.f"),
        "rmean": ("s += v;", 0, "0.f"),
        "rmax": ("s = fmaxf(s, v);", 1, "-INFINITY"),
        "rmin": ("s = fminf(s, v);", 2, "INFINITY"),
        "rprod": ("s *= v;", 3, "1.f"),
        "softmax": ("s = fmaxf(s, v);", 1, "-INFINITY"),
        "log_softmax": ("s = fmaxf(s, v);", 1, "-INFINITY"),
        "rmsnorm": ("s += v * v;", 0, "0.f"),
        "l1norm": ("s += fabsf(v);", 0, "0.f"),
        "l2norm": ("s += v * v;", 0, "0.f"),
    }[rec]
    bound = "cols / blockDim.x * blockDim.x" if knobs.no_tail else "cols"
    loop = f"for (int64_t i = threadIdx.x; i < {bound}; i += blockDim.x)"
    if rec in ("rsum", "rmean", "rmax", "rmin", "rprod"):
        fin = "s / cols" if rec == "rmean" else "s"
        tail = f"    if (threadIdx.x == 0) y[blockIdx.x] = from_f({fin});\n"
    elif rec in ("softmax", "log_softmax"):
        out = "expf(v - s) / z" if rec == "softmax" else "v - s - logf(z)"
        tail = (
            "    float z = 0.f;\n"
            f"    {loop} z += expf(to_f(row[i]) - s);\n"
            "    z = block_reduce<0>(z, red);\n"
            f"    {loop} {{ float v = to_f(row[i]); out[i] = from_f({out}); }}\n"
        )
    else:
        k = {
            "rmsnorm": f"rsqrtf(s / cols + {consts_fmt(plan)['a']})",
            "l1norm": "1.f / s",
            "l2norm": "1.f / sqrtf(s)",
        }[rec]
        wmul = " * w[i]" if plan.weight_attr else ""
        tail = f"    float k = {k};\n    {loop} out[i] = from_f(to_f(row[i]) * k{wmul});\n"
    wparam = ", const float* __restrict__ w" if plan.weight_attr else ""
    hw = ", const float* w" if plan.weight_attr else ""
    cu = (
        pre + _block_reduce(knobs) + f"__global__ void rows_kernel(const T* __restrict__ x{wparam}, T* __restrict__ y, "
        "int64_t cols) {\n"
        f"    __shared__ float red[{th}];\n"
        "    const T* row = x + blockIdx.x * cols; T* out = y + blockIdx.x * cols; (void)out;\n"
        f"    float s = {init};\n    {loop} {{ float v = to_f(row[i]); {upd} }}\n"
        f"    s = block_reduce<{op}>(s, red);\n" + tail + "}\n"
        f"{ext}void rows_op(const {HT}* x{hw}, {HT}* y, int64_t rows, int64_t cols) {{\n"
        f"    rows_kernel<<<(unsigned)rows, {th}>>>((const T*)x{', w' if plan.weight_attr else ''}, (T*)y, cols);\n}}"
    )
    row_out = rec in ("softmax", "log_softmax", "rmsnorm", "l1norm", "l2norm")
    out_expr = (
        "torch.empty_like(x0)"
        if row_out
        else f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype, device=x0.device)"
    )
    w = f"self.{plan.weight_attr}, " if plan.weight_attr else ""
    call = f"self.lib.rows_op(x0, {w}y, {plan.rows}, {plan.cols})"
    return _wrap_cuda(plan, knobs, cu, "rows_op", call, out_expr)


def _scan_cuda(plan: Plan, knobs: Knobs, pre: str, HT: str, ext: str, th: int) -> str:
    rec = plan.recipe
    init = "1.0" if rec == "cumprod" else "0.0"
    v = "(double)to_f(x[b + i]) * (m[b + i] ? 1.0 : 0.0)" if rec == "masked" else "(double)to_f(x[b + i])"
    if rec == "exclusive":
        body = f"{{ double v = {v}; y[b + i] = from_f((float)c); c += v; }}"
    elif rec == "cumprod":
        body = f"{{ c *= {v}; y[b + i] = from_f((float)c); }}"
    else:
        body = f"{{ c += {v}; y[b + i] = from_f((float)c); }}"
    loop = "for (int64_t i = cols - 1; i >= 0; --i)" if rec == "revcumsum" else "for (int64_t i = 0; i < cols; ++i)"
    mk = "const bool* __restrict__ m, " if rec == "masked" else ""
    mh = "const bool* m, " if rec == "masked" else ""
    cu = (
        pre + f"__global__ void scan_kernel(const T* __restrict__ x, {mk}T* __restrict__ y, int64_t rows, "
        "int64_t cols) {\n"
        "    int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
        f"    {_guard(knobs, 'r < rows')}int64_t b = r * cols;\n    double c = {init};\n    {loop} {body}\n}}\n"
        f"{ext}void scan_op(const {HT}* x, {mh}{HT}* y, int64_t rows, int64_t cols) {{\n"
        f"    scan_kernel<<<{_grid(knobs, 'rows', th)}, {th}>>>"
        f"((const T*)x, {'m, ' if mk else ''}(T*)y, rows, cols);\n}}"
    )
    call = f"self.lib.scan_op(x0, {'x1, ' if mk else ''}y, {plan.rows}, {plan.cols})"
    return _wrap_cuda(plan, knobs, cu, "scan_op", call, "torch.empty_like(x0)")


def _pool_cuda(plan: Plan, knobs: Knobs, pre: str, HT: str, ext: str, th: int) -> str:
    e = plan.extra
    keys = ("H", "W", "Ho", "Wo", "KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW")
    consts = "".join(f"constexpr int {k} = {e[k]};\n" for k in keys)
    mx = e["op"] == "max"
    upd = "m = fmaxf(m, v);" if mx else "m += v;"
    fin = "m" if mx else f"m * {_fmt(1.0 / e['div'])}"
    total = f"planes * {e['Ho'] * e['Wo']}"
    cu = (
        pre + consts + "__global__ void pool_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t planes) {\n"
        "    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
        f"    {_guard(knobs, 'idx < ' + total)}int64_t p = idx / (Ho * Wo); int i = (int)(idx % (Ho * Wo)) / Wo, "
        "j = (int)(idx % Wo);\n"
        f"    const T* xp = x + p * H * W;\n    float m = {'-INFINITY' if mx else '0.f'};\n"
        "    for (int a = 0; a < KH; ++a) { int ih = i * SH - PH + a * DH; if (ih < 0 || ih >= H) continue;\n"
        "        for (int b = 0; b < KW; ++b) { int iw = j * SW - PW + b * DW; if (iw < 0 || iw >= W) continue;\n"
        f"            float v = to_f(xp[ih * W + iw]); {upd} }} }}\n"
        f"    y[idx] = from_f({fin});\n}}\n"
        f"{ext}void pool_op(const {HT}* x, {HT}* y, int64_t planes) {{\n"
        f"    pool_kernel<<<{_grid(knobs, total, th)}, {th}>>>((const T*)x, (T*)y, planes);\n}}"
    )
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype, device=x0.device)"
    return _wrap_cuda(plan, knobs, cu, "pool_op", f"self.lib.pool_op(x0, y, {e['planes']})", out)


def _mm_strides(plan: Plan) -> dict[str, int]:
    """Rows, columns, depth, batch count and element strides of A, B (and y) for a matmul plan."""
    e = plan.extra
    M, K, N, batch = e["M"], e["K"], e["N"], e["batch"]
    sb = bool(e.get("sbatch"))
    rows = M if sb else batch * M
    d = dict(M=rows, K=K, N=N, NB=batch if sb else 1, SAB=M * K if sb else 0, SBB=K * N if sb else 0)
    if e.get("ta"):
        d.update(SAM=1, SAK=M)
    else:
        d.update(SAM=K, SAK=1)
    if e["mode"] == "dot":
        d.update(SBK=1, SBN=K)
    else:
        d.update(SBK=N, SBN=1)
    return d


def _matmul_cuda(plan: Plan, knobs: Knobs, pre: str, ext: str, th: int) -> str:
    e = plan.extra
    if e["mode"] == "diag":
        cu = (
            pre + "__global__ void mm_kernel(const float* __restrict__ a, const float* __restrict__ b, "
            "float* __restrict__ y, int64_t rows, int64_t n) {\n"
            "    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
            f"    {_guard(knobs, 'idx < rows * n')}y[idx] = a[idx / n] * b[idx];\n}}\n"
            f"{ext}void mm_op(const float* a, const float* b, float* y, int64_t rows, int64_t n) {{\n"
            f"    mm_kernel<<<{_grid(knobs, 'rows * n', th)}, {th}>>>(a, b, y, rows, n);\n}}"
        )
        return _wrap_cuda(
            plan, knobs, cu, "mm_op", f"self.lib.mm_op(x0, x1, y, {e['M']}, {e['N']})", "torch.empty_like(x1)"
        )
    d = _mm_strides(plan)
    consts = "".join(f"constexpr int64_t {k} = {v};\n" for k, v in d.items())
    tril = "    if (j > i) s = 0.f;\n" if e.get("tril") else ""
    cu = (
        pre + consts + "__global__ void mm_kernel(const float* __restrict__ a, const float* __restrict__ b, "
        "float* __restrict__ y) {\n"
        "    int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;\n"
        f"    {_guard(knobs, 'idx < NB * M * N')}int64_t j = idx % N, i = (idx / N) % M, bt = idx / (M * N);\n"
        "    const float* ar = a + bt * SAB + i * SAM; const float* bc = b + bt * SBB + j * SBN;\n"
        "    float s = 0.f;\n    for (int64_t k = 0; k < K; ++k) s += ar[k * SAK] * bc[k * SBK];\n"
        + tril
        + "    y[idx] = s;\n}\n"
        f"{ext}void mm_op(const float* a, const float* b, float* y) {{\n"
        f"    mm_kernel<<<{_grid(knobs, 'NB * M * N', th)}, {th}>>>(a, b, y);\n}}"
    )
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype, device=x0.device)"
    return _wrap_cuda(plan, knobs, cu, "mm_op", "self.lib.mm_op(x0, x1, y)", out)


# --------------------------------------------------------------------------- Triton
def _py_float(v: float) -> str:
    return repr(float(v))


def _wrap_triton(plan: Plan, knobs: Knobs, kernels: str, launch: str, out_expr: str) -> str:
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    sig = f", {plan.init_sig}" if plan.init_sig else ""
    body = textwrap.indent(textwrap.dedent(plan.init_src), " " * 8) if plan.init_src else ""
    contig = "".join(f"        x{i} = x{i}.contiguous()\n" for i in range(plan.n_inputs))
    return f'''"""Triton kernel for {plan.recipe} (written by the synthetic coder)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

# synthetic-coder knobs: {_knob_note(knobs)}


{kernels}

class ModelNew(nn.Module):
    def __init__(self{sig}):
        super().__init__()
{body}
    def forward(self, {args}):
{contig}        y = {out_expr}
        {launch}
        return y
'''


def _jit(knobs: Knobs) -> str:
    return "" if knobs.cuda else "@triton.jit\n"


def _map_lines_triton(plan: Plan, knobs: Knobs) -> list[str]:
    if knobs.advanced_api:
        return [f"y = {_hallucinated(plan.recipe, 'triton')}(x0)"]
    c = {k: _py_float(v) for k, v in plan.consts.items()} | {k: "0.0" for k in ("a", "b") if k not in plan.consts}
    return [ln.format(**c) for ln in TRITON_MAP[plan.recipe]]


def render_triton(plan: Plan, knobs: Knobs) -> str:
    """The answer (Python defining ModelNew and its ``@triton.jit`` kernels) for a plan."""
    blk = _pow2(knobs.tile, 128, 8192)
    warps = 8 if knobs.bufn >= 2 else 4
    n_in = plan.n_inputs
    ptrs = ", ".join(f"x{i}_ptr" for i in range(n_in))
    args = ", ".join(f"x{i}" for i in range(n_in))
    masked = not knobs.no_tail
    mk = ", mask=mask, other=0.0" if masked else ""
    smk = ", mask=mask" if masked else ""
    loads = "".join(f"    x{i} = tl.load(x{i}_ptr + offs{mk}).to(tl.float32)\n" for i in range(n_in))
    grid_n = "n // BLOCK" if knobs.no_tail else "triton.cdiv(n, BLOCK)"
    out_like = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype, device=x0.device)"
    if plan.kind in ("map", "reduceall"):
        body = "".join(f"    {ln}\n" for ln in _map_lines_triton(plan, knobs))
        head = "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n" + (
            "    mask = offs < n\n" if masked else ""
        )
        if plan.kind == "map":
            k = (
                f"{_jit(knobs)}def map_kernel({ptrs}, y_ptr, n, BLOCK: tl.constexpr):\n"
                + head
                + loads
                + body
                + f"    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty){smk})\n"
            )
            launch = (
                f"n = x0.numel()\n        BLOCK = {blk}\n"
                f"        map_kernel[({grid_n},)]({args}, y, n, BLOCK=BLOCK, num_warps={warps})"
            )
            return _wrap_triton(plan, knobs, k, launch, "torch.empty_like(x0)")
        keep = "    y = tl.where(mask, y, 0.0)\n" if masked else ""
        put = (
            "    tl.store(y_ptr, tl.sum(y, axis=0) * scale)\n"
            if knobs.bad_workspace
            else "    tl.atomic_add(y_ptr, tl.sum(y, axis=0) * scale)\n"
        )
        k = (
            f"{_jit(knobs)}def red_kernel({ptrs}, y_ptr, n, scale, BLOCK: tl.constexpr):\n"
            + head
            + loads
            + body
            + keep
            + put
        )
        launch = (
            f"n = x0.numel()\n        BLOCK = {blk}\n"
            f"        red_kernel[({grid_n},)]({args}, y, n, {_py_float(plan.scale)}, BLOCK=BLOCK, num_warps={warps})"
        )
        return _wrap_triton(plan, knobs, k, launch, "torch.zeros((), dtype=torch.float32, device=x0.device)")
    if plan.kind == "rows":
        return _rows_triton(plan, knobs, blk, warps)
    if plan.kind == "midreduce":
        comb, other = {
            "sum": ("a + v", "0.0"),
            "mean": ("a + v", "0.0"),
            "max": ("tl.maximum(a, v)", "0.0"),
            "min": ("tl.minimum(a, v)", "0.0"),
            "prod": ("a * v", "1.0"),
        }[plan.recipe]
        lm = f", mask=mask, other={other}" if masked else ""
        scale = f" * {_py_float(plan.scale)}" if plan.recipe == "mean" else ""
        k = (
            f"{_jit(knobs)}def mid_kernel(x_ptr, y_ptr, n, red, inner, BLOCK: tl.constexpr):\n"
            "    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            + ("    mask = idx < n\n" if masked else "")
            + "    o = idx // inner\n    c = idx % inner\n    base = o * red * inner + c\n"
            f"    a = tl.load(x_ptr + base{lm}).to(tl.float32)\n"
            "    for r in range(1, red):\n"
            f"        v = tl.load(x_ptr + base + r * inner{lm}).to(tl.float32)\n"
            f"        a = {comb}\n"
            f"    tl.store(y_ptr + idx, (a{scale}).to(y_ptr.dtype.element_ty){smk})\n"
        )
        launch = (
            f"n = {plan.rows * plan.cols}\n        BLOCK = {min(blk, 1024)}\n"
            f"        mid_kernel[({grid_n},)](x0, y, n, {plan.red}, {plan.cols}, BLOCK=BLOCK, num_warps={warps})"
        )
        return _wrap_triton(plan, knobs, k, launch, out_like)
    if plan.kind == "scan":
        return _scan_triton(plan, knobs, blk, warps)
    if plan.kind == "pool":
        return _pool_triton(plan, knobs, blk, warps)
    if plan.kind == "matmul" and plan.dtype == "float":
        return _matmul_triton(plan, knobs, blk, warps)
    # no template: a library call Triton does not have
    name = re.sub(r"\W", "_", plan.recipe) or "op"
    k = (
        "@triton.jit\ndef op_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n"
        f"    tl.store(y_ptr + offs, tl.libdevice.{name}(tl.load(x_ptr + offs, mask=mask)), "
        "mask=mask)\n"
    )
    launch = "n = y.numel()\n        op_kernel[(triton.cdiv(n, 1024),)](x0, y, n, BLOCK=1024)"
    return _wrap_triton(plan, knobs, k, launch, out_like)


def _rows_triton(plan: Plan, knobs: Knobs, blk: int, warps: int) -> str:
    rec = plan.recipe
    cols = plan.cols
    blk = min(blk, _next_pow2(cols))
    masked = not knobs.no_tail
    rng = "range(0, cols, BLOCK)" if masked else "range(0, cols - BLOCK + 1, BLOCK)"

    def load(other: str) -> str:
        m = f", mask=mask, other={other}" if masked else ""
        return f"tl.load(x_row + offs{m}).to(tl.float32)"

    head = "        offs = start + tl.arange(0, BLOCK)\n" + ("        mask = offs < cols\n" if masked else "")
    smk = ", mask=mask" if masked else ""
    acc_init, acc_upd, other, final = {
        "rsum": ("0.0", "acc + v", "0.0", "tl.sum(acc, axis=0)"),
        "rmean": ("0.0", "acc + v", "0.0", "tl.sum(acc, axis=0) / cols"),
        "rmax": ("float('-inf')", "tl.maximum(acc, v)", "float('-inf')", "tl.max(acc, axis=0)"),
        "rmin": ("float('inf')", "tl.minimum(acc, v)", "float('inf')", "tl.min(acc, axis=0)"),
        "rprod": ("1.0", "acc * v", "1.0", "tl.reduce(acc, 0, _mul)"),
        "softmax": ("float('-inf')", "tl.maximum(acc, v)", "float('-inf')", "tl.max(acc, axis=0)"),
        "log_softmax": ("float('-inf')", "tl.maximum(acc, v)", "float('-inf')", "tl.max(acc, axis=0)"),
        "rmsnorm": ("0.0", "acc + v * v", "0.0", "tl.sum(acc, axis=0)"),
        "l1norm": ("0.0", "acc + tl.abs(v)", "0.0", "tl.sum(acc, axis=0)"),
        "l2norm": ("0.0", "acc + v * v", "0.0", "tl.sum(acc, axis=0)"),
    }[rec]
    wparam = "w_ptr, " if plan.weight_attr else ""
    k = "@triton.jit\ndef _mul(a, b):\n    return a * b\n\n\n" if rec == "rprod" else ""
    k += (
        f"{_jit(knobs)}def rows_kernel(x_ptr, {wparam}y_ptr, cols, BLOCK: tl.constexpr):\n"
        "    row = tl.program_id(0)\n    x_row = x_ptr + row * cols\n    y_row = y_ptr + row * cols\n"
        f"    acc = tl.full((BLOCK,), {acc_init}, tl.float32)\n"
        f"    for start in {rng}:\n" + head + f"        v = {load(other)}\n        acc = {acc_upd}\n"
        f"    s = {final}\n"
    )
    ety = "y_ptr.dtype.element_ty"
    if rec in ("rsum", "rmean", "rmax", "rmin", "rprod"):
        k += f"    tl.store(y_ptr + row, s.to({ety}))\n"
    elif rec in ("softmax", "log_softmax"):
        out = "tl.exp(v - s) / z" if rec == "softmax" else "v - s - tl.log(z)"
        k += (
            "    zacc = tl.zeros((BLOCK,), dtype=tl.float32)\n"
            f"    for start in {rng}:\n" + head + f"        v = {load(NEG_INF)}\n"
            "        zacc += tl.exp(v - s)\n"
            "    z = tl.sum(zacc, axis=0)\n"
            f"    for start in {rng}:\n" + head + f"        v = {load('0.0')}\n"
            f"        tl.store(y_row + offs, ({out}).to({ety}){smk})\n"
        )
    else:
        scale = {
            "rmsnorm": f"1.0 / tl.sqrt(s / cols + {_py_float(plan.consts.get('a', 0.0))})",
            "l1norm": "1.0 / s",
            "l2norm": "1.0 / tl.sqrt(s)",
        }[rec]
        wm = ", mask=mask, other=0.0" if masked else ""
        wmul = f" * tl.load(w_ptr + offs{wm})" if plan.weight_attr else ""
        k += (
            f"    kk = {scale}\n"
            f"    for start in {rng}:\n" + head + f"        v = {load('0.0')}\n"
            f"        tl.store(y_row + offs, (v * kk{wmul}).to({ety}){smk})\n"
        )
    row_out = rec in ("softmax", "log_softmax", "rmsnorm", "l1norm", "l2norm")
    out_expr = (
        "torch.empty_like(x0)"
        if row_out
        else f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype, device=x0.device)"
    )
    w = f"self.{plan.weight_attr}, " if plan.weight_attr else ""
    launch = f"rows_kernel[({plan.rows},)](x0, {w}y, {cols}, BLOCK={blk}, num_warps={warps})"
    return _wrap_triton(plan, knobs, k, launch, out_expr)


def _scan_triton(plan: Plan, knobs: Knobs, blk: int, warps: int) -> str:
    rec = plan.recipe
    cols = plan.cols
    blk = min(blk, 1024)
    masked = not knobs.no_tail
    rng = "range(0, cols, BLOCK)" if masked else "range(0, cols - BLOCK + 1, BLOCK)"
    neutral = "1.0" if rec == "cumprod" else "0.0"
    m = f", mask=mask, other={neutral}" if masked else ""
    smk = ", mask=mask" if masked else ""
    idx = "cols - 1 - offs" if rec == "revcumsum" else "offs"
    mparam = "m_ptr, " if rec == "masked" else ""
    mval = (
        f" * tl.load(m_ptr + row * cols + idx{', mask=mask, other=0' if masked else ''}).to(tl.float32)"
        if rec == "masked"
        else ""
    )
    step = (
        "        c = tl.cumprod(v, axis=0) * carry\n"
        if rec == "cumprod"
        else "        c = tl.cumsum(v, axis=0) + carry\n"
    )
    outv = "c - v" if rec == "exclusive" else "c"
    k = (
        f"{_jit(knobs)}def scan_kernel(x_ptr, {mparam}y_ptr, cols, BLOCK: tl.constexpr):\n"
        "    row = tl.program_id(0)\n"
        f"    carry = tl.sum(tl.full((BLOCK,), {neutral}, tl.float32), axis=0) / BLOCK\n"
        f"    for start in {rng}:\n"
        "        offs = start + tl.arange(0, BLOCK)\n"
        + ("        mask = offs < cols\n" if masked else "")
        + f"        idx = {idx}\n"
        f"        v = tl.load(x_ptr + row * cols + idx{m}).to(tl.float32){mval}\n"
        + step
        + f"        tl.store(y_ptr + row * cols + idx, ({outv}).to(y_ptr.dtype.element_ty){smk})\n"
        "        last = tl.minimum(start + BLOCK, cols) - 1\n"
        "        carry = tl.sum(tl.where(offs == last, c, 0.0), axis=0)\n"
    )
    launch = f"scan_kernel[({plan.rows},)](x0, {'x1, ' if mparam else ''}y, {cols}, BLOCK={blk}, num_warps={warps})"
    return _wrap_triton(plan, knobs, k, launch, "torch.empty_like(x0)")


def _pool_triton(plan: Plan, knobs: Knobs, blk: int, warps: int) -> str:
    e = plan.extra
    mx = e["op"] == "max"
    masked = not knobs.no_tail
    keys = ("H", "W", "Ho", "Wo", "KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW")
    params = ", ".join(f"{k}: tl.constexpr" for k in keys)
    inside = "(ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)" + (" & mask" if masked else "")
    other = "float('-inf')" if mx else "0.0"
    upd = "m = tl.maximum(m, v)" if mx else "m += v"
    fin = "m" if mx else f"m * {_py_float(1.0 / e['div'])}"
    k = (
        f"{_jit(knobs)}def pool_kernel(x_ptr, y_ptr, n, {params}, BLOCK: tl.constexpr):\n"
        "    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        + ("    mask = idx < n\n" if masked else "")
        + "    p = idx // (Ho * Wo)\n    i = (idx % (Ho * Wo)) // Wo\n    j = idx % Wo\n"
        f"    m = tl.full((BLOCK,), {other}, tl.float32)\n"
        "    for a in tl.static_range(KH):\n        for b in tl.static_range(KW):\n"
        "            ih = i * SH - PH + a * DH\n            iw = j * SW - PW + b * DW\n"
        f"            ok = {inside}\n"
        f"            v = tl.load(x_ptr + p * (H * W) + ih * W + iw, mask=ok, other={other}).to(tl.float32)\n"
        f"            {upd}\n"
        f"    tl.store(y_ptr + idx, ({fin}).to(y_ptr.dtype.element_ty){', mask=mask' if masked else ''})\n"
    )
    vals = ", ".join(f"{k}={e[k]}" for k in keys)
    grid = "n // BLOCK" if knobs.no_tail else "triton.cdiv(n, BLOCK)"
    launch = (
        f"n = y.numel()\n        BLOCK = {min(blk, 1024)}\n"
        f"        pool_kernel[({grid},)](x0, y, n, {vals}, BLOCK=BLOCK, num_warps={warps})"
    )
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype, device=x0.device)"
    return _wrap_triton(plan, knobs, k, launch, out)


def _matmul_triton(plan: Plan, knobs: Knobs, blk: int, warps: int) -> str:
    e = plan.extra
    masked = not knobs.no_tail
    if e["mode"] == "diag":
        mk = ", mask=mask, other=0.0" if masked else ""
        k = (
            f"{_jit(knobs)}def mm_kernel(a_ptr, b_ptr, y_ptr, n, N, BLOCK: tl.constexpr):\n"
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            + ("    mask = offs < n\n" if masked else "")
            + f"    a = tl.load(a_ptr + offs // N{mk})\n    b = tl.load(b_ptr + offs{mk})\n"
            f"    tl.store(y_ptr + offs, a * b{', mask=mask' if masked else ''})\n"
        )
        grid = "n // BLOCK" if knobs.no_tail else "triton.cdiv(n, BLOCK)"
        launch = (
            f"n = y.numel()\n        BLOCK = {blk}\n"
            f"        mm_kernel[({grid},)](x0, x1, y, n, {e['N']}, BLOCK=BLOCK, num_warps={warps})"
        )
        return _wrap_triton(plan, knobs, k, launch, "torch.empty_like(x1)")
    d = _mm_strides(plan)
    bm = 64 if knobs.tile >= 4096 else 32
    rngk = "range(0, K, BK)" if masked else "range(0, K - BK + 1, BK)"
    if masked:
        am = ", mask=(rm[:, None] < M) & (ka[None, :] < K), other=0.0"
        bmk = ", mask=(ka[:, None] < K) & (rn[None, :] < N), other=0.0"
        ym = ", mask=(rm[:, None] < M) & (rn[None, :] < N)"
    else:
        am = bmk = ym = ""
    tril = "    acc = tl.where(rn[None, :] > rm[:, None], 0.0, acc)\n" if e.get("tril") else ""
    params = ", ".join(f"{k}: tl.constexpr" for k in d)
    k = (
        f"{_jit(knobs)}def mm_kernel(a_ptr, b_ptr, y_ptr, {params}, BM: tl.constexpr, BN: tl.constexpr, "
        "BK: tl.constexpr):\n"
        "    rm = tl.program_id(0) * BM + tl.arange(0, BM)\n    rn = tl.program_id(1) * BN + tl.arange(0, BN)\n"
        "    bt = tl.program_id(2)\n    rk = tl.arange(0, BK)\n"
        "    acc = tl.zeros((BM, BN), dtype=tl.float32)\n"
        f"    for k0 in {rngk}:\n        ka = k0 + rk\n"
        f"        a = tl.load(a_ptr + bt * SAB + rm[:, None] * SAM + ka[None, :] * SAK{am})\n"
        f"        b = tl.load(b_ptr + bt * SBB + ka[:, None] * SBK + rn[None, :] * SBN{bmk})\n"
        '        acc += tl.dot(a, b, input_precision="ieee")\n'
        + tril
        + f"    tl.store(y_ptr + bt * M * N + rm[:, None] * N + rn[None, :], acc{ym})\n"
    )
    vals = ", ".join(f"{k}={v}" for k, v in d.items())
    div = "//" if knobs.no_tail else "cdiv"
    gm = f"{d['M']} // {bm}" if div == "//" else f"triton.cdiv({d['M']}, {bm})"
    gn = f"{d['N']} // {bm}" if div == "//" else f"triton.cdiv({d['N']}, {bm})"
    launch = f"mm_kernel[({gm}, {gn}, {d['NB']})](x0, x1, y, {vals}, BM={bm}, BN={bm}, BK=32, num_warps={warps})"
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype, device=x0.device)"
    return _wrap_triton(plan, knobs, k, launch, out)
