"""Forms found in the public Ascend/samples operator samples, each in a small kernel of our own:
a plain-struct tiling registered with REGISTER_TILING_DEFAULT, ``main(int, char const* argv[])``,
the debug dumps with a ShapeInfo, a host tiling unit that includes its sibling header,
DEVICE_IMPL_OP_OPTILING (tiling sink), device buffers freed and allocated again between launches,
and a tile that runs a few bytes past a tensor inside its NPU allocation."""

from __future__ import annotations

import numpy as np
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.loader import npu_block_bytes, npu_block_tensor

# ------------------------------------------------------------------ an operator project, plain-struct tiling
TILING_H = r"""
#pragma once
#include <cstdint>
struct ScaleTiling {
    uint32_t total;
    uint32_t tile;
    float factor;
};
"""

HOST = r"""
#include "scale_custom_tiling.h"
#include "register/op_def_registry.h"
#include "register/device_op_impl_registry.h"

namespace optiling {
static ge::graphStatus ScaleTilingFunc(gert::TilingContext* context)
{
    ScaleTiling* t = context->GetTilingData<ScaleTiling>();
    t->total = context->GetInputShape(0)->GetOriginShape().GetShapeSize();
    t->tile = TILE;
    t->factor = 3.0f;
    context->SetBlockDim(4);
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
DEVICE_IMPL_OP_OPTILING(ScaleCustom).Tiling(ScaleTilingFunc);
}  // namespace optiling

namespace ops {
class ScaleCustom : public OpDef {
public:
    explicit ScaleCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::ScaleTilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ScaleCustom);
}  // namespace ops
"""

# Each block takes a share rounded up to whole tiles; with total = 4000 and 64-element tiles
# the last block reads and writes 96 elements (384 B) past the tensor's 16000 B: inside the
# NPU allocation (+32 B, rounded up to 512: 16384 B), as on the NPU, where this runs.
KERNEL = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void scale_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(ScaleTiling);
    GET_TILING_DATA(t, tiling);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, t.tile * sizeof(float));
    uint32_t per = (t.total / GetBlockNum() + t.tile - 1) / t.tile * t.tile;
    GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x + per * GetBlockIdx());
    yg.SetGlobalBuffer((__gm__ float*)y + per * GetBlockIdx());
    LocalTensor<float> v = buf.Get<float>();
    ShapeInfo shape;
    for (uint32_t off = 0; off < per; off += t.tile) {
        DataCopy(v, xg[off], t.tile);
        PipeBarrier<PIPE_ALL>();
        Muls(v, v, t.factor, t.tile);
        DumpTensor(v, 1, 8, shape);
        DumpAccChkPoint(v, 2, 0, 8);
        PipeBarrier<PIPE_ALL>();
        DataCopy(yg[off], v, t.tile);
        PipeBarrier<PIPE_ALL>();
    }
}
"""


def _project(tile: int) -> dict[str, str]:
    return {
        "op_host/scale_custom_tiling.h": TILING_H,
        "op_host/scale_custom.cpp": HOST.replace("TILE", str(tile)),
        "op_kernel/scale_custom.cpp": '#include "../op_host/scale_custom_tiling.h"\n' + KERNEL,
    }


def test_plain_struct_tiling_and_a_tile_past_the_tensor_inside_its_allocation() -> None:
    op = asc.load_op_project(_project(tile=64))
    x = torch.randn(4000)
    y = op(x)
    torch.testing.assert_close(y, 3 * x)  # the over-read bytes never reach the tensor
    assert op.last_tiling["block_dim"] == 4


def test_tiles_past_the_allocation_read_poison_and_far_past_it_fault() -> None:
    """Shares of 2048 elements: the last blocks read and write KiB past the 16 KiB tensor. The NPU
    maps device memory in 2 MiB pages and faults on none of it (the Ascend/samples tiling-sink
    sample runs 8 of its 16 vector cores past its tensors): poison is read, writes are dropped,
    the result's own elements are right, and a warning says so.

    Whether such a tile lands in another tensor of the launch depends on where they lie: on the C
    heap, CI once had the output just below x, and block 3's tiles past y wrote into x (a race).
    The op's blocks now each have an NPU page of their own (``npu_block_tensor``), so the tiles past
    the end land in nothing, in any process."""
    op = asc.load_op_project(_project(tile=2048))
    x = torch.randn(4000)
    torch.testing.assert_close(op(x), 3 * x)
    warned = [w for r in op.last_runs for w in r.warnings if w["error_class"] == "gm_out_of_bounds"]
    assert warned and "GM buffer 'x'" in warned[0]["message"]
    assert "writes to them are dropped" in warned[0]["message"]


def test_each_op_block_has_an_npu_page_of_its_own() -> None:
    """No block starts within 2 MiB past another's end, whatever was allocated before."""
    blocks = [npu_block_tensor(torch.randn(n)) for n in (4000, 10, 70000)]
    blocks += [npu_block_tensor(like=((n,), torch.float16)) for n in (4000, 1 << 20)]
    spans = [(b.data_ptr(), b.data_ptr() + npu_block_bytes(b.numel() * b.element_size())) for b in blocks]
    for _, hi in spans:
        assert all(not (hi <= other < hi + (2 << 20)) for other, _ in spans)
    assert float(blocks[3].float().abs().sum()) == 0.0  # a new output block reads as zero, as on a new device page
    # (a copy more than 2 MiB past every buffer still faults: test_direct_launch.py)


