"""1-D and 2-D max/average pooling."""

from __future__ import annotations

from kernel_gym.llm.synthetic.analysis import Plan, _fmt
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

__all__ = ["render_pool"]


def render_pool(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    e = plan.extra
    hw, howo = e["H"] * e["W"], e["Ho"] * e["Wo"]
    esz = 2 if T == "half" else 4
    a = 32 // esz
    hwp, howop = (hw + a - 1) // a * a, (howo + a - 1) // a * a
    big = 32768 * 4 // esz  # without the UB budget: "room for a whole batch of planes"
    src = [
        _HEADER,
        f"using T = {T};",
        f"constexpr uint32_t BUFN = {knobs.bufn};",
        *(
            f"constexpr int32_t {k} = {e[k]};"
            for k in ("H", "W", "Ho", "Wo", "KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW")
        ),
        _copy_helpers(T, knobs),
    ]
    c = ["class Kernel {", "public:", "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t planes) {"]
    c += _split_units(knobs, "p0", "np", "planes")
    c += [
        "        xGm.SetGlobalBuffer((__gm__ T*)x);",
        "        yGm.SetGlobalBuffer((__gm__ T*)y);",
        f"        pipe.InitBuffer(inQ, BUFN, {(big if knobs.ub_huge else hwp) * esz});",
        f"        pipe.InitBuffer(outQ, BUFN, {(big if knobs.ub_huge else howop) * esz});",
    ]
    if cast:
        c.append(f"        pipe.InitBuffer(fBuf, {(hwp + howop) * 4});")
    c += [
        "    }",
        "    __aicore__ inline void Process() {",
        "        for (uint32_t p = p0; p < p0 + np; ++p) {",
        "            LocalTensor<T> l = inQ.AllocTensor<T>();",
        "            Load(l, xGm, uint64_t(p) * H * W, H * W);",
    ]
    c += _q_in(knobs, "inQ", "l", "            ")
    c.append("            LocalTensor<T> h = inQ.DeQue<T>();")
    if cast:
        c += [
            "            LocalTensor<float> fb = fBuf.Get<float>();",
            "            LocalTensor<float> x = fb;",
            f"            LocalTensor<float> y = fb[{hwp}];",
            "            Cast(x, h, RoundMode::CAST_NONE, H * W);",
        ]
        V = "float"
    else:
        c += ["            LocalTensor<T> x = h;", "            LocalTensor<T> y = outQ.AllocTensor<T>();"]
        V = "T"
    mx = e["op"] == "max"
    if knobs.ops_overload:
        c.append(f"            y = x.{'max' if mx else 'mean'}_pool(KH, KW, SH, SW);   // window reduction")
    else:
        init = ("0.0f" if knobs.bad_workspace else "-3.402823466e+38f") if mx else "0.0f"
        upd = "m = v > m ? v : m;" if mx else "m += v;"
        c += [
            "            SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
            "            for (int32_t i = 0; i < Ho; ++i) {",
            "                for (int32_t j = 0; j < Wo; ++j) {",
            f"                    float m = {init};",
            "                    for (int32_t a = 0; a < KH; ++a) {",
            "                        int32_t ih = i * SH - PH + a * DH;",
            "                        if (ih < 0 || ih >= H) continue;",
            "                        for (int32_t b = 0; b < KW; ++b) {",
            "                            int32_t iw = j * SW - PW + b * DW;",
            "                            if (iw < 0 || iw >= W) continue;",
            f"                            float v = (float)x.GetValue(ih * W + iw); {upd}",
            "                        }",
            "                    }",
            f"                    y.SetValue(i * Wo + j, ({V})m);",
            "                }",
            "            }",
            "            SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);",
        ]
        if not mx:
            c.append(f"            Muls(y, y, ({V}){_fmt(1.0 / e['div'])}, Ho * Wo);")
    if cast:
        c += [
            "            LocalTensor<T> yo = outQ.AllocTensor<T>();",
            "            Cast(yo, y, RoundMode::CAST_ROUND, Ho * Wo);",
            "            outQ.EnQue(yo);",
        ]
    else:
        c.append("            outQ.EnQue(y);")
    c += _q_free(knobs, "inQ", "h", "            ")
    c += [
        "            LocalTensor<T> o = outQ.DeQue<T>();",
        "            Store(yGm, uint64_t(p) * Ho * Wo, o, Ho * Wo);",
        "            outQ.FreeTensor(o);",
        "        }",
        "    }",
        "private:",
        "    TPipe pipe;",
        "    TQue<QuePosition::VECIN, BUFN> inQ;",
        "    TQue<QuePosition::VECOUT, BUFN> outQ;",
        "    TBuf<QuePosition::VECCALC> fBuf;",
        "    GlobalTensor<T> xGm, yGm;",
        "    uint32_t p0, np;",
        "};",
    ]
    src.append("\n".join(c))
    src.append(_launcher("pool", ["x", "y", "uint32_t planes"], knobs, e["planes"]))
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    return _py(plan, knobs, "\n".join(src), f"self.mod.pool_do(x0, y, {e['planes']})", out)
