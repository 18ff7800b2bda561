"""Loop sampling inside a block (sampled_simulation(loops=True), the loaders' ``sampled=``):
latency against full simulation, the simulated share's outputs, the fall-backs to full
simulation and the refusal of blocks that wait for each other."""

import pytest
import torch

import kernel_gym.ascendc as asc
from experiments.bench_sampled import RELU
from kernel_gym.ascendc.errors import AscendCFault
from kernel_gym.ascendc.sampling import check_sampled_output, lazy_tensor, sampled_simulation, written_spans

# Block b runs counts[b] rounds of the ReLU tile loop over its own rows: a trip count read from
# an input (the same in a sampled run, as inputs are real data).
COUNTED = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void counted(GM_ADDR x, GM_ADDR y, GM_ADDR counts, uint32_t tile, uint32_t per_block)
{
    GlobalTensor<float> xGm, yGm;
    GlobalTensor<int32_t> cGm;
    uint64_t b = GetBlockIdx();
    xGm.SetGlobalBuffer((__gm__ float*)x + b * per_block, per_block);
    yGm.SetGlobalBuffer((__gm__ float*)y + b * per_block, per_block);
    cGm.SetGlobalBuffer((__gm__ int32_t*)counts, GetBlockNum());
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> qx;
    TQue<QuePosition::VECOUT, 2> qy;
    pipe.InitBuffer(qx, 2, tile * sizeof(float));
    pipe.InitBuffer(qy, 2, tile * sizeof(float));
    int32_t rounds = cGm.GetValue(b);
    for (int32_t i = 0; i < rounds; ++i) {
        LocalTensor<float> xl = qx.AllocTensor<float>();
        DataCopy(xl, xGm[(uint64_t)i * tile], tile);
        qx.EnQue(xl);
        xl = qx.DeQue<float>();
        LocalTensor<float> yl = qy.AllocTensor<float>();
        Relu(yl, xl, (int32_t)tile);
        qy.EnQue(yl);
        qx.FreeTensor(xl);
        yl = qy.DeQue<float>();
        DataCopy(yGm[(uint64_t)i * tile], yl, tile);
        qy.FreeTensor(yl);
    }
}

extern "C" void counted_do(uint32_t blockDim, uint8_t* x, uint8_t* y, uint8_t* counts, uint32_t tile,
                           uint32_t per_block)
{
    counted<<<blockDim, nullptr, nullptr>>>(x, y, counts, tile, per_block);
}
"""

# Halves every element until the tile's first one is below 1: how often depends on the data, and
# the loop reads local memory (GetValue) each round to decide.
HALVING = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void halving(GM_ADDR x, GM_ADDR y, uint32_t tile)
{
    GlobalTensor<float> xGm, yGm;
    uint64_t b = GetBlockIdx();
    xGm.SetGlobalBuffer((__gm__ float*)x + b * tile, tile);
    yGm.SetGlobalBuffer((__gm__ float*)y + b * tile, tile);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tile * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    DataCopy(t, xGm, tile);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);
    for (;;) {
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
        if (t.GetValue(0) < 1.0f) break;
        Muls(t, t, 0.5f, (int32_t)tile);
    }
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(yGm, t, tile);
}

extern "C" void halving_do(uint32_t blockDim, uint8_t* x, uint8_t* y, uint32_t tile)
{
    halving<<<blockDim, nullptr, nullptr>>>(x, y, tile);
}
"""

