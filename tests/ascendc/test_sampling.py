"""Sampled simulation (kernel_gym.ascendc.sampling): latency against full simulation,
correctness of the sampled share, lazy GM, and the 12 GiB memory bound."""

import json
import os
import subprocess
import sys

import pytest
import torch

import kernel_gym.ascendc as asc
from experiments.bench_sampled import RELU, ROW_SUM
from kernel_gym.ascendc.errors import AscendCFault
from kernel_gym.ascendc.sampling import (
    check_sampled_output,
    lazy_stats,
    lazy_tensor,
    sampled_simulation,
    untracked_store_bytes,
    written_spans,
)
from tests.ascendc import kernels

SYNC_ALL = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void twice(GM_ADDR y)
{
    GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float*)y, GetBlockNum());
    yGm.SetValue(GetBlockIdx(), 1.0f);
    SyncAll();
    yGm.SetValue(GetBlockIdx(), 2.0f);
}

extern "C" void twice_do(uint32_t blockDim, uint8_t* y) { twice<<<blockDim, nullptr, nullptr>>>(y); }
"""


# Grid-stride ReLU: block b takes tiles b, b + blocks, b + 2 blocks, ... (its stores interleave
# with the other blocks'); n a multiple of the tile.
GRID_STRIDE_RELU = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void relu_strided(GM_ADDR x, GM_ADDR y, uint32_t n, uint32_t tile)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, n);
    yGm.SetGlobalBuffer((__gm__ float*)y, n);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, tile * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    for (uint32_t i = GetBlockIdx(); i < n / tile; i += GetBlockNum()) {
        DataCopy(t, xGm[i * tile], tile);
        PipeBarrier<PIPE_ALL>();
        Relu(t, t, (int32_t)tile);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yGm[i * tile], t, tile);
        PipeBarrier<PIPE_ALL>();
    }
}

extern "C" void relu_strided_do(uint32_t blockDim, uint8_t* x, uint8_t* y, uint32_t n, uint32_t tile)
{
    relu_strided<<<blockDim, nullptr, nullptr>>>(x, y, n, tile);
}
"""


@pytest.fixture(scope="module")
def relu_mod():
    return asc.load(RELU, name="relu.cpp")


@pytest.fixture(scope="module")
def row_sum_mod():
    return asc.load(ROW_SUM, name="row_sum.cpp")


def _run_relu(mod, blocks, n, tile, sample):
    x = torch.randn(n)
    y = torch.full((n,), float("nan"))
    with sampled_simulation(blocks=sample):
        mod.relu_do(blocks, x, y, n, tile)
    return mod.last_run


# (blocks, elements, tile): even splits, uneven tails, more blocks than cores, a lone block
RELU_CASES = [
    (40, 1_000_003, 4096),
    (48, 2_000_000, 4096),
    (40, 40 * 8 * 4096, 4096),
    (13, 777_777, 2048),
    (96, 3_000_000, 4096),
]


@pytest.mark.parametrize("blocks,n,tile", RELU_CASES)
def test_sampled_latency_is_within_5_percent_of_full_simulation(relu_mod, blocks, n, tile):
    full = _run_relu(relu_mod, blocks, n, tile, sample=0)
    sampled = _run_relu(relu_mod, blocks, n, tile, sample=5)
    assert full.blocks_skipped == 0 and full.blocks_run == blocks
    # the first, middle and last group; where they differ the rest of the 5 and those run to
    # locate a step in the work (the blocks with one tile more)
    assert 3 <= sampled.blocks_run < blocks and sampled.blocks_skipped == blocks - sampled.blocks_run
    assert sampled.latency_s == pytest.approx(full.latency_s, rel=0.05)
    assert sampled.latency_lo_s <= full.latency_s * 1.0001 and full.latency_s <= sampled.latency_hi_s * 1.0001
    assert sampled.gm_bytes == pytest.approx(full.gm_bytes, rel=0.05)


def test_a_step_in_the_work_between_sampled_blocks_is_located(relu_mod):
    # 75 tiles over 48 blocks: blocks 0-26 take two tiles, 27-47 one. The five sampled groups are
    # 0, 12, 23, 35 and 47, so giving each skipped block its nearest sampled one's cost puts the
    # step at 30 (78 tiles, 4 % too many bytes); the sampler runs the middle groups between 23
    # and 35 until it has found the step.
    tile = 4096
    full = _run_relu(relu_mod, 48, 75 * tile, tile, sample=0)
    sampled = _run_relu(relu_mod, 48, 75 * tile, tile, sample=5)
    assert full.gm_bytes == 2 * 75 * tile * 4
    assert 5 < sampled.blocks_run < 48
    assert sampled.gm_bytes == full.gm_bytes
    assert sampled.latency_s == pytest.approx(full.latency_s, rel=1e-3)
    assert sampled.latency_lo_s <= full.latency_s <= sampled.latency_hi_s


def test_blocks_of_equal_work_need_no_extra_groups(relu_mod):
    """Staged sampling: the first, middle and last of the 5 groups agree, so the other two are not
    run, and the estimate is the full simulation's."""
    full = _run_relu(relu_mod, 48, 48 * 4096, 4096, sample=0)
    sampled = _run_relu(relu_mod, 48, 48 * 4096, 4096, sample=5)
    assert sampled.blocks_run == 3
    assert sampled.latency_s == pytest.approx(full.latency_s, rel=1e-9)
    assert sampled.gm_bytes == full.gm_bytes


def test_a_tail_in_the_last_block_runs_the_rest_of_the_sample(relu_mod):
    # 48 * 2 - 1 tiles: every block takes two but the last, which takes one. The last group differs
    # from the first and the middle one, so the two other groups of the 5 run as well.
    tile = 4096
    full = _run_relu(relu_mod, 48, (2 * 48 - 1) * tile, tile, sample=0)
    sampled = _run_relu(relu_mod, 48, (2 * 48 - 1) * tile, tile, sample=5)
    assert sampled.blocks_run >= 5
    assert sampled.gm_bytes == full.gm_bytes
    assert sampled.latency_lo_s <= full.latency_s <= sampled.latency_hi_s


# run: blocks run of a sample of 4 groups; the first stage is groups 0, 1/3 and the last, the
# fourth runs where they differ (333 rows over 7 blocks: blocks 0-3 take 48 rows, 4-6 take 47)
@pytest.mark.parametrize("blocks,rows,cols,run", [(40, 1000, 512, 3), (24, 96, 2048, 3), (7, 333, 256, 4)])
def test_sampled_latency_of_a_row_reduction(row_sum_mod, blocks, rows, cols, run):
    x = torch.randn(rows, cols)
    runs = {}
    for sample in (0, 4):
        y = lazy_tensor((rows,), torch.float32, "poison")
        with sampled_simulation(blocks=sample):
            row_sum_mod.row_sum_do(blocks, x, y, rows, cols)
            check = check_sampled_output(y, lambda r0, r1: x[r0:r1].sum(1), atol=1e-3, rtol=1e-4)
        assert check.ok, check.message
        runs[sample] = row_sum_mod.last_run
    assert runs[4].blocks_run == run
    assert runs[4].latency_s == pytest.approx(runs[0].latency_s, rel=0.05)


def test_stream_add_sampled_matches_full():
    mod = asc.load(kernels.STREAM_ADD, name="stream_add.cpp")
    n = 40 * 16 * 2048
    x, y = torch.randn(n), torch.randn(n)
    lat = {}
    for sample in (0, 3):
        z = torch.empty(n)
        with sampled_simulation(blocks=sample):
            mod.add_double(40, x, y, z, n, 2048)
        lat[sample] = mod.last_run.latency_s
    assert lat[3] == pytest.approx(lat[0], rel=0.05)


