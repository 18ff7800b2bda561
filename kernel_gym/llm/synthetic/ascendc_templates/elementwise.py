"""Elementwise maps and whole-tensor reductions (one pass over the flattened input)."""

from __future__ import annotations

from kernel_gym.llm.synthetic.analysis import MAP_RECIPES, Plan, consts_fmt
from kernel_gym.llm.synthetic.ascendc_templates.common import (
    _HEADER,
    _SCALAR_OF,
    _copy_helpers,
    _py,
    _split,
    _types,
)
from kernel_gym.llm.synthetic.faults import ADVANCED_API, Knobs

__all__ = ["render_map"]


def _body(plan: Plan, knobs: Knobs) -> list[str]:
    """Vector compute lines of a map recipe (or the fault version)."""
    lines, expr, _needs, _nt = MAP_RECIPES[plan.recipe]
    c = consts_fmt(plan)
    if knobs.ops_overload:
        return [f"y = {expr.format(**c)};   // elementwise on the tiles"]
    if knobs.ternary and plan.recipe == "where_gt0":
        return ["y = x0 > 0.0f ? x0 : x1;"]
    if knobs.advanced_api and plan.recipe in ADVANCED_API:
        api = ADVANCED_API[plan.recipe]
        extra = ", {a}".format(**c) if "{a}" in " ".join(lines) else ""
        return [f"{api}(y, x0{', x1' if plan.n_inputs > 1 and plan.kind == 'reduceall' else ''}{extra}, n);"]
    if not lines:
        return ["Adds(y, x0, 0.0f, n);"]
    return [ln.format(**c) for ln in lines]


