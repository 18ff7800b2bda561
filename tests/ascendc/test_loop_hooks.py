"""Native loop jumps (kernel_gym/ascendc/loop_hooks.py, loop_iter in src/rt_sampling.cpp): which
loops get a hook, that a hook changes nothing in full simulation, and that under loop sampling a
scalar GM loop is moved past the iterations it extrapolates, within its bracket of full simulation."""

import re

import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.loop_hooks import HOOK, VALUES_ONLY, instrument_loops
from kernel_gym.ascendc.sampling import sampled_simulation, written_spans


def _hooks(src: str) -> list[str]:
    out = instrument_loops(src)
    assert out.count("\n") == src.count("\n")  # line numbers are kept
    return [line.strip() for line in out.splitlines() if HOOK in line]


@pytest.mark.parametrize(
    ("loop", "call"),
    [
        ("for (uint32_t t = a; t < n; ++t) { y.SetValue(t, x.GetValue(t)); }", "(t, n, 1, 0)"),
        ("for (int64_t t = a; t <= n - 1; t += 4) { y.SetValue(t, x.GetValue(t)); }", "(t, n - 1, (4), 1)"),
        ("for (int t = n - 1; t >= a; --t) y.SetValue(t, x.GetValue(t));", "(t, a, -1, 3)"),
        ("for (uint32_t t = a; n > t; t++) { y.SetValue(t, x.GetValue(t)); }", "(t, n, 1, 0)"),
        ("for (uint32_t t = a; t != n; ++t) { y.SetValue(t, x.GetValue(t)); }", "(t, n, 1, 4)"),
        ("for (uint32_t t = 0; t < this->rows; t += step) { y.SetValue(t, 0.0f); }", "(t, this->rows, (step), 0)"),
        ("for (uint32_t r = a; r < n; ++r) { for (uint32_t c = 0; c < 4; ++c) acc += c; }", "(r, n, 1, 0)"),
        ("for (; a + 3 < n; a += 4) { y.SetValue(a, x.GetValue(a)); }", "(a, (n) - (3), (4), 0)"),
    ],
)
def test_a_counted_loop_of_scalar_gm_work_gets_a_hook(loop, call):
    src = (
        "AscendC::GlobalTensor<float> x, y;\n"
        f"void f(uint32_t a, uint32_t n, uint32_t step) {{\n    float acc = 0;\n    {loop}\n}}\n"
    )
    hooked = _hooks(src)
    assert any(f", {HOOK}{call})" in h for h in hooked), hooked  # after the step, in the update clause


@pytest.mark.parametrize(
    "loop",
    [
        "for (uint32_t t = a; t < n; ++t) { if (x.GetValue(t) < 0) break; }",  # leaves the loop
        "for (uint32_t t = a; t < n; ++t) { if (x.GetValue(t) < 0) return; }",
        "for (uint32_t t = a; t < n; ++t) { t += x.GetValue(t) > 0; }",  # the variable moves in the body
        "for (uint32_t t = a; t < n; ++t) { n -= (uint32_t)x.GetValue(t); }",  # so does the bound
        "for (uint32_t t = a; t < n; ++t) { off += 3; if (off > a) y.SetValue(t, 0.0f); }",  # a carried branch
        "for (uint32_t t = a; t < n; ++t) { off += 3; uint32_t c2 = off; if (c2 > a) y.SetValue(t, 0.0f); }",
        "for (uint32_t t = a; t < Count(n); ++t) { y.SetValue(t, 0.0f); }",  # a call in the bound
        "for (uint32_t t = a; t < p[0]; ++t) { y.SetValue(t, 0.0f); }",  # a memory read in the bound
        "for (uint32_t t = 0; t < 24; ++t) { y.SetValue(t, 0.0f); }",  # a short trip known at compile time
        "for (uint32_t t = 0; t < K; t += 16) { y.SetValue(t, 0.0f); }",  # K: a constexpr of the source
        "for (uint32_t t = a; t < n; ++t) { acc += t * 0.5f; }",  # innermost, no scalar GM access
        "for (uint32_t t = a; t < n && acc < 1; ++t) { y.SetValue(t, 0.0f); }",  # a compound condition
        "while (a < n) { uint32_t len = (uint32_t)x.GetValue(a); y.SetValue(a, 0.0f); a += len; }",  # a step from data
        "while (a < n) { uint32_t s = 16; if (x.GetValue(a) > 0) s = 8; y.SetValue(a, 0.0f); a += s; }",
        "while (a < n) { y.SetValue(a, 0.0f); a += p[0]; }",  # a memory read as the step
        "while (a < n) { y.SetValue(a, 0.0f); a += off; off += 1; }",  # a carried step
        "while (a < n) { if (x.GetValue(a) < 0) { a += 2; continue; } y.SetValue(a, 0.0f); a += 1; }",
        "while (a < n) { y.SetValue(a, 0.0f); a += 1; n -= 1; }",  # the bound moves
        "while (a < n) { ++a; y.SetValue(a, 0.0f); }",  # the step does not end the body
        "while (a != n) { y.SetValue(a, 0.0f); ++a; }",
        "while (a < n) { y.SetValue(a, 0.0f); a -= 1; }",  # away from the bound
    ],
)
def test_a_loop_a_jump_could_misjudge_is_left_alone(loop):
    src = (
        "constexpr uint32_t K = 300;\n"
        f"void f(uint32_t a, uint32_t n, uint32_t* p) {{\n    float acc = 0; uint32_t off = 0;\n    {loop}\n}}\n"
    )
    assert _hooks(src) == []


@pytest.mark.parametrize(
    ("loop", "call"),
    [
        ("while (a < n) { y.SetValue(a, x.GetValue(a)); ++a; }", "(a, n, 1, 16);"),
        ("while (n > a) { y.SetValue(n, 0.0f); n -= 4; }", "(n, a, -(4), 18);"),
        # a tile that shrinks at a row's end, its length computed from the position alone
        (
            "while (a < n) { uint32_t s = 16; const uint32_t left = w - a % w; if (s > left) s = left; "
            "y.SetValue(a, 0.0f); a += s; }",
            "(a, n, (s), 16);",
        ),
    ],
)
def test_a_while_loop_stepping_to_its_bound_gets_a_hook_after_its_step(loop, call):
    src = f"void f(uint32_t a, uint32_t n, uint32_t w) {{\n    {loop}\n}}\n"
    hooked = _hooks(src)
    # (VALUES_ONLY aside: these loops' bodies read no local memory)
    assert len(hooked) == 1 and f" {HOOK}{call} }}" in hooked[0].replace(f"{16 | VALUES_ONLY}", "16").replace(
        f"{18 | VALUES_ONLY}", "18"
    ), hooked


def test_a_long_loop_of_constant_trip_gets_a_hook_a_short_one_none():
    src = (
        "constexpr int H = 126; constexpr int KW = 7;\n"
        "void f() {\n"
        "  for (int oh = 0; oh < H; ++oh) { for (int kw = 0; kw < KW; ++kw) { y.SetValue(oh * KW + kw, 0.0f); } }\n"
        "  for (int r = 0; r < 2 * H; r += 8) { y.SetValue(r, 0.0f); }\n"
        "}\n"
    )
    hooked = _hooks(src)
    assert any(f"{HOOK}(oh, H, 1, 0)" in h for h in hooked)  # 126 iterations: GCC keeps it a loop
    assert not any(f"{HOOK}(kw," in h for h in hooked)  # 7: GCC peels it whole
    assert any(f"{HOOK}(r, 2 * H, (8), 0)" in h for h in hooked)  # 32 iterations: the threshold


def _flags(src: str) -> dict[str, int]:
    """Each hooked loop variable's comparison code (VALUES_ONLY added where its reads steer nothing)."""
    calls = re.findall(HOOK + r"\((\w+), [^()]*(?:\([^()]*\))?[^()]*, (\d+)\)", instrument_loops(src))
    return {var: int(code) for var, code in calls}


VALUE_READS = """
class K {
  AscendC::GlobalTensor<float> xGm, yGm;
  __gm__ float* yRaw;
  __aicore__ inline void Row(uint32_t r, AscendC::LocalTensor<float> t) {
    float wv[4];
    for (uint32_t j = 0; j < 4; ++j) wv[j] = t.GetValue(j);
    for (uint32_t c = 0; c < n; ++c) {
      const float v = t.GetValue(c) * wv[c % 4];
      yGm.SetValue(r * n + c, expf(v) + xGm.GetValue(c));
      yRaw[r * n + c] = (float)v;
    }
  }
  __aicore__ inline void Process(AscendC::LocalTensor<float> t) {
    for (uint32_t r = first; r < last; ++r) { Row(r, t); }
  }
};
"""