def test_the_sampled_share_is_checked_against_the_reference(relu_mod):
    n = 40 * 4096 * 3 + 1000
    x = lazy_tensor((n,), torch.float32, "normal", seed=7)
    y = lazy_tensor((n,), torch.float32, "poison")
    with sampled_simulation(blocks=4):
        relu_mod.relu_do(40, x, y, n, 4096)
        check = check_sampled_output(y, lambda a, b: torch.relu(x[a:b]))
        spans = written_spans(y)
    assert check.ok, check.message
    # 4 groups, plus those run to place block 0's extra tile and the last block's shorter share
    ran = {b for b, _, _, _ in spans}
    assert len(spans) == relu_mod.last_run.blocks_run and {0, 13, 26, 39} <= ran and len(ran) < 40
    assert check.elements_checked == sum(hi - lo for _, lo, hi, _ in spans)
    assert 0.05 < check.output_fraction < 0.4
    # a skipped block's share (121 tiles over 40 blocks: block 0 has 4, block b > 0 tiles
    # 3b + 1 to 3b + 3) is still poison, block 0's is not
    b = min(set(range(1, 39)) - ran)
    assert torch.isnan(y[(3 * b + 1) * 4096 : (3 * b + 4) * 4096]).all() and not torch.isnan(y[: 4 * 4096]).any()


def test_a_grid_stride_kernel_is_checked_on_what_its_blocks_stored():
    mod = asc.load(GRID_STRIDE_RELU, name="relu_strided.cpp")
    n, tile = 40 * 4096 * 5, 4096
    x = lazy_tensor((n,), torch.float32, "normal", seed=5)
    y = lazy_tensor((n,), torch.float32, "poison")
    with sampled_simulation(blocks=4):
        mod.relu_strided_do(40, x, y, n, tile)
        check = check_sampled_output(y, lambda a, b: torch.relu(x[a:b]), max_rows=3 * tile)
        spans = written_spans(y)
    assert check.ok, check.message
    # 3 blocks (equal work: the first stage of the 4 agrees) x 5 tiles each, none touching
    # another: 15 spans, other blocks' tiles between them
    assert len(spans) == 15 and all(hi - lo == tile for _, lo, hi, _ in spans)
    assert check.elements_checked == 15 * tile
    assert torch.isnan(y[tile : 2 * tile]).all()  # block 1's tile: skipped, still poison


@pytest.mark.parametrize("defines,reason", [("-DSKIP_WRITE=1", "stored nothing"), ("-DOFF_BY=1", "element")])
def test_a_wrong_or_silent_kernel_fails_the_sampled_check(defines, reason):
    mod = asc.load(RELU, name="relu_bad.cpp", extra_flags=(defines,))
    n = 40 * 4096 * 2
    x = lazy_tensor((n,), torch.float32, "normal", seed=1)
    y = lazy_tensor((n,), torch.float32, "poison")
    with sampled_simulation(blocks=3):
        mod.relu_do(40, x, y, n, 4096)
        check = check_sampled_output(y, lambda a, b: torch.relu(x[a:b]))
    assert not check.ok and reason in check.message


def _same_check(a, b):
    return (a.ok, a.message, a.elements_checked, a.output_fraction, a.max_abs_error, a.spans) == (
        b.ok,
        b.message,
        b.elements_checked,
        b.output_fraction,
        b.max_abs_error,
        b.spans,
    )


@pytest.mark.parametrize("defines", [(), ("-DOFF_BY=1",)])
def test_the_sampled_check_in_small_batches_gives_the_same_result(defines):
    # 1000 elements a batch: spans of 4096 split across batches, a batch ending mid-span; the
    # verdict, the first mismatch named and the worst error are those of one batch per reference call
    mod = asc.load(RELU, name="relu_bad.cpp" if defines else "relu.cpp", extra_flags=defines)
    n = 40 * 4096 * 2
    x = lazy_tensor((n,), torch.float32, "normal", seed=3)
    y = lazy_tensor((n,), torch.float32, "poison")
    with sampled_simulation(blocks=4):
        mod.relu_do(40, x, y, n, 4096)
        whole = check_sampled_output(y, lambda a, b: torch.relu(x[a:b]), max_elements=1 << 30)
        batched = check_sampled_output(y, lambda a, b: torch.relu(x[a:b]), max_elements=1000)
    assert whole.ok == (not defines) and sum(hi - lo for _, lo, hi, _ in whole.spans) > 1000
    assert _same_check(whole, batched)
    with pytest.raises(ValueError, match="max_elements"):
        check_sampled_output(y, lambda a, b: torch.relu(x[a:b]), max_elements=0)


def _peak_rss_since_reset() -> int:
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) << 10 for ln in f if ln.startswith("VmHWM:"))