def render_map(plan: Plan, knobs: Knobs, reduce_all: bool = False) -> str:
    T, cast = _types(plan, knobs)
    ni = plan.n_inputs
    _l, _e, needs, ntemps = MAP_RECIPES[plan.recipe]
    select = "select" in needs and not knobs.ternary
    args = ", ".join(f"x{i}" for i in range(ni))
    gm_args = ", ".join(f"GM_ADDR x{i}" for i in range(ni))
    nf = ntemps + ((ni + 1) if cast else 0) + (1 if reduce_all else 0)  # float TBuf slots
    lines = [
        _HEADER,
        f"using T = {T};",
        f"constexpr uint32_t TILE = {knobs.tile};",
        f"constexpr uint32_t BUFN = {knobs.bufn};",
        "constexpr uint32_t ALIGN = 32 / sizeof(T);",
        _copy_helpers(T, knobs),
    ]
    if reduce_all:
        lines.append(_SCALAR_OF)
    cls = ["class KernelMap {", "public:"]
    out_arg = "GM_ADDR y"
    cls.append(f"    __aicore__ inline void Init({gm_args}, {out_arg}, uint32_t total) {{")
    cls.append(_split(knobs).rstrip("\n"))
    for i in range(ni):
        cls.append(f"        x{i}Gm.SetGlobalBuffer((__gm__ T*)x{i} + start, len);")
        cls.append(f"        pipe.InitBuffer(inQ{i}, BUFN, TILE * sizeof(T));")
    if reduce_all:
        cls.append("        yGm.SetGlobalBuffer((__gm__ float*)y, 1);")
        cls.append("        pipe.InitBuffer(outQ, 1, 8 * sizeof(float));")
        cls.append("        pipe.InitBuffer(workBuf, 64 * sizeof(float));")
    else:
        cls.append("        yGm.SetGlobalBuffer((__gm__ T*)y + start, len);")
        cls.append("        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(T));")
    if nf:
        cls.append(f"        pipe.InitBuffer(tmpBuf, {nf} * TILE * sizeof(float));")
    if select:
        cls.append("        pipe.InitBuffer(maskBuf, TILE / 8 < 32 ? 32 : TILE / 8);")
    cls.append("    }")
    # Process
    cls.append("    __aicore__ inline void Process() {")
    if reduce_all:
        cls.append("        acc = 0.0f;")
    if knobs.no_tail:
        cls.append("        uint32_t tile = len < TILE ? len : TILE;")
        cls.append("        for (uint32_t t = 0; tile > 0 && t < len / tile; ++t) {")
        cls.append(
            "            CopyIn(t * tile, tile); Compute(tile); "
            + ("" if reduce_all else "CopyOut(t * tile, tile); ")
            + "}"
        )
    else:
        cls.append("        for (uint32_t off = 0; off < len; off += TILE) {")
        cls.append("            uint32_t n = len - off < TILE ? len - off : TILE;")
        cls.append("            CopyIn(off, n); Compute(n); " + ("" if reduce_all else "CopyOut(off, n); ") + "}")
    if reduce_all:
        cls.append("        Finish();")
    cls.append("    }")
    cls.append("private:")
    cls.append("    __aicore__ inline void CopyIn(uint32_t off, uint32_t n) {")
    for i in range(ni):
        cls.append(f"        LocalTensor<T> l{i} = inQ{i}.AllocTensor<T>();")
        cls.append(f"        Load(l{i}, x{i}Gm, off, n);")
        if not knobs.skip_enque:
            cls.append(f"        inQ{i}.EnQue(l{i});")
    cls.append("    }")
    cls.append("    __aicore__ inline void Compute(uint32_t n) {")
    cls.append("        uint32_t nc = (n + 63) / 64 * 64;")
    cls.append("        (void)nc;")
    for i in range(ni):
        cls.append(f"        LocalTensor<T> h{i} = inQ{i}.DeQue<T>();")
    if cast:
        cls.append("        LocalTensor<float> tmp = tmpBuf.Get<float>();")
        for i in range(ni):
            cls.append(f"        LocalTensor<float> x{i} = tmp[{i} * TILE];")
            cls.append(f"        Cast(x{i}, h{i}, RoundMode::CAST_NONE, n);")
        cls.append(f"        LocalTensor<float> y = tmp[{ni} * TILE];")
        base = ni + 1
    else:
        for i in range(ni):
            cls.append(f"        LocalTensor<T> x{i} = h{i};")
        if nf:
            cls.append("        LocalTensor<float> tmp = tmpBuf.Get<float>();")
        if reduce_all:
            cls.append("        LocalTensor<float> y = tmp[0];")
            base = 1
        else:
            cls.append("        LocalTensor<T> y = outQ.AllocTensor<T>();")
            base = 0
    for k in range(ntemps):
        cls.append(f"        LocalTensor<float> t{k} = tmp[{base + k} * TILE];")
    if select:
        cls.append("        LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();")
    cls += ["        " + ln for ln in _body(plan, knobs)]
    if reduce_all:
        cls += _reduce_tile(knobs)
    elif cast:
        cls.append("        LocalTensor<T> yo = outQ.AllocTensor<T>();")
        cls.append("        Cast(yo, y, RoundMode::CAST_ROUND, n);")
        cls.append("        outQ.EnQue(yo);")
    else:
        cls.append("        outQ.EnQue(y);")
    if not knobs.leak:
        for i in range(ni):
            cls.append(f"        inQ{i}.FreeTensor(h{i});")
    cls.append("    }")
    if not reduce_all:
        cls.append("    __aicore__ inline void CopyOut(uint32_t off, uint32_t n) {")
        cls.append("        LocalTensor<T> o = outQ.DeQue<T>();")
        cls.append("        Store(yGm, off, o, n);")
        cls.append("        outQ.FreeTensor(o);")
        cls.append("    }")
    else:
        cls += _finish(plan, knobs)
    cls.append("    TPipe pipe;")
    for i in range(ni):
        cls.append(f"    TQue<QuePosition::VECIN, BUFN> inQ{i};")
    cls.append(f"    TQue<QuePosition::VECOUT, {1 if reduce_all else 'BUFN'}> outQ;")
    cls.append("    TBuf<QuePosition::VECCALC> tmpBuf, maskBuf, workBuf;")
    cls.append("    GlobalTensor<T> " + ", ".join(f"x{i}Gm" for i in range(ni)) + ";")
    cls.append(f"    GlobalTensor<{'float' if reduce_all else 'T'}> yGm;")
    cls.append("    uint32_t len;")
    if reduce_all:
        cls.append("    float acc;")
    cls.append("};")
    lines.append("\n".join(cls))
    lines.append(
        f'extern "C" __global__ __aicore__ void map_kernel({gm_args}, GM_ADDR y, uint32_t total) {{\n'
        f"    KernelMap op;\n    op.Init({args}, y, total);\n    op.Process();\n}}"
    )
    host_args = ", ".join(f"uint8_t* x{i}" for i in range(ni))
    launch = ""
    if reduce_all and knobs.blocks > 1 and knobs.atomic:
        lines.append(_ZERO_KERNEL)
        launch = "    zero_kernel<<<1, nullptr, nullptr>>>(y);\n"
    lines.append(
        f'extern "C" void map_do({host_args}, uint8_t* y, uint32_t total) {{\n'
        f"    uint32_t blocks = {knobs.blocks};\n{launch}"
        f"    map_kernel<<<blocks, nullptr, nullptr>>>({args}, y, total);\n}}"
    )
    src = "\n".join(lines)
    out = "torch.empty((), dtype=x0.dtype)" if reduce_all else "torch.empty_like(x0)"
    return _py(plan, knobs, src, f"self.mod.map_do({args}, y, x0.numel())", out)


