"""DataCopy / DataCopyPad semantics and a multi-block tiled kernel with tails."""

import pytest
import torch

from tests.ascendc.test_vector_ops import _run


def test_datacopy_block_params(misc_mod):
    a = torch.randn(256)
    out = _run(misc_mod, 19, a, p0=4)[:128].view(torch.float32)  # 4 blocks of 8 floats, 1-block GM gap
    assert torch.equal(out, a[:64].view(4, 16)[:, :8].reshape(-1))
    assert torch.equal(_run(misc_mod, 23, a, n=256)[:1024].view(torch.float32), a)  # UB -> UB


def test_datacopypad_gm_to_ub_padding(misc_mod):
    a = torch.arange(32, dtype=torch.float32) + 1
    out = _run(misc_mod, 20, a, s=9.0)[:96].view(torch.float32).view(3, 8)
    # blocks of 5 floats taken every 6 floats (4-byte GM gap), placed after 1 left pad, 2 right pads
    for i in range(3):
        assert out[i].tolist() == [9.0, *a[6 * i:6 * i + 5].tolist(), 9.0, 9.0]
    out = _run(misc_mod, 21, a)[:96].view(torch.float32).view(3, 8)
    for i in range(3):  # no padding value: the dummy tail repeats the block's first element
        blk = a[6 * i:6 * i + 5]
        assert out[i].tolist() == [*blk.tolist(), blk[0].item(), blk[0].item(), blk[0].item()]


def test_datacopypad_ub_to_gm_writes_exact_bytes(misc_mod):
    a = torch.arange(24, dtype=torch.float32) + 1
    out = _run(misc_mod, 22, a, obytes=96)[:96].view(torch.float32).view(3, 8)
    for i in range(3):  # 5 floats from each 32-byte UB block, 12-byte gaps left untouched in GM
        assert out[i].tolist() == [*a[8 * i:8 * i + 5].tolist(), 0.0, 0.0, 0.0]


@pytest.mark.parametrize("total,blocks,tile", [(1000, 3, 64), (12345, 7, 1024), (5, 8, 64), (300001, 40, 2048)])
def test_tiled_multiblock_kernel_with_tails(axpy_mod, total, blocks, tile):
    g = torch.Generator().manual_seed(total)
    x, y = torch.randn(total, generator=g), torch.randn(total, generator=g)
    z = torch.full((total,), 7.0)
    axpy_mod.axpy(blocks, None, x, y, z, total, tile, 1.5)
    torch.testing.assert_close(z, 1.5 * x + y)
    r = axpy_mod.last_run
    assert r.faults == [] and r.warnings == [] and r.num_blocks == blocks
    assert r.gm_bytes == 3 * 4 * total


_BURSTS = """
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void bursts(GM_ADDR x, GM_ADDR y, uint32_t count) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 4096 * 32 + 32);
    LocalTensor<float> t = b.Get<float>();
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 4097 * 8);
    yg.SetGlobalBuffer((__gm__ float*)y, 4097 * 8);
    Duplicate(t, -1.0f, 4097 * 8);
    PipeBarrier<PIPE_ALL>();
    DataCopyParams p;
    p.blockCount = uint16_t(count);  // one 32-byte block per burst, back to back
    p.blockLen = 1;
    DataCopy(t, xg, p);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yg, t, 4097 * 8);
}
extern "C" void run(uint8_t* x, uint8_t* y, uint32_t count) { bursts<<<1, nullptr, nullptr>>>(x, y, count); }
"""


@pytest.mark.parametrize("count,copied", [(4095, 4095), (4096, 0), (4097, 1)])
def test_datacopy_keeps_the_low_12_bits_of_the_burst_count_as_the_npu_does(count, copied):
    """The copy instructions' nBurst is 12 bits wide (documented range [0, 4095]); DataCopyParams
    holds blockCount as a uint16_t, so 4096 bursts reach the NPU as 0 and 4097 as 1. EvoKernel's
    MinReductionOverADimension (passed on a 910B) issues 4096 bursts with a 2 GiB stride: taken at
    face value that read 2 GiB past its input."""
    import kernel_gym.ascendc as asc

    mod = asc.load(_BURSTS, name="bursts.cpp")
    x, y = torch.randn(4097 * 8), torch.zeros(4097 * 8)
    mod.run(x, y, count)
    assert torch.equal(y[: 8 * copied], x[: 8 * copied])
    assert (y[8 * copied :] == -1.0).all()  # the rest of the UB kept what Duplicate wrote
    warnings = [w for w in mod.last_run.warnings if w["error_class"] == "invalid_argument"]
    if count <= 4095:
        assert warnings == []
    else:
        [w] = warnings
        assert f"blockCount {count} is outside [1, 4095]" in w["message"] and f"copies {copied} block" in w["message"]


def test_datacopy_burst_count_past_12_bits_is_a_fault_in_strict_mode():
    import kernel_gym.ascendc as asc

    mod = asc.load(_BURSTS, name="bursts.cpp", align_mode="strict")
    with pytest.raises(asc.InvalidArgument, match="blockCount 4096 is outside"):
        mod.run(torch.randn(4097 * 8), torch.zeros(4097 * 8), 4096)
