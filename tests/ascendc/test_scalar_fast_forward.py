"""Scalar fast-forward (src/rt_scalar.cpp): under sampled simulation a block's scalar GM accesses
past its first window alternate between detailed windows (data-cache model) and fast stretches
charged the windows' mean cycles. Full simulation never fast-forwards; with it on, outputs are
the same, the latency stays close to the detailed one and inside its widened bracket, and an
out-of-bounds access in a fast stretch still faults."""

import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.errors import AscendCFault
from kernel_gym.ascendc.sampling import sampled_simulation, written_spans

# A 1-D convolution written as a scalar loop, as EvoKernel's scalar convolutions are: each block
# computes `count` consecutive outputs, each a K-tap window of x (stride 1, every read but the
# window's last a cache hit) times the taps of w (hits after the first), through GetValue (RAW 0)
# or through raw __gm__ pointers (RAW 1). TAIL > 0: the last block then reads an 8-byte word at
# x[n - 1], 4 bytes past the buffer's end, after its loop.
CONV = r"""
#include "kernel_operator.h"
using namespace AscendC;

constexpr uint32_t K = 9;

extern "C" __global__ __aicore__ void conv_kernel(GM_ADDR x, GM_ADDR w, GM_ADDR y, uint32_t count, uint32_t n)
{
    const uint32_t first = GetBlockIdx() * count;
#if RAW
    __gm__ float* xp = (__gm__ float*)x;
    __gm__ float* wp = (__gm__ float*)w;
    __gm__ float* yp = (__gm__ float*)y;
    for (uint32_t e = first; e < first + count; ++e) {
        float acc = 0.0f;
        for (uint32_t k = 0; k < K; ++k) acc += xp[e + k] * wp[k];
        yp[e] = acc;
    }
#else
    GlobalTensor<float> xGm, wGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    wGm.SetGlobalBuffer((__gm__ float*)w);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    for (uint32_t e = first; e < first + count; ++e) {
        float acc = 0.0f;
        for (uint32_t k = 0; k < K; ++k) acc += xGm.GetValue(e + k) * wGm.GetValue(k);
        yGm.SetValue(e, acc);
    }
#endif
#if TAIL
    if (GetBlockIdx() == GetBlockNum() - 1) {
        __gm__ uint64_t* past = (__gm__ uint64_t*)((__gm__ float*)x + (n - 1));
        yp[first] = float(*past & 1u);
    }
#endif
}

extern "C" void conv_do(uint8_t* x, uint8_t* w, uint8_t* y, uint32_t blocks, uint32_t count, uint32_t n)
{
    conv_kernel<<<blocks, nullptr, nullptr>>>(x, w, y, count, n);
}
"""

K, BLOCKS = 9, 8
COUNT = 12000  # outputs per block: 2 K + 1 = 19 scalar GM accesses each, 228000 a block


def _load(raw: int, tail: int = 0):
    return asc.load(
        CONV.replace("#if RAW", f"#if {raw}").replace("#if TAIL", f"#if {tail}"), name=f"ff_conv_{raw}{tail}.cpp"
    )


@pytest.fixture(scope="module", params=[0, 1], ids=["get_value", "raw_pointer"])
def conv(request):
    return _load(request.param)


def _inputs():
    g = torch.Generator().manual_seed(3)
    n = BLOCKS * COUNT + K - 1
    return torch.rand(n, generator=g), torch.rand(K, generator=g), n


def _run(mod, **sampling):
    x, w, n = _inputs()
    y = torch.zeros(BLOCKS * COUNT)
    if sampling:
        with sampled_simulation(**sampling):
            mod.conv_do(x, w, y, BLOCKS, COUNT, n)
    else:
        mod.conv_do(x, w, y, BLOCKS, COUNT, n)
    return y, mod.last_run


def test_full_simulation_never_fast_forwards(conv):
    y_full, full = _run(conv)
    y_off, off = _run(conv, blocks=BLOCKS, scalar_fast_forward=False)  # every block runs: as in full
    assert full.scalar_ff_accesses == 0 and off.scalar_ff_accesses == 0
    assert full.latency_s == off.latency_s and full.latency_lo_s == full.latency_hi_s == full.latency_s
    assert torch.equal(y_full, y_off)


def test_fast_forward_keeps_outputs_and_latency_within_its_bracket(conv):
    x, w, _ = _inputs()
    want = torch.nn.functional.conv1d(x.view(1, 1, -1), w.view(1, 1, -1)).view(-1)
    y_off, off = _run(conv, blocks=BLOCKS, scalar_fast_forward=False)
    y_on, on = _run(conv, blocks=BLOCKS)
    assert torch.equal(y_on, y_off)
    assert torch.allclose(y_on, want, rtol=1e-5, atol=1e-5)
    # past each block's first window of 8192 accesses, about 31/32 of the rest are fast-forwarded
    accesses = BLOCKS * COUNT * (2 * K + 1)
    assert 0.8 * (accesses - BLOCKS * 8192) * 31 / 32 < on.scalar_ff_accesses < accesses
    assert on.gm_bytes == off.gm_bytes  # fast accesses still count their bytes
    assert on.latency_s == pytest.approx(off.latency_s, rel=0.02)
    assert on.latency_lo_s <= off.latency_s <= on.latency_hi_s
    assert on.latency_lo_s < on.latency_s < on.latency_hi_s


def test_the_stored_spans_are_still_checked_under_fast_forward(conv):
    # SetValue / raw stores in a fast stretch still extend the written spans the sampled check reads
    y_on, _ = _run(conv, blocks=BLOCKS)
    spans = written_spans(y_on)
    assert sum(stored for _, _, _, stored in spans) == y_on.numel()
    assert sorted((lo, hi) for _, lo, hi, _ in spans) == [(b * COUNT, (b + 1) * COUNT) for b in range(BLOCKS)]


def test_a_raw_access_past_the_end_faults_inside_a_fast_stretch():
    # the last block reads 8 bytes at x[n - 1] after 228000 accesses: deep in a fast stretch
    fine = _load(1)
    _, on = _run(fine, blocks=BLOCKS)
    assert on.scalar_ff_accesses > 0
    bad = _load(1, tail=1)
    with pytest.raises(AscendCFault, match="runs past its end"):
        _run(bad, blocks=BLOCKS)


def test_a_launch_does_not_depend_on_what_ran_before_it():
    """Each block's fast-forward is seeded with its own core, whatever block ran before it in the
    process: it used to take the previous block's, so a launch's first block was timed differently
    after a launch of another block count (MaxReductionOverADimension at its published shape: 593.418
    ms on a process's first call, 593.635 ms on every later one)."""
    mod = _load(0)
    x, w, n = _inputs()
    y = torch.zeros(BLOCKS * COUNT)
    cycles = []
    for blocks in (2, BLOCKS, BLOCKS):  # the launch before the second: 2 blocks; before the third: 8
        with sampled_simulation(blocks=3):
            mod.conv_do(x, w, y, blocks, COUNT, n)
        cycles.append(list(mod.last_run.block_cycles))
    assert mod.last_run.scalar_ff_accesses > 0
    assert cycles[1] == cycles[2]
