"""Ascend C templates of the synthetic coder for scan, pooling, statistics normalizations and
matmul (vector units only: the simulator has no cube API).

Same conventions as :mod:`.ascendc_templates`: a Plan and Knobs in, an answer source out, every
missing skill's fault committed where it applies (queue protocol, 32 B copies, tails, UB budget,
fp16 casts, accumulator initialisation). Written for kernel-gym; not derived from the stored answers.
"""

from __future__ import annotations

from kernel_gym.llm.synthetic.analysis import Plan, _fmt
from kernel_gym.llm.synthetic.ascendc_templates import _HEADER, _SCALAR_OF, _copy_helpers, _py, _types
from kernel_gym.llm.synthetic.faults import Knobs

__all__ = ["render_scan", "render_pool", "render_norm", "render_matmul"]


def _split_units(knobs: Knobs, first: str, count: str, total: str) -> list[str]:
    """This block's share [first, first + count) of `total` independent units (rows, planes)."""
    if knobs.blocks == 1 and not knobs.use_block_idx:
        return [f"        {first} = 0; {count} = {total};"]
    out = [f"        uint32_t nb = GetBlockNum(), bi = GetBlockIdx(), per = {total} / nb, rem = {total} % nb;"]
    if knobs.no_tail:
        out.append(f"        {first} = bi * per; {count} = per;")
    else:
        out.append(f"        {first} = bi * per + (bi < rem ? bi : rem); {count} = per + (bi < rem ? 1 : 0);")
    return out


def _q_in(knobs: Knobs, q: str, var: str, ind: str) -> list[str]:
    return [] if knobs.skip_enque else [f"{ind}{q}.EnQue({var});"]


def _q_free(knobs: Knobs, q: str, var: str, ind: str) -> list[str]:
    return [] if knobs.leak else [f"{ind}{q}.FreeTensor({var});"]


def _launcher(name: str, params: list[str], knobs: Knobs, units: int) -> str:
    gm = ", ".join(f"GM_ADDR {p}" if not p.startswith("uint") else p for p in params)
    names = ", ".join(p.split()[-1] for p in params)
    host = ", ".join(f"uint8_t* {p}" if not p.startswith("uint") else p for p in params)
    b = max(1, min(knobs.blocks, units))
    return (f"extern \"C\" __global__ __aicore__ void {name}_kernel({gm}) {{\n"
            f"    Kernel op;\n    op.Init({names});\n    op.Process();\n}}\n"
            f"extern \"C\" void {name}_do({host}) {{\n"
            f"    {name}_kernel<<<{b}, nullptr, nullptr>>>({names});\n}}")


