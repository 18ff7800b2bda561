"""Matrix products on the vector unit (dot products, axpy rows, diagonal scaling)."""

from __future__ import annotations

from kernel_gym.llm.synthetic.analysis import Plan
from kernel_gym.llm.synthetic.ascendc_templates.common import (
    _HEADER,
    _SCALAR_OF,
    _copy_helpers,
    _launcher,
    _py,
    _q_free,
    _q_in,
    _split_units,
)
from kernel_gym.llm.synthetic.faults import Knobs

__all__ = ["render_matmul"]


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
    src = [
        _HEADER,
        "using T = float;",
        f"constexpr uint32_t TILE = {tile};",
        f"constexpr uint32_t BUFN = {knobs.bufn};",
        f"constexpr uint32_t NC = {N};",
        _copy_helpers("float", knobs),
    ]
    c = [
        "class Kernel {",
        "public:",
        "    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR y, uint32_t rows) {",
    ]
    c += _split_units(knobs, "r0", "nr", "rows")
    c += [
        "        aGm.SetGlobalBuffer((__gm__ T*)a);",
        "        bGm.SetGlobalBuffer((__gm__ T*)b);",
        "        yGm.SetGlobalBuffer((__gm__ T*)y);",
        "        pipe.InitBuffer(inQ, BUFN, TILE * sizeof(T));",
        "        pipe.InitBuffer(outQ, BUFN, TILE * sizeof(T));",
        "    }",
        "    __aicore__ inline void Process() {",
        "        for (uint32_t i = r0; i < r0 + nr; ++i) {",
        "            float s = aGm.GetValue(i);",
        "            for (uint32_t c0 = 0; c0 < NC; c0 += TILE) {",
        "                uint32_t n = NC - c0 < TILE ? NC - c0 : TILE;",
        "                uint64_t off = uint64_t(i) * NC + c0;",
        "                LocalTensor<T> l = inQ.AllocTensor<T>();",
        "                Load(l, bGm, off, n);",
    ]
    c += _q_in(knobs, "inQ", "l", "                ")
    c += [
        "                LocalTensor<T> h = inQ.DeQue<T>();",
        "                LocalTensor<T> o = outQ.AllocTensor<T>();",
    ]
    c.append(
        "                o = h * s;   // scale the row" if knobs.ops_overload else "                Muls(o, h, s, n);"
    )
    c.append("                outQ.EnQue(o);")
    c += _q_free(knobs, "inQ", "h", "                ")
    c += [
        "                LocalTensor<T> q = outQ.DeQue<T>();",
        "                Store(yGm, off, q, n);",
        "                outQ.FreeTensor(q);",
        "            }",
        "        }",
        "    }",
        "private:",
        "    TPipe pipe;",
        "    TQue<QuePosition::VECIN, BUFN> inQ;",
        "    TQue<QuePosition::VECOUT, BUFN> outQ;",
        "    GlobalTensor<T> aGm, bGm, yGm;",
        "    uint32_t r0, nr;",
        "};",
    ]
    src.append("\n".join(c))
    src.append(_launcher("mm", ["a", "b", "y", "uint32_t rows"], knobs, plan.rows))
    return _py(plan, knobs, "\n".join(src), f"self.mod.mm_do(x0, x1, y, {e['M']})", "torch.empty_like(x1)")