def _reset_peak_rss() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK), reason="needs Linux's resettable VmHWM")
@pytest.mark.parametrize("compared", ["as slices", "gathered"])
def test_the_sampled_check_of_long_rows_takes_memory_by_the_batch_not_by_the_row(relu_mod, monkeypatch, compared):
    # two rows of 4 M elements, every element stored: one batch per reference call gathered an int64
    # index, the values and their differences for both rows at once (about 30 bytes an element);
    # long spans compared as slices take a few cache-sized buffers whatever the batch
    import kernel_gym.ascendc.sampling as sampling

    if compared == "gathered":
        monkeypatch.setattr(sampling, "_SLICE_MIN", 1 << 62)
    n = 2 * (4 << 20)
    x = torch.randn(n)
    want = torch.relu(x).view(2, -1)  # the reference rows, computed before measuring
    y = lazy_tensor((2, n // 2), torch.float32, "poison")
    with sampled_simulation(blocks=2):
        relu_mod.relu_do(2, x, y, n, 4096)
    peaks, checks = {}, {}
    for batch in (1 << 30, 1 << 19):
        _reset_peak_rss()
        base = _peak_rss_since_reset()
        checks[batch] = check_sampled_output(y, lambda a, b: want[a:b], max_elements=batch)
        peaks[batch] = _peak_rss_since_reset() - base
    assert checks[1 << 19].ok and checks[1 << 19].elements_checked == n
    assert _same_check(checks[1 << 30], checks[1 << 19])
    if compared == "gathered":
        assert peaks[1 << 30] > 150 << 20  # the whole group at once
        assert peaks[1 << 19] < 64 << 20, peaks
    else:
        assert max(peaks.values()) < 16 << 20, peaks


def test_a_lower_lazy_cap_evicts_and_spills_what_a_run_left_resident():
    from kernel_gym.ascendc.sampling import set_lazy_resident_cap

    with sampled_simulation(blocks=2, resident_cap_bytes=1 << 30):
        x = lazy_tensor((8 << 20,), torch.float32, "normal", seed=11)  # 32 MiB, read in full: clean
        y = lazy_tensor((8 << 20,), torch.float32, "poison")
        y.fill_(3.0)  # 32 MiB written: dirty
        total = float(x.double().sum())
    assert lazy_stats().resident_bytes >= 64 << 20
    set_lazy_resident_cap(8 << 20)
    assert lazy_stats().resident_bytes <= 8 << 20
    # nothing lost: evicted input chunks refill identically, spilled output chunks are read back
    assert float(x.double().sum()) == total and float(y.double().sum()) == 3.0 * (8 << 20)
    with pytest.raises(ValueError, match="positive"):
        set_lazy_resident_cap(0)


def test_a_kernel_whose_blocks_wait_for_each_other_cannot_be_sampled():
    mod = asc.load(SYNC_ALL, name="sync_all.cpp")
    y = torch.zeros(40)
    mod.twice_do(40, y)  # in full: fine
    assert torch.equal(y, torch.full((40,), 2.0))
    with sampled_simulation(blocks=4), pytest.raises(AscendCFault, match="cannot be sampled") as err:
        mod.twice_do(40, y)
    assert err.value.error_class == "unsupported_api"
    with sampled_simulation(blocks=40):  # as many as the launch has: runs in full
        mod.twice_do(40, y)


def test_lazy_inputs_are_deterministic_across_eviction():
    with sampled_simulation(blocks=2, resident_cap_bytes=1 << 20):
        x = lazy_tensor((4 << 20,), torch.float32, "normal", seed=11)
        head = x[:1000].clone()
        total = float(x.sum())  # touches 16 MiB: most chunks are evicted on the way
        assert lazy_stats().evictions > 0
        assert torch.equal(x[:1000], head)  # refilled identically
        assert float(x.sum()) == total
    assert abs(float(head.mean())) < 0.15 and 0.85 < float(head.std()) < 1.15
    other = lazy_tensor((1000,), torch.float32, "normal", seed=12)
    assert not torch.equal(other, head)
    ints = lazy_tensor((10000,), torch.int64, "randint", low=3, high=9)
    assert int(ints.min()) == 3 and int(ints.max()) == 8
    half = lazy_tensor((1000,), torch.float16, "uniform", low=-2, high=2)
    assert -2 <= float(half.min()) and float(half.max()) <= 2
    poison = lazy_tensor((10,), torch.int32, "poison")
    assert int(poison.min()) == torch.iinfo(torch.int32).max



@pytest.mark.parametrize(("dtype", "low", "high"), [(torch.bool, 0, 2), (torch.uint8, 0, 16), (torch.int8, -8, 8)])
def test_a_one_byte_randint_input_holds_the_values_of_the_wider_fill(dtype, low, high):
    """One-byte randint inputs (bool masks) take a vectorised fill: they hold what the same stream
    gives an int16 input of the same seed, element by element, across chunks."""
    n = 3 * (64 << 10) + 77
    with sampled_simulation(blocks=2):
        narrow = lazy_tensor((n,), dtype, "randint", seed=31, low=low, high=high).clone()
        wide = lazy_tensor((n,), torch.int16, "randint", seed=31, low=low, high=high).clone()
    want = wide != 0 if dtype == torch.bool else wide.to(dtype)
    assert torch.equal(narrow, want)
    assert int(wide.min()) == low and int(wide.max()) == high - 1


def test_a_lazy_input_read_on_several_threads_is_filled_whole_before_anyone_sees_it():
    """Each chunk fill is written before the chunk becomes readable (through /proc/self/mem): a
    chunk made readable first and filled in place let another of torch's threads read it part-filled
    (two clones of one input differed 1 time in 30). Every fill of a read here is such a fill, and
    clones taken on four threads agree."""
    threads = torch.get_num_threads()
    torch.set_num_threads(4)
    try:
        with sampled_simulation(blocks=2):
            before = lazy_stats()
            n = 3 * (64 << 10) + 77
            clones = [lazy_tensor((n,), torch.int16, "randint", seed=41, low=0, high=1000).clone() for _ in range(8)]
            after = lazy_stats()
    finally:
        torch.set_num_threads(threads)
    fills = after.chunk_fills - before.chunk_fills
    assert fills >= 8 * 2  # (each clone's chunks, read on any thread)
    assert after.whole_fills - before.whole_fills == fills
    assert all(torch.equal(c, clones[0]) for c in clones[1:])

def test_an_input_read_in_order_or_backwards_holds_the_same_values():
    """Chunks filled in either order, under a cap that evicts most of them, hold what the stream
    gives at their offsets; a written element keeps its value among them."""
    chunk = (64 << 10) // 4  # floats per chunk
    with sampled_simulation(blocks=2, resident_cap_bytes=1 << 20):
        x = lazy_tensor((64 * chunk + 100,), torch.float32, "uniform", seed=21, low=-1, high=1)
        forward = torch.cat([x[i : i + chunk].clone() for i in range(0, x.numel(), chunk)])
        assert lazy_stats().evictions > 0
        backward = torch.cat([x[i : i + chunk].clone() for i in reversed(range(0, x.numel(), chunk))][::-1])
        dirty = lazy_tensor((64 * chunk + 100,), torch.float32, "uniform", seed=21, low=-1, high=1)
        dirty[5 * chunk] = 7.0  # a written chunk stops a read-ahead run and keeps its value
        again = dirty.clone()
    assert torch.equal(forward, backward) and forward.numel() == x.numel()
    assert float(forward.abs().max()) <= 1 and float(forward.std()) > 0.5
    assert float(again[5 * chunk]) == 7.0
    assert torch.equal(again[: 5 * chunk], forward[: 5 * chunk]) and torch.equal(
        again[5 * chunk + 1 :], forward[5 * chunk + 1 :]
    )


def test_a_write_to_a_lazy_input_survives_eviction():
    with sampled_simulation(blocks=2, resident_cap_bytes=1 << 20):
        x = lazy_tensor((4 << 20,), torch.float32, "normal", seed=3)
        x[:10] = 42.0
        x.sum()  # pushes the clean chunks out
        assert torch.equal(x[:10], torch.full((10,), 42.0))


@pytest.mark.timeout(120, method="thread")  # the livelock this guards against never returns
@pytest.mark.parametrize("cap", [1 << 20, 0])
def test_written_output_does_not_starve_input_chunks(cap):
    """The resident cap bounds clean input chunks only: once more than the cap of output was
    written, an input chunk used to be evicted as soon as it was filled, and the access that
    faulted it in faulted again forever (Softmax, Cumsum at published shapes never finished)."""
    with sampled_simulation(blocks=2, resident_cap_bytes=cap):
        y = lazy_tensor((1 << 20,), torch.float32, "poison")
        y.fill_(1.0)  # 4 MiB of written output, above the cap
        x = lazy_tensor((1 << 20,), torch.float32, "normal", seed=5)
        total = float(x.sum())  # every input chunk filled, most evicted on the way
        assert float(x.sum()) == total  # and refilled identically
        assert lazy_stats().evictions > 0
        assert float(y.sum()) == float(1 << 20)  # the written output is kept (spilled and read back)


def test_written_output_counts_against_the_resident_cap():
    """Written chunks up to three quarters of the cap stay resident; clean input chunks make room
    for them down to a quarter of the cap, so a kernel that writes much output holds about the
    cap, not the cap plus its output."""
    before = lazy_stats().resident_bytes
    with sampled_simulation(blocks=2, resident_cap_bytes=16 << 20):
        y = lazy_tensor((6 << 18,), torch.float32, "poison")
        y.fill_(1.0)  # 6 MiB written: under the 12 MiB of written chunks kept resident
        x = lazy_tensor((4 << 20,), torch.float32, "normal", seed=6)
        total = float(x.sum())  # 16 MiB of input read once: at most 10 MiB of it stays
        held = lazy_stats().resident_bytes - before
        assert (6 << 20) <= held <= (16 << 20) + (64 << 10)
        assert float(x.sum()) == total  # refilled identically
        assert float(y.sum()) == float(6 << 18)


def test_written_output_beyond_the_cap_is_spilled_and_read_back():
    """GroupNorm's sampled blocks store 4.7 GB at its published shape: written chunks above three
    quarters of the cap go to a temporary file, oldest first, and come back intact when touched,
    so the resident lazy bytes stay near the cap (they held all 4.7 GB: 5.7 GiB peak RSS)."""
    before = lazy_stats()
    cap = 4 << 20
    with sampled_simulation(blocks=2, resident_cap_bytes=cap):
        y = lazy_tensor((8 << 20,), torch.float32, "poison")  # 32 MiB
        want = torch.arange(8 << 20, dtype=torch.float32)
        y.copy_(want)
        now = lazy_stats()
        assert now.spilled_bytes - before.spilled_bytes >= (32 << 20) - cap
        assert now.resident_bytes - before.resident_bytes <= cap + (128 << 10)
        assert torch.equal(y, want)  # read back from the file, every chunk
        y[:10] = -1.0  # a chunk read back is written again: spilled again, then read back again
        y[(4 << 20) :] += 1.0
        assert lazy_stats().resident_bytes - before.resident_bytes <= cap + (128 << 10)
        want[:10] = -1.0
        want[(4 << 20) :] += 1.0
        assert torch.equal(y, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16])
def test_a_sparsely_written_output_spills_only_the_blocks_it_wrote(dtype):
    """A grid-stride kernel stores a small tile into every 64 KiB chunk of its output (RmsNorm at
    its published shape): only the 1 KiB blocks that differ from the poison go to the spill file,
    and every byte, written or poison, reads back as it was."""
    bits = {4: torch.int32, 2: torch.int16}  # compared bit for bit: the poison is a NaN

    before = lazy_stats()
    with sampled_simulation(blocks=2, resident_cap_bytes=2 << 20):
        y = lazy_tensor(((16 << 20) // dtype.itemsize,), dtype, "poison")  # 16 MiB: 256 chunks
        expected = y[:1].clone().expand(y.numel()).clone()  # the poison everywhere
        at = torch.arange(0, y.numel(), (64 << 10) // dtype.itemsize) + 300  # in each chunk's first block
        twice = at[:4] + 2048 // dtype.itemsize  # a second block in four of them
        for t in (y, expected):
            t[at] = 7
            t[twice] = 7
        spilled = lazy_stats().spilled_bytes - before.spilled_bytes
        assert 200 * 1024 <= spilled <= 260 * 1024, spilled  # not the 16 MiB of whole chunks
        assert torch.equal(y.view(bits[dtype.itemsize]), expected.view(bits[dtype.itemsize]))


BIG = """
import json, resource, sys, time, torch
import kernel_gym.ascendc as asc
from kernel_gym.ascendc.sampling import check_sampled_output, lazy_tensor, sampled_simulation
sys.path.insert(0, sys.argv[1])
from experiments.bench_sampled import RELU
mod = asc.load(RELU, name="relu.cpp")
t0 = time.time()
with sampled_simulation(blocks=5):
    x = lazy_tensor((4096, 393216), torch.float32, "normal", seed=3)  # KernelBench's ReLU shape
    y = lazy_tensor((4096, 393216), torch.float32, "poison")
    mod.relu_do(40, x, y, x.numel(), 8192)
    check = check_sampled_output(y, lambda r0, r1: torch.relu(x[r0:r1]), max_rows=128)
r = mod.last_run
print(json.dumps({"ok": check.ok, "msg": check.message, "gib": (x.numel() + y.numel()) * 4 / 2**30,
                  "rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "s": time.time() - t0,
                  "latency_s": r.latency_s, "lo": r.latency_lo_s, "hi": r.latency_hi_s, "gm": r.gm_bytes}))
"""


@pytest.mark.slow
def test_a_12_gib_elementwise_kernel_stays_under_4_gib():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, "-c", BIG, root], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    res = json.loads(p.stdout.strip().splitlines()[-1])
    assert res["ok"], res["msg"]
    assert res["gib"] >= 12 and res["rss_gib"] <= 4.0, res
    # every byte of the kernel's traffic counted at the HBM bound: 2 x 6.4 GB at 1.6 TB/s
    assert res["gm"] == pytest.approx(2 * 4096 * 393216 * 4, rel=0.01)
    assert res["lo"] <= res["latency_s"] <= res["hi"]


def test_fixpipe_stores_are_tracked_with_the_race_detector_off():
    """Written spans come from every store, also with the race detector off (the calibration runs
    so): Fixpipe's and the Matmul API's plain GM stores are recorded through record_store, which
    skipped them then (a correct batched matmul 'stored nothing')."""
    from tests.ascendc.test_cube import MATMUL, run_mm

    mod = asc.load(MATMUL, name="cube_matmul_norace.cpp", race_check=False)
    with sampled_simulation(blocks=2):
        c, ref = run_mm(mod, "f16_f32", 40, 48, 64)
        spans = written_spans(c)
    torch.testing.assert_close(c.double(), ref, rtol=2e-3, atol=2e-3 * float(ref.abs().max()))
    assert spans and sum(hi - lo for _, lo, hi, _ in spans) == c.numel()


def test_lazy_inputs_are_drawn_as_the_reference_draws_them() -> None:
    """A kernel checked only on torch.rand inputs (KernelBench's SELU answer, wrong for x < 0)
    must be checked on [0, 1) at published shapes too; randint keeps its range, constants stay."""
    from kernel_gym.ascendc.sampling import input_specs, lazy_inputs

    def get_inputs():
        return [torch.rand(64, 1024), torch.randn(64), torch.randint(3, 9, (256,)), torch.full((8,), 2.5), 7]

    specs = input_specs(get_inputs, seed=11)
    assert [s.get("fill") for s in specs] == ["uniform", "normal", "randint", "uniform", None]
    u, n, k, c, seven = lazy_inputs(specs)
    assert seven == 7
    assert float(u.min()) >= 0.0 and float(u.max()) < 1.0 and 0.45 < float(u.mean()) < 0.55
    assert float(n.min()) < 0.0 < float(n.max())
    assert int(k.min()) >= 3 and int(k.max()) <= 8 and k.dtype == torch.int64
    assert torch.equal(c, torch.full((8,), 2.5))


def test_triangular_inputs_keep_their_zeros() -> None:
    """KernelBench's triangular matmuls draw torch.triu/tril of a draw; a kernel that skips the
    zero tiles is right only on such inputs, so the published-shape check must draw them too."""
    from kernel_gym.ascendc.sampling import input_specs, lazy_inputs

    def get_inputs():
        return [torch.triu(torch.rand(48, 48)), torch.tril(torch.randn(48, 48), diagonal=-1)]

    specs = input_specs(get_inputs, seed=3)
    assert [(s["fill"], s["triangle"], s["diagonal"]) for s in specs] == [
        ("uniform", "upper", 0),
        ("normal", "lower", -1),
    ]
    upper, lower = lazy_inputs(specs)
    assert torch.equal(upper, torch.triu(upper)) and float(upper.diagonal().min()) > 0.0
    assert float(upper.max()) < 1.0 and float(upper.triu(1).abs().sum()) > 0.0
    assert torch.equal(lower, torch.tril(lower, -1)) and bool((lower.diagonal() == 0).all())
    assert torch.equal(lazy_inputs(specs)[0], upper)  # the same values in any process


# One block sums `tiles` tiles of x into a UB accumulator and stores it once, after the loop: under
# loops="all" the loop skips before the only store (RmsNorm's channel loop does the same).
SUM_TILES = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void sum_tiles(GM_ADDR x, GM_ADDR y, uint32_t tile, uint32_t tiles)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, tile * tiles);
    yGm.SetGlobalBuffer((__gm__ float*)y, tile);
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b;
    pipe.InitBuffer(a, tile * sizeof(float));
    pipe.InitBuffer(b, tile * sizeof(float));
    LocalTensor<float> acc = a.Get<float>(), xl = b.Get<float>();
    Duplicate(acc, 0.0f, (int32_t)tile);
    for (uint32_t i = 0; i < tiles; ++i) {
        SetFlag<HardEvent::V_MTE2>(0);
        WaitFlag<HardEvent::V_MTE2>(0);
        DataCopy(xl, xGm[(uint64_t)i * tile], tile);
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        Add(acc, acc, xl, (int32_t)tile);
    }
    SetFlag<HardEvent::V_MTE3>(0);
    WaitFlag<HardEvent::V_MTE3>(0);
    DataCopy(yGm, acc, tile);
}
extern "C" void sum_tiles_do(uint8_t* x, uint8_t* y, uint32_t tile, uint32_t tiles)
{
    sum_tiles<<<1, nullptr, nullptr>>>(x, y, tile, tiles);
}
"""


def test_an_output_stored_only_after_a_loop_skip_is_unchecked_not_a_mismatch():
    """Stores after a block's first loop skip are not tracked (its local data may be stale), so a
    kernel whose only store follows a skipped loop leaves nothing to compare: that is no evidence
    of a wrong output (RmsNorm was reported as 'stored nothing' and counted as mismatched)."""
    mod = asc.load(SUM_TILES, name="sum_tiles.cpp")
    tile, tiles = 1024, 64
    x = torch.randn(tiles * tile)

    def run(loops):
        y = torch.full((tile,), float("nan"))
        with sampled_simulation(blocks=0, loops=loops):
            mod.sum_tiles_do(x, y, tile, tiles)
            return mod.last_run, check_sampled_output(y, lambda r0, r1: x.view(tiles, tile).sum(0)[r0:r1])

    full, check = run(False)
    assert full.loop_sampled_blocks == 0 and check.ok and check.checkable, check.message
    skipped, check = run("all")
    assert skipped.loop_sampled_blocks == 1
    assert not check.ok and not check.checkable
    assert f"stored into the output ({tile * 4} B) only after skipping loop iterations" in check.message
    # a kernel that stores nothing at all is still a failure, and a checkable one
    with sampled_simulation(blocks=0, loops="all"):
        nothing = check_sampled_output(torch.full((tile,), float("nan")), lambda r0, r1: torch.zeros(r1 - r0))
    assert not nothing.ok and nothing.checkable and "stored nothing" in nothing.message


def test_all_checked_keeps_block_0s_work_until_its_first_store():
    """loops="all_checked": block 0's skip before its first store keeps every call's work (only the
    timing is extrapolated), so the store after the skipped loop is right and checked, at the
    latency "all" estimates, where loops=True had to run the whole block in full."""
    mod = asc.load(SUM_TILES, name="sum_tiles.cpp")
    tile, tiles = 1024, 64
    x = torch.randn(tiles * tile)
    runs = {}
    for loops in ("all", "all_checked", False):
        y = torch.full((tile,), float("nan"))
        with sampled_simulation(blocks=0, loops=loops):
            mod.sum_tiles_do(x, y, tile, tiles)
            runs[loops] = mod.last_run, check_sampled_output(y, lambda r0, r1: x.view(tiles, tile).sum(0)[r0:r1])
    (skipped, _), (kept, check), (full, _) = runs["all"], runs["all_checked"], runs[False]
    assert kept.loop_sampled_blocks == 1 and kept.loop_periods_skipped > 0
    assert check.ok and check.checkable and check.elements_checked == tile, check.message
    assert kept.latency_s == skipped.latency_s  # the same extrapolation; only the work differs
    assert kept.latency_lo_s <= full.latency_s <= kept.latency_hi_s
    with pytest.raises(ValueError, match="all_checked"):
        with sampled_simulation(blocks=0, loops="every"):
            pass


# One block stores one scalar per row of x into y inside a loop of API calls, which loop sampling
# skips: the value read back from UB (read_back=1: a timing-only skip, every call's work done) or a
# constant (0: a skip of the calls' work). Conv3dGroupNormMean's per-sample stores sat in such a skip.
ROW_STORES = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void row_stores(GM_ADDR x, GM_ADDR y, uint32_t tile, uint32_t rows,
                                                 uint32_t read_back)
{
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, tile * rows);
    yGm.SetGlobalBuffer((__gm__ float*)y, rows);
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b;
    pipe.InitBuffer(a, tile * sizeof(float));
    pipe.InitBuffer(b, 64);
    LocalTensor<float> xl = a.Get<float>(), s = b.Get<float>();
    for (uint32_t i = 0; i < rows; ++i) {
        PipeBarrier<PIPE_ALL>();
        DataCopy(xl, xGm[(uint64_t)i * tile], tile);
        PipeBarrier<PIPE_ALL>();
        Add(s, xl, xl, 8);
        PipeBarrier<PIPE_ALL>();
        yGm.SetValue(i, read_back ? s.GetValue(0) : 1.0f);
    }
}
extern "C" void row_stores_do(uint8_t* x, uint8_t* y, uint32_t tile, uint32_t rows, uint32_t read_back)
{
    row_stores<<<1, nullptr, nullptr>>>(x, y, tile, rows, read_back);
}
"""


def test_scalar_stores_inside_a_loop_skip_reach_the_check():
    """Every scalar store of a skipped loop lands in the check's accounting: checked where the skip
    did every call's work (timing only), unchecked after a skip of the calls' work; before, stores
    made while a skip ran were in neither, and a kernel whose only stores sat in one was reported as
    storing nothing (a mismatch)."""
    mod = asc.load(ROW_STORES, name="row_stores.cpp")
    tile, rows = 64, 256
    x = torch.randn(rows * tile)
    want = 2 * x.view(rows, tile)[:, 0]
    for read_back in (1, 0):
        y = torch.full((rows,), float("nan"))
        with sampled_simulation(blocks=0, loops="all"):
            mod.row_stores_do(x, y, tile, rows, read_back)
            assert mod.last_run.loop_sampled_blocks == 1  # the loop skipped
            spans = written_spans(y)
            checked = sum(n for _, _, _, n in spans)
            unchecked = untracked_store_bytes(y) // 4
            check = check_sampled_output(y, lambda r0, r1: (want if read_back else torch.ones(rows))[r0:r1])
        assert torch.equal(y, want if read_back else torch.ones(rows))  # every store landed
        if read_back:  # timing only: every store checked
            assert checked == rows and unchecked == 0 and check.ok, (checked, unchecked, check.message)
        else:  # the rows before the skip checked, the rest counted as unchecked
            assert 0 < checked < rows and checked + unchecked == rows and check.ok, (checked, unchecked)


SPILL_UNDER_FSIZE = """
import resource, sys, torch
sys.path.insert(0, sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))  # SIGXFSZ past 1 MiB, not ignored
from kernel_gym.ascendc.sampling import lazy_stats, lazy_tensor, sampled_simulation
with sampled_simulation(blocks=2, resident_cap_bytes=4 << 20):
    y = lazy_tensor((4 << 20,), torch.float32, "poison")  # 16 MiB written: over the cap
    y.fill_(2.0)
    print(float(y.sum()), lazy_stats().spilled_bytes)
"""


def test_no_spill_file_under_a_file_size_limit():
    """The verifier's runner has a file-size limit: a spill past it would raise SIGXFSZ and kill
    the process, so under any limit written chunks stay resident, as before spilling."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p = subprocess.run([sys.executable, "-c", SPILL_UNDER_FSIZE, root], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    total, spilled = p.stdout.split()
    assert float(total) == 2.0 * (4 << 20) and int(spilled) == 0


class _Recorded(torch.nn.Module):
    """A model that records the output size of every call (the reference's cost)."""

    def __init__(self, inner: torch.nn.Module | None, fn=None) -> None:
        super().__init__()
        self.inner, self.fn, self.sizes = inner, fn, []

    def forward(self, *args):
        y = self.inner(*args) if self.inner is not None else self.fn(*args)
        self.sizes.append(y.numel())
        return y


def _tiles_written(want: torch.Tensor, tiles: list[tuple[int, int, int, int, int]]):
    """A NaN-poisoned output with ``tiles`` (core, r0, r1, c0, c1) of ``want`` (2-D) written, and
    the spans a simulation's store tracking would report: one per row of a tile."""
    out = torch.full_like(want, float("nan"))
    n = want.shape[1]
    spans = []
    for uid, r0, r1, c0, c1 in tiles:
        out[r0:r1, c0:c1] = want[r0:r1, c0:c1]
        spans += [(uid, r * n + c0, r * n + c1, c1 - c0) for r in range(r0, r1)]
    return out, spans


def test_a_matmul_tile_check_computes_only_the_tiles_columns(monkeypatch):
    # a sampled matmul's blocks store tiles spread over every row: by rows alone the check computed
    # the whole product; by slabs (rows x the tiles' columns) only what it compares
    import kernel_gym.ascendc.sampling as sampling
    from kernel_gym.verify.correctness import row_reference

    torch.manual_seed(0)
    a, b = torch.randn(64, 16), torch.randn(16, 48)
    model = _Recorded(None, torch.matmul)
    want = a @ b
    out, spans = _tiles_written(want, [(0, 8, 24, 16, 32), (1, 40, 48, 0, 8)])
    monkeypatch.setattr(sampling, "written_spans", lambda t: spans)
    rows = row_reference(model, [a, b])
    assert rows is not None and rows.slab is not None
    model.sizes.clear()
    check = check_sampled_output(out, rows, max_rows=4)
    assert check.ok, check.message
    assert check.elements_checked == 16 * 16 + 8 * 8
    assert max(model.sizes) <= 4 * 16  # never more than max_rows rows of one tile's columns
    by_rows = check_sampled_output(out, lambda r0, r1: want[r0:r1], max_rows=4)
    assert by_rows.ok and by_rows.elements_checked == check.elements_checked
    assert check.max_abs_error == pytest.approx(by_rows.max_abs_error, abs=1e-5)
    # a wrong element in the second tile is found and named, as the row check names it
    out[45, 3] += 1.0
    bad = check_sampled_output(out, rows, max_rows=4)
    assert not bad.ok and bad.message.startswith(f"core 1: element {45 * 48 + 3} is ")
    assert not check_sampled_output(out, lambda r0, r1: want[r0:r1]).ok
    # an unwritten (poisoned) element inside a stored span fails too
    out[45, 3] = float("nan")
    assert not check_sampled_output(out, rows, max_rows=4).ok


def test_channel_slabs_of_a_pooling_and_none_for_dim1_dependent_models(monkeypatch):
    import kernel_gym.ascendc.sampling as sampling
    from kernel_gym.verify.correctness import row_reference

    torch.manual_seed(1)
    x = torch.randn(4, 8, 6, 6)
    pool = _Recorded(torch.nn.AvgPool2d(2))
    rows = row_reference(pool, [x])
    assert rows is not None and rows.slab is not None
    want = torch.nn.functional.avg_pool2d(x, 2)  # (4, 8, 3, 3): a row is 8 channel planes of 9
    flat = torch.full((want.numel(),), float("nan"))
    spans = []
    for uid, r, c0, c1 in [(0, 1, 2, 5), (1, 3, 6, 8)]:  # a block stores channels [c0, c1) of row r
        lo, hi = r * 72 + c0 * 9, r * 72 + c1 * 9
        flat[lo:hi] = want.reshape(-1)[lo:hi]
        spans.append((uid, lo, hi, hi - lo))
    monkeypatch.setattr(sampling, "written_spans", lambda t: spans)
    pool.sizes.clear()
    check = check_sampled_output(flat.view(want.shape), rows)
    assert check.ok, check.message
    assert check.elements_checked == 27 + 18
    assert max(pool.sizes) <= 3 * 9  # one row's touched channels, not the row's 8
    # dim-1 entries that depend on their neighbours or their position: rows only
    assert row_reference(torch.nn.Softmax(dim=1), [x]).slab is None
    cumsum = row_reference(_Recorded(None, lambda t: t.cumsum(1)), [x])
    assert cumsum is not None and cumsum.slab is None
    flipped = row_reference(_Recorded(None, lambda t: t.flip(1)), [x])
    assert flipped is not None and flipped.slab is None
    scale = torch.arange(8.0).view(1, 8, 1, 1)
    per_channel = row_reference(_Recorded(None, lambda t: t * scale), [x])  # a parameter of dim-1 size
    assert per_channel is not None and per_channel.slab is None


def test_a_transposed_convolution_gets_channel_slabs_cut_from_its_weights_dim_1():
    """A transposed convolution's weight is (in, out, k...): its output channels are dim 1, so
    the check computes only the channels the sampled blocks stored (KernelBench level-1
    ConvTransposed3d: 2.5 CPU s per whole row, 64 channels), and a grouped one, whose dim 1 holds
    out/groups, gets none."""
    from kernel_gym.verify.correctness import row_reference

    torch.manual_seed(4)
    x = torch.randn(3, 5, 9, 9)
    for cin, cout in ((5, 7), (5, 5)):  # in != out, and in == out (dim 0 matches too, and is refused)
        deconv = _Recorded(torch.nn.ConvTranspose2d(cin, cout, 3, stride=2, bias=True))
        with torch.no_grad():
            want = deconv.inner(x)
        rows = row_reference(deconv, [x])
        assert rows is not None and rows.slab is not None and rows.slab.width == cout
        assert dict(rows.slab.cuts) == {"inner.weight": 1, "inner.bias": 0}
        deconv.sizes.clear()
        torch.testing.assert_close(rows.slab(1, 3, 2, 4), want[1:3, 2:4])
        assert deconv.sizes == [2 * 2 * want[0, 0].numel()]  # two rows of two channels computed
    grouped = torch.nn.ConvTranspose2d(4, 6, 3, groups=2)
    rows = row_reference(grouped, [x[:, :4]])
    assert rows is not None and rows.slab is None


def test_a_volume_is_probed_on_a_smaller_crop():
    """Three spatial dims are cut to PROBE_EDGE_3D (64^3 made each probe row of a ConvTranspose3d
    cost 2.5 CPU s); the rule found there still slices the real rows and channels."""
    from kernel_gym.verify.correctness import PROBE_EDGE_3D, row_reference

    torch.manual_seed(5)
    x = torch.randn(3, 2, 40, 36, 20)
    conv = _Recorded(torch.nn.ConvTranspose3d(2, 6, (3, 5, 5), stride=2))
    with torch.no_grad():
        want = conv.inner(x)
    rows = row_reference(conv, [x])
    assert rows is not None and rows.slab is not None and rows.slab.width == 6
    edge_out = 2 * (PROBE_EDGE_3D - 1)  # a cropped row's output: 6 x (edge_out + 3) x (edge_out + 5) x 43
    crop_out = 6 * (edge_out + 3) * (edge_out + 5) * (2 * 19 + 5)
    assert conv.sizes and max(conv.sizes) == 2 * crop_out and crop_out < want[0].numel()  # rows 0-1 of the crop
    torch.testing.assert_close(rows(1, 3), want[1:3])
    torch.testing.assert_close(rows.slab(0, 2, 1, 3), want[0:2, 1:3])


def test_the_separability_probe_runs_on_a_spatial_crop():
    """At published shapes two rows of a convolution are GiBs: the probes (rows 0-1 together and
    apart, the channel slabs) run on the inputs cut to 64 entries along each dim past 1, and the
    rules found there are applied to the real inputs."""
    from kernel_gym.verify.correctness import PROBE_EDGE, row_reference

    torch.manual_seed(2)
    x = torch.randn(3, 4, 150, 130)
    conv = _Recorded(torch.nn.Conv2d(4, 6, 3))
    with torch.no_grad():
        want = conv.inner(x)
    rows = row_reference(conv, [x])
    # every output channel reads every input channel, and comes from its own filter: channel slabs
    # cut the filters, not the input
    assert rows is not None and rows.slab is not None and rows.slab.width == 6
    crop_row = 6 * (PROBE_EDGE - 2) ** 2  # an output row of the cropped input
    assert conv.sizes and max(conv.sizes) <= 2 * crop_row < want[0].numel()
    torch.testing.assert_close(rows(1, 3), want[1:3])  # the rule itself slices the real rows
    torch.testing.assert_close(rows.slab(1, 3, 2, 5), want[1:3, 2:5])
    # a pooling's channel slabs, found on the crop, cut the real input's channels
    pool = _Recorded(torch.nn.MaxPool2d(3, 2))
    rows = row_reference(pool, [x])
    assert rows is not None and rows.slab is not None
    assert max(pool.sizes) <= 2 * 4 * ((PROBE_EDGE - 3) // 2 + 1) ** 2
    torch.testing.assert_close(rows.slab(0, 2, 1, 3), torch.nn.functional.max_pool2d(x[0:2, 1:3], 3, 2))
    # a batch mixed at any size is still refused, and a model that does not run on the crop
    # (a Linear over the flattened row) is probed on the real inputs
    assert row_reference(_Recorded(None, lambda t: t - t.mean(0)), [x]) is None
    flat = torch.nn.Linear(4 * 150 * 130, 5)
    dense = _Recorded(None, lambda t: flat(t.flatten(1)))
    rows = row_reference(dense, [x])
    assert rows is not None and max(dense.sizes) == 2 * 5
    with torch.no_grad():
        torch.testing.assert_close(rows(0, 3), flat(x.flatten(1)))


def test_a_linear_separability_probe_reads_the_whole_weight_once(monkeypatch):
    """Rows 0 and 1 apart are compared on the parameter slab's slices where the model's parameters
    are large: each whole-row call of a matmul reads all of its weight (at published shapes 4 GiB
    of lazy memory, refilled per call), a slab only the weight rows of its columns."""
    import kernel_gym.verify.correctness as correctness
    from kernel_gym.verify.correctness import row_reference

    monkeypatch.setattr(correctness, "SLAB_ROWS_MIN_PARAMETER_BYTES", 0)  # this Linear's 0.5 MB counts as large
    torch.manual_seed(3)
    x = torch.randn(8, 32)
    lin = torch.nn.Linear(32, 4096)
    model = _Recorded(lin)
    rows = row_reference(model, [x])
    assert rows is not None and rows.slab is not None and rows.slab.width == 4096
    assert sum(1 for n in model.sizes if n >= 4096) == 1  # rows 0-1 together; the rest are slabs
    with torch.no_grad():
        torch.testing.assert_close(rows.slab(2, 5, 100, 140), lin(x[2:5])[:, 100:140])
    # rows that mix (a batch statistic) are still refused, though the columns slice cleanly
    mixed = _Recorded(None, lambda t: lin(t) - lin(t).mean(0))
    assert row_reference(mixed, [x]) is None
    # and rows mixed only past the probed columns are found by the whole-row comparison of a model
    # without a column rule (a softmax over dim 1)
    assert row_reference(torch.nn.Softmax(dim=1), [x]).slab is None


def test_rows_whose_output_depends_on_the_column_position_are_compared_whole():
    """A tril of a product of lower-triangular matrices: B's column slabs match at the three probed
    columns (the product is zero there for rows 0-1), so rows compared on slabs looked separable and
    the check took a wrong reference (MatmulForLowerTriangularMatrices: a false mismatch). Compared
    whole, row 1 alone keeps one column where rows 0-1 together keep two: not row-separable."""
    from kernel_gym.verify.correctness import row_reference

    torch.manual_seed(4)
    a, b = torch.rand(64, 64).tril(), torch.rand(64, 64).tril()
    assert row_reference(_Recorded(None, lambda x, y: torch.tril(x @ y)), [a, b]) is None


def _wrong_element_spans(row: int) -> list[tuple[int, int, int, int]]:
    """Spans a store tracker could report on an output of rows of ``row`` elements: long ones at odd
    offsets (one across a row end, one across two), short ones, and a run of 8-element spans."""
    spans = [(0, 7, 7 + 40001), (1, row - 5, row + 33000), (2, 2 * row + 101, 2 * row + 134)]
    spans += [(2, 2 * row + 301, 2 * row + 318), (3, 3 * row + 3, 5 * row + 11)]
    spans += [(4, 5 * row + 16 * k + 5, 5 * row + 16 * k + 13) for k in range(300)]
    return [(uid, lo, hi, hi - lo) for uid, lo, hi in spans]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32])
@pytest.mark.parametrize("by", ["rows", "slabs"])
def test_a_wrong_element_anywhere_in_a_span_is_found_as_the_gathered_check_finds_it(monkeypatch, dtype, by):
    # long spans are compared as slices, a chunk at a time, short ones through an index gather:
    # a wrong or poisoned element at a span's ends, at a chunk boundary or in a short span fails,
    # with the verdict, element, worst error and count of the all-gathered comparison
    import kernel_gym.ascendc.sampling as sampling
    from kernel_gym.verify.correctness import row_reference

    torch.manual_seed(2)
    x = (torch.randn(7, 10, 5003) * 100).to(dtype)
    want = torch.relu(x)
    row = want[0].numel()
    rows = row_reference(torch.nn.ReLU(), [x])
    assert rows is not None and rows.slab is not None
    reference = rows if by == "slabs" else (lambda r0, r1: want[r0:r1])
    spans = _wrong_element_spans(row)
    monkeypatch.setattr(sampling, "written_spans", lambda t: spans)
    out = torch.zeros_like(want)
    flat = out.view(-1)
    for _, lo, hi, _ in spans:
        flat[lo:hi] = want.view(-1)[lo:hi]
    chunk = sampling._SLICE_CHUNK

    def both_ways():
        fast = check_sampled_output(out, reference, max_rows=2, max_elements=50000)
        with monkeypatch.context() as m:
            m.setattr(sampling, "_SLICE_MIN", 1 << 62)  # every piece through the index gather
            gathered = check_sampled_output(out, reference, max_rows=2, max_elements=50000)
        assert _same_check(fast, gathered), (fast, gathered)
        return fast

    good = both_ways()
    assert good.ok, good.message
    assert good.elements_checked == sum(hi - lo for _, lo, hi, _ in spans)
    flat[7 + 40001] = 1000  # outside every span: not judged here
    assert both_ways().ok
    wrong = {
        7: 0,  # a span's first element, at an odd offset
        7 + chunk - 1: 0,  # either side of a chunk boundary
        7 + chunk: 0,
        7 + 40000: 0,  # a span's last element
        row: 1,  # the first element of the next row, inside a span across the row end
        2 * row + 133: 2,  # the last element of a short span
        3 * row + 3 + 2 * row: 3,  # the third row of a span across two row ends
        5 * row + 16 * 299 + 12: 4,  # the last 8-element span
    }
    for e, uid in wrong.items():
        keep = flat[e].clone()
        for bad in (keep + 7, float("nan")) if dtype.is_floating_point else (keep + 7,):
            flat[e] = bad
            check = both_ways()
            assert not check.ok and check.message.startswith(f"core {uid}: element {e} is "), (e, check.message)
        flat[e] = keep
    assert both_ways().ok


def _rss_bytes() -> int:
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) << 10 for ln in f if ln.startswith("VmRSS:"))


