"""Scans (cumulative sum/product, reverse, exclusive, masked) along the last axis."""

from __future__ import annotations

from kernel_gym.llm.synthetic.analysis import Plan
from kernel_gym.llm.synthetic.ascendc_templates.common import (
    _HEADER,
    _copy_helpers,
    _launcher,
    _py,
    _q_free,
    _q_in,
    _split_units,
    _types,
)
from kernel_gym.llm.synthetic.faults import Knobs

__all__ = ["render_scan"]


def render_scan(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    rec = plan.recipe
    masked = rec == "masked"
    rev = rec == "revcumsum"
    init = "1.0f" if rec == "cumprod" else "0.0f"
    op = "carry * v" if rec == "cumprod" else "carry + v"
    tile = knobs.tile
    src = [
        _HEADER,
        f"using T = {T};",
        f"constexpr uint32_t TILE = {tile};",
        f"constexpr uint32_t BUFN = {knobs.bufn};",
        _copy_helpers(T, knobs),
    ]
    c = [
        "class Kernel {",
        "public:",
        "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR m, GM_ADDR y, uint32_t rows, uint32_t cols) {",
    ]
    c += _split_units(knobs, "r0", "nr", "rows")
    c += [
        "        this->cols = cols;",
        "        xGm.SetGlobalBuffer((__gm__ T*)x);",
        "        yGm.SetGlobalBuffer((__gm__ T*)y);",
        "        pipe.InitBuffer(inQ, BUFN, TILE * sizeof(T));",
        "        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(T));",
    ]
    if masked:
        c += ["        mGm.SetGlobalBuffer((__gm__ uint8_t*)m);", "        pipe.InitBuffer(mQ, BUFN, TILE);"]
    if cast:
        c.append("        pipe.InitBuffer(fBuf, 2 * TILE * sizeof(float));")
    c += ["    }", "    __aicore__ inline void Process() {"]
    if knobs.bad_workspace:  # the running value is set once, not per row
        c.append(f"        float carry = {init};")
    c.append("        for (uint32_t i = 0; i < nr; ++i) {")
    if not knobs.bad_workspace:
        c.append(f"            float carry = {init};")
    c += [
        "            uint64_t base = uint64_t(r0 + i) * cols;",
        "            for (uint32_t c0 = 0; c0 < cols; c0 += TILE) {",
        "                uint32_t n = cols - c0 < TILE ? cols - c0 : TILE;",
        f"                uint32_t off = {'cols - c0 - n' if rev else 'c0'};",
        "                LocalTensor<T> l = inQ.AllocTensor<T>();",
        "                Load(l, xGm, base + off, n);",
    ]
    c += _q_in(knobs, "inQ", "l", "                ")
    if masked:
        c += [
            "                LocalTensor<uint8_t> lm = mQ.AllocTensor<uint8_t>();",
            "                Load(lm, mGm, base + off, n);",
        ]
        c += _q_in(knobs, "mQ", "lm", "                ")
    c.append("                LocalTensor<T> h = inQ.DeQue<T>();")
    if masked:
        c.append("                LocalTensor<uint8_t> hm = mQ.DeQue<uint8_t>();")
    if cast:
        c += [
            "                LocalTensor<float> fb = fBuf.Get<float>();",
            "                LocalTensor<float> x = fb;",
            "                LocalTensor<float> y = fb[TILE];",
            "                Cast(x, h, RoundMode::CAST_NONE, n);",
        ]
    else:
        c += ["                LocalTensor<T> x = h;", "                LocalTensor<T> y = outQ.AllocTensor<T>();"]
    if knobs.ops_overload:
        c.append("                y = x.cumsum();   // running sum of the tile")
    else:
        c.append("                SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);")
        loop = "for (int32_t k = int32_t(n) - 1; k >= 0; --k)" if rev else "for (uint32_t k = 0; k < n; ++k)"
        mv = " * (float)hm.GetValue(k)" if masked else ""
        if rec == "exclusive":
            body = f"float v = (float)x.GetValue(k); y.SetValue(k, (T)carry); carry = {op};"
        else:
            body = (
                f"float v = (float)x.GetValue(k){mv}; carry = {op}; y.SetValue(k, ({'float' if cast else 'T'})carry);"
            )
        c.append(f"                {loop} {{ {body} }}")
        c.append("                SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);")
    if cast:
        c += [
            "                LocalTensor<T> yo = outQ.AllocTensor<T>();",
            "                Cast(yo, y, RoundMode::CAST_ROUND, n);",
            "                outQ.EnQue(yo);",
        ]
    else:
        c.append("                outQ.EnQue(y);")
    c += _q_free(knobs, "inQ", "h", "                ")
    if masked:
        c += _q_free(knobs, "mQ", "hm", "                ")
    c += [
        "                LocalTensor<T> o = outQ.DeQue<T>();",
        "                Store(yGm, base + off, o, n);",
        "                outQ.FreeTensor(o);",
        "            }",
        "        }",
        "    }",
        "private:",
        "    TPipe pipe;",
        "    TQue<QuePosition::VECIN, BUFN> inQ, mQ;",
        "    TQue<QuePosition::VECOUT, BUFN> outQ;",
        "    TBuf<QuePosition::VECCALC> fBuf;",
        "    GlobalTensor<T> xGm, yGm;",
        "    GlobalTensor<uint8_t> mGm;",
        "    uint32_t r0, nr, cols;",
        "};",
    ]
    src.append("\n".join(c))
    src.append(_launcher("scan", ["x", "m", "y", "uint32_t rows", "uint32_t cols"], knobs, plan.rows))
    m = "x1" if masked else "x0"
    return _py(
        plan, knobs, "\n".join(src), f"self.mod.scan_do(x0, {m}, y, {plan.rows}, {plan.cols})", "torch.empty_like(x0)"
    )