def test_loops_whose_local_reads_are_values_only_are_flagged():
    assert _flags(VALUE_READS) == {"c": VALUES_ONLY, "r": VALUES_ONLY}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("const float v = t.GetValue(c) * wv[c % 4];", "const float v = t.GetValue(c); if (v > 0) ++hits;"),
        (
            "const float v = t.GetValue(c) * wv[c % 4];",
            "const float v = t.GetValue(c); uint32_t k = v; k += 1;\n      yGm.SetValue(k, 0.0f);",
        ),  # an address computed from a read
        ("const float v = t.GetValue(c) * wv[c % 4];", "const float v = wv[(uint32_t)t.GetValue(c)];"),
        ("const float v = t.GetValue(c) * wv[c % 4];", "const float v = t.GetValue(c); this->acc = v;"),  # a field
        ("const float v = t.GetValue(c) * wv[c % 4];", "const float v = t.GetValue(c); Helper(v);"),
        ("const float v = t.GetValue(c) * wv[c % 4];", "const float v = t.GetValue(c) > 1 && c > 2;"),
        (
            "const float v = t.GetValue(c) * wv[c % 4];",
            "const float v = t.GetValue(c); float u = v;\n"
            "      for (uint32_t q = 0; q < u; ++q) yGm.SetValue(q, 0.0f);",
        ),  # a bound, through a copy
        ("float wv[4];", "float wv[4]; float carried = t.GetValue(0); if (carried) return;"),
        ("float wv[4];", "float wv[4]; if (t(0) > 1) wv[0] = 0;"),  # operator(): a read, into a condition
        ("const float v = t.GetValue(c) * wv[c % 4];", "const float v = t(t(c));"),  # an index read
        ("float wv[4];", "float wv[4]; if (yGm.GetValue(r) > 0) wv[0] = 0;"),  # a read-back of its output
        ("float wv[4];", "float wv[4]; float back = yRaw[r]; for (uint32_t q = 0; q < back; ++q) wv[0] = 0;"),
        ("float wv[4];", "float wv[4]; __ubuf__ float* p = (__ubuf__ float*)t.GetPhyAddr();"),
        ("float wv[4];", "float wv[4]; float& alias = wv[0]; alias = t.GetValue(0);"),
    ],
)
def test_a_local_read_that_could_steer_work_drops_the_flag(old, new):
    src = VALUE_READS.replace(old, new)
    assert src != VALUE_READS
    flags = _flags(src)
    assert flags and all(not (f & VALUES_ONLY) for f in flags.values()), flags


def test_element_reads_and_stores_through_operator_call_are_followed_as_values():
    """``t(i)`` reads like ``GetValue`` and ``t(i) = v`` stores like ``SetValue``: a loop of them
    keeps the flag (EvoKernel's matmul epilogues write ``z(i) = acc`` and store ``out(i)``)."""
    src = VALUE_READS.replace(
        "const float v = t.GetValue(c) * wv[c % 4];", "const float v = t(c) * wv[c % 4]; t(c) = v;"
    )
    assert src != VALUE_READS
    assert _flags(src) == {"c": VALUES_ONLY, "r": VALUES_ONLY}


def test_a_caller_that_branches_on_what_a_helper_loop_stored_drops_the_flag():
    """The helper's loop leaves stale values after a jump; a caller that reads them back and branches
    on them would change its work, so the callers are in the analysis too."""
    src = (
        "class K {\n"
        "  AscendC::GlobalTensor<float> xGm, yGm;\n"
        "  __aicore__ inline void Scale(AscendC::LocalTensor<float> t) {\n"
        "    for (uint32_t c = 0; c < n; ++c) t.SetValue(c, t.GetValue(c) * xGm.GetValue(c));\n"
        "  }\n"
        "  __aicore__ inline void Process(AscendC::LocalTensor<float> t) {\n"
        "    for (uint32_t r = 0; r < rows; ++r) { Scale(t); yGm.SetValue(r, t.GetValue(0)); }\n"
        "  }\n"
        "};\n"
    )
    assert _flags(src) == {"c": VALUES_ONLY, "r": VALUES_ONLY}  # the caller stores the value only
    steered = src.replace("yGm.SetValue(r, t.GetValue(0));", "if (t.GetValue(0) > 0) yGm.SetValue(r, 1.0f);")
    flags = _flags(steered)
    assert flags and not any(f & VALUES_ONLY for f in flags.values()), flags


SCALAR_THROUGH_UB = """
class K {
  AscendC::GlobalTensor<float> xGm, yGm;
  AscendC::LocalTensor<float> s;
  __aicore__ inline float ExpScalar(float v) { s.SetValue(0, v); AscendC::Exp(s, s, 1); return s.GetValue(0); }
  __aicore__ inline float Clip(float v) { return v > 1.0f ? v : 1.0f; }
  __aicore__ inline void Process() {
    for (uint32_t r = 0; r < rows; ++r) {
      float acc = 0;
      for (uint32_t c = 0; c < n; ++c) acc += ExpScalar(xGm.GetValue(r * n + c));
      yGm.SetValue(r, Clip(acc));
    }
  }
};
"""


def test_a_returned_read_is_followed_where_the_function_is_called():
    """exp through a one-element UB tensor (EvoKernel's ExpScalar_, Conv2dMinTanhTanh's TanhScalar):
    the value it returns is a read where it is called, followed there and through the functions it
    is passed to (Clip); the loops keep the flag while it only reaches values and stores."""
    assert _flags(SCALAR_THROUGH_UB) == {"c": VALUES_ONLY, "r": VALUES_ONLY}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("yGm.SetValue(r, Clip(acc));", "if (Clip(acc) > 2.0f) yGm.SetValue(r, acc);"),  # a caller's branch
        ("yGm.SetValue(r, Clip(acc));", "yGm.SetValue((uint32_t)Clip(acc), acc);"),  # an address
        ("return v > 1.0f ? v : 1.0f;", "if (v > 1.0f) { for (int q = 0; q < 4; ++q) v += q; } return v;"),
        ("float acc = 0;", "float acc = 0; this->last = ExpScalar(0.0f);"),  # a field
    ],
)
def test_a_returned_read_that_steers_work_drops_the_flag(old, new):
    src = SCALAR_THROUGH_UB.replace(old, new)
    assert src != SCALAR_THROUGH_UB
    flags = _flags(src)
    assert flags and not any(f & VALUES_ONLY for f in flags.values()), flags


def test_a_read_passed_as_a_vector_instructions_scalar_operand_is_a_value():
    """Muls(dst, src, scale, count) computes with ``scale``; its count and masks set the work."""
    src = VALUE_READS.replace("float wv[4];", "float wv[4]; AscendC::Muls(t, t, t.GetValue(0), 8);")
    assert src != VALUE_READS
    assert _flags(src) == {"c": VALUES_ONLY, "r": VALUES_ONLY}
    count = VALUE_READS.replace("float wv[4];", "float wv[4]; AscendC::Muls(t, t, 2.0f, (uint32_t)t.GetValue(0));")
    flags = _flags(count)
    assert flags and not any(f & VALUES_ONLY for f in flags.values()), flags


@pytest.mark.parametrize(
    ("body", "hooked"),
    [
        ("if (v > best) best = v;", True),  # a running max: the work is the same either way
        ("if (v > best) { best = v; at = t; } else { at = at; }", True),
        ("best = v > best ? v : best;", True),
        ("if (v > best) { best = v; y.SetValue(t, v); }", False),  # a store only on one side
        ("if (v > best) best = Refine(v);", False),  # a call only on one side
        ("if (best > 1) acc += 1; best = v;", True),  # a conditional count: a value too
        ("if (best > 1) { for (uint32_t q = 0; q < 4; ++q) acc += q; } best = v;", False),  # steers a loop
    ],
)
def test_a_carried_value_may_only_pick_values(body, hooked):
    src = (
        "AscendC::GlobalTensor<float> x, y;\n"
        "void f(uint32_t a, uint32_t n) {\n"
        "  float best = -1e30f, acc = 0; uint32_t at = 0;\n"
        f"  for (uint32_t t = a; t < n; ++t) {{ const float v = x.GetValue(t); {body} }}\n"
        "  y.SetValue(0, best + acc + at);\n"
        "}\n"
    )
    assert bool(_hooks(src)) == hooked, instrument_loops(src)


