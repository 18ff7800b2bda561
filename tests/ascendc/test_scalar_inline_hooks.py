"""The assembler wrapper (toolchain/as) writes the basic-block counter and the access hooks' stack
test inline into kernel code: a kernel built so must simulate exactly as one built with the calls
(-Wa,--kgsim-no-inline), to the bit, in its figures, its outputs and its faults."""

import ctypes
import dataclasses

import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.loader import runtime_library
from kernel_gym.ascendc.timing import record_launches

NO_INLINE = ["-Wa,--kgsim-no-inline"]

# Scalar code of every kind the wrapper rewrites: branches and selects (counter calls kept and
# dropped), stack arrays of 1-, 2-, 4- and 8-byte elements (accesses the inline test skips), raw GM
# pointers of the same widths (accesses it passes on to the hook), GlobalTensor accessors, host
# code around the launch (host blocks), and an access that runs past the end of its GM buffer.
SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void mix_kernel(GM_ADDR x, GM_ADDR y, uint32_t n, uint32_t past_end)
{
    const uint32_t b = GetBlockIdx();
    __gm__ float* xp = (__gm__ float*)x + b * n;
    __gm__ float* yp = (__gm__ float*)y + b * n;
    __gm__ uint8_t* xb = (__gm__ uint8_t*)xp;
    __gm__ uint16_t* xh = (__gm__ uint16_t*)xp;
    GlobalTensor<float> xGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + b * n);
    float win[18];
    uint8_t c8[16];
    uint16_t c16[8];
    double c64[4];
    for (int j = 0; j < 18; ++j) win[j] = 0.0f;
    for (int j = 0; j < 16; ++j) c8[j] = (uint8_t)j;
    for (int j = 0; j < 8; ++j) c16[j] = (uint16_t)j;
    for (int j = 0; j < 4; ++j) c64[j] = 0.25 * j;
    for (uint32_t i = 0; i < n; ++i) {
        for (int j = 17; j > 0; --j) win[j] = win[j - 1];
        win[0] = xp[i];
        float s = 0.0f, m = win[0];
        for (int j = 0; j < 18; ++j) {
            s += win[j] > 0.0f ? win[j] : -0.5f * win[j];
            m = win[j] > m ? win[j] : m;
        }
        if (i % 3 == 0) s += xGm.GetValue(i);
        c8[i & 15] = (uint8_t)(c8[(i + 1) & 15] + xb[i]);
        c16[i & 7] = (uint16_t)(c16[(i + 3) & 7] ^ xh[i]);
        c64[i & 3] += (double)s;
        yp[i] = s + m + c8[(i + 5) & 15] + c16[(i + 2) & 7] + (float)c64[(i + 1) & 3];
    }
    if (past_end && b == GetBlockNum() - 1) {
        double tail = *(__gm__ double*)(xp + n - 1);  // 8 bytes at the last float
        yp[0] = (float)tail;
    }
}

extern "C" uint32_t mix_do(uint8_t* x, uint8_t* y, uint32_t n, uint32_t blocks, uint32_t past_end)
{
    uint32_t h = 0;
    for (uint32_t i = 0; i < n; ++i) h = h * 31 + (i % 7 == 0 ? i : 1);  // host code: host blocks
    mix_kernel<<<blocks, nullptr, nullptr>>>(x, y, n, past_end);
    return h;
}

extern "C" __global__ __aicore__ void spin_kernel(GM_ADDR flag)
{
    volatile int32_t buf[2];
    buf[0] = *(__gm__ int32_t*)flag;
    buf[1] = 0;
    while (buf[0] == 0) buf[1] = buf[1] + 1;  // nothing but the stack: only the counter's watchdog ends it
}

extern "C" void spin_do(uint8_t* flag) { spin_kernel<<<1, nullptr, nullptr>>>(flag); }
"""

N, BLOCKS = 3000, 4


# one pair of buffers for every run: the data cache's timing depends on where they lie
X = torch.randn(BLOCKS * N, generator=torch.Generator().manual_seed(0))
Y = torch.zeros(BLOCKS * N)


def _run(mod, past_end: int = 0):
    x, y = X, Y
    y.zero_()
    with record_launches() as rec:
        try:
            ret, fault = mod.mix_do(x, y, N, BLOCKS, past_end), None
        except asc.AscendCFault as exc:
            ret, fault = None, (type(exc).__name__, str(exc))
    runs = [dataclasses.asdict(r) for r in rec.launches]
    # the call's counters as the runtime left them (kgsim::ScalarCounters: block_cycles, blocks,
    # host_blocks, gm_accesses): the basic blocks of a trapped block are in no report
    counters = tuple((ctypes.c_uint64 * 3).from_address(ctypes.addressof(_scalar()) + 8))
    return ret, y.clone(), runs, counters, fault


def _scalar() -> ctypes.c_double:
    return ctypes.c_double.in_dll(runtime_library()[1], "kgsim_asm_scalar")


@pytest.fixture(scope="module")
def mods():
    return asc.load(SOURCE, name="inline_hooks.cpp"), asc.load(SOURCE, name="inline_hooks.cpp", extra_flags=NO_INLINE)


def test_the_wrapper_rewrites_only_when_asked(mods):
    inline, calls = mods
    # the inline sequences reach the runtime through these names; the calls do not
    assert b"kgsim_asm_hot" in inline.path.read_bytes()
    assert b"kgsim_asm_scalar" in inline.path.read_bytes()
    assert b"kgsim_asm_hot" not in calls.path.read_bytes()


@pytest.mark.parametrize("past_end", [0, 1], ids=["ok", "past_end"])
def test_inline_hooks_simulate_to_the_bit_as_the_calls_do(mods, past_end):
    inline, calls = mods
    a, b = _run(inline, past_end), _run(calls, past_end)
    assert a[0] == b[0]  # host return
    assert torch.equal(a[1], b[1])  # outputs
    assert a[2] == b[2]  # every launch figure, block cycles, faults and warnings, exactly
    assert a[3] == b[3]  # basic blocks in launches and on the host, raw GM accesses
    assert min(a[3]) > 0
    assert a[4] == b[4]
    run = a[2][0]
    assert run["per_pipe_busy"]["S"] > 0 and run["gm_read_bytes"] > 0
    if past_end:
        assert a[4] is not None and "runs past its end" in a[4][1]
    else:
        assert a[4] is None


def test_the_inline_counter_calls_the_watchdog():
    # a loop of plain scalar code over a stack array: the inline counter's rare call stops it
    flag = torch.zeros(16, dtype=torch.int32)
    out = []
    for flags in ((), NO_INLINE):
        mod = asc.load(SOURCE, name="inline_hooks.cpp", watchdog_cycles=1e7, extra_flags=list(flags))
        with pytest.raises(asc.Watchdog, match="simulated cycles") as info:
            mod.spin_do(flag)
        blocks = ctypes.c_uint64.from_address(ctypes.addressof(_scalar()) + 8).value
        out.append((str(info.value), dataclasses.asdict(mod.last_run), blocks))
    assert out[0] == out[1]