# Per tile: copy in, a scalar running sum over the tile in UB (operator() reads, SetValue writes),
# copy out. TRIPS_FROM_DATA: the scalar loop's trip count is read from the tile's first element.
PREFIX = r"""
#include "kernel_operator.h"
using namespace AscendC;
#ifndef TRIPS_FROM_DATA
#define TRIPS_FROM_DATA 0
#endif

extern "C" __global__ __aicore__ void prefix(GM_ADDR x, GM_ADDR y, uint32_t tiles, uint32_t tile)
{
    uint64_t b = GetBlockIdx();
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + b * tiles * tile, tiles * tile);
    yGm.SetGlobalBuffer((__gm__ float*)y + b * tiles * tile, tiles * tile);
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> qx;
    TQue<QuePosition::VECOUT, 1> qy;
    pipe.InitBuffer(qx, 1, tile * sizeof(float));
    pipe.InitBuffer(qy, 1, tile * sizeof(float));
    for (uint32_t t = 0; t < tiles; ++t) {
        LocalTensor<float> xl = qx.AllocTensor<float>();
        DataCopy(xl, xGm[(uint64_t)t * tile], tile);
        qx.EnQue(xl);
        xl = qx.DeQue<float>();
        LocalTensor<float> yl = qy.AllocTensor<float>();
        uint32_t n = TRIPS_FROM_DATA ? (uint32_t)xl.GetValue(0) : tile;
        float acc = 0.0f;
        for (uint32_t i = 0; i < n; ++i) {
            acc += xl(i);
            yl.SetValue(i, acc);
        }
        for (uint32_t i = n; i < tile; ++i) yl.SetValue(i, 0.0f);
        qy.EnQue(yl);
        qx.FreeTensor(xl);
        yl = qy.DeQue<float>();
        DataCopy(yGm[(uint64_t)t * tile], yl, tile);
        qy.FreeTensor(yl);
    }
}

extern "C" void prefix_do(uint32_t blockDim, uint8_t* x, uint8_t* y, uint32_t tiles, uint32_t tile)
{
    prefix<<<blockDim, nullptr, nullptr>>>(x, y, tiles, tile);
}
"""

# Blocks 1.. run a tile loop, then block 1 signals block 2 (IBSet / IBWait); block 0 ends at once.
SIGNALS_AFTER_LOOP = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void signals(GM_ADDR x, GM_ADDR y, uint32_t tile, uint32_t rounds)
{
    uint64_t b = GetBlockIdx();
    if (b == 0) return;
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + b * tile * rounds, tile * rounds);
    yGm.SetGlobalBuffer((__gm__ float*)y + b * tile * rounds, tile * rounds);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tile * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    for (uint32_t i = 0; i < rounds; ++i) {
        DataCopy(t, xGm[i * tile], tile);
        PipeBarrier<PIPE_ALL>();
        Abs(t, t, (int32_t)tile);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yGm[i * tile], t, tile);
        PipeBarrier<PIPE_ALL>();
    }
    GlobalTensor<int32_t> ws;
    ws.SetGlobalBuffer((__gm__ int32_t*)y, 8);
    LocalTensor<int32_t> ubws = t.ReinterpretCast<int32_t>();
    if (b == 1) IBSet(ws, ubws, 1, 0);
    if (b == 2) IBWait(ws, ubws, 1, 0);
}