def test_a_tile_loop_that_calls_a_function_with_scalar_work_gets_a_hook():
    src = (
        "class K {\n"
        "  __aicore__ inline void Row(uint32_t r) { for (uint32_t c = 0; c < n; ++c) y.SetValue(r * n + c, 0.0f); }\n"
        "  __aicore__ inline void Tile(uint32_t t) { Row(t); }\n"
        "  __aicore__ inline float Half(float v) { return v * 0.5f; }\n"
        "  __aicore__ inline void Process() {\n"
        "    for (uint32_t t = first; t < last; t += stride) { this->Tile(t); }\n"
        "    for (uint32_t t = first; t < last; ++t) { acc += Half(acc); }\n"
        "  }\n"
        "};\n"
    )
    hooked = _hooks(src)
    assert any(f"{HOOK}(c, n, 1, 0)" in h for h in hooked)
    assert any(f"{HOOK}(t, last, (stride), 0)" in h for h in hooked)  # through Tile -> Row
    assert not any(f"{HOOK}(t, last, 1, 0)" in h for h in hooked)  # Half holds no loop nor accessor


def test_constexpr_functions_and_unparsable_text_are_left_alone():
    src = (
        "constexpr int g(int n) { int s = 0; for (int i = 0; i < n; ++i) { s += h.GetValue(i); } return s; }\n"
        "void f(int n) { for (int i = 0; i < n; ++i) { y.SetValue(i, x.GetValue(i) }\n"
    )
    assert _hooks(src) == []


# A 1-D convolution over 64 input channels written as scalar loops over GM (as EvoKernel's
# ConvStandard1d is): the channel loop is the hooked one, four outputs per outer iteration.
CONV1D = r"""
#include "kernel_operator.h"
using namespace AscendC;
constexpr int CIN = 64;
extern "C" __global__ __aicore__ void conv1d(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t L, uint32_t per)
{
    GlobalTensor<float> xGm, wGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    wGm.SetGlobalBuffer((__gm__ float*)w);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    int64_t start = (int64_t)GetBlockIdx() * per, end = start + per;
    for (int64_t l = start; l + 3 < end; l += 4) {
        float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (int ci = 0; ci < CIN; ++ci) {
            const int64_t xb = (int64_t)ci * L + l;
            float a = wGm.GetValue(ci * 3), b = wGm.GetValue(ci * 3 + 1), c = wGm.GetValue(ci * 3 + 2);
            float x0 = xGm.GetValue(xb), x1 = xGm.GetValue(xb + 1), x2 = xGm.GetValue(xb + 2);
            float x3 = xGm.GetValue(xb + 3), x4 = xGm.GetValue(xb + 4), x5 = xGm.GetValue(xb + 5);
            a0 += x0 * a + x1 * b + x2 * c; a1 += x1 * a + x2 * b + x3 * c;
            a2 += x2 * a + x3 * b + x4 * c; a3 += x3 * a + x4 * b + x5 * c;
        }
        yGm.SetValue(l, a0); yGm.SetValue(l + 1, a1); yGm.SetValue(l + 2, a2); yGm.SetValue(l + 3, a3);
    }
}
extern "C" void conv1d_do(uint32_t blocks, uint8_t* x, uint8_t* w, uint8_t* y, uint32_t L, uint32_t per)
{
    conv1d<<<blocks, nullptr, nullptr>>>(x, w, y, L, per);
}
"""


def _conv1d_reference(x, w, L):
    return torch.nn.functional.conv1d(x[: 64 * L].view(1, 64, L), w.view(1, 64, 3)).flatten()