# ------------------------------------------------------------------ direct-launch samples
SAMPLE_KERNEL = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void twice(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, n);
    yg.SetGlobalBuffer((__gm__ float*)y, n);
    AscendC::LocalTensor<float> v = buf.Get<float>();
    AscendC::DataCopy(v, xg, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Muls(v, v, 2.0f, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yg, v, n);
}
"""

# const argv, and device buffers freed and allocated again (a later allocation may reuse the
# freed addresses), with a host-only unit in a subfolder that includes its sibling header
SAMPLE_MAIN = r"""
#include <cstdio>
#include "acl/acl.h"
#include "host/sizes.h"
int32_t main(int32_t argc, char const *argv[])
{
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    float host[kCount];
    int bad = 0;
    for (int round = 0; round < 3; ++round) {
        for (uint32_t i = 0; i < kCount; ++i) host[i] = float(i + round);
        uint8_t *x = nullptr, *y = nullptr;
        aclrtMalloc((void **)&x, kCount * sizeof(float) * (round + 1), ACL_MEM_MALLOC_HUGE_FIRST);
        aclrtMalloc((void **)&y, kCount * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
        aclrtMemcpy(x, kCount * sizeof(float), host, kCount * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
        twice<<<1, nullptr, stream>>>(x, y, kCount);
        if (aclrtSynchronizeStream(stream) != ACL_SUCCESS) bad++;
        aclrtMemcpy(host, sizeof(host), y, kCount * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
        for (uint32_t i = 0; i < kCount; ++i) bad += host[i] != 2.0f * float(i + round);
        aclrtFree(x);
        aclrtFree(y);
    }
    printf("%s bad=%d scale=%d\n", argv[0], bad, host_scale());
    return bad;
}
"""

SIZES_H = "#pragma once\n#include <cstdint>\nconstexpr uint32_t kCount = 256;\nint host_scale();\n"
HOST_UNIT = '#include "sizes.h"\nint host_scale() { return int(kCount) / 128; }\n'


def test_const_argv_main_freed_buffers_and_a_host_unit_in_a_subfolder() -> None:
    files = {"twice.cpp": SAMPLE_KERNEL, "main.cpp": SAMPLE_MAIN, "host/sizes.h": SIZES_H, "host/scale.cpp": HOST_UNIT}
    run = asc.run_sample(files)
    assert run.ok, (run.error, run.stdout[-500:], run.stderr[-800:])
    assert "bad=0 scale=2" in run.stdout
    assert len(run.launches) == 3


def test_freeing_a_buffer_that_is_not_device_memory_is_an_error_code() -> None:
    main = r"""
#include <cstdio>
#include "acl/acl.h"
int32_t main() {
    int local = 0;
    void* host = nullptr;
    aclrtMallocHost(&host, 64);
    printf("free(stack)=%d free(host)=%d free(null)=%d\n", aclrtFree(&local), aclrtFree(host), aclrtFree(nullptr));
    aclrtFreeHost(host);
    return 0;
}
"""
    run = asc.run_sample({"twice.cpp": SAMPLE_KERNEL, "main.cpp": main})
    assert run.ok, (run.error, run.stderr[-500:])
    codes = np.array([int(part.split("=")[1]) for part in run.stdout.split()[:3]])
    assert (codes == 100000).all(), run.stdout  # ACL_ERROR_INVALID_PARAM, not a crash


# ------------------------------------------------------------------ outputs an aclnn caller allocates
FIRST_HOST = r"""
#include <cstdint>
#include "register/op_def_registry.h"
namespace optiling {
struct FirstTiling { uint32_t rows; uint32_t cols; };
static ge::graphStatus FirstTilingFunc(gert::TilingContext* context)
{
    FirstTiling* t = context->GetTilingData<FirstTiling>();
    t->rows = context->GetOutputShape(0)->GetOriginShape().GetShapeSize();  // the caller's output decides
    t->cols = context->GetInputShape(0)->GetOriginShape().GetShapeSize() / t->rows;
    context->SetBlockDim(1);
    context->GetWorkspaceSizes(1)[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
namespace ops {
class FirstCustom : public OpDef {  // no InferShape: aclnn callers allocate the output
public:
    explicit FirstCustom(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(optiling::FirstTilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(FirstCustom);
}  // namespace ops
"""

FIRST_KERNEL = r"""
#include "kernel_operator.h"
struct FirstTiling { uint32_t rows; uint32_t cols; };
extern "C" __global__ __aicore__ void first_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    REGISTER_TILING_DEFAULT(FirstTiling);
    GET_TILING_DATA(t, tiling);
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, t.rows * t.cols);
    yg.SetGlobalBuffer((__gm__ float*)y, t.rows);
    for (uint32_t r = 0; r < t.rows; ++r) yg.SetValue(r, xg.GetValue(r * t.cols));
}
"""


def test_outputs_the_caller_allocates_decide_the_output_shape() -> None:
    op = asc.load_op_project({"op_host/first_custom.cpp": FIRST_HOST, "op_kernel/first_custom.cpp": FIRST_KERNEL})
    x = torch.randn(13, 40)
    y = torch.full((13, 1), -1.0)
    got = op(x, outputs=[y])
    assert got is y
    torch.testing.assert_close(y[:, 0], x[:, 0])
    try:
        op(x, outputs=[torch.empty(13, dtype=torch.float16)])
    except TypeError as exc:
        assert "output 0 is torch.float16" in str(exc)
    else:
        raise AssertionError("an output of the wrong dtype must be refused")


def test_a_dynamic_input_list_is_refused_with_the_way_to_run_it() -> None:
    host = FIRST_HOST.replace('this->Input("x").ParamType(REQUIRED)', 'this->Input("x").ParamType(DYNAMIC)')
    op = asc.load_op_project({"op_host/first_custom.cpp": host, "op_kernel/first_custom.cpp": FIRST_KERNEL})
    try:
        op(torch.randn(4, 8), outputs=[torch.empty(4, 1)])
    except TypeError as exc:
        assert "x is ParamType(DYNAMIC)" in str(exc) and "pack_list_tensor" in str(exc)
    else:
        raise AssertionError("a DYNAMIC input must not be bound as a single tensor")


INIT_OUTPUT = r"""
#include "kernel_operator.h"
extern "C" __global__ __aicore__ void init_out(GM_ADDR y, uint32_t n)
{
    AscendC::GlobalTensor<int32_t> yg;
    yg.SetGlobalBuffer((__gm__ int32_t*)y + n * AscendC::GetBlockIdx(), n);
    if (AscendC::GetBlockIdx() == 0) AscendC::InitOutput<int32_t>(yg, n);  // the value defaults to zero
    else AscendC::InitOutput<int32_t>(yg, n, 7);
}
extern "C" void run(uint8_t* y, uint32_t n) { init_out<<<2, nullptr, nullptr>>>(y, n); }
"""


def test_init_output_fills_gm() -> None:
    mod = asc.load(INIT_OUTPUT, name="init_out.cpp")
    y = torch.full((2 * 64,), -1, dtype=torch.int32)
    mod.run(y, 64)
    assert torch.equal(y[:64], torch.zeros(64, dtype=torch.int32)) and torch.equal(
        y[64:], torch.full((64,), 7, dtype=torch.int32)
    )