extern "C" void signals_do(uint32_t blockDim, uint8_t* x, uint8_t* y, uint32_t tile, uint32_t rounds)
{
    signals<<<blockDim, nullptr, nullptr>>>(x, y, tile, rounds);
}
"""


@pytest.fixture(scope="module")
def relu_mod():
    return asc.load(RELU, name="relu.cpp")


def _relu(mod, dim, n, tile, **sampling):
    torch.manual_seed(0)
    x = torch.randn(n)
    y = torch.full((n,), float("nan"))
    with sampled_simulation(**sampling):
        mod.relu_do(dim, x, y, n, tile)
        spans = written_spans(y)
    return mod.last_run, x, y, spans


@pytest.mark.parametrize("blocks,n,tile", [(8, 3_000_000, 2048), (13, 777_777, 1024), (40, 4_000_037, 1024)])
def test_loop_sampled_latency_is_within_5_percent_of_full_and_in_its_bracket(relu_mod, blocks, n, tile):
    full, _, y_full, _ = _relu(relu_mod, blocks, n, tile, blocks=0)
    sampled, x, y, spans = _relu(relu_mod, blocks, n, tile, blocks=5, loops=True)
    assert full.loop_sampled_blocks == 0 and full.loop_periods_skipped == 0
    # every sampled block but block 0 (which runs in full under loops=True): 2 where the first,
    # middle and last group agree, 4 where the rest of the 5 run
    assert sampled.loop_sampled_blocks >= 2 and sampled.loop_periods_skipped > 0
    assert sampled.latency_s == pytest.approx(full.latency_s, rel=0.05)
    assert sampled.latency_lo_s <= sampled.latency_s <= sampled.latency_hi_s
    assert sampled.gm_bytes == pytest.approx(full.gm_bytes, rel=0.05)
    # what the sampled run stored and tracked is bit for bit what full simulation stored
    assert spans
    for _, lo, hi, _ in spans:
        assert torch.equal(y[lo:hi], y_full[lo:hi])
    # skipped iterations stored nothing: part of the output is still poison
    assert bool(y.isnan().any())


def test_only_the_simulated_iterations_are_checked(relu_mod):
    n, blocks = 40 * 64 * 1024, 40
    x = torch.randn(n)
    y = lazy_tensor((n,), torch.float32, "poison")
    with sampled_simulation(blocks=5, loops=True):
        relu_mod.relu_do(blocks, x, y, n, 1024)
        check = check_sampled_output(y, lambda r0, r1: torch.relu(x[r0:r1]))
    assert check.ok, check.message
    # block 0 in full (1/40 of the output) plus the first iterations of the other sampled blocks
    assert 1 / 40 <= check.output_fraction < 2 / 40


def test_a_trip_count_read_from_the_input_is_followed():
    mod = asc.load(COUNTED, name="counted.cpp")
    tile, per_block, blocks = 1024, 1024 * 200, 6
    counts = torch.tensor([200, 150, 17, 199, 60, 3], dtype=torch.int32)
    x = torch.randn(blocks * per_block)
    runs = {}
    for loops in (False, True):
        y = torch.full_like(x, float("nan"))
        with sampled_simulation(blocks=0, loops=loops):
            mod.counted_do(blocks, x, y, counts, tile, per_block)
        runs[loops] = mod.last_run
    full, sampled = runs[False], runs[True]
    assert sampled.loop_sampled_blocks >= 3
    assert sampled.latency_s == pytest.approx(full.latency_s, rel=0.02)
    # every block's own time, not only the slowest
    for a, b in zip(sampled.block_cycles, full.block_cycles, strict=True):
        assert a == pytest.approx(b, rel=0.02)
    assert sampled.gm_bytes == pytest.approx(full.gm_bytes, rel=0.02)


def test_a_loop_that_reads_local_memory_to_decide_exits_where_full_simulation_does():
    """A skip over periods with scalar reads of local memory skips their timing only: Muls still
    halves the tile, so the loop ends after as many rounds as in full simulation."""
    mod = asc.load(HALVING, name="halving.cpp")
    tile, blocks = 64, 4
    x = torch.full((blocks * tile,), 1.0)
    x[::tile] = torch.tensor([3.0, 1e6, 40.0, 1e9])  # 2, 20, 6 and 30 halvings
    runs = {}
    for loops in (False, "all"):
        y = torch.full_like(x, float("nan"))
        with sampled_simulation(blocks=0, loops=loops):
            mod.halving_do(blocks, x, y, tile)
        runs[loops] = (mod.last_run, y)
    (full, y_full), (sampled, y) = runs[False], runs["all"]
    assert sampled.loop_sampled_blocks >= 2 and sampled.loop_periods_skipped > 0
    assert torch.equal(y, y_full)
    assert sampled.latency_lo_s <= full.latency_s <= sampled.latency_hi_s
    for a, b in zip(sampled.block_cycles, full.block_cycles, strict=True):
        assert a == pytest.approx(b, rel=0.05)


@pytest.fixture(scope="module")
def prefix_mods():
    trips = asc.load("#define TRIPS_FROM_DATA 1\n" + PREFIX, name="prefix_trips.cpp")
    return asc.load(PREFIX, name="prefix.cpp"), trips


def _prefix(mod, x, blocks, tiles, tile, loops):
    y = torch.full_like(x, float("nan"))
    with sampled_simulation(blocks=0, loops=loops):
        mod.prefix_do(blocks, x, y, tiles, tile)
        spans = written_spans(y)
    return mod.last_run, y, spans


def test_a_scalar_read_loop_is_skipped_within_its_bracket(prefix_mods):
    """A tile loop whose body is a scalar loop over UB (GetValue/operator() per element) skips:
    the periods' keys, costs and scalar work agree."""
    mod, _ = prefix_mods
    blocks, tiles, tile = 3, 40, 1024
    torch.manual_seed(0)
    x = torch.randn(blocks * tiles * tile)
    full, y_full, _ = _prefix(mod, x, blocks, tiles, tile, False)
    sampled, y, spans = _prefix(mod, x, blocks, tiles, tile, "all")
    assert sampled.loop_sampled_blocks == blocks and sampled.loop_periods_skipped >= blocks * (tiles - 6)
    assert sampled.loop_fallback == ""
    assert sampled.latency_s == pytest.approx(full.latency_s, rel=0.05)
    assert sampled.latency_lo_s <= sampled.latency_s <= sampled.latency_hi_s
    assert sampled.latency_lo_s <= full.latency_s <= sampled.latency_hi_s
    # periods with scalar reads skip their timing only: the copies and the scalar loop still ran,
    # so the whole output is full simulation's and stays tracked for the check
    assert torch.equal(y, y_full)
    assert sum(hi - lo for _, lo, hi, _ in spans) == x.numel()


