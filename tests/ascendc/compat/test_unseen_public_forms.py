"""Forms that public Ascend C repositories the simulator was not tuned on use, and that it got wrong,
each in a small kernel or project of our own:

- ``SetVectorMask<T, MaskMode::COUNTER>(len)`` with the vector unit in normal mask mode: asc-devkit writes
  len to the mask register as it is (the template argument says how the value is written; SetMaskCount
  switches the mode), so a count above one repeat's elements is no fault;
- an operator project holding an editor's copy of its kernel in a hidden folder
  (``op_kernel/.ipynb_checkpoints/x-checkpoint.cpp``), which the build's globs never compile;
- a six-string answer whose host code includes a CANN tiling header (``register/tilingdata_base.h``)
  before its own ``<op>_tiling.h``;
- an operator project whose host and kernel sources both define the same file-scope names (a
  ``BUFFER_NUM`` constant, a ``DivUp`` helper, a struct): the NPU toolchain compiles the two apart;
- a kernel built per dtype whose runtime branch for another dtype holds a Cast pair the built one does
  not support (asc-devkit checks the pair with a debug assert, so the NPU builds it): a fault only if
  that Cast runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import kernel_gym.ascendc as asc

from .six_string_answers import LEAKY_RELU, _six_text

# ---- SetVectorMask<T, MaskMode::COUNTER>(len) in normal mask mode --------------------------------------
COUNTER_VALUE = r"""
#include "kernel_operator.h"
using namespace AscendC;

__global__ __aicore__ void max_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t n)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * n * sizeof(half));
    LocalTensor<half> x = buf.Get<half>(), y = x[n], z = y[n];
    GlobalTensor<half> ga, gb, gc;
    ga.SetGlobalBuffer((__gm__ half*)a, n);
    gb.SetGlobalBuffer((__gm__ half*)b, n);
    gc.SetGlobalBuffer((__gm__ half*)c, n);
    DataCopy(x, ga, n);
    DataCopy(y, gb, n);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    // n (256) is more than one repeat of halves (128): a normal-mode length would be out of range
    SetVectorMask<half, MaskMode::COUNTER>(n);
    Max(z, x, y, n);  // the count form sets the mask it needs itself
    ResetMask();
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(gc, z, n);
}