def test_hooks_leave_full_simulation_bit_for_bit_and_jumps_stay_in_the_bracket():
    blocks, per = 1, 1 << 20
    L = blocks * per + 8
    torch.manual_seed(0)
    x, w = torch.rand(64 * L + 8), torch.rand(64 * 3)
    y = torch.zeros(L)  # one output for every run: the data cache sets lines by address
    runs = {}
    for hooks in (False, True):
        mod = asc.load(CONV1D, name="conv1d.cpp", loop_hooks=hooks)
        mod.conv1d_do(blocks, x, w, y, L, per)
        runs[hooks] = mod.last_run
    assert runs[True].latency_s == runs[False].latency_s
    assert runs[True].per_pipe_busy == runs[False].per_pipe_busy
    full = runs[True]
    y.fill_(float("nan"))
    with sampled_simulation(blocks=2, loops="all"):
        mod.conv1d_do(blocks, x, w, y, L, per)
        spans = written_spans(y)
    got = mod.last_run
    # the outer loop (per / 4 iterations of 64 channels each) is sampled: most iterations are passed
    assert got.loop_jumps >= 10 and got.loop_periods_skipped > 0.9 * (per // 4)
    assert got.latency_lo_s <= full.latency_s <= got.latency_hi_s
    assert got.latency_s == pytest.approx(full.latency_s, rel=0.03)
    # the stores made before the block's first jump are checked, and hold the convolution
    assert spans and sum(hi - lo for _, lo, hi, _ in spans) >= 4
    want = _conv1d_reference(x, w, L)
    for _, lo, hi, _ in spans:
        assert torch.allclose(y[lo:hi], want[lo:hi], rtol=1e-4, atol=1e-4)


# A row max over GM as scalar code: the column loop carries `best` through a select, which
# changes values, never work, so the loop is hooked and sampled.
ROW_MAX = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void row_max(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    for (uint32_t r = 0; r < rows; ++r) {
        float best = -3.0e38f;
        for (uint32_t c = 0; c < cols; ++c) {
            const float v = xGm.GetValue(r * cols + c);
            if (v > best) best = v;
        }
        yGm.SetValue(r, best);
    }
}
extern "C" void row_max_do(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t cols)
{
    row_max<<<1, nullptr, nullptr>>>(x, y, rows, cols);
}
"""


def test_a_running_max_loop_is_sampled_within_its_bracket():
    rows, cols = 6, 1 << 16
    torch.manual_seed(2)
    x = torch.rand(rows * cols)
    y = torch.zeros(rows)
    runs = {}
    for hooks in (False, True):
        mod = asc.load(ROW_MAX, name="row_max.cpp", loop_hooks=hooks)
        mod.row_max_do(x, y, rows, cols)
        runs[hooks] = mod.last_run
        assert torch.equal(y, x.view(rows, cols).max(1).values)
    # in full simulation the hook moves the latency by a cycle (GCC lays out the loop exit
    # differently around the call): 551,132 cycles against 551,131
    assert runs[True].latency_s == pytest.approx(runs[False].latency_s, rel=1e-5)
    full = runs[True]
    y.fill_(float("nan"))
    with sampled_simulation(blocks=2, loops="all"):
        mod.row_max_do(x, y, rows, cols)
        spans = written_spans(y)
    got = mod.last_run
    # rows after the first store jump through their columns; the first row's store is checked
    assert got.loop_jumps >= 10 and got.loop_periods_skipped > 0.8 * (rows - 1) * cols
    assert got.latency_lo_s <= full.latency_s <= got.latency_hi_s
    assert got.latency_s == pytest.approx(full.latency_s, rel=0.03)
    assert spans and float(y[0]) == float(x[:cols].max())


# The column loop's work depends on the data (a second read for values over 0.5), so its
# iterations cost differently: sampling them at random positions is unbiased all the same.
BRANCHY = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void branchy(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    for (uint32_t r = 0; r < rows; ++r) {
        float acc = 0;
        for (uint32_t c = 0; c < cols; ++c) {
            float v = xGm.GetValue(r * cols + c);
            if (v > 0.5f) acc += v * xGm.GetValue(r * cols + (c ^ 1));  // a call: never if-converted
        }
        yGm.SetValue(r, acc);
    }
}
extern "C" void branchy_do(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t cols)
{
    branchy<<<1, nullptr, nullptr>>>(x, y, rows, cols);
}
"""


def _sampled_like_full(mod, call, full_ok=lambda: True):
    """Run ``call`` in full, then sampled with loop sampling: the sampled latency is within 3 % of
    the full one and its bracket holds it. Returns the sampled launch report."""
    call()
    full = mod.last_run
    assert full_ok()
    with sampled_simulation(blocks=2, loops="all"):
        call()
    got = mod.last_run
    assert got.loop_jumps > 0
    assert got.latency_lo_s <= full.latency_s <= got.latency_hi_s
    assert got.latency_s == pytest.approx(full.latency_s, rel=0.03)
    return got


def test_iterations_whose_work_depends_on_data_are_sampled_without_bias():
    mod = asc.load(BRANCHY, name="branchy.cpp")
    rows, cols = 4096, 512
    torch.manual_seed(1)
    x = torch.rand(rows * cols)
    y = torch.zeros(rows)
    v = x.view(rows, cols)
    partner = v.view(rows, cols // 2, 2).flip(-1).reshape(rows, cols)
    want = torch.where(v > 0.5, v * partner, torch.zeros_like(v)).sum(1)
    _sampled_like_full(mod, lambda: mod.branchy_do(x, y, rows, cols), lambda: torch.allclose(y, want, rtol=1e-4))


# A transposed-convolution-like row loop: each row zeroes its output row, then accumulates into it
# over 16 channels (a read-back of its own stores and a rewrite, both inside the row's iteration);
# with `carry` the rows instead accumulate into an output zeroed before the loop (by a loop without a
# hook): each row's rewrites land on bytes stored before its iteration.
ROW_ACCUMULATE = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void rowacc(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols, uint32_t carry)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    uint32_t o = 0;
    while (carry && o < rows * cols) yGm.SetValue(o++, 0.0f);
    for (uint32_t r = carry; r < rows; ++r) {
        const uint32_t out = carry ? (r - 1) * cols : r * cols;
        if (!carry) {
            for (uint32_t c = 0; c < cols; ++c) yGm.SetValue(out + c, 0.0f);
        }
        for (uint32_t k = 0; k < 16; ++k) {
            for (uint32_t c = 0; c < cols; ++c) {
                const float acc = yGm.GetValue(out + c);
                yGm.SetValue(out + c, acc + xGm.GetValue(r * cols + c) * (float)(k + 1));
            }
        }
    }
}
extern "C" void rows_do(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t cols, uint32_t carry)
{
    rowacc<<<1, nullptr, nullptr>>>(x, y, rows, cols, carry);
}
"""


def test_a_loop_that_rewrites_only_its_own_iterations_stores_is_sampled_and_checked():
    hooked = instrument_loops(ROW_ACCUMULATE)
    assert f"{HOOK}(r, rows, 1, {VALUES_ONLY})" in hooked  # its read-backs steer nothing
    mod = asc.load(ROW_ACCUMULATE, name="rows.cpp")
    rows, cols = 2048, 64
    torch.manual_seed(2)
    x = torch.rand(rows * cols)
    want = x * 136.0  # sum of k + 1 over 16 channels
    y = torch.zeros(rows * cols)
    mod.rows_do(x, y, rows, cols, 0)
    full = mod.last_run
    assert torch.allclose(y, want, rtol=1e-5)
    y.fill_(float("nan"))
    with sampled_simulation(blocks=2, loops="all"):
        mod.rows_do(x, y, rows, cols, 0)
        spans = written_spans(y)
    got = mod.last_run
    assert got.loop_jumps > 0 and got.loop_periods_skipped > rows // 2
    assert got.latency_lo_s <= full.latency_s <= got.latency_hi_s
    assert got.latency_s == pytest.approx(full.latency_s, rel=0.03)
    assert spans
    for _, lo, hi, _ in spans:  # what the check sees holds the full result
        assert torch.allclose(y[lo:hi], want[lo:hi], rtol=1e-5)


def test_a_loop_whose_rewrites_cross_its_iterations_does_not_jump():
    mod = asc.load(ROW_ACCUMULATE, name="rows.cpp")
    rows, cols = 2048, 64
    torch.manual_seed(3)
    x = torch.rand(rows * cols)
    want = torch.zeros(rows * cols)
    want[: (rows - 1) * cols] = x[cols:] * 136.0
    y = torch.zeros(rows * cols)
    with sampled_simulation(blocks=2, loops="all"):
        mod.rows_do(x, y, rows, cols, 1)
        spans = written_spans(y)
    got = mod.last_run
    assert got.loop_jumps == 0  # passed rows would have left zeroed, checked bytes stale
    assert spans
    for _, lo, hi, _ in spans:
        assert torch.allclose(y[lo:hi], want[lo:hi], rtol=1e-5)


# `base` steps with `r` in the update clause: a jump moves it along (KGSIM_LOOP_FOLLOW). The column
# loop is too short for a hook, so the rows that run after a jump compute their sums exactly.
FOLLOWER = r"""
#include "kernel_operator.h"
using namespace AscendC;
#define COLS 16
extern "C" __global__ __aicore__ void follow(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    uint32_t base = 0;
    for (uint32_t r = 0; r < rows; ++r, base += cols) {
        float acc = 0;
        for (uint32_t c = 0; c < COLS; ++c) acc += xGm.GetValue(base + c);
        yGm.SetValue(r, acc);
    }
}
extern "C" void follow_do(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t cols)
{
    follow<<<1, nullptr, nullptr>>>(x, y, rows, cols);
}
"""


def test_a_variable_the_update_clause_steps_moves_along_with_a_jump():
    assert "KGSIM_LOOP_ITER(r, rows, 1, 0), KGSIM_LOOP_FOLLOW(base, (cols))" in instrument_loops(FOLLOWER)
    mod = asc.load(FOLLOWER, name="follow.cpp")
    rows, cols = 4096, 16
    torch.manual_seed(4)
    x = torch.rand(rows * cols)
    y = torch.zeros(rows)
    mod.follow_do(x, y, rows, cols)
    full = mod.last_run
    want = x.view(rows, cols).sum(1)
    assert torch.allclose(y, want, rtol=1e-5)
    y.fill_(float("nan"))
    with sampled_simulation(blocks=2, loops="all"):
        mod.follow_do(x, y, rows, cols)
    got = mod.last_run
    assert got.loop_jumps > 0
    assert got.latency_lo_s <= full.latency_s <= got.latency_hi_s
    # the last rows always run, after the jumps: they read their own row only if `base` followed
    assert torch.allclose(y[-2:], want[-2:], rtol=1e-5)
    ran = ~torch.isnan(y)
    assert ran.sum() < rows // 2 and torch.allclose(y[ran], want[ran], rtol=1e-5)


# A pointwise convolution's shape: no scalar GM access, a DataCopy into UB, a barrier and GetValue
# reads per channel; its reads are values only, so native sampling takes the loops (an API-call skip
# could only drop their timing). Passed iterations move every clock the sample moved by as many
# periods: moved each by its own change, MTE2 drifted from the scalar time and the block ran past the
# watchdog.
DATACOPY_READS = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void pw(GM_ADDR x, GM_ADDR y, uint32_t tasks, uint32_t cin)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TBuf<TPosition::VECCALC> xb, yb;
    pipe.InitBuffer(xb, 64);
    pipe.InitBuffer(yb, 64);
    LocalTensor<float> xLine = xb.Get<float>(0);
    LocalTensor<float> yLine = yb.Get<float>(0);
    for (uint32_t t = 0; t < tasks; ++t) {
        float acc[16];
        for (uint32_t l = 0; l < 16; ++l) acc[l] = 0.0f;
        for (uint32_t ci = 0; ci < cin; ++ci) {
            DataCopy(xLine, xGm[(t * cin + ci) * 16], 16);
            PipeBarrier<PIPE_ALL>();
            for (uint32_t l = 0; l < 16; ++l) acc[l] += xLine.GetValue(l) * (float)(ci + 1);
        }
        for (uint32_t l = 0; l < 16; ++l) yLine.SetValue(l, acc[l]);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yGm[t * 16], yLine, 16);
        PipeBarrier<PIPE_ALL>();
    }
}
extern "C" void pw_do(uint8_t* x, uint8_t* y, uint32_t tasks, uint32_t cin)
{
    pw<<<1, nullptr, nullptr>>>(x, y, tasks, cin);
}
"""


def test_a_loop_of_datacopy_and_local_reads_is_sampled_without_drift():
    hooked = instrument_loops(DATACOPY_READS)
    assert f"{HOOK}(t, tasks, 1, {VALUES_ONLY})" in hooked and f"{HOOK}(ci, cin, 1, {VALUES_ONLY})" in hooked
    mod = asc.load(DATACOPY_READS, name="pw.cpp")
    tasks, cin = 512, 64
    torch.manual_seed(5)
    x, y = torch.rand(tasks * cin * 16), torch.zeros(tasks * 16)
    mod.pw_do(x, y, tasks, cin)
    full = mod.last_run
    assert torch.allclose(y, (x.view(tasks, cin, 16) * torch.arange(1, cin + 1).view(1, cin, 1)).sum(1).flatten())
    with sampled_simulation(blocks=2, loops="all"):
        mod.pw_do(x, y, tasks, cin)
    got = mod.last_run
    assert got.loop_jumps > 0
    assert got.latency_lo_s <= full.latency_s <= got.latency_hi_s
    assert got.latency_s == pytest.approx(full.latency_s, rel=0.01)
    assert got.per_pipe_busy["MTE2"] == pytest.approx(full.per_pipe_busy["MTE2"], rel=0.01)


# A row loop whose every 16th row reads three times as much (a pooling kernel's boundary rows, in
# reverse): with `skew` 0 every row costs the same.
SKEWED_ROWS = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void skewed(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t skew)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    for (uint32_t r = 0; r < rows; ++r) {
        float acc = xGm.GetValue(4 * r) + xGm.GetValue(4 * r + 1);
        if (skew != 0 && r % 16 == 0) {
            for (uint32_t k = 0; k < 4; ++k) acc += xGm.GetValue(4 * r + k) * xGm.GetValue(4 * r + 3 - k);
        }
        yGm.SetValue(r, acc);
    }
}
extern "C" void skewed_do(uint8_t* x, uint8_t* y, uint32_t rows, uint32_t skew)
{
    skewed<<<1, nullptr, nullptr>>>(x, y, rows, skew);
}
"""


def test_a_loop_whose_iterations_spread_is_sampled_more_densely():
    """Where the sampled iterations' lengths spread, later jumps shrink (up to four times the 24
    samples) so that the extrapolation's error stays about 1 %. With 24 samples the skewed loop
    came out 13.5 % under full simulation, its bracket (-18.7 % to -8.2 %) excluding it: too few
    samples landed on the dear rows."""
    mod = asc.load(SKEWED_ROWS, name="skewed.cpp")
    rows = 1 << 16
    torch.manual_seed(3)
    x = torch.rand(4 * rows)
    got = {}
    for skew in (0, 1):
        y = torch.zeros(rows)
        mod.skewed_do(x, y, rows, skew)
        full = mod.last_run
        with sampled_simulation(blocks=2, loops="all"):
            mod.skewed_do(x, y, rows, skew)
        got[skew] = mod.last_run
        assert got[skew].latency_lo_s <= full.latency_s <= got[skew].latency_hi_s, skew
        assert got[skew].latency_s == pytest.approx(full.latency_s, rel=0.03), skew
    # (the even loop's lengths spread too: every fourth row fills a data-cache line)
    assert 24 < got[0].loop_jumps < got[1].loop_jumps <= 4 * 24 + 4


# Rows that alternate between one and six taps, each row starting with a copy into UB (a transposed
# convolution's bias row): the copy's pipe is done long before the row ends.
ALTERNATING_ROWS = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void alternating(GM_ADDR x, GM_ADDR b, GM_ADDR y, uint32_t rows)
{
    GlobalTensor<float> xGm, bGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    bGm.SetGlobalBuffer((__gm__ float*)b);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bb;
    pipe.InitBuffer(bb, 64);
    LocalTensor<float> bias = bb.Get<float>(0);
    for (uint32_t r = 0; r < rows; ++r) {
        DataCopy(bias, bGm, 16);
        float acc = 0.0f;
        const uint32_t taps = (r % 2) ? 24 : 4;
        for (uint32_t k = 0; k < taps; ++k) acc += xGm.GetValue(32 * r + k);
        yGm.SetValue(r, acc);
    }
}
extern "C" void alternating_do(uint8_t* x, uint8_t* b, uint8_t* y, uint32_t rows)
{
    alternating<<<1, nullptr, nullptr>>>(x, b, y, rows);
}
"""