def _trips(tiles, tile, counts):
    x = torch.rand(tiles * tile)
    for t in range(tiles):
        x[t * tile] = float(counts[t])  # the tile's scalar trip count
    return x


def test_a_trip_count_read_from_local_data_stops_the_skip_where_it_changes(prefix_mods):
    """Equal trip counts for the first tiles start a skip; the first skipped tile whose scalar work
    differs stops it (counts of basic blocks and reads per period), and the bracket holds the full
    latency."""
    _, mod = prefix_mods
    tiles, tile = 40, 1024
    counts = [300] * 8 + [900] * 6 + [50, 700] * 13
    x = _trips(tiles, tile, counts)
    full, y_full, _ = _prefix(mod, x, 1, tiles, tile, False)
    sampled, y, _ = _prefix(mod, x, 1, tiles, tile, "all")
    assert sampled.loop_periods_skipped > 0
    assert "differed" in sampled.loop_fallback
    assert sampled.latency_s == pytest.approx(full.latency_s, rel=0.01)
    assert sampled.latency_lo_s <= full.latency_s <= sampled.latency_hi_s
    assert torch.equal(y, y_full)


def test_scalar_work_that_differs_every_tile_is_not_skipped(prefix_mods):
    _, mod = prefix_mods
    tiles, tile = 30, 1024
    x = _trips(tiles, tile, [100 + 37 * (t % 9) for t in range(tiles)])
    full, _, _ = _prefix(mod, x, 1, tiles, tile, False)
    sampled, _, _ = _prefix(mod, x, 1, tiles, tile, "all")
    assert sampled.loop_periods_skipped == 0 and sampled.loop_sampled_blocks == 0
    assert "scalar work differs" in sampled.loop_fallback
    assert sampled.block_cycles == full.block_cycles


def test_blocks_that_wait_for_each_other_stop_loop_sampling_or_are_refused():
    mod = asc.load(SIGNALS_AFTER_LOOP, name="signals.cpp")
    tile, rounds, blocks = 1024, 40, 3
    x = torch.randn(blocks * tile * rounds)
    y = torch.zeros_like(x)
    mod.signals_do(blocks, x, y, tile, rounds)  # in full: fine
    assert torch.equal(y[tile * rounds :], x[tile * rounds :].abs())
    with sampled_simulation(blocks=0, loops=True), pytest.raises(AscendCFault, match="cannot be loop sampled") as err:
        mod.signals_do(blocks, x, y, tile, rounds)
    assert err.value.error_class == "unsupported_api"
    assert "loops=False" in str(err.value)


def test_a_sync_all_kernel_falls_back_to_full_simulation():
    src = RELU.replace("op.Process();", "SyncAll();\n    op.Process();")
    mod = asc.load(src, name="relu_sync.cpp")
    n, blocks = 8 * 64 * 1024, 8
    x = torch.randn(n)
    lat = {}
    for loops in (False, True):
        y = torch.empty(n)
        with sampled_simulation(blocks=0, loops=loops):
            mod.relu_do(blocks, x, y, n, 1024)
        lat[loops] = mod.last_run
    assert lat[True].loop_sampled_blocks == 0
    assert "wait for each other" in lat[True].loop_fallback
    assert lat[True].latency_s == lat[False].latency_s


