"""APIs that asc-devkit declares for every SoC but whose Atlas A2 (dav_c220) implementation is empty:
the region-proposal forms of older NPUs (ProposalConcat, ProposalExtract, RpSort16, MrgSort4) and
Scatter. A kernel that names them builds, as with CANN's A2 toolchain; a call changes nothing on
the NPU, so here it changes nothing either and leaves an ``unsupported_api`` warning naming the API."""

from __future__ import annotations

import torch

import kernel_gym.ascendc as asc

KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void proposals(GM_ADDR x, GM_ADDR y, uint32_t n, uint32_t legacy)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> a, b;
    pipe.InitBuffer(a, 4096);
    pipe.InitBuffer(b, 4096);
    LocalTensor<half> s = a.Get<half>(), d = b.Get<half>();
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, n);
    yGm.SetGlobalBuffer((__gm__ half*)y, n);
    DataCopy(s, xGm, n);
    DataCopy(d, xGm, n);
    PipeBarrier<PIPE_ALL>();
    if (legacy) {  // a path written for an NPU that has the region-proposal instructions
        ProposalConcat(d, s, 2, 4);
        ProposalExtract(d, s, 2, 4);
        RpSort16(d, s, 2);
        uint16_t lens[4] = {16, 16, 16, 16};
        MrgSort4Info info(lens, false, 0b1111, 1);
        MrgSortSrcList<half> list(s, s[128], s[256], s[384]);
        MrgSort4(d, list, info);
        PipeBarrier<PIPE_ALL>();
    }
    Muls(d, d, (half)2.0, n);
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, d, n);
}

extern "C" void run(uint8_t* x, uint8_t* y, uint32_t n, uint32_t legacy)
{
    proposals<<<1, nullptr, nullptr>>>(x, y, n, legacy);
}
"""


def test_region_proposal_apis_build_and_do_nothing_on_a2():
    mod = asc.load(KERNEL, name="a2_noop_proposals.cpp")
    x = torch.randn(512).half()
    for legacy in (0, 1):
        y = torch.zeros(512, dtype=torch.half)
        mod.run(x, y, 512, legacy)
        assert mod.last_run.faults == []
        torch.testing.assert_close(y, x * 2)  # d was only ever what Muls made of x
        warned = " ".join(str(w) for w in mod.last_run.warnings)
        for api in ("ProposalConcat", "ProposalExtract", "RpSort16", "MrgSort4"):
            assert (f"{api} is not supported on Atlas A2" in warned) == bool(legacy), api
