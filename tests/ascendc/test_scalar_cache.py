"""Scalar GM accesses go through the core's data cache (64-byte lines, 16 KB, fully associative
with LRU: the associativity is not published): a loop over
consecutive elements pays one line fill per 64 bytes, a strided one a fill per access, a second
pass over a window that fits the cache none."""

import pytest
import torch

import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void sum_kernel(GM_ADDR x, GM_ADDR y, uint32_t n, uint32_t stride, uint32_t passes)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    float acc = 0.0f;
    for (uint32_t p = 0; p < passes; ++p)
        for (uint32_t i = 0; i < n; ++i) acc += xGm.GetValue(uint64_t(i) * stride);
    yGm.SetValue(0, acc);
}

extern "C" void sum_do(uint8_t* x, uint8_t* y, uint32_t n, uint32_t stride, uint32_t passes)
{
    sum_kernel<<<1, nullptr, nullptr>>>(x, y, n, stride, passes);
}
"""

N = 2048
HIT, FILL = 4.0, 100.0  # scalar_dcache_hit_cycles, scalar_gm_access_cycles of the 910B2 profile


def _scalar_cycles(mod, n, stride, passes):
    x, y = torch.rand(n * stride), torch.zeros(8)
    mod.sum_do(x, y, n, stride, passes)
    assert y[0].item() == pytest.approx(passes * x[::stride][:n].sum().item(), rel=1e-4)
    return mod.last_run.per_pipe_busy["S"]


@pytest.fixture(scope="module")
def mods():
    return asc.load(SOURCE, name="scalar_sum.cpp"), asc.load(
        SOURCE, name="scalar_sum.cpp", soc_overrides={"scalar_dcache_bytes": 0}
    )


def test_consecutive_reads_fill_a_line_per_64_bytes_strided_ones_every_access(mods):
    cached, _ = mods
    base = _scalar_cycles(cached, N, 1, 1)
    more = _scalar_cycles(cached, 2 * N, 1, 1) - base  # N more consecutive floats
    strided = _scalar_cycles(cached, 2 * N, 16, 1) - _scalar_cycles(cached, N, 16, 1)  # one line each
    # the loop's own basic blocks cost the same in both: the difference is the cache
    assert strided - more == pytest.approx(N * (FILL - HIT) * 15 / 16, rel=0.02)


def test_a_second_pass_over_a_window_that_fits_hits_and_one_that_does_not_fills_again(mods):
    cached, _ = mods
    fits = 1024  # 4 KB: within the 16 KB cache
    extra_fit = _scalar_cycles(cached, fits, 1, 2) - _scalar_cycles(cached, fits, 1, 1)
    big = 16384  # 64 KB: a pass evicts what the next one reads first (LRU)
    extra_big = _scalar_cycles(cached, big, 1, 2) - _scalar_cycles(cached, big, 1, 1)
    loop_cost = extra_fit - fits * HIT  # basic blocks of one pass per element
    assert extra_big == pytest.approx(big * (loop_cost / fits) + big * HIT + (big / 16) * (FILL - HIT), rel=0.02)


def test_without_the_cache_every_access_costs_a_fill(mods):
    cached, uncached = mods
    more_cached = _scalar_cycles(cached, 2 * N, 1, 1) - _scalar_cycles(cached, N, 1, 1)
    more_uncached = _scalar_cycles(uncached, 2 * N, 1, 1) - _scalar_cycles(uncached, N, 1, 1)
    assert more_uncached - more_cached == pytest.approx(N * (FILL - HIT) * 15 / 16, rel=0.02)


def test_an_aten_cast_in_a_binding_costs_an_eager_device_op_not_host_loops() -> None:
    # the binding casts a bool mask with mask.to(at::kFloat): on the NPU an eager cast kernel
    from tests.ascendc.compat.test_corpus_gaps import (
        MASK_FILL_BINDING,
        MASK_FILL_HOST,
        MASK_FILL_KERNEL,
        MASK_FILL_TILING,
    )

    lib = asc.load_multikernelbench(
        {
            "project_json_src": '[{"op": "MaskFillCustom"}]',
            "host_tiling_src": MASK_FILL_TILING,
            "host_operator_src": MASK_FILL_HOST,
            "kernel_src": MASK_FILL_KERNEL,
            "python_bind_src": MASK_FILL_BINDING,
            "model_src": "class ModelNew:\n    pass\n",
        }
    )
    n = 1 << 16
    x, mask = torch.rand(n), torch.rand(n) > 0.5
    with asc.record_launches() as cast:
        lib.ops.mask_fill(x, mask)
    with asc.record_launches() as plain:
        lib.ops.mask_fill(x, mask.float())
    profile = asc.SOC_PROFILES["Ascend910B2"]
    eager = float(profile.eager_op_launch_s) + n * (1 + 4) / float(profile.hbm_bytes_per_s)
    extra = cast.host_blocks - plain.host_blocks
    assert 0 <= extra < 64  # the cast's allocation, not a basic block per element (n = 65536)
    assert cast.host_s - plain.host_s == pytest.approx(eager + extra * float(profile.host_block_s), rel=1e-6)


UB_SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void ub_kernel(uint32_t n, uint32_t by_ref)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 4096 * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    for (uint32_t i = 0; i < n; ++i) {
        if (by_ref) t(i) = 1.0f;
        else t.SetValue(i, 1.0f);
    }
}

extern "C" void ub_do(uint32_t n, uint32_t by_ref) { ub_kernel<<<1, nullptr, nullptr>>>(n, by_ref); }
"""