@pytest.mark.parametrize("loops", [True, "all"])
def test_the_full_latency_lies_inside_the_loop_sampled_bracket(relu_mod, loops):
    """The bracket widens by one period per skip (state the periods do not carry: caches, queue
    slots), so it holds the full latency even where the periods cost exactly the same."""
    for blocks, n, tile in [(8, 3_000_000, 2048), (1, 64 * 1024, 1024), (13, 777_777, 1024)]:
        full, _, _, _ = _relu(relu_mod, blocks, n, tile, blocks=0)
        sampled, _, _, _ = _relu(relu_mod, blocks, n, tile, blocks=0, loops=loops)
        if sampled.loop_periods_skipped == 0:
            assert loops is True and blocks == 1  # a lone block 0 runs in full unless loops="all"
            continue
        if sampled.bound == "pipe":  # a memory bound is set by the bytes moved, which skipped periods repeat exactly
            assert sampled.latency_lo_s < sampled.latency_hi_s
        assert sampled.bound == full.bound, (blocks, sampled.bound)
        assert sampled.latency_lo_s <= full.latency_s <= sampled.latency_hi_s
        assert sampled.latency_hi_s - sampled.latency_lo_s < 0.05 * full.latency_s


def test_the_loaders_take_sampled():
    with pytest.raises(ValueError, match="sampled=1"):
        asc.load(RELU, name="relu.cpp", sampled=1)
    mod = asc.load(RELU, name="relu.cpp", sampled=True)
    n, blocks = 40 * 64 * 1024, 40
    x = torch.randn(n)
    y = torch.full((n,), float("nan"))
    mod.relu_do(blocks, x, y, n, 1024)
    r = mod.last_run
    assert r.blocks_run == 3 and r.blocks_skipped == 37 and r.loop_sampled_blocks >= 2
    assert r.latency_lo_s <= r.latency_s <= r.latency_hi_s
    # the spans stay readable after the call: the caller checks the simulated share
    check = check_sampled_output(y, lambda r0, r1: torch.relu(x[r0:r1]))
    assert check.ok, check.message
    # a caller's own sampled_simulation wins over the option
    with sampled_simulation(blocks=0):
        mod.relu_do(blocks, x, y, n, 1024)
    assert mod.last_run.blocks_run == blocks and mod.last_run.loop_sampled_blocks == 0


def test_the_loaders_option_loop_samples_block_0_and_steps_down_where_blocks_wait():
    """sampled= runs loops="all" with run_with_loop_fallback: a one-block launch costs its first
    and last iterations; a kernel whose block 0 skips and then waits (SyncAll) reruns with block
    0 in full and says why, rather than failing."""
    mod = asc.load(RELU, name="relu.cpp", sampled=True)
    n, tile = 64 * 1024, 1024
    x = torch.randn(n)
    y = torch.full((n,), float("nan"))
    mod.relu_do(1, x, y, n, tile)
    r = mod.last_run
    assert r.blocks_run == 1 and r.loop_sampled_blocks == 1 and r.loop_periods_skipped > 0
    sync = asc.load(RELU.replace("op.Process();", "op.Process();\n    SyncAll();"), name="relu_sync.cpp", sampled=True)
    n, blocks = 5 * 64 * 1024, 5  # every block runs (5 groups): SyncAll forbids block sampling
    x = torch.randn(n)
    y = torch.full((n,), float("nan"))
    sync.relu_do(blocks, x, y, n, tile)
    r = sync.last_run
    assert not r.faults and "wait for each other" in r.loop_fallback
    check = check_sampled_output(y, lambda r0, r1: torch.relu(x[r0:r1]))
    assert check.ok, check.message


def test_load_op_project_takes_sampled():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "solutions" / "ascend_op_projects" / "add_custom"
    files = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}
    op = asc.load_op_project(files, sampled=True)
    n = 8 * 8 * 8192  # 8 blocks of 8 tiles (the project's tiling), the largest tile its UB holds
    x = lazy_tensor((n,), torch.float32, "normal", seed=1)  # lazy inputs are passed without a copy
    y = lazy_tensor((n,), torch.float32, "normal", seed=2)
    z = op(x, y)
    r = op.last_run
    assert r.blocks_run == 3 and r.blocks_skipped == 5 and r.loop_sampled_blocks >= 1
    check = check_sampled_output(z, lambda r0, r1: x[r0:r1] + y[r0:r1])
    assert check.ok, check.message
    assert 0 < check.output_fraction < 0.5