_ZERO_KERNEL = """extern "C" __global__ __aicore__ void zero_kernel(GM_ADDR y) {
    TPipe pipe;
    TBuf<QuePosition::VECCALC> b;
    pipe.InitBuffer(b, 32);
    LocalTensor<float> z = b.Get<float>();
    Duplicate(z, 0.0f, 8);
    GlobalTensor<float> g;
    g.SetGlobalBuffer((__gm__ float*)y, 1);
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopyExtParams p{1, 4, 0, 0, 0};
    DataCopyPad(g, z, p);
}"""


def _reduce_tile(knobs: Knobs) -> list[str]:
    """Sum the tile's y into the block accumulator."""
    if knobs.bad_workspace:  # folds into an accumulator it never initialised
        return [
            "        LocalTensor<float> w = workBuf.Get<float>();",
            "        for (uint32_t k = 0; k < n; k += 64) Add(w, w, y[k], n - k < 64 ? n - k : 64);",
            "        SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
            "        for (uint32_t k = 0; k < 64; ++k) acc += w.GetValue(k);",
            "        for (uint32_t k = 0; k < 64; ++k) w.SetValue(k, 0.0f);",
            "        SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);",
        ]
    return [
        "        LocalTensor<float> w = workBuf.Get<float>();",
        "        ReduceSum(w, y, w[8], n);",
        "        acc += ScalarOf(w);",
    ]


def _finish(plan: Plan, knobs: Knobs) -> list[str]:
    scale = f"{plan.scale!r}f" if "e" not in repr(plan.scale) else f"{plan.scale:.9e}f"
    out = [
        "    __aicore__ inline void Finish() {",
        "        LocalTensor<float> r = outQ.AllocTensor<float>();",
        f"        r.SetValue(0, acc * {scale});",
        "        for (uint32_t k = 1; k < 8; ++k) r.SetValue(k, 0.0f);",
        "        outQ.EnQue(r);",
        "        LocalTensor<float> o = outQ.DeQue<float>();",
    ]
    atomic = knobs.blocks > 1 and knobs.atomic
    if atomic:
        out.append("        SetAtomicAdd<float>();")
    if knobs.unaligned:
        out.append("        DataCopy(yGm, o, 1);")
    else:
        out.append("        DataCopyExtParams p{1, 4, 0, 0, 0};")
        out.append("        DataCopyPad(yGm, o, p);")
    if atomic:
        out.append("        SetAtomicNone();")
    out += ["        outQ.FreeTensor(o);", "    }"]
    return out