# --------------------------------------------------------------------------- scan
def render_scan(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    rec = plan.recipe
    masked = rec == "masked"
    rev = rec == "revcumsum"
    init = "1.0f" if rec == "cumprod" else "0.0f"
    op = "carry * v" if rec == "cumprod" else "carry + v"
    tile = knobs.tile
    src = [_HEADER, f"using T = {T};", f"constexpr uint32_t TILE = {tile};", f"constexpr uint32_t BUFN = {knobs.bufn};",
           _copy_helpers(T, knobs)]
    c = ["class Kernel {", "public:",
         "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR m, GM_ADDR y, uint32_t rows, uint32_t cols) {"]
    c += _split_units(knobs, "r0", "nr", "rows")
    c += ["        this->cols = cols;", "        xGm.SetGlobalBuffer((__gm__ T*)x);", "        yGm.SetGlobalBuffer((__gm__ T*)y);",
          "        pipe.InitBuffer(inQ, BUFN, TILE * sizeof(T));", "        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(T));"]
    if masked:
        c += ["        mGm.SetGlobalBuffer((__gm__ uint8_t*)m);", "        pipe.InitBuffer(mQ, BUFN, TILE);"]
    if cast:
        c.append("        pipe.InitBuffer(fBuf, 2 * TILE * sizeof(float));")
    c += ["    }", "    __aicore__ inline void Process() {"]
    if knobs.bad_workspace:     # the running value is set once, not per row
        c.append(f"        float carry = {init};")
    c.append("        for (uint32_t i = 0; i < nr; ++i) {")
    if not knobs.bad_workspace:
        c.append(f"            float carry = {init};")
    c += ["            uint64_t base = uint64_t(r0 + i) * cols;",
          "            for (uint32_t c0 = 0; c0 < cols; c0 += TILE) {",
          "                uint32_t n = cols - c0 < TILE ? cols - c0 : TILE;",
          f"                uint32_t off = {'cols - c0 - n' if rev else 'c0'};",
          "                LocalTensor<T> l = inQ.AllocTensor<T>();", "                Load(l, xGm, base + off, n);"]
    c += _q_in(knobs, "inQ", "l", "                ")
    if masked:
        c += ["                LocalTensor<uint8_t> lm = mQ.AllocTensor<uint8_t>();", "                Load(lm, mGm, base + off, n);"]
        c += _q_in(knobs, "mQ", "lm", "                ")
    c.append("                LocalTensor<T> h = inQ.DeQue<T>();")
    if masked:
        c.append("                LocalTensor<uint8_t> hm = mQ.DeQue<uint8_t>();")
    if cast:
        c += ["                LocalTensor<float> fb = fBuf.Get<float>();", "                LocalTensor<float> x = fb;",
              "                LocalTensor<float> y = fb[TILE];", "                Cast(x, h, RoundMode::CAST_NONE, n);"]
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
            body = f"float v = (float)x.GetValue(k){mv}; carry = {op}; y.SetValue(k, ({'float' if cast else 'T'})carry);"
        c.append(f"                {loop} {{ {body} }}")
        c.append("                SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);")
    if cast:
        c += ["                LocalTensor<T> yo = outQ.AllocTensor<T>();", "                Cast(yo, y, RoundMode::CAST_ROUND, n);",
              "                outQ.EnQue(yo);"]
    else:
        c.append("                outQ.EnQue(y);")
    c += _q_free(knobs, "inQ", "h", "                ")
    if masked:
        c += _q_free(knobs, "mQ", "hm", "                ")
    c += ["                LocalTensor<T> o = outQ.DeQue<T>();", "                Store(yGm, base + off, o, n);",
          "                outQ.FreeTensor(o);", "            }", "        }", "    }",
          "private:", "    TPipe pipe;", "    TQue<QuePosition::VECIN, BUFN> inQ, mQ;", "    TQue<QuePosition::VECOUT, BUFN> outQ;",
          "    TBuf<QuePosition::VECCALC> fBuf;", "    GlobalTensor<T> xGm, yGm;", "    GlobalTensor<uint8_t> mGm;",
          "    uint32_t r0, nr, cols;", "};"]
    src.append("\n".join(c))
    src.append(_launcher("scan", ["x", "m", "y", "uint32_t rows", "uint32_t cols"], knobs, plan.rows))
    m = "x1" if masked else "x0"
    return _py(plan, knobs, "\n".join(src), f"self.mod.scan_do(x0, {m}, y, {plan.rows}, {plan.cols})", "torch.empty_like(x0)")


# --------------------------------------------------------------------------- pooling
def render_pool(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    e = plan.extra
    hw, howo = e["H"] * e["W"], e["Ho"] * e["Wo"]
    esz = 2 if T == "half" else 4
    a = 32 // esz
    hwp, howop = (hw + a - 1) // a * a, (howo + a - 1) // a * a
    big = 32768 * 4 // esz      # without the UB budget: "room for a whole batch of planes"
    src = [_HEADER, f"using T = {T};", f"constexpr uint32_t BUFN = {knobs.bufn};",
           *(f"constexpr int32_t {k} = {e[k]};" for k in ("H", "W", "Ho", "Wo", "KH", "KW", "SH", "SW", "PH", "PW", "DH", "DW")),
           _copy_helpers(T, knobs)]
    c = ["class Kernel {", "public:", "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t planes) {"]
    c += _split_units(knobs, "p0", "np", "planes")
    c += ["        xGm.SetGlobalBuffer((__gm__ T*)x);", "        yGm.SetGlobalBuffer((__gm__ T*)y);",
          f"        pipe.InitBuffer(inQ, BUFN, {(big if knobs.ub_huge else hwp) * esz});", f"        pipe.InitBuffer(outQ, BUFN, {(big if knobs.ub_huge else howop) * esz});"]
    if cast:
        c.append(f"        pipe.InitBuffer(fBuf, {(hwp + howop) * 4});")
    c += ["    }", "    __aicore__ inline void Process() {", "        for (uint32_t p = p0; p < p0 + np; ++p) {",
          "            LocalTensor<T> l = inQ.AllocTensor<T>();", "            Load(l, xGm, uint64_t(p) * H * W, H * W);"]
    c += _q_in(knobs, "inQ", "l", "            ")
    c.append("            LocalTensor<T> h = inQ.DeQue<T>();")
    if cast:
        c += ["            LocalTensor<float> fb = fBuf.Get<float>();", "            LocalTensor<float> x = fb;",
              f"            LocalTensor<float> y = fb[{hwp}];", "            Cast(x, h, RoundMode::CAST_NONE, H * W);"]
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
        c += ["            SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
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
              "                        }", "                    }",
              f"                    y.SetValue(i * Wo + j, ({V})m);", "                }", "            }",
              "            SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);"]
        if not mx:
            c.append(f"            Muls(y, y, ({V}){_fmt(1.0 / e['div'])}, Ho * Wo);")
    if cast:
        c += ["            LocalTensor<T> yo = outQ.AllocTensor<T>();", "            Cast(yo, y, RoundMode::CAST_ROUND, Ho * Wo);",
              "            outQ.EnQue(yo);"]
    else:
        c.append("            outQ.EnQue(y);")
    c += _q_free(knobs, "inQ", "h", "            ")
    c += ["            LocalTensor<T> o = outQ.DeQue<T>();", "            Store(yGm, uint64_t(p) * Ho * Wo, o, Ho * Wo);",
          "            outQ.FreeTensor(o);", "        }", "    }",
          "private:", "    TPipe pipe;", "    TQue<QuePosition::VECIN, BUFN> inQ;", "    TQue<QuePosition::VECOUT, BUFN> outQ;",
          "    TBuf<QuePosition::VECCALC> fBuf;", "    GlobalTensor<T> xGm, yGm;", "    uint32_t p0, np;", "};"]
    src.append("\n".join(c))
    src.append(_launcher("pool", ["x", "y", "uint32_t planes"], knobs, e["planes"]))
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    return _py(plan, knobs, "\n".join(src), f"self.mod.pool_do(x0, y, {e['planes']})", out)


# --------------------------------------------------------------------------- statistics normalizations
def _stat_reduce(knobs: Knobs, src: str, dst: str) -> list[str]:
    """Sum `src` (n elements) into the float `dst` (ReduceSum with a work area, or the fault)."""
    if knobs.bad_workspace:     # folds into a work buffer that was never zeroed
        return [f"for (uint32_t k = 0; k < n; k += 64) Add(red, red, {src}[k], n - k < 64 ? n - k : 64);",
                "SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
                f"for (uint32_t k = 0; k < 64; ++k) {dst} += red.GetValue(k);",
                "SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);"]
    return [f"ReduceSum(red, {src}, red[16], n);", f"{dst} += ScalarOf(red);"]


def render_norm(plan: Plan, knobs: Knobs) -> str:
    T, cast = _types(plan, knobs)
    e = plan.extra
    mode, L, S, C = e["mode"], e["L"], e["S"], e["C"]
    tile = knobs.tile
    eps = _fmt(e["eps"])
    src = [_HEADER, f"using T = {T};", f"constexpr uint32_t TILE = {tile};", f"constexpr uint32_t BUFN = {knobs.bufn};",
           f"constexpr uint32_t GL = {L}, SL = {S}, CH = {C};", _copy_helpers(T, knobs), _SCALAR_OF]
    c = ["class Kernel {", "public:",
         "    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR rm, GM_ADDR rv, GM_ADDR y, uint32_t segs) {"]
    c += _split_units(knobs, "s0", "ns", "segs")
    c += ["        xGm.SetGlobalBuffer((__gm__ T*)x);", "        yGm.SetGlobalBuffer((__gm__ T*)y);",
          "        wGm.SetGlobalBuffer((__gm__ float*)w);", "        bGm.SetGlobalBuffer((__gm__ float*)b);",
          "        mGm.SetGlobalBuffer((__gm__ float*)rm);", "        vGm.SetGlobalBuffer((__gm__ float*)rv);",
          "        pipe.InitBuffer(inQ, BUFN, TILE * sizeof(T));", "        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(T));",
          "        pipe.InitBuffer(workBuf, 3 * TILE * sizeof(float));", "        pipe.InitBuffer(redBuf, 1024);", "    }"]
    # load + cast helper of one chunk into float `x`
    c += ["    __aicore__ inline void In(uint64_t off, uint32_t n) {", "        LocalTensor<T> l = inQ.AllocTensor<T>();",
          "        Load(l, xGm, off, n);"]
    c += _q_in(knobs, "inQ", "l", "        ")
    c += ["    }"]
    # statistics of a group
    c += ["    __aicore__ inline void Stats(uint32_t g) {", "        LocalTensor<float> red = redBuf.Get<float>();",
          "        LocalTensor<float> wk = workBuf.Get<float>();", "        float s1 = 0.0f, s2 = 0.0f;",
          "        for (uint32_t c0 = 0; c0 < GL; c0 += TILE) {", "            uint32_t n = GL - c0 < TILE ? GL - c0 : TILE;",
          "            In(uint64_t(g) * GL + c0, n);", "            LocalTensor<T> h = inQ.DeQue<T>();"]
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
        c += [f"        mean = s1 * {_fmt(1.0 / L)};", f"        float var = s2 * {_fmt(1.0 / L)} - mean * mean;",
              f"        Duplicate(red, var + {eps}, 8);"]
    c += ["        Rsqrt(red, red, 8);", "        rstd = ScalarOf(red);", "        cur = g;", "    }"]
    # process
    c += ["    __aicore__ inline void Process() {", "        cur = 0xFFFFFFFFu;",
          "        LocalTensor<float> red = redBuf.Get<float>();",
          "        for (uint32_t s = s0; s < s0 + ns; ++s) {"]
    aff = e["affine"]
    if e["stats"]:
        c.append("            uint32_t g = uint32_t(uint64_t(s) * SL / GL);")
        c.append("            if (g != cur) Stats(g);")
        c.append("            float sc = rstd, sh = -mean * rstd;")
    else:
        c.append("            float sc = 1.0f, sh = 0.0f;")
    if aff == "chan":
        c += ["            uint32_t ch = s % CH;", "            float wv = wGm.GetValue(ch), bv = bGm.GetValue(ch);",
              "            sh = sh * wv + bv; sc = sc * wv;"]
    elif aff == "bn":
        c += ["            uint32_t ch = s % CH;",
              f"            Duplicate(red, vGm.GetValue(ch) + {eps}, 8);", "            Rsqrt(red, red, 8);",
              "            float r = ScalarOf(red);", "            sc = r * wGm.GetValue(ch);",
              "            sh = bGm.GetValue(ch) - mGm.GetValue(ch) * sc;"]
    c += ["            for (uint32_t c0 = 0; c0 < SL; c0 += TILE) {", "                uint32_t n = SL - c0 < TILE ? SL - c0 : TILE;",
          "                uint64_t off = uint64_t(s) * SL + c0;", "                In(off, n);",
          "                LocalTensor<T> h = inQ.DeQue<T>();", "                LocalTensor<float> wk = workBuf.Get<float>();"]
    if cast:
        c += ["                LocalTensor<float> x = wk;", "                Cast(x, h, RoundMode::CAST_NONE, n);",
              "                LocalTensor<float> y = wk[TILE];"]
    else:
        c += ["                LocalTensor<float> x = h;", "                LocalTensor<float> y = outQ.AllocTensor<float>();"]
    if knobs.ops_overload:
        c.append("                y = x * sc + sh;   // normalise the chunk")
    else:
        c += ["                Muls(y, x, sc, n);", "                Adds(y, y, sh, n);"]
    if aff == "elem":
        c += ["                LocalTensor<float> wt = wk[2 * TILE];",
              "                Load(wt, wGm, c0, n);", "                SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0);",
              "                Mul(y, y, wt, n);", "                PipeBarrier<PIPE_V>();", "                SetFlag<HardEvent::V_MTE2>(0); WaitFlag<HardEvent::V_MTE2>(0);",
              "                Load(wt, bGm, c0, n);", "                SetFlag<HardEvent::MTE2_V>(0); WaitFlag<HardEvent::MTE2_V>(0);",
              "                Add(y, y, wt, n);", "                SetFlag<HardEvent::V_MTE2>(0); WaitFlag<HardEvent::V_MTE2>(0);"]
    if cast:
        c += ["                LocalTensor<T> yo = outQ.AllocTensor<T>();", "                Cast(yo, y, RoundMode::CAST_ROUND, n);",
              "                outQ.EnQue(yo);"]
    else:
        c.append("                outQ.EnQue(y);")
    c += _q_free(knobs, "inQ", "h", "                ")
    c += ["                LocalTensor<T> o = outQ.DeQue<T>();", "                Store(yGm, off, o, n);",
          "                outQ.FreeTensor(o);", "            }", "        }", "    }",
          "private:", "    TPipe pipe;", "    TQue<QuePosition::VECIN, BUFN> inQ;", "    TQue<QuePosition::VECOUT, BUFN> outQ;",
          "    TBuf<QuePosition::VECCALC> workBuf, redBuf;", "    GlobalTensor<T> xGm, yGm;",
          "    GlobalTensor<float> wGm, bGm, mGm, vGm;", "    uint32_t s0, ns, cur;", "    float mean, rstd;", "};"]
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


# --------------------------------------------------------------------------- matmul (vector units)
def render_matmul(plan: Plan, knobs: Knobs) -> str:
    e = plan.extra
    mode = e["mode"]
    if mode == "diag":
        return _render_diag(plan, knobs)
    if mode == "dot":
        return _render_dot(plan, knobs)
    return _render_axpy(plan, knobs)


def _pad8(n: int) -> int:
    return (n + 7) // 8 * 8


def _render_diag(plan: Plan, knobs: Knobs) -> str:
    e = plan.extra
    N = e["N"]
    tile = min(knobs.tile, _pad8(N)) if not knobs.ub_huge else knobs.tile
    src = [_HEADER, "using T = float;", f"constexpr uint32_t TILE = {tile};", f"constexpr uint32_t BUFN = {knobs.bufn};",
           f"constexpr uint32_t NC = {N};", _copy_helpers("float", knobs)]
    c = ["class Kernel {", "public:", "    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR y, uint32_t rows) {"]
    c += _split_units(knobs, "r0", "nr", "rows")
    c += ["        aGm.SetGlobalBuffer((__gm__ T*)a);", "        bGm.SetGlobalBuffer((__gm__ T*)b);", "        yGm.SetGlobalBuffer((__gm__ T*)y);",
          "        pipe.InitBuffer(inQ, BUFN, TILE * sizeof(T));", "        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(T));", "    }",
          "    __aicore__ inline void Process() {", "        for (uint32_t i = r0; i < r0 + nr; ++i) {",
          "            float s = aGm.GetValue(i);",
          "            for (uint32_t c0 = 0; c0 < NC; c0 += TILE) {", "                uint32_t n = NC - c0 < TILE ? NC - c0 : TILE;",
          "                uint64_t off = uint64_t(i) * NC + c0;",
          "                LocalTensor<T> l = inQ.AllocTensor<T>();", "                Load(l, bGm, off, n);"]
    c += _q_in(knobs, "inQ", "l", "                ")
    c += ["                LocalTensor<T> h = inQ.DeQue<T>();", "                LocalTensor<T> o = outQ.AllocTensor<T>();"]
    c.append("                o = h * s;   // scale the row" if knobs.ops_overload else "                Muls(o, h, s, n);")
    c.append("                outQ.EnQue(o);")
    c += _q_free(knobs, "inQ", "h", "                ")
    c += ["                LocalTensor<T> q = outQ.DeQue<T>();", "                Store(yGm, off, q, n);", "                outQ.FreeTensor(q);",
          "            }", "        }", "    }", "private:", "    TPipe pipe;", "    TQue<QuePosition::VECIN, BUFN> inQ;",
          "    TQue<QuePosition::VECOUT, BUFN> outQ;", "    GlobalTensor<T> aGm, bGm, yGm;", "    uint32_t r0, nr;", "};"]
    src.append("\n".join(c))
    src.append(_launcher("mm", ["a", "b", "y", "uint32_t rows"], knobs, plan.rows))
    return _py(plan, knobs, "\n".join(src), f"self.mod.mm_do(x0, x1, y, {e['M']})", "torch.empty_like(x1)")


def _render_axpy(plan: Plan, knobs: Knobs) -> str:
    """C[i, :] = sum_k A[i, k] * B[k, :]: B rows in UB scaled by scalars of A and accumulated."""
    e = plan.extra
    M, K, N, ta, tril = e["M"], e["K"], e["N"], e["ta"], e["tril"]
    npad = _pad8(N)
    budget = 48 * 1024 * (8 if knobs.ub_huge else 1)
    kt = max(1, min(K, budget // (npad * 4)))                 # rows of B per tile
    rg = max(1, min(16, (32 * 1024) // (npad * 4)))           # output rows accumulated at once
    ktp, rgp = _pad8(kt), _pad8(rg)
    src = [_HEADER, "using T = float;", f"constexpr uint32_t M = {M}, K = {K}, N = {N}, NP = {npad};",
           f"constexpr uint32_t KT = {kt}, KTP = {ktp}, RG = {rg}, RGP = {rgp};", f"constexpr uint32_t BUFN = {knobs.bufn};",
           _copy_helpers("float", knobs)]
    c = ["class Kernel {", "public:", "    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR y, uint32_t rows) {"]
    c += _split_units(knobs, "r0", "nr", "rows")
    c += ["        aGm.SetGlobalBuffer((__gm__ T*)a);", "        bGm.SetGlobalBuffer((__gm__ T*)b);", "        yGm.SetGlobalBuffer((__gm__ T*)y);",
          "        pipe.InitBuffer(bQ, 1, KT * NP * sizeof(T));",
          f"        pipe.InitBuffer(aQ, BUFN, {(kt * rgp if ta else rg * ktp) * 4});",
          "        pipe.InitBuffer(outQ, 1, RG * NP * sizeof(T));", "        pipe.InitBuffer(tmpBuf, NP * sizeof(T));", "    }",
          "    __aicore__ inline void Process() {", "        LocalTensor<T> tmp = tmpBuf.Get<T>();",
          "        uint32_t r = r0;", "        while (r < r0 + nr) {",
          "            uint32_t bt = r / M, i0 = r % M;",
          "            uint32_t g = r0 + nr - r < RG ? r0 + nr - r : RG;", "            if (M - i0 < g) g = M - i0;",
          "            LocalTensor<T> acc = outQ.AllocTensor<T>();"]
    if not knobs.bad_workspace:
        c.append("            Duplicate(acc, 0.0f, RG * NP);")
    bofs = "uint64_t(bt) * K * N" if e["sbatch"] else "0"
    c += ["            for (uint32_t k0 = 0; k0 < K; k0 += KT) {", "                uint32_t kn = K - k0 < KT ? K - k0 : KT;",
          "                LocalTensor<T> lb = bQ.AllocTensor<T>();",
          f"                for (uint32_t kk = 0; kk < kn; ++kk) {{ LocalTensor<T> d = lb[kk * NP]; Load(d, bGm, {bofs} + uint64_t(k0 + kk) * N, N); }}"]
    c += _q_in(knobs, "bQ", "lb", "                ")
    c.append("                LocalTensor<T> la = aQ.AllocTensor<T>();")
    if ta:
        c.append("                for (uint32_t kk = 0; kk < kn; ++kk) { LocalTensor<T> d = la[kk * RGP]; Load(d, aGm, uint64_t(k0 + kk) * M + i0, g); }")
        aval = "ha.GetValue(kk * RGP + j)"
    else:
        c.append("                for (uint32_t j = 0; j < g; ++j) { LocalTensor<T> d = la[j * KTP]; Load(d, aGm, uint64_t(bt * M + i0 + j) * K + k0, kn); }")
        aval = "ha.GetValue(j * KTP + kk)"
    c += _q_in(knobs, "aQ", "la", "                ")
    c += ["                LocalTensor<T> hb = bQ.DeQue<T>();", "                LocalTensor<T> ha = aQ.DeQue<T>();",
          "                SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
          "                for (uint32_t j = 0; j < g; ++j) {", "                    for (uint32_t kk = 0; kk < kn; ++kk) {",
          f"                        float s = {aval};"]
    if knobs.ops_overload:
        c.append("                        acc[j * NP] += hb[kk * NP] * s;")
    else:
        c += ["                        Muls(tmp, hb[kk * NP], s, N);", "                        Add(acc[j * NP], acc[j * NP], tmp, N);"]
    c += ["                    }", "                }"]
    c += _q_free(knobs, "bQ", "hb", "                ")
    c += _q_free(knobs, "aQ", "ha", "                ")
    c.append("            }")
    if tril:
        c += ["            SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
              "            for (uint32_t j = 0; j < g; ++j) for (uint32_t q = i0 + j + 1; q < N; ++q) acc.SetValue(j * NP + q, 0.0f);",
              "            SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);"]
    c += ["            outQ.EnQue(acc);", "            LocalTensor<T> o = outQ.DeQue<T>();",
          "            for (uint32_t j = 0; j < g; ++j) { LocalTensor<T> d = o[j * NP]; Store(yGm, uint64_t(r + j) * N, d, N); }",
          "            outQ.FreeTensor(o);", "            r += g;", "        }", "    }",
          "private:", "    TPipe pipe;", "    TQue<QuePosition::VECIN, 1> bQ;", "    TQue<QuePosition::VECIN, BUFN> aQ;",
          "    TQue<QuePosition::VECOUT, 1> outQ;", "    TBuf<QuePosition::VECCALC> tmpBuf;", "    GlobalTensor<T> aGm, bGm, yGm;",
          "    uint32_t r0, nr;", "};"]
    src.append("\n".join(c))
    src.append(_launcher("mm", ["a", "b", "y", "uint32_t rows"], knobs, plan.rows))
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    return _py(plan, knobs, "\n".join(src), f"self.mod.mm_do(x0, x1, y, {plan.rows})", out)


def _render_dot(plan: Plan, knobs: Knobs) -> str:
    """C[i, j] = sum_k A[i, k] * B'[j, k] (B given as N rows of K): Mul + ReduceSum per output."""
    e = plan.extra
    K, N = e["K"], e["N"]
    kp = _pad8(K)
    budget = 64 * 1024 * (8 if knobs.ub_huge else 1)
    jt = max(1, min(N, budget // (kp * 4)))
    jtp = _pad8(jt)
    work = max(16, ((K + 63) // 64 + 15) // 8 * 8)
    src = [_HEADER, "using T = float;", f"constexpr uint32_t K = {K}, N = {N}, KP = {kp}, JT = {jt};",
           f"constexpr uint32_t BUFN = {knobs.bufn};", _copy_helpers("float", knobs), _SCALAR_OF]
    c = ["class Kernel {", "public:", "    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR y, uint32_t rows) {"]
    c += _split_units(knobs, "r0", "nr", "rows")
    c += ["        aGm.SetGlobalBuffer((__gm__ T*)a);", "        bGm.SetGlobalBuffer((__gm__ T*)b);", "        yGm.SetGlobalBuffer((__gm__ T*)y);",
          "        pipe.InitBuffer(bQ, 1, JT * KP * sizeof(T));", "        pipe.InitBuffer(aQ, BUFN, KP * sizeof(T));",
          f"        pipe.InitBuffer(outQ, BUFN, {jtp * 4});", "        pipe.InitBuffer(tmpBuf, KP * sizeof(T));",
          f"        pipe.InitBuffer(redBuf, {work * 4 + 64});", "    }",
          "    __aicore__ inline void Process() {", "        LocalTensor<T> tmp = tmpBuf.Get<T>();",
          "        LocalTensor<float> red = redBuf.Get<float>();",
          "        for (uint32_t j0 = 0; j0 < N; j0 += JT) {", "            uint32_t jn = N - j0 < JT ? N - j0 : JT;",
          "            LocalTensor<T> lb = bQ.AllocTensor<T>();",
          "            for (uint32_t jj = 0; jj < jn; ++jj) { LocalTensor<T> d = lb[jj * KP]; Load(d, bGm, uint64_t(j0 + jj) * K, K); }"]
    c += _q_in(knobs, "bQ", "lb", "            ")
    c += ["            LocalTensor<T> hb = bQ.DeQue<T>();", "            for (uint32_t i = r0; i < r0 + nr; ++i) {",
          "                LocalTensor<T> la = aQ.AllocTensor<T>();", "                Load(la, aGm, uint64_t(i) * K, K);"]
    c += _q_in(knobs, "aQ", "la", "                ")
    c += ["                LocalTensor<T> ha = aQ.DeQue<T>();", "                LocalTensor<T> o = outQ.AllocTensor<T>();",
          "                for (uint32_t jj = 0; jj < jn; ++jj) {"]
    if knobs.ops_overload:
        c.append("                    float v = (ha * hb[jj * KP]).sum();")
    elif knobs.bad_workspace:
        c += ["                    Mul(tmp, ha, hb[jj * KP], K);",
              "                    for (uint32_t k = 64; k < K; k += 64) Add(tmp, tmp, tmp[k], K - k < 64 ? K - k : 64);",
              "                    float v = ScalarOf(tmp);"]
    else:
        c += ["                    Mul(tmp, ha, hb[jj * KP], K);", "                    ReduceSum(red, tmp, red[16], K);",
              "                    float v = ScalarOf(red);"]
    c += ["                    o.SetValue(jj, v);", "                }",
          "                SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);", "                outQ.EnQue(o);"]
    c += _q_free(knobs, "aQ", "ha", "                ")
    c += ["                LocalTensor<T> q = outQ.DeQue<T>();", "                Store(yGm, uint64_t(i) * N + j0, q, jn);",
          "                outQ.FreeTensor(q);", "            }"]
    c += _q_free(knobs, "bQ", "hb", "            ")
    c += ["        }", "    }", "private:", "    TPipe pipe;", "    TQue<QuePosition::VECIN, 1> bQ;", "    TQue<QuePosition::VECIN, BUFN> aQ;",
          "    TQue<QuePosition::VECOUT, BUFN> outQ;", "    TBuf<QuePosition::VECCALC> tmpBuf, redBuf;",
          "    GlobalTensor<T> aGm, bGm, yGm;", "    uint32_t r0, nr;", "};"]
    src.append("\n".join(c))
    src.append(_launcher("mm", ["a", "b", "y", "uint32_t rows"], knobs, plan.rows))
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    return _py(plan, knobs, "\n".join(src), f"self.mod.mm_do(x0, x1, y, {plan.rows})", out)