def test_a_ub_access_through_operator_call_costs_as_set_value() -> None:
    # the simulator's checks inside LocalTensor::operator() are not kernel basic blocks
    mod = asc.load(UB_SOURCE, name="ub_access.cpp")
    cycles = {}
    for by_ref in (0, 1):
        mod.ub_do(2048, by_ref)
        base = mod.last_run.per_pipe_busy["S"]
        mod.ub_do(4096, by_ref)
        cycles[by_ref] = mod.last_run.per_pipe_busy["S"] - base
    # no dearer than SetValue (whose own checks were never kernel code): the UB access and the loop's
    # own few basic blocks per element
    assert cycles[1] <= cycles[0] and cycles[1] / 2048 <= 8 + 5 * 4


GATHER = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void gather_kernel(GM_ADDR x, GM_ADDR idx, GM_ADDR y, uint32_t n)
{
    GlobalTensor<float> xGm, yGm;
    GlobalTensor<int32_t> iGm;
    xGm.SetGlobalBuffer((__gm__ float*)x);
    iGm.SetGlobalBuffer((__gm__ int32_t*)idx);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    float acc = 0.0f;
    for (uint32_t i = 0; i < n; ++i) acc += xGm.GetValue(iGm.GetValue(i));
    yGm.SetValue(0, acc);
}

extern "C" void gather_do(uint8_t* x, uint8_t* idx, uint8_t* y, uint32_t n)
{
    gather_kernel<<<1, nullptr, nullptr>>>(x, idx, y, n);
}
"""


def _lru_hits(addresses, line=64, sets=1, ways=256):
    """Hits of a set-associative LRU cache over 4-byte accesses (by default 16 KB of 64-byte lines,
    fully associative)."""
    cache = [[] for _ in range(sets)]  # per set: lines, most recently used last
    hits = 0
    for a in addresses:
        ln = a // line
        s = cache[ln % sets]
        if ln in s:
            hits += 1
            s.remove(ln)
        elif len(s) == ways:
            s.pop(0)
        s.append(ln)
    return hits


# fully associative, 4-way (the profile's default) and direct-mapped geometries of the same 16 KB
GEOMETRIES = [(0, 1, 256), (4, 64, 4), (1, 256, 1)]


@pytest.mark.parametrize("ways_cfg,sets,ways", GEOMETRIES, ids=["full", "4way", "direct"])
def test_an_irregular_access_stream_hits_exactly_as_an_lru_cache_does(ways_cfg, sets, ways):
    """Random gathers over 64 KB mixed with a sequential index stream: the cache's hit count is an
    LRU cache's, access for access (the host-side line index must never change a result)."""
    cached = asc.load(GATHER, name="gather.cpp", soc_overrides={"scalar_dcache_ways": ways_cfg})
    uncached = asc.load(GATHER, name="gather.cpp", soc_overrides={"scalar_dcache_bytes": 0})
    torch.manual_seed(0)
    n = 6000
    x = torch.rand(16384)
    idx = torch.randint(0, 16384, (n,), dtype=torch.int32)
    idx[: n // 2] = idx[: n // 2] // 64  # half of them within 256 elements: mostly hits
    busy = []
    for mod in (cached, uncached):
        y = torch.zeros(8)
        mod.gather_do(x, idx, y, n)
        assert y[0].item() == pytest.approx(x[idx.long()].sum().item(), rel=1e-4)
        busy.append(mod.last_run.per_pipe_busy["S"])
    stream = []
    for i in range(n):
        stream += [idx.data_ptr() + 4 * i, x.data_ptr() + 4 * int(idx[i])]
    hits = _lru_hits(stream, sets=sets, ways=ways)  # the final SetValue of y is a fill either way
    assert busy[1] - busy[0] == pytest.approx(hits * (FILL - HIT), rel=1e-9)