# A convolution-like tile loop written as a while loop (EvoKernel's Conv2dSubtractSubtractMish):
# tiles of 16 outputs that shrink to the row's rest at each row's end, each output 8 scalar GM
# reads, a vector instruction per tile, and the tile's valid lanes stored as scalars.
WHILE_TILES = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void whiletiles(GM_ADDR x, GM_ADDR y, uint32_t total, uint32_t width)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TBuf<TPosition::VECCALC> tb;
    pipe.InitBuffer(tb, 64);
    LocalTensor<float> v = tb.Get<float>();
    uint32_t linear = 0;
    while (linear < total) {
        const uint32_t col = linear % width;
        uint32_t span = 16;
        const uint32_t rowLeft = width - col;
        if (span > rowLeft) span = rowLeft;
        for (uint32_t i = 0; i < 16; ++i) {
            float acc = 0.0f;
            for (uint32_t k = 0; k < 8; ++k) acc += xGm.GetValue((linear + i) * 8 + k);
            v.SetValue(i, acc);
        }
        Muls(v, v, 2.0f, 16);
        for (uint32_t i = 0; i < span; ++i) yGm.SetValue(linear + i, v.GetValue(i));
        linear += span;
    }
}
extern "C" void whiletiles_do(uint8_t* x, uint8_t* y, uint32_t total, uint32_t width)
{
    whiletiles<<<1, nullptr, nullptr>>>(x, y, total, width);
}
"""


def test_a_while_tile_loop_whose_tiles_shrink_at_row_ends_is_sampled_without_bias():
    """The hook after ``linear += span`` passes tiles by the last tile's step: a row-end tile
    sampled stands for as many short tiles, so the estimate stays unbiased (a tile in 7 is short)."""
    mod = asc.load(WHILE_TILES, name="whiletiles.cpp")
    assert any("linear += span; KGSIM_LOOP_ITER(linear, total, (span)" in h for h in _hooks(WHILE_TILES))
    width, rows = 100, 600
    total = width * rows
    torch.manual_seed(5)
    x, y = torch.rand((total + 16) * 8), torch.zeros(total)
    want = 2 * x[: total * 8].view(total, 8).sum(1)
    got = _sampled_like_full(
        mod, lambda: mod.whiletiles_do(x, y, total, width), lambda: torch.allclose(y, want, rtol=1e-5)
    )
    assert got.loop_jumps > 10



def test_a_while_tile_loop_that_starts_part_way_along_a_row_finds_its_period():
    """A block whose share starts part-way along a row (every block but the first of EvoKernel's
    Conv2dSubtractSubtractMish) visits a first row of other tiles: the period is found in the
    latest steps, not held to every step since the loop began (no period, no jump, before)."""
    src = WHILE_TILES.replace("uint32_t linear = 0;", "uint32_t linear = width / 3;")
    mod = asc.load(src, name="whiletiles_offset.cpp")
    width, rows = 100, 600
    total = width * rows
    torch.manual_seed(5)
    x, y = torch.rand((total + 16) * 8), torch.zeros(total)
    want = 2 * x[: total * 8].view(total, 8).sum(1)
    want[: width // 3] = 0
    got = _sampled_like_full(
        mod, lambda: mod.whiletiles_do(x, y, total, width), lambda: torch.allclose(y, want, rtol=1e-5)
    )
    assert got.loop_jumps > 10

# The same tiles with a vector instruction chain per tile (EvoKernel's Conv2dSubtractSubtractMish:
# the tile's outputs set into UB one by one, a Mish-like chain, read back as scalars): the
# instructions repeat every tile, so the API-call skip finds them inside the loop's sampled periods.
WHILE_VECTOR = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void whilevec(GM_ADDR x, GM_ADDR y, uint32_t total, uint32_t width)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TBuf<TPosition::VECCALC> b0, b1, b2, b3;
    pipe.InitBuffer(b0, 64);
    pipe.InitBuffer(b1, 64);
    pipe.InitBuffer(b2, 64);
    pipe.InitBuffer(b3, 64);
    LocalTensor<float> v = b0.Get<float>(), a = b1.Get<float>(), t = b2.Get<float>(), one = b3.Get<float>();
    Duplicate(one, 1.0f, 16);
    uint32_t linear = 0;
    while (linear < total) {
        const uint32_t col = linear % width;
        uint32_t span = 16;
        const uint32_t rowLeft = width - col;
        if (span > rowLeft) span = rowLeft;
        for (uint32_t i = 0; i < 16; ++i) {
            float acc = 0.0f;
            for (uint32_t k = 0; k < 8; ++k) acc += xGm.GetValue((linear + i) * 8 + k);
            v.SetValue(i, acc);
        }
        Abs(a, v, 16);
        Muls(t, a, -1.0f, 16);
        Exp(t, t, 16);
        Add(t, one, t, 16);
        Log(t, t, 16);
        Muls(t, t, 2.0f, 16);
        Exp(t, t, 16);
        Add(t, t, one, 16);
        Div(t, v, t, 16);
        for (uint32_t i = 0; i < span; ++i) yGm.SetValue(linear + i, t.GetValue(i));
        linear += span;
    }
}
extern "C" void whilevec_do(uint8_t* x, uint8_t* y, uint32_t total, uint32_t width)
{
    whilevec<<<1, nullptr, nullptr>>>(x, y, total, width);
}
"""


def test_no_api_call_skip_runs_inside_a_while_loops_sampled_period():
    """A period run under an API-call skip came out dearer than in detail, and every jump carried
    it: 9 % over full simulation, the bracket excluding it, before skips were held off."""
    mod = asc.load(WHILE_VECTOR, name="whilevec.cpp")
    width, rows = 94, 600
    total = width * rows
    torch.manual_seed(6)
    x, y = torch.rand((total + 16) * 8), torch.zeros(total)
    s = x[: total * 8].view(total, 8).sum(1)
    want = s / (torch.exp(2 * torch.log1p(torch.exp(-s.abs()))) + 1)
    got = _sampled_like_full(
        mod, lambda: mod.whilevec_do(x, y, total, width), lambda: torch.allclose(y, want, rtol=1e-4, atol=1e-5)
    )
    assert got.loop_jumps > 10


