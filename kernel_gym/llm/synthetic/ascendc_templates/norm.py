"""Statistics normalisations (batch, group, instance norm) over channel planes."""

from __future__ import annotations

from kernel_gym.llm.synthetic.analysis import Plan, _fmt
from kernel_gym.llm.synthetic.ascendc_templates.common import (
    _HEADER,
    _SCALAR_OF,
    _copy_helpers,
    _launcher,
    _py,
    _q_free,
    _q_in,
    _split_units,
    _types,
)
from kernel_gym.llm.synthetic.faults import Knobs

__all__ = ["render_norm"]


def _stat_reduce(knobs: Knobs, src: str, dst: str) -> list[str]:
    """Sum `src` (n elements) into the float `dst` (ReduceSum with a work area, or the fault)."""
    if knobs.bad_workspace:  # folds into a work buffer that was never zeroed
        return [
            f"for (uint32_t k = 0; k < n; k += 64) Add(red, red, {src}[k], n - k < 64 ? n - k : 64);",
            "SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
            f"for (uint32_t k = 0; k < 64; ++k) {dst} += red.GetValue(k);",
            "SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);",
        ]
    return [f"ReduceSum(red, {src}, red[16], n);", f"{dst} += ScalarOf(red);"]


def render_norm(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    e = plan.extra
    mode, L, S, C = e["mode"], e["L"], e["S"], e["C"]
    tile = knobs.tile
    eps = _fmt(e["eps"])
    src = [
        _HEADER,
        f"using T = {T};",
        f"constexpr uint32_t TILE = {tile};",
        f"constexpr uint32_t BUFN = {knobs.bufn};",
        f"constexpr uint32_t GL = {L}, SL = {S}, CH = {C};",
        _copy_helpers(T, knobs),
        _SCALAR_OF,
    ]
    c = [
        "class Kernel {",
        "public:",
        "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR rm, GM_ADDR rv, GM_ADDR y, "
        "uint32_t segs) {",
    ]
    c += _split_units(knobs, "s0", "ns", "segs")
    c += [
        "        xGm.SetGlobalBuffer((__gm__ T*)x);",
        "        yGm.SetGlobalBuffer((__gm__ T*)y);",
        "        wGm.SetGlobalBuffer((__gm__ float*)w);",
        "        bGm.SetGlobalBuffer((__gm__ float*)b);",
        "        mGm.SetGlobalBuffer((__gm__ float*)rm);",
        "        vGm.SetGlobalBuffer((__gm__ float*)rv);",
        "        pipe.InitBuffer(inQ, BUFN, TILE * sizeof(T));",
        "        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(T));",
        "        pipe.InitBuffer(workBuf, 3 * TILE * sizeof(float));",
        "        pipe.InitBuffer(redBuf, 1024);",
        "    }",
    ]
    # load + cast helper of one chunk into float `x`
    c += [
        "    __aicore__ inline void In(uint64_t off, uint32_t n) {",
        "        LocalTensor<T> l = inQ.AllocTensor<T>();",
        "        Load(l, xGm, off, n);",
    ]
    c += _q_in(knobs, "inQ", "l", "        ")
    c += ["    }"]
    # statistics of a group
    c += [
        "    __aicore__ inline void Stats(uint32_t g) {",
        "        LocalTensor<float> red = redBuf.Get<float>();",
        "        LocalTensor<float> wk = workBuf.Get<float>();",
        "        float s1 = 0.0f, s2 = 0.0f;",
        "        for (uint32_t c0 = 0; c0 < GL; c0 += TILE) {",
        "            uint32_t n = GL - c0 < TILE ? GL - c0 : TILE;",
        "            In(uint64_t(g) * GL + c0, n);",
        "            LocalTensor<T> h = inQ.DeQue<T>();",
    ]
    if cast:
        c += ["            LocalTensor<float> x = wk;", "            Cast(x, h, RoundMode::CAST_NONE, n);"]
    else:
        c.append("            LocalTensor<float> x = h;")
    c += ["            LocalTensor<float> sq = wk[TILE];", "            Mul(sq, x, x, n);"]
    if mode != "frobenius":
        c += ["            " + ln for ln in _stat_reduce(knobs, "x", "s1")]
    c += ["            " + ln for ln in _stat_reduce(knobs, "sq", "s2")]
    c += _q_free(knobs, "inQ", "h", "            ")
    c += ["        }"]
    if mode == "frobenius":
        c += ["        mean = 0.0f;", "        Duplicate(red, s2, 8);"]
    else:
        c += [
            f"        mean = s1 * {_fmt(1.0 / L)};",
            f"        float var = s2 * {_fmt(1.0 / L)} - mean * mean;",
            f"        Duplicate(red, var + {eps}, 8);",
        ]
    c += ["        Rsqrt(red, red, 8);", "        rstd = ScalarOf(red);", "        cur = g;", "    }"]
    # process
    c += [
        "    __aicore__ inline void Process() {",
        "        cur = 0xFFFFFFFFu;",
        "        LocalTensor<float> red = redBuf.Get<float>();",
        "        for (uint32_t s = s0; s < s0 + ns; ++s) {",
    ]
    aff = e["affine"]
    if e["stats"]:
        c.append("            uint32_t g = uint32_t(uint64_t(s) * SL / GL);")
        c.append("            if (g != cur) Stats(g);")
        c.append("            float sc = rstd, sh = -mean * rstd;")
    else:
        c.append("            float sc = 1.0f, sh = 0.0f;")
    if aff == "chan":
        c += [
            "            uint32_t ch = s % CH;",
            "            float wv = wGm.GetValue(ch), bv = bGm.GetValue(ch);",
            "            sh = sh * wv + bv; sc = sc * wv;",
        ]
    elif aff == "bn":
        c += [
            "            uint32_t ch = s % CH;",
            f"            Duplicate(red, vGm.GetValue(ch) + {eps}, 8);",
            "            Rsqrt(red, red, 8);",
            "            float r = ScalarOf(red);",
            "            sc = r * wGm.GetValue(ch);",
            "            sh = bGm.GetValue(ch) - mGm.GetValue(ch) * sc;",
        ]
    c += [
        "            for (uint32_t c0 = 0; c0 < SL; c0 += TILE) {",
        "                uint32_t n = SL - c0 < TILE ? SL - c0 : TILE;",
        "                uint64_t off = uint64_t(s) * SL + c0;",
        "                In(off, n);",
        "                LocalTensor<T> h = inQ.DeQue<T>();",
        "                LocalTensor<float> wk = workBuf.Get<float>();",
    ]
    if cast:
        c += [
            "                LocalTensor<float> x = wk;",
            "                Cast(x, h, RoundMode::CAST_NONE, n);",
            "                LocalTensor<float> y = wk[TILE];",
        ]
    else:
        c += [
            "                LocalTensor<float> x = h;",
            "                LocalTensor<float> y = outQ.AllocTensor<float>();",
        ]
    if knobs.ops_overload:
        c.append("                y = x * sc + sh;   // normalise the chunk")
    else:
        c += ["                Muls(y, x, sc, n);", "                Adds(y, y, sh, n);"]
    if aff == "elem":
        c += [
            "                LocalTensor<float> wt = wk[2 * TILE];",
            "                Load(wt, wGm, c0, n);",
            "                SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0);",
            "                Mul(y, y, wt, n);",
            "                PipeBarrier<PIPE_V>();",
            "                SetFlag<HardEvent::V_MTE2>(0); WaitFlag<HardEvent::V_MTE2>(0);",
            "                Load(wt, bGm, c0, n);",
            "                SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0);",
            "                Add(y, y, wt, n);",
            "                SetFlag<HardEvent::V_MTE2>(0); WaitFlag<HardEvent::V_MTE2>(0);",
        ]
    if cast:
        c += [
            "                LocalTensor<T> yo = outQ.AllocTensor<T>();",
            "                Cast(yo, y, RoundMode::CAST_ROUND, n);",
            "                outQ.EnQue(yo);",
        ]
    else:
        c.append("                outQ.EnQue(y);")
    c += _q_free(knobs, "inQ", "h", "                ")
    c += [
        "                LocalTensor<T> o = outQ.DeQue<T>();",
        "                Store(yGm, off, o, n);",
        "                outQ.FreeTensor(o);",
        "            }",
        "        }",
        "    }",
        "private:",
        "    TPipe pipe;",
        "    TQue<QuePosition::VECIN, BUFN> inQ;",
        "    TQue<QuePosition::VECOUT, BUFN> outQ;",
        "    TBuf<QuePosition::VECCALC> workBuf, redBuf;",
        "    GlobalTensor<T> xGm, yGm;",
        "    GlobalTensor<float> wGm, bGm, mGm, vGm;",
        "    uint32_t s0, ns, cur;",
        "    float mean, rstd;",
        "};",
    ]
    src.append("\n".join(c))
    src.append(_launcher("norm", ["x", "w", "b", "rm", "rv", "y", "uint32_t segs"], knobs, plan.rows))
    a = e["attr"]
    if aff == "bn":
        args = f"self.{a}.weight, self.{a}.bias, self.{a}.running_mean, self.{a}.running_var"
    elif aff in ("elem", "chan"):
        args = f"self.{a}.weight, self.{a}.bias, x0, x0"
    else:
        args = "x0, x0, x0, x0"
    return _py(plan, knobs, "\n".join(src), f"self.mod.norm_do(x0, {args}, y, {plan.rows})", "torch.empty_like(x0)")