def test_a_published_shape_linear_layer_is_built_with_lazy_parameters():
    # KernelBench level-2 Matmul_Swish_Scaling's nn.Linear(32768, 32768): a 4 GiB weight that a plain
    # build materialises (and draws); built under LazyParameters it is a lazy region, nothing resident
    from kernel_gym.ascendc.sampling import LazyParameters, is_lazy

    with LazyParameters(seed=1):  # the runtime library and PyTorch's dispatch machinery loaded first
        torch.nn.Linear(16, 16)
    before = _rss_bytes()
    with LazyParameters(seed=3000):
        layer = torch.nn.Linear(32768, 32768)
    assert isinstance(layer.weight, torch.nn.Parameter) and layer.weight.requires_grad
    assert is_lazy(layer.weight) and not is_lazy(layer.bias)  # the bias (128 KiB) is under min_bytes
    assert _rss_bytes() - before < 32 << 20
    bound = 1 / 32768**0.5  # kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as a plain build
    row = layer.weight[12345].detach().clone()
    assert float(row.abs().max()) <= bound and float(row.abs().max()) > 0.9 * bound
    assert abs(float(row.mean())) < 0.05 * bound


def test_a_model_built_under_lazy_parameters_leaves_torch_dynamo_unimported():
    # PyTorch wraps a dispatch mode's __torch_dispatch__ in torch._dynamo.disable, whose first call
    # imports torch._dynamo (2.4 CPU s of every published-shape check); a fresh interpreter tells
    code = (
        "import sys, torch\n"
        "from kernel_gym.ascendc.sampling import LazyParameters\n"
        "with LazyParameters(seed=1, min_bytes=1 << 10):\n"
        "    layer = torch.nn.Conv3d(3, 16, 3)\n"
        "assert layer.weight.shape == (16, 3, 3, 3, 3)\n"
        "print('dynamo' if 'torch._dynamo' in sys.modules else 'no dynamo')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split()[-2:] == ["no", "dynamo"]


def test_lazy_parameters_seeded_by_random_draws_only_ignore_constant_buffers():
    # the verifier's two builds (answer and reference, two processes): a constant buffer one of them
    # allocates, or torch.randn against torch.empty(...).normal_(), leaves the weights alike
    from kernel_gym.ascendc.sampling import LazyParameters, is_lazy

    def build(scratch: bool, in_place: bool) -> tuple[torch.nn.Module, LazyParameters]:
        torch.manual_seed(3)
        with LazyParameters(seed=11, min_bytes=1 << 20, seed_constants=False) as mode:
            net = torch.nn.Module()
            if scratch:
                net.register_buffer("scratch", torch.zeros(1 << 19))  # 2 MiB, lazy, no draw
            net.linear = torch.nn.Linear(1024, 512)
            net.noise = torch.nn.Parameter(torch.empty(512, 1024).normal_() if in_place else torch.randn(512, 1024))
        return net, mode

    (a, mode_a), (b, mode_b) = build(False, False), build(True, True)
    assert is_lazy(a.linear.weight) and is_lazy(b.scratch)
    assert torch.equal(a.linear.weight, b.linear.weight) and torch.equal(a.linear.bias, b.linear.bias)
    assert torch.equal(a.noise, b.noise)
    random_a = [d for d in mode_a.draws if d[3] is not None]
    assert random_a == [d for d in mode_b.draws if d[3] is not None]
    assert [d[3] for d in random_a] == [11, 12] and random_a[0][2].startswith("uniform(")
    # the default (calibrate_timing's): every region takes a seed, so the buffer shifts the weights
    with LazyParameters(seed=11, min_bytes=1 << 20) as mode:
        torch.zeros(1 << 19)
        shifted = torch.nn.Linear(1024, 512)
    assert not torch.equal(shifted.weight, a.linear.weight) and mode.made == 3


def test_lazy_parameters_are_deterministic_and_behave_as_tensors():
    from kernel_gym.ascendc.sampling import LazyParameters, is_lazy

    def build() -> torch.nn.Module:
        with LazyParameters(seed=7, min_bytes=1 << 20):
            net = torch.nn.Sequential(torch.nn.Linear(1024, 512), torch.nn.Linear(512, 8))
            net.register_buffer("scale", torch.full((512, 1024), 0.5))
            net.noise = torch.nn.Parameter(torch.randn(1024, 512))
            net.zero = torch.nn.Parameter(torch.zeros(1024, 512))
        return net

    a, b = build(), build()
    assert is_lazy(a[0].weight) and not is_lazy(a[1].weight)  # 2 MiB lazy, 16 KiB not
    assert torch.equal(a[0].weight, b[0].weight)  # the same seeds: the same values in any build
    assert not torch.equal(a[0].weight, a.noise.t())
    assert bool((a.scale == 0.5).all()) and bool((a.zero == 0).all())
    noise = a.noise.detach()
    assert abs(float(noise.mean())) < 0.01 and 0.98 < float(noise.std()) < 1.02
    x = torch.rand(4, 1024)
    with torch.no_grad():
        want = x @ a[0].weight.detach().clone().t() + a[0].bias
        # (float32 sums in another order: F.linear's kernel is not x @ W.t()'s on every CPU)
        assert torch.allclose(a[0](x), want, rtol=1e-4, atol=1e-5)
        a[0].weight.mul_(2.0)  # any other operation writes the lazy memory, and the values stay
    assert torch.equal(a[0].weight, 2 * b[0].weight)
    with LazyParameters(seed=7, min_bytes=1 << 20):
        plain = torch.nn.Linear(16, 16)  # under min_bytes: PyTorch's own draw
    assert not is_lazy(plain.weight)


@pytest.mark.parametrize("by", ["rows", "slabs"])
def test_an_output_whose_rows_are_not_the_references_fails_the_sampled_check(monkeypatch, by):
    # a mapping that hands the kernel the model's input instead of its leading layer's output: the
    # kernel writes an output of the input's shape, whose offsets would index other elements of the
    # reference's rows (equal values there, such as a clamp's, could pass): named, never compared
    import kernel_gym.ascendc.sampling as sampling
    from kernel_gym.verify.correctness import row_reference

    x = torch.randn(4, 3, 8, 8)
    rows = row_reference(torch.nn.ReLU(), [torch.randn(4, 6, 8, 8)])
    assert rows is not None and rows.slab is not None
    reference = rows if by == "slabs" else (lambda r0, r1: torch.relu(torch.randn(4, 6, 8, 8))[r0:r1])
    out = torch.relu(x)
    monkeypatch.setattr(sampling, "written_spans", lambda t: [(0, 0, 50, 50)])
    check = check_sampled_output(out, reference)
    assert not check.ok and "shape (4, 3, 8, 8)" in check.message and "another number of elements" in check.message
    same = torch.relu(torch.randn(4, 6, 8, 8))  # rows of the reference's size: compared as before
    assert not check_sampled_output(same, lambda r0, r1: torch.relu(same)[r0:r1] + 1).ok
    assert check_sampled_output(same.reshape(4, 6 * 64), lambda r0, r1: torch.relu(same)[r0:r1]).ok


def test_a_linears_columns_are_checked_on_its_weights_rows():
    """A model's output columns that come from its own parameters' rows (a Linear's weight and
    bias, a convolution's filters with a BatchNorm's statistics) are computed from those rows only:
    Matmul_Swish_Scaling's 4 GiB weight was read whole by every reference call of its check. The
    probe refuses what does not commute (a softmax over the columns, a second layer, groups)."""
    from kernel_gym.verify.correctness import row_reference

    torch.manual_seed(0)

    class SwishScaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(64, 96)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.lin(x)
            return y * torch.sigmoid(y) * 2.0

    model, x = SwishScaled(), torch.randn(8, 64)
    rows = row_reference(model, [x])
    assert rows is not None and rows.slab is not None and rows.slab.width == 96
    with torch.no_grad():
        want = model(x)
    torch.testing.assert_close(rows.slab(2, 5, 10, 30), want[2:5, 10:30])
    assert model.lin.weight.shape == (96, 64)  # the model keeps its parameters
    conv = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.BatchNorm2d(16).eval(), torch.nn.ReLU())
    xi = torch.randn(4, 3, 20, 20)
    crows = row_reference(conv, [xi])
    assert crows is not None and crows.slab is not None
    with torch.no_grad():
        torch.testing.assert_close(crows.slab(1, 3, 4, 9), conv(xi)[1:3, 4:9])
    for refused in (
        torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.Softmax(dim=1)),
        torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.ReLU(), torch.nn.Linear(96, 96)),
        torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.GroupNorm(8, 96)),
    ):
        r = row_reference(refused, [x])
        assert r is not None and r.slab is None, refused