# A grid-stride tile loop (while) over an output loop (for) that loop sampling samples itself.
WHILE_OVER_FOR = r"""
#include "kernel_operator.h"
using namespace AscendC;
// With `runs` > 0 every tile's outputs take the same taps, 8 or 24, alternating in runs of `runs`
// tiles (a transposed convolution's rows of no taps and of three); with 0 every output takes 16
// (a matmul's dot products), so every tile costs the same.
extern "C" __global__ __aicore__ void tilefor(GM_ADDR x, GM_ADDR y, uint32_t total, uint32_t tile, uint32_t runs)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    uint32_t base = 0;
    while (base < total COND) {
        uint32_t end = base + tile;
        if (end > total) end = total;
        const uint32_t taps = runs == 0 ? 16u : (base / tile / runs) % 2 == 0 ? 8u : 24u;
        for (uint32_t o = base; o < end; ++o) {
            float acc = 0.0f;
            for (uint32_t k = 0; k < taps; ++k) acc += xGm.GetValue(o * 24 + k);
            yGm.SetValue(o, acc);
        }
        base += tile;
    }
}
extern "C" void tilefor_do(uint8_t* x, uint8_t* y, uint32_t total, uint32_t tile, uint32_t runs)
{
    tilefor<<<1, nullptr, nullptr>>>(x, y, total, tile, runs);
}
"""


def _tilefor_runs(runs: int) -> list:
    """The hooked and the plain (no hook on the while loop) tile loops over 640 tiles of 128
    outputs, sampled; their launch reports."""
    hooked, plain = WHILE_OVER_FOR.replace(" COND", ""), WHILE_OVER_FOR.replace(" COND", " && true")
    assert any("base += tile; KGSIM_LOOP_ITER(base, total, (tile)" in h for h in _hooks(hooked))
    assert not any("base += tile;" in h for h in _hooks(plain))
    total, tile = 640 * 128, 128
    torch.manual_seed(8)
    x = torch.rand(total * 24)
    y = torch.zeros(total)  # (one buffer each for both: the data-cache model's sets follow their addresses)
    runs_out = []
    for name, src in (("hooked", hooked), ("plain", plain)):
        mod = asc.load(src, name=f"tilefor_{name}.cpp")
        y.zero_()
        with sampled_simulation(blocks=2, loops="all"):
            mod.tilefor_do(x, y, total, tile, runs)
        runs_out.append(mod.last_run)
    return runs_out


def test_a_while_loop_whose_periods_hold_an_inner_loops_jumps_is_left_to_it():
    """Nested samplers compound an open bias where the outer loop's periods differ (a strided
    transposed convolution's tile loop over its outputs' loop, its tiles in long runs of no taps and
    of three: +66 %, +12 % with owed jumps): a while loop whose periods hold jumps of an inner loop,
    and whose first periods' lengths differ, runs as it is: the same jumps as the kernel with no
    hook in it, and the same latency but for the hook's own scalar blocks."""
    hooked, plain = _tilefor_runs(40)
    assert hooked.loop_jumps > 0  # the output loops jump
    assert hooked.loop_jumps == plain.loop_jumps
    assert hooked.latency_s == pytest.approx(plain.latency_s, rel=1e-5)


def test_a_while_loop_whose_periods_cost_alike_samples_over_its_inner_loops_jumps():
    """Tiles that each cost the same (EvoKernel's MatmulMishMish: a tile of four dot products of
    8192 terms, 22 k tiles per block): the while loop samples its tiles too, and the inner loops'
    jumps happen only in the sampled tiles. Within 3 % of full simulation, inside the bracket."""
    mod = asc.load(WHILE_OVER_FOR.replace(" COND", ""), name="tilefor_hooked.cpp")
    total, tile = 640 * 128, 128
    torch.manual_seed(8)
    x, y = torch.rand(total * 24), torch.zeros(total)
    want = x.view(total, 24)[:, :16].sum(1)
    _sampled_like_full(
        mod, lambda: mod.tilefor_do(x, y, total, tile, 0), lambda: torch.allclose(y, want, rtol=1e-5)
    )
    hooked, plain = _tilefor_runs(0)
    assert hooked.loop_jumps * 4 < plain.loop_jumps  # most tiles, and their output loops, were passed


def test_a_pipe_done_before_the_row_ends_does_not_set_the_rows_length():
    """The copy's done times are a row apart, each marking a row's start: their difference spans
    the end of one row and the start of the next, so taken as the row's length (the longest clock)
    the dearer of two neighbouring rows stood for every row a jump passed (29 % over here)."""
    mod = asc.load(ALTERNATING_ROWS, name="alternating.cpp")
    rows = 1 << 14
    torch.manual_seed(4)
    x, b, y = torch.rand(32 * rows), torch.rand(16), torch.zeros(rows)
    got = _sampled_like_full(mod, lambda: mod.alternating_do(x, b, y, rows))
    assert got.loop_jumps > 10


# A convolution-like row loop: each row issues a vector instruction (a periodic stream of API calls,
# one period a row) and then reads 64 inputs as scalars. Loop sampling's API-call skip finds the
# period first, but it still runs every row's scalar reads; the row loop's own hook passes rows.
ROWS_WITH_CALLS = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void rowcalls(GM_ADDR x, GM_ADDR y, uint32_t rows)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TBuf<TPosition::VECCALC> tb;
    pipe.InitBuffer(tb, 256);
    LocalTensor<float> t = tb.Get<float>(0);
    Duplicate(t, 0.0f, 64);
    for (uint32_t r = 0; r < rows; ++r) {
        Adds(t, t, 1.0f, 64);
        float acc = 0.0f;
        for (uint32_t k = 0; k < 64; ++k) acc += xGm.GetValue(64 * r + k);
        yGm.SetValue(r, acc);
    }
}
extern "C" void rowcalls_do(uint8_t* x, uint8_t* y, uint32_t rows)
{
    rowcalls<<<1, nullptr, nullptr>>>(x, y, rows);
}
"""


def test_a_loop_whose_rows_an_api_call_skip_repeats_is_passed_by_its_own_hook():
    """An API-call skip that began inside the row loop's iteration repeats that loop's own rows, and
    runs each row's scalar reads on the host: the row loop stops it and jumps instead, so most rows
    are never run (their outputs stay as they were) and the latency stays that of full simulation."""
    mod = asc.load(ROWS_WITH_CALLS, name="rowcalls.cpp")
    rows = 1 << 14
    torch.manual_seed(5)
    x = torch.rand(64 * rows)
    y = torch.zeros(rows)
    got = _sampled_like_full(
        mod, lambda: mod.rowcalls_do(x, y, rows), lambda: torch.allclose(y, x.view(rows, 64).sum(1))
    )
    y.zero_()
    with sampled_simulation(blocks=2, loops="all"):
        mod.rowcalls_do(x, y, rows)
    assert mod.last_run.latency_s == got.latency_s  # the same draws, run to run
    ran = int((y != 0).sum())
    assert 0 < ran < rows // 8, ran  # rows a jump passed store nothing



# A pointwise-convolution-like task loop (hooked, values only, no scalar GM access): per task, a short
# channel-block loop over a channel loop that copies 16 inputs to UB, waits, and multiplies them
# with weights read back with GetValue into 8 x 16 accumulators; the block's eight results go out
# through SetValue and DataCopy. The stores' calls repeat, so an API-call skip starts at every task's end
# and runs into the next task; the channel loop stops it there, but the task loop never saw a task
# of its own.
TASKS = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void tasks(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t ntasks, uint32_t cin)
{
    GlobalTensor<float> xGm, wGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    wGm.SetGlobalBuffer((__gm__ float*)w);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TBuf<TPosition::VECCALC> wb, xb, yb;
    pipe.InitBuffer(wb, 16 * 64 * sizeof(float));
    pipe.InitBuffer(xb, 16 * sizeof(float));
    pipe.InitBuffer(yb, 16 * sizeof(float));
    LocalTensor<float> wl = wb.Get<float>(), xl = xb.Get<float>(), yl = yb.Get<float>();
    DataCopy(wl, wGm, 16 * cin);
    PipeBarrier<PIPE_ALL>();
    for (uint32_t t = 0; t < ntasks; ++t) {
        for (uint32_t co0 = 0; co0 < 16; co0 += 8) {
            float acc[8][16];
            for (uint32_t j = 0; j < 8; ++j)
                for (uint32_t l = 0; l < 16; ++l) acc[j][l] = 0.0f;
            for (uint32_t ci = 0; ci < cin; ++ci) {
                DataCopy(xl, xGm[(t * cin + ci) * 16], 16);
                PipeBarrier<PIPE_ALL>();
                float wv[8];
                for (uint32_t j = 0; j < 8; ++j) wv[j] = wl.GetValue((co0 + j) * cin + ci);
                for (uint32_t l = 0; l < 16; ++l) {
                    const float xv = xl.GetValue(l);
                    for (uint32_t j = 0; j < 8; ++j) acc[j][l] += wv[j] * xv;
                }
            }
            for (uint32_t j = 0; j < 8; ++j) {
                for (uint32_t l = 0; l < 16; ++l) yl.SetValue(l, acc[j][l]);
                DataCopy(yGm[(t * 16 + co0 + j) * 16], yl, 16);
            }
        }
    }
}
extern "C" void tasks_do(uint8_t* x, uint8_t* w, uint8_t* y, uint32_t ntasks, uint32_t cin)
{
    tasks<<<1, nullptr, nullptr>>>(x, w, y, ntasks, cin);
}
"""