def test_loops_all_samples_block_0_too(relu_mod):
    """loops="all": a launch of one block costs its first and last iterations, not all of them."""
    n, tile = 64 * 1024, 1024
    full, _, y_full, _ = _relu(relu_mod, 1, n, tile, blocks=0)
    kept, _, _, _ = _relu(relu_mod, 1, n, tile, blocks=0, loops=True)
    sampled, _, y, spans = _relu(relu_mod, 1, n, tile, blocks=0, loops="all")
    assert kept.loop_sampled_blocks == 0  # loops=True keeps block 0 in full
    assert sampled.loop_sampled_blocks == 1 and sampled.loop_periods_skipped > 0
    assert sampled.latency_s == pytest.approx(full.latency_s, rel=0.05)
    assert sampled.latency_lo_s <= sampled.latency_s <= sampled.latency_hi_s
    # the iterations before the skip are tracked and stored what full simulation stored
    assert spans and sum(hi - lo for _, lo, hi, _ in spans) < n // 2
    for _, lo, hi, _ in spans:
        assert torch.equal(y[lo:hi], y_full[lo:hi])
    assert bool(y.isnan().any())
    with pytest.raises(ValueError, match="False, True, 'all' or 'all_checked'"), sampled_simulation(loops="some"):
        pass


def test_run_with_loop_fallback_steps_down_where_blocks_wait_for_each_other(relu_mod):
    from kernel_gym.ascendc.sampling import run_with_loop_fallback

    # block 0 skips its loop, then waits for the others: refused under "all", fine with block 0 in full
    mod = asc.load(RELU.replace("op.Process();", "op.Process();\n    SyncAll();"), name="relu_sync_after.cpp")
    n, blocks = 8 * 64 * 1024, 8
    x = torch.randn(n)

    def run(loops):
        y = torch.full((n,), float("nan"))
        with sampled_simulation(blocks=0, loops=loops):
            mod.relu_do(blocks, x, y, n, 1024)
        return mod.last_run

    with pytest.raises(AscendCFault, match="cannot be loop sampled"):
        run("all")
    report, loops = run_with_loop_fallback(run)
    assert loops is True and "wait for each other" in report.loop_fallback
    # a refusal in every mode but the last ends in full simulation; other errors are not retried
    sig = asc.load(SIGNALS_AFTER_LOOP, name="signals.cpp")
    xs = torch.randn(3 * 1024 * 40)
    ys = torch.zeros_like(xs)

    def run_signals(loops):
        with sampled_simulation(blocks=0, loops=loops):
            sig.signals_do(3, xs, ys, 1024, 40)
        return sig.last_run

    report, loops = run_with_loop_fallback(run_signals)
    assert loops is False and report.loop_sampled_blocks == 0
    calls = []

    def broken(loops):
        calls.append(loops)
        raise RuntimeError("not a refusal")

    with pytest.raises(RuntimeError, match="not a refusal"):
        run_with_loop_fallback(broken)
    assert calls == ["all"]