def _render_axpy(plan: Plan, knobs: Knobs) -> str:
    """C[i, :] = sum_k A[i, k] * B[k, :]: B rows in UB scaled by scalars of A and accumulated."""
    e = plan.extra
    M, K, N, ta, tril = e["M"], e["K"], e["N"], e["ta"], e["tril"]
    npad = _pad8(N)
    budget = 48 * 1024 * (8 if knobs.ub_huge else 1)
    kt = max(1, min(K, budget // (npad * 4)))  # rows of B per tile
    rg = max(1, min(16, (32 * 1024) // (npad * 4)))  # output rows accumulated at once
    ktp, rgp = _pad8(kt), _pad8(rg)
    src = [
        _HEADER,
        "using T = float;",
        f"constexpr uint32_t M = {M}, K = {K}, N = {N}, NP = {npad};",
        f"constexpr uint32_t KT = {kt}, KTP = {ktp}, RG = {rg}, RGP = {rgp};",
        f"constexpr uint32_t BUFN = {knobs.bufn};",
        _copy_helpers("float", knobs),
    ]
    c = [
        "class Kernel {",
        "public:",
        "    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR y, uint32_t rows) {",
    ]
    c += _split_units(knobs, "r0", "nr", "rows")
    c += [
        "        aGm.SetGlobalBuffer((__gm__ T*)a);",
        "        bGm.SetGlobalBuffer((__gm__ T*)b);",
        "        yGm.SetGlobalBuffer((__gm__ T*)y);",
        "        pipe.InitBuffer(bQ, 1, KT * NP * sizeof(T));",
        f"        pipe.InitBuffer(aQ, BUFN, {(kt * rgp if ta else rg * ktp) * 4});",
        "        pipe.InitBuffer(outQ, 1, RG * NP * sizeof(T));",
        "        pipe.InitBuffer(tmpBuf, NP * sizeof(T));",
        "    }",
        "    __aicore__ inline void Process() {",
        "        LocalTensor<T> tmp = tmpBuf.Get<T>();",
        "        uint32_t r = r0;",
        "        while (r < r0 + nr) {",
        "            uint32_t bt = r / M, i0 = r % M;",
        "            uint32_t g = r0 + nr - r < RG ? r0 + nr - r : RG;",
        "            if (M - i0 < g) g = M - i0;",
        "            LocalTensor<T> acc = outQ.AllocTensor<T>();",
    ]
    if not knobs.bad_workspace:
        c.append("            Duplicate(acc, 0.0f, RG * NP);")
    bofs = "uint64_t(bt) * K * N" if e["sbatch"] else "0"
    c += [
        "            for (uint32_t k0 = 0; k0 < K; k0 += KT) {",
        "                uint32_t kn = K - k0 < KT ? K - k0 : KT;",
        "                LocalTensor<T> lb = bQ.AllocTensor<T>();",
        "                for (uint32_t kk = 0; kk < kn; ++kk) { LocalTensor<T> d = lb[kk * NP]; Load(d, bGm, "
        f"{bofs} + uint64_t(k0 + kk) * N, N); }}",
    ]
    c += _q_in(knobs, "bQ", "lb", "                ")
    c.append("                LocalTensor<T> la = aQ.AllocTensor<T>();")
    if ta:
        c.append(
            "                for (uint32_t kk = 0; kk < kn; ++kk) { LocalTensor<T> d = la[kk * RGP]; Load(d, aGm, "
            "uint64_t(k0 + kk) * M + i0, g); }"
        )
        aval = "ha.GetValue(kk * RGP + j)"
    else:
        c.append(
            "                for (uint32_t j = 0; j < g; ++j) { LocalTensor<T> d = la[j * KTP]; Load(d, aGm, "
            "uint64_t(bt * M + i0 + j) * K + k0, kn); }"
        )
        aval = "ha.GetValue(j * KTP + kk)"
    c += _q_in(knobs, "aQ", "la", "                ")
    c += [
        "                LocalTensor<T> hb = bQ.DeQue<T>();",
        "                LocalTensor<T> ha = aQ.DeQue<T>();",
        "                SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
        "                for (uint32_t j = 0; j < g; ++j) {",
        "                    for (uint32_t kk = 0; kk < kn; ++kk) {",
        f"                        float s = {aval};",
    ]
    if knobs.ops_overload:
        c.append("                        acc[j * NP] += hb[kk * NP] * s;")
    else:
        c += [
            "                        Muls(tmp, hb[kk * NP], s, N);",
            "                        Add(acc[j * NP], acc[j * NP], tmp, N);",
        ]
    c += ["                    }", "                }"]
    c += _q_free(knobs, "bQ", "hb", "                ")
    c += _q_free(knobs, "aQ", "ha", "                ")
    c.append("            }")
    if tril:
        c += [
            "            SetFlag<HardEvent::V_S>(0); WaitFlag<HardEvent::V_S>(0);",
            "            for (uint32_t j = 0; j < g; ++j) for (uint32_t q = i0 + j + 1; q < N; ++q) acc.SetValue(j "
            "* NP + q, 0.0f);",
            "            SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);",
        ]
    c += [
        "            outQ.EnQue(acc);",
        "            LocalTensor<T> o = outQ.DeQue<T>();",
        "            for (uint32_t j = 0; j < g; ++j) { LocalTensor<T> d = o[j * NP]; Store(yGm, uint64_t(r + j) * "
        "N, d, N); }",
        "            outQ.FreeTensor(o);",
        "            r += g;",
        "        }",
        "    }",
        "private:",
        "    TPipe pipe;",
        "    TQue<QuePosition::VECIN, 1> bQ;",
        "    TQue<QuePosition::VECIN, BUFN> aQ;",
        "    TQue<QuePosition::VECOUT, 1> outQ;",
        "    TBuf<QuePosition::VECCALC> tmpBuf;",
        "    GlobalTensor<T> aGm, bGm, yGm;",
        "    uint32_t r0, nr;",
        "};",
    ]
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
    src = [
        _HEADER,
        "using T = float;",
        f"constexpr uint32_t K = {K}, N = {N}, KP = {kp}, JT = {jt};",
        f"constexpr uint32_t BUFN = {knobs.bufn};",
        _copy_helpers("float", knobs),
        _SCALAR_OF,
    ]
    c = [
        "class Kernel {",
        "public:",
        "    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR y, uint32_t rows) {",
    ]
    c += _split_units(knobs, "r0", "nr", "rows")
    c += [
        "        aGm.SetGlobalBuffer((__gm__ T*)a);",
        "        bGm.SetGlobalBuffer((__gm__ T*)b);",
        "        yGm.SetGlobalBuffer((__gm__ T*)y);",
        "        pipe.InitBuffer(bQ, 1, JT * KP * sizeof(T));",
        "        pipe.InitBuffer(aQ, BUFN, KP * sizeof(T));",
        f"        pipe.InitBuffer(outQ, BUFN, {jtp * 4});",
        "        pipe.InitBuffer(tmpBuf, KP * sizeof(T));",
        f"        pipe.InitBuffer(redBuf, {work * 4 + 64});",
        "    }",
        "    __aicore__ inline void Process() {",
        "        LocalTensor<T> tmp = tmpBuf.Get<T>();",
        "        LocalTensor<float> red = redBuf.Get<float>();",
        "        for (uint32_t j0 = 0; j0 < N; j0 += JT) {",
        "            uint32_t jn = N - j0 < JT ? N - j0 : JT;",
        "            LocalTensor<T> lb = bQ.AllocTensor<T>();",
        "            for (uint32_t jj = 0; jj < jn; ++jj) { LocalTensor<T> d = lb[jj * KP]; Load(d, bGm, "
        "uint64_t(j0 + jj) * K, K); }",
    ]
    c += _q_in(knobs, "bQ", "lb", "            ")
    c += [
        "            LocalTensor<T> hb = bQ.DeQue<T>();",
        "            for (uint32_t i = r0; i < r0 + nr; ++i) {",
        "                LocalTensor<T> la = aQ.AllocTensor<T>();",
        "                Load(la, aGm, uint64_t(i) * K, K);",
    ]
    c += _q_in(knobs, "aQ", "la", "                ")
    c += [
        "                LocalTensor<T> ha = aQ.DeQue<T>();",
        "                LocalTensor<T> o = outQ.AllocTensor<T>();",
        "                for (uint32_t jj = 0; jj < jn; ++jj) {",
    ]
    if knobs.ops_overload:
        c.append("                    float v = (ha * hb[jj * KP]).sum();")
    elif knobs.bad_workspace:
        c += [
            "                    Mul(tmp, ha, hb[jj * KP], K);",
            "                    for (uint32_t k = 64; k < K; k += 64) Add(tmp, tmp, tmp[k], K - k < 64 ? K - k : 64);",
            "                    float v = ScalarOf(tmp);",
        ]
    else:
        c += [
            "                    Mul(tmp, ha, hb[jj * KP], K);",
            "                    ReduceSum(red, tmp, red[16], K);",
            "                    float v = ScalarOf(red);",
        ]
    c += [
        "                    o.SetValue(jj, v);",
        "                }",
        "                SetFlag<HardEvent::S_V>(0); WaitFlag<HardEvent::S_V>(0);",
        "                outQ.EnQue(o);",
    ]
    c += _q_free(knobs, "aQ", "ha", "                ")
    c += [
        "                LocalTensor<T> q = outQ.DeQue<T>();",
        "                Store(yGm, uint64_t(i) * N + j0, q, jn);",
        "                outQ.FreeTensor(q);",
        "            }",
    ]
    c += _q_free(knobs, "bQ", "hb", "            ")
    c += [
        "        }",
        "    }",
        "private:",
        "    TPipe pipe;",
        "    TQue<QuePosition::VECIN, 1> bQ;",
        "    TQue<QuePosition::VECIN, BUFN> aQ;",
        "    TQue<QuePosition::VECOUT, BUFN> outQ;",
        "    TBuf<QuePosition::VECCALC> tmpBuf, redBuf;",
        "    GlobalTensor<T> aGm, bGm, yGm;",
        "    uint32_t r0, nr;",
        "};",
    ]
    src.append("\n".join(c))
    src.append(_launcher("mm", ["a", "b", "y", "uint32_t rows"], knobs, plan.rows))
    out = f"torch.empty({tuple(plan.out_shape)!r}, dtype=x0.dtype)"
    return _py(plan, knobs, "\n".join(src), f"self.mod.mm_do(x0, x1, y, {plan.rows})", out)