def test_a_task_loop_of_heavy_scalar_iterations_stops_the_skip_its_stores_start():
    """The task loop makes no scalar GM access, and an API-call skip of its stores runs across each
    task boundary: its iterations' scalar work (thousands of basic blocks each) qualifies it to stop
    that skip and jump, so most tasks are never run (their outputs stay zero) and the latency stays
    that of full simulation."""
    mod = asc.load(TASKS, name="tasks.cpp")
    hooked = _hooks(TASKS)
    assert any(f"{HOOK}(t, ntasks, 1, {VALUES_ONLY})" in h for h in hooked), hooked
    ntasks, cin = 1024, 64
    torch.manual_seed(3)
    x, w = torch.rand(ntasks * cin * 16), torch.rand(16 * cin)
    y = torch.zeros(ntasks * 16 * 16)
    want = torch.einsum("tcl,oc->tol", x.view(ntasks, cin, 16), w.view(16, cin)).reshape(-1)
    _sampled_like_full(mod, lambda: mod.tasks_do(x, w, y, ntasks, cin), lambda: torch.allclose(y, want, rtol=1e-4))
    y.zero_()
    with sampled_simulation(blocks=2, loops="all"):
        mod.tasks_do(x, w, y, ntasks, cin)
    ran = int((y.view(ntasks, 256) != 0).any(1).sum())
    assert 0 < ran < ntasks // 4, ran  # tasks a jump passed store nothing

# A transposed-convolution-like pixel loop, written with while loops (no hooks: the API-call skip
# alone samples it): per pixel and input channel, up to four taps each gather 128 filter values as
# scalars (the first tap's lines miss the data cache, the others hit them) and issue Muls and Add.
# The first row and column have fewer taps, so their accesses miss more often; they repeat no
# period, so a skip leaves them simulated while it passes most of the interior.
TAPS = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void taps(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t side, uint32_t cin)
{
    GlobalTensor<float> xGm, wGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    wGm.SetGlobalBuffer((__gm__ float*)w);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TBuf<TPosition::VECCALC> vb, wb;
    pipe.InitBuffer(vb, 512);
    pipe.InitBuffer(wb, 512);
    LocalTensor<float> v = vb.Get<float>(), wv = wb.Get<float>();
    uint32_t p = 0;
    while (p < side * side) {
        const uint32_t oh = p / side, ow = p % side;
        const uint32_t taps = 1 + (oh > 0) + (ow > 0) + (oh > 0 && ow > 0);
        Duplicate(v, 0.0f, 128);
        uint32_t ci = 0;
        while (ci < cin) {
            const float xv = xGm.GetValue(ci * side * side + p);
            uint32_t t = 0;
            while (t < taps) {
                uint32_t co = 0;
                while (co < 128) {
                    wv.SetValue(co, wGm.GetValue((ci * 128 + co) * 16 + t));
                    ++co;
                }
                Muls(wv, wv, xv, 128);
                Add(v, v, wv, 128);
                ++t;
            }
            ++ci;
        }
        yGm.SetValue(p, v.GetValue(0));
        ++p;
    }
}
extern "C" void taps_do(uint8_t* x, uint8_t* w, uint8_t* y, uint32_t side, uint32_t cin)
{
    taps<<<1, nullptr, nullptr>>>(x, w, y, side, cin);
}
"""


def test_fast_forward_windows_fall_where_the_api_call_skip_passes_work():
    """Scalar fast-forward prices its stretches at the mean of its measured windows. Counted only in
    the accesses a skip leaves simulated, its stretches outlasted the block, and the one window it
    measured, at the block's start (the first row: fewer taps, more misses), priced the periods
    every skip repeated (+23 % here, the full latency outside the bracket); counted in the block's
    work, windows come due inside the skipped loop and the skip stops for them."""
    mod = asc.load(TAPS, name="taps.cpp")
    side, cin = 24, 32
    torch.manual_seed(6)
    x, w, y = torch.rand(cin * side * side), torch.rand(cin * 128 * 16), torch.zeros(side * side)
    mod.taps_do(x, w, y, side, cin)
    full = mod.last_run
    with sampled_simulation(blocks=2, loops="all"):
        mod.taps_do(x, w, y, side, cin)
    got = mod.last_run
    assert got.loop_periods_skipped > 0
    assert got.latency_lo_s <= full.latency_s <= got.latency_hi_s
    assert got.latency_s == pytest.approx(full.latency_s, rel=0.03)


# An instance-norm-like plane loop (hooked, its local reads values only): per plane, a tile loop of
# copies and ReduceSum whose result is read as a scalar, then a tile loop that subtracts the mean,
# each ending on a tail tile. The plane loop makes no scalar GM access; the tile loops are the
# API-call skip's.
PLANES = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void planenorm(GM_ADDR x, GM_ADDR y, uint32_t planes, uint32_t hw, uint32_t tile)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TQue<TPosition::VECIN, 2> qx;
    TQue<TPosition::VECOUT, 2> qy;
    TBuf<TPosition::VECCALC> rb, tb;
    pipe.InitBuffer(qx, 2, tile * sizeof(float));
    pipe.InitBuffer(qy, 2, tile * sizeof(float));
    pipe.InitBuffer(rb, 64);
    pipe.InitBuffer(tb, tile * sizeof(float));
    LocalTensor<float> red = rb.Get<float>(), tmp = tb.Get<float>();
    const uint32_t step = GetBlockNum();
    for (uint32_t p = GetBlockIdx(); p < planes; p += step) {
        float sum = 0.0f;
        uint32_t off = 0;
        while (off < hw) {
            const uint32_t cur = hw - off < tile ? hw - off : tile;  // a tail tile ends each plane
            LocalTensor<float> xl = qx.AllocTensor<float>();
            DataCopy(xl, xGm[p * hw + off], cur);
            qx.EnQue(xl);
            xl = qx.DeQue<float>();
            ReduceSum<float>(red, xl, tmp, (int32_t)cur);
            sum += red.GetValue(0);
            qx.FreeTensor(xl);
            off += cur;
        }
        const float mean = sum / (float)hw;
        off = 0;
        while (off < hw) {
            const uint32_t cur = hw - off < tile ? hw - off : tile;
            LocalTensor<float> xl = qx.AllocTensor<float>();
            DataCopy(xl, xGm[p * hw + off], cur);
            qx.EnQue(xl);
            xl = qx.DeQue<float>();
            LocalTensor<float> yl = qy.AllocTensor<float>();
            Adds(yl, xl, -mean, (int32_t)cur);
            qy.EnQue(yl);
            qx.FreeTensor(xl);
            yl = qy.DeQue<float>();
            DataCopy(yGm[p * hw + off], yl, cur);
            qy.FreeTensor(yl);
            off += cur;
        }
    }
}
extern "C" void planenorm_do(uint32_t blocks, uint8_t* x, uint8_t* y, uint32_t planes, uint32_t hw, uint32_t tile)
{
    planenorm<<<blocks, nullptr, nullptr>>>(x, y, planes, hw, tile);
}
"""