def test_the_matmul_api_block_loop_is_sampled():
    """IterateAll issues every base block from the caller's one call site: each block and each
    write-out is a loop event of its own, so the block loop forms a period and is skipped."""
    from tests.ascendc.test_matmul_api import HOST, KERNEL, TILING_H

    # IterateAll straight to GM, without the epilogue that rewrites C row by row
    epilogue = "LocalTensor<float> row = outQue.AllocTensor<float>();"
    assert epilogue in KERNEL
    kernel = KERNEL.replace(epilogue, "return;\n" + epilogue)
    files = {"op_host/matmul_custom_tiling.h": TILING_H, "op_host/matmul_custom.cpp": HOST}
    op = asc.load_op_project({**files, "op_kernel/matmul_custom.cpp": kernel})
    m, k, n = 1024, 64, 1024  # per core 16 x 16 base blocks of 64 x 64 (aiv=1: one AIV drives the cube)
    torch.manual_seed(0)
    a, b, bias = torch.randn(m, k).half(), torch.randn(n, k).half(), torch.randn(n)
    runs = {}
    for loops in (False, "all"):
        with sampled_simulation(blocks=0, loops=loops):
            c = op(a, b, bias, alpha=0.2, transpose_b=True, aiv=1)
            spans = written_spans(c)
        runs[loops] = (op.last_run, c, spans)
    full, c_full, _ = runs[False]
    sampled, c, spans = runs["all"]
    assert not full.faults and full.loop_periods_skipped == 0
    torch.testing.assert_close(c_full, a.float() @ b.float().t() + bias, rtol=1e-4, atol=1e-3)
    assert sampled.loop_sampled_blocks >= 1 and sampled.loop_periods_skipped >= 200
    assert sampled.latency_s == pytest.approx(full.latency_s, rel=0.01)
    assert sampled.latency_lo_s <= full.latency_s <= sampled.latency_hi_s
    # a block's GM bytes are counted once it is not skipped, so the skipped periods' bytes are the
    # template's and the event that ends the skip brings only its own
    assert (sampled.gm_read_bytes, sampled.gm_write_bytes) == (full.gm_read_bytes, full.gm_write_bytes)
    # what was stored before the skip (the tracked spans) is the full run's; skipped blocks stored nothing
    assert spans and sum(hi - lo for _, lo, hi, _ in spans) < m * n // 2
    for _, lo, hi, _ in spans:
        assert torch.equal(c.flatten()[lo:hi], c_full.flatten()[lo:hi])


# Block b stores relu(x) over its `per` elements with one DataCopy, then zeroes the first half
# of them `chunk` elements at a time: a masking pass over its own output (as
# MatmulForUpperTriangularMatrices zeroes the strict lower part of a tile its matmul stored).
RELU_THEN_MASK = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void relu_mask(GM_ADDR x, GM_ADDR y, uint32_t per, uint32_t chunk)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x + GetBlockIdx() * per, per);
    yGm.SetGlobalBuffer((__gm__ float*)y + GetBlockIdx() * per, per);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf, zero;
    pipe.InitBuffer(buf, per * sizeof(float));
    pipe.InitBuffer(zero, chunk * sizeof(float));
    LocalTensor<float> t = buf.Get<float>(), z = zero.Get<float>();
    DataCopy(t, xGm, per);
    PipeBarrier<PIPE_ALL>();
    Relu(t, t, (int32_t)per);
    Duplicate(z, 0.0f, (int32_t)chunk);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, t, per);
    PipeBarrier<PIPE_ALL>();
    for (uint32_t off = 0; off < per / 2; off += chunk) {
        DataCopy(yGm[off], z, chunk);
        PipeBarrier<PIPE_ALL>();
    }
}

extern "C" void relu_mask_do(uint32_t blockDim, uint8_t* x, uint8_t* y, uint32_t per, uint32_t chunk)
{
    relu_mask<<<blockDim, nullptr, nullptr>>>(x, y, per, chunk);
}
"""


def test_a_loop_that_overwrites_checked_output_is_not_skipped():
    # Skipping the masking loop would leave relu values where the full run has zeros, inside the
    # span the block's first store put under the check: the loop runs in full instead, and every
    # checked element equals the full run's.
    mod = asc.load(RELU_THEN_MASK, name="relu_mask.cpp")
    blocks, per, chunk = 8, 16384, 64
    x = torch.randn(blocks * per)
    full = torch.full((blocks * per,), float("nan"))
    mod.relu_mask_do(blocks, x, full, per, chunk)
    assert (full.view(blocks, per)[:, : per // 2] == 0).all()
    y = torch.full((blocks * per,), float("nan"))
    with sampled_simulation(blocks=4, loops="all"):
        mod.relu_mask_do(blocks, x, y, per, chunk)
        spans = written_spans(y)
    assert spans and all(torch.equal(y[lo:hi], full[lo:hi]) for _, lo, hi, _ in spans)
    assert "overwrite what the block stored before" in mod.last_run.loop_fallback
    assert sum(hi - lo for _, lo, hi, _ in spans) == 3 * per  # the first stage of 4 groups agrees