extern "C" void run(uint8_t* a, uint8_t* b, uint8_t* c, uint32_t n, void* stream)
{
    max_kernel<<<1, nullptr, stream>>>(a, b, c, n);
}
"""


def test_counter_mask_value_is_written_as_is_in_normal_mode() -> None:
    mod = asc.load(COUNTER_VALUE)
    n = 256
    a, b = torch.randn(n).half(), torch.randn(n).half()
    c = torch.empty(n, dtype=torch.half)
    mod.run(a, b, c, n, None)
    assert mod.last_run.faults == []
    torch.testing.assert_close(c, torch.maximum(a, b))


# ---- a project with a hidden editor copy of its kernel ------------------------------------------------
PROJECT = Path(__file__).resolve().parents[3] / "solutions" / "ascend_op_projects" / "leaky_relu_custom"


def test_hidden_folder_copies_are_not_project_sources() -> None:
    files = {str(p.relative_to(PROJECT)): p.read_text() for p in PROJECT.rglob("*") if p.is_file()}
    kernel = files["op_kernel/leaky_relu_custom.cpp"]
    # the notebook's checkpoint: the same kernel (a second definition of it, were it compiled) and a stale edit
    files["op_kernel/.ipynb_checkpoints/leaky_relu_custom-checkpoint.cpp"] = kernel.replace("slope", "0.0f * slope")
    files["op_host/.ipynb_checkpoints/leaky_relu_custom-checkpoint.cpp"] = files["op_host/leaky_relu_custom.cpp"]
    op = asc.load_op_project(files)
    x = torch.randn(8192)
    torch.testing.assert_close(op(x, negative_slope=0.2), torch.nn.functional.leaky_relu(x, 0.2))


# ---- a six-string answer including a CANN tiling header before its own ------------------------------------
def test_six_string_own_tiling_header_after_a_cann_one() -> None:
    six = dict(LEAKY_RELU)
    six["host_operator_src"] = '#include "register/tilingdata_base.h"\n' + six["host_operator_src"]
    assert six["host_operator_src"].index("tilingdata_base.h") < six["host_operator_src"].index(
        "leaky_relu_custom_tiling.h"
    )
    op = asc.load_multikernelbench(_six_text(six))
    x = torch.randn(4096)
    torch.testing.assert_close(op.ops.leaky_relu_custom(x, 0.1), torch.nn.functional.leaky_relu(x, 0.1))


# ---- host and kernel sources defining the same file-scope names ------------------------------------------
HOST_TOP = """constexpr uint32_t BUFFER_NUM = 2;
static uint32_t DivUp(uint32_t a, uint32_t b)
{
    return (a + b - 1) / b;
}
struct Span {
    uint32_t begin, end;
};
"""
KERNEL_TOP = """#include "kernel_operator.h"
constexpr int32_t BUFFER_NUM = 2;
__aicore__ inline uint32_t DivUp(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
struct Span {
    uint32_t first;
};
"""


def test_file_scope_names_both_sides_define_stay_each_sides() -> None:
    files = {str(p.relative_to(PROJECT)): p.read_text() for p in PROJECT.rglob("*") if p.is_file()}
    host = files["op_host/leaky_relu_custom.cpp"]
    host = host.replace("namespace optiling {", HOST_TOP + "namespace optiling {", 1)
    # the host side uses its own: the block count from DivUp, a Span
    host = host.replace(
        "uint32_t blockDim = totalLength >= 4096 ? 4 : 1;",
        "Span s{0, totalLength};\n    uint32_t blockDim = DivUp(s.end - s.begin, 4096) >= BUFFER_NUM * 2 ? 4 : 1;",
    )
    kernel = files["op_kernel/leaky_relu_custom.cpp"].replace('#include "kernel_operator.h"', KERNEL_TOP, 1)
    kernel = kernel.replace("VECIN, 2>", "VECIN, BUFFER_NUM>").replace("VECOUT, 2>", "VECOUT, BUFFER_NUM>")
    kernel = kernel.replace(
        "pipe.InitBuffer(inQ, 2,",
        "Span s{DivUp(tileLength, 8)};\n        pipe.InitBuffer(inQ, BUFFER_NUM + s.first * 0,",
    )
    files["op_host/leaky_relu_custom.cpp"], files["op_kernel/leaky_relu_custom.cpp"] = host, kernel
    op = asc.load_op_project(files)
    x = torch.randn(16384)
    torch.testing.assert_close(op(x, negative_slope=0.3), torch.nn.functional.leaky_relu(x, 0.3))
    assert op.last_tiling["block_dim"] == 4


# ---- a Cast pair A2 lacks, in a branch the built dtype never takes -----------------------------------------
DTYPE_BRANCH = r"""
#include "kernel_operator.h"
using namespace AscendC;

template <typename T>
__global__ __aicore__ void widen_kernel(GM_ADDR x, GM_ADDR y, uint32_t n, uint32_t isInt8)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> bx, bh, by;
    pipe.InitBuffer(bx, n * sizeof(T));
    pipe.InitBuffer(bh, n * sizeof(half));
    pipe.InitBuffer(by, n * sizeof(float));
    LocalTensor<T> xl = bx.Get<T>();
    LocalTensor<half> hl = bh.Get<half>();
    LocalTensor<float> yl = by.Get<float>();
    GlobalTensor<T> gx;
    GlobalTensor<float> gy;
    gx.SetGlobalBuffer((__gm__ T*)x, n);
    gy.SetGlobalBuffer((__gm__ float*)y, n);
    DataCopy(xl, gx, n);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
    if (isInt8) {
        Cast(hl, xl, RoundMode::CAST_NONE, n);  // int8 -> half; for T = half a half -> half pair A2 lacks
        Cast(yl, hl, RoundMode::CAST_NONE, n);
    } else {
        Cast(yl, xl, RoundMode::CAST_NONE, n);
    }
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(gy, yl, n);
}

extern "C" void widen_half(uint8_t* x, uint8_t* y, uint32_t n, uint32_t isInt8, void* stream)
{
    widen_kernel<half><<<1, nullptr, stream>>>(x, y, n, isInt8);
}
"""


def test_unsupported_cast_pair_faults_only_when_it_runs() -> None:
    mod = asc.load(DTYPE_BRANCH)
    n = 256
    x = torch.randn(n).half()
    y = torch.empty(n)
    mod.widen_half(x, y, n, 0, None)  # the half -> float branch: builds and runs
    torch.testing.assert_close(y, x.float())
    with pytest.raises(asc.AscendCFault, match="Cast: this \\(src, dst\\) data type pair"):
        mod.widen_half(x, y, n, 1, None)


TBUF_WITH_NUM = COUNTER_VALUE.replace(
    "pipe.InitBuffer(buf, 3 * n * sizeof(half));", "pipe.InitBuffer(buf, 1, 3 * n * sizeof(half));"
)


def test_tbuf_given_a_buffer_count_names_the_fix() -> None:
    assert TBUF_WITH_NUM != COUNTER_VALUE
    with pytest.raises(asc.AscendCCompileError, match="a TBuf is initialised with InitBuffer\\(buf, len\\)"):
        asc.load(TBUF_WITH_NUM)