@pytest.mark.xfail(
    strict=True,
    reason="open (issue 27): a plane's sampled length is its scalar or busiest pipe time, not the latency "
    "chain of its tile loops' copies and reductions (its pipes' done times run ahead of both): 44 % under",
)
def test_a_plane_loop_of_tile_loops_is_sampled_within_its_bracket():
    """The plane loop (hooked, values only) jumps planes between its samples; each plane is two tile
    loops of copies and vector instructions with a tail tile, which the API-call skip samples."""
    mod = asc.load(PLANES, name="planenorm.cpp")
    assert any("KGSIM_LOOP_ITER(p, planes" in h for h in _hooks(PLANES))
    planes, hw, tile = 96, 16384 + 64, 512
    torch.manual_seed(7)
    x, y = torch.rand(planes * hw), torch.zeros(planes * hw)
    mod.planenorm_do(2, x, y, planes, hw, tile)
    full = mod.last_run
    v = x.view(planes, hw)
    assert torch.allclose(y.view(planes, hw), v - v.mean(1, keepdim=True), atol=1e-4)
    with sampled_simulation(blocks=2, loops="all"):
        mod.planenorm_do(2, x, y, planes, hw, tile)
    got = mod.last_run
    assert got.loop_jumps > 0
    assert got.latency_lo_s <= full.latency_s <= got.latency_hi_s
    assert got.latency_s == pytest.approx(full.latency_s, rel=0.03)


# An output loop (not hooked: it may leave early) over a channel loop of `trip` iterations, each one
# scalar GM read and one local read-modify-write (light), or that and a vector instruction (HEAVY 1).
LIGHT = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void light(GM_ADDR x, GM_ADDR y, uint32_t outputs, uint32_t trip)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TBuf<TPosition::VECCALC> vb;
    pipe.InitBuffer(vb, 2048);
    LocalTensor<float> v = vb.Get<float>();
    Duplicate(v, 0.0f, 512);
    for (uint32_t o = 0; o < outputs; ++o) {
        if (xGm.GetValue(o) < -1.0f) break;
        for (uint32_t c = 0; c < trip; ++c) {
            v.SetValue(c, v.GetValue(c) + xGm.GetValue(o * trip + c));
#if HEAVY
            Muls(v[256], v[256], 0.5f, 64);
#endif
        }
        yGm.SetValue(o, v.GetValue(0));
    }
}
extern "C" void light_do(uint8_t* x, uint8_t* y, uint32_t outputs, uint32_t trip)
{
    light<<<1, nullptr, nullptr>>>(x, y, outputs, trip);
}
"""


@pytest.mark.parametrize(
    ("trip", "heavy", "jumps"),
    [(64, 0, False), (200, 0, True), (64, 1, True)],
    ids=["short_light_runs_whole", "long_light_sampled", "short_with_vector_work_sampled"],
)
def test_a_short_loop_of_light_iterations_runs_as_it_is(trip, heavy, jumps):
    """A jump of one or two light iterations (a scalar read and a local update) passes less work than
    a sample's bookkeeping costs: a for loop whose instances leave a mean gap under 4 and whose
    iterations run fewer than 32 basic blocks and no pipe instruction is not sampled (its latency and
    outputs are those of the run without loop sampling); a longer trip, or iterations with a vector
    instruction, still are."""
    assert any(f"{HOOK}(c, trip" in h for h in _hooks(LIGHT))
    assert not any(f"{HOOK}(o," in h for h in _hooks(LIGHT))
    mod = asc.load(LIGHT.replace("#if HEAVY", f"#if {heavy}"), name=f"light_{heavy}.cpp")
    outputs = 300
    torch.manual_seed(4)
    x, y = torch.rand(outputs * trip), torch.zeros(outputs)
    with sampled_simulation(blocks=2, loops=False):  # scalar fast-forward as below, every iteration run
        mod.light_do(x, y, outputs, trip)
    full, y_full = mod.last_run, y.clone()
    with sampled_simulation(blocks=2, loops="all"):
        mod.light_do(x, y, outputs, trip)
    got = mod.last_run
    assert (got.loop_jumps > 0) == jumps
    if not jumps:
        assert got.latency_s == pytest.approx(full.latency_s, rel=1e-9)
        assert torch.equal(y, y_full)


# Each block sums a long scalar stretch of x (a statistics pass that stores nothing), then stores
# its sum scaled into its own outputs.
STATS_THEN_STORE = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void stats(GM_ADDR x, GM_ADDR y, uint32_t len, uint32_t outs)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    const uint32_t b = GetBlockIdx();
    float sum = 0.0f;
    for (uint32_t i = 0; i < len; ++i) sum += xGm.GetValue(b * len + i) * xGm.GetValue(i);
    for (uint32_t o = 0; o < outs; ++o) yGm.SetValue(b * outs + o, sum * float(o + 1));
}
extern "C" void stats_do(uint8_t* x, uint8_t* y, uint32_t blocks, uint32_t len, uint32_t outs)
{
    stats<<<blocks, nullptr, nullptr>>>(x, y, len, outs);
}
"""


def test_a_block_after_the_first_checked_one_may_jump_before_it_stores():
    """A block's iterations after a jump are out of the check (its local state is stale), so the
    launch's first checked stores must come from a block that jumped nowhere before them. Waiting
    for every block's own first store ran each sampled block's statistics pass in full (a matmul's
    first output row, a batch norm's sums: 84 -> 21 CPU s); once an earlier block of the launch
    stored checked output, later blocks jump there too, and the checked spans are those of blocks
    that kept every iteration before their stores, with the reference's values."""
    mod = asc.load(STATS_THEN_STORE, name="stats_then_store.cpp")
    blocks, length, outs = 8, 6000, 16
    torch.manual_seed(5)
    x, y = torch.rand(blocks * length), torch.zeros(blocks * outs)
    mod.stats_do(x, y, blocks, length, outs)
    full = y.clone()
    y.zero_()
    with sampled_simulation(blocks=3, loops="all"):
        mod.stats_do(x, y, blocks, length, outs)
        spans = written_spans(y)
    got = mod.last_run
    assert got.loop_jumps > 0
    assert spans, "the first simulated block's stores stay checked"
    for _, lo, hi, _ in spans:
        torch.testing.assert_close(y[lo:hi], full[lo:hi], rtol=0, atol=0)
    assert got.latency_lo_s <= mod.last_run.latency_s <= got.latency_hi_s


# A scalar convolution's shape (EvoKernel's Conv2dMishMish): tiles of 16 outputs that shrink at each
# row's end (a while loop), each summing a channel loop of `cin` iterations with a vector instruction.
WHILE_OVER_CHANNELS = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void wchan(GM_ADDR x, GM_ADDR y, uint32_t width, uint32_t total, uint32_t cin)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    TPipe pipe;
    TBuf<TPosition::VECCALC> vb;
    pipe.InitBuffer(vb, 256);
    LocalTensor<float> v = vb.Get<float>();
    Duplicate(v, 0.0f, 64);
    uint32_t linear = 0;
    while (linear < total) {
        const uint32_t col = linear % width;
        uint32_t span = 16;
        if (span > width - col) span = width - col;
        float acc = 0.0f;
        for (uint32_t c = 0; c < cin; ++c) {
            acc += xGm.GetValue(c * total + linear) * xGm.GetValue(c * total + linear + span - 1);
            Adds(v, v, 1.0f, 64);
        }
        for (uint32_t i = 0; i < span; ++i) yGm.SetValue(linear + i, acc + float(i));
        linear += span;
    }
}
extern "C" void wchan_do(uint8_t* x, uint8_t* y, uint32_t width, uint32_t total, uint32_t cin)
{
    wchan<<<1, nullptr, nullptr>>>(x, y, width, total, cin);
}
"""


def test_a_while_loop_over_short_channel_loops_samples_its_tiles():
    """A channel loop of 64 iterations jumps by two at most, and sampled, its jumps turned the tile
    loop around it off: every tile ran 30 of its 64 channels (Conv2dMishMish: 83 -> 29 CPU s once the
    tiles are sampled instead). Inside a while loop that found the period of its steps, a for loop
    whose trip leaves a mean gap under 4 runs whole and the tiles are sampled: fewer jumps than
    tiles, the latency within 3 % of full simulation and inside the bracket."""
    assert any("linear += span; KGSIM_LOOP_ITER(linear, total, (span)" in h for h in _hooks(WHILE_OVER_CHANNELS))
    mod = asc.load(WHILE_OVER_CHANNELS, name="while_over_channels.cpp")
    width, rows, cin = 100, 200, 64
    total = width * rows
    tiles = rows * 7
    torch.manual_seed(9)
    x, y = torch.rand(cin * total + 16), torch.zeros(total)
    mod.wchan_do(x, y, width, total, cin)
    full = mod.last_run
    with sampled_simulation(blocks=2, loops="all"):
        mod.wchan_do(x, y, width, total, cin)
    got = mod.last_run
    assert 0 < got.loop_jumps < tiles
    assert got.latency_lo_s <= full.latency_s <= got.latency_hi_s
    assert got.latency_s == pytest.approx(full.latency_s, rel=0.03)
