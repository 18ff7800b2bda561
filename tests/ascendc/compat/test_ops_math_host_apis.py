"""Host-side APIs CANN's production operator library (hicann/ops-math) builds on, written here from
their public headers and documentation, never from an op's code: the operator base library
(opbase) that ops-math's host code includes as ``log/log.h`` (OP_CHECK_IF, OP_CHECK_NULL_WITH_CONTEXT,
OP_LOGE with a context or a name, the OP_LOGE_FOR_INVALID_* family), ``util/math_util.h`` (CeilDiv,
CeilAlign, FloorDiv, FloorAlign: a zero divisor gives x, a zero alignment 0), ``util/shape_util.h``
(unknown rank [-2], unknown dims -1, CheckAxisBounds), ``util/platform_util.h``,
``op_host/tiling_base_util.h`` (EnsureNotScalar, IsRegbaseSocVersion) and their installed
``op_common/`` paths; the platform's NpuArch (``platform/soc_spec.h``: an Atlas A2 AI Core is
DAV_2201) through PlatformAscendC and op::PlatformInfo, and op::SocVersion::ASCEND950; the op-API
framework's op::Validate (a view within its storage), aclTensor::ToString and aclnn's
aclGet*Size of its containers, aclScalar::CheckOverflows<T>, op::internal::AicpuTaskSpace; opbase's
Ops::Base::TilingBaseClass (DoTiling's steps in order, IsCapable false: GRAPH_PARAM_INVALID);
securec's EOK and aclnn/opdev/platform.h."""

from __future__ import annotations

import time
from pathlib import Path

from kernel_gym.native import NativeLibrary, compile_shared, parse_extern_c

INCLUDE = Path(__file__).resolve().parents[3] / "kernel_gym" / "ascendc" / "include"

OPBASE = r"""
#include "register/op_def_registry.h"
#include "log/log.h"
#include "util/math_util.h"
#include "util/shape_util.h"
#include "op_common/op_host/util/math_util.h"
#include "op_host/tiling_base_util.h"
#include "op_kernel/platform_util.h"
#include "op_host/tiling_base_class.h"
#include "op_host/util/fp16.h"
#include "securec.h"

// opbase's host half (Ops::Base::fp16_t) round-trips 1.5; graph mode's shape-range context of a node
// without inputs or outputs has no ranges to give (null), and gert::Range holds a [min, max] pair
extern "C" int64_t fp16_and_ranges() {
    Ops::Base::fp16_t h(1.5f);
    gert::KgsimOpIO io;
    gert::InferShapeRangeContext ctx(&io);
    gert::Shape lo{1}, hi{8};
    gert::Range<gert::Shape> r(&lo, &hi);
    bool ranges = ctx.GetInputShapeRange(0) == nullptr && ctx.GetOutputShapeRange(0) == nullptr &&
                  r.GetMax()->GetDim(0) == 8 && r.GetMin()->GetDim(0) == 1;
    return int64_t(float(h) * 10) + (ranges ? 100 : 0);
}

// a tiling class on the frame: records the order of its steps; `capable` and `fail_at` steer it
class ProbeTiling : public Ops::Base::TilingBaseClass {
public:
    ProbeTiling(gert::TilingContext* ctx, bool capable, int fail_at)
        : TilingBaseClass(ctx), capable_(capable), fail_at_(fail_at) {}
    int64_t order = 0;

protected:
    ge::graphStatus step(int k) {
        order = order * 10 + k;
        return k == fail_at_ ? ge::GRAPH_FAILED : ge::GRAPH_SUCCESS;
    }
    bool IsCapable() override { order = order * 10 + 3; return capable_; }
    ge::graphStatus GetShapeAttrsInfo() override { return step(1); }
    ge::graphStatus GetPlatformInfo() override { return step(2); }
    ge::graphStatus DoOpTiling() override { return step(4); }
    ge::graphStatus DoLibApiTiling() override { return step(5); }
    uint64_t GetTilingKey() const override { return 77; }
    ge::graphStatus GetWorkspaceSize() override { return step(6); }
    ge::graphStatus PostTiling() override { return step(7); }

private:
    bool capable_;
    int fail_at_;
};

// the steps DoTiling ran (their numbers, in order), its status (0 success, 1 failed, 2 param
// invalid) and the tiling key it set: order * 1000 + status * 100 + key
extern "C" int64_t tiling_frame(int64_t capable, int64_t fail_at) {
    gert::KgsimOpIO io;
    gert::TilingContext ctx(&io);
    ProbeTiling t(&ctx, capable != 0, int(fail_at));
    auto st = t.DoTiling();
    int64_t code = st == ge::GRAPH_SUCCESS ? 0 : st == ge::GRAPH_PARAM_INVALID ? 2 : 1;
    return t.order * 1000 + code * 100 + int64_t(ctx.GetTilingKey());
}

extern "C" int64_t securec_eok() {
    char dst[4] = {};
    return memcpy_s(dst, sizeof(dst), "abc", 4) == EOK ? 1 : 0;
}

static int checked(int v) {
    OP_CHECK_IF(v < 0, OP_LOGE("Probe", "negative value %d", v), return -1);
    return v * 2;
}
static ge::graphStatus null_checked(gert::TilingContext* ctx, const void* p) {
    OP_CHECK_NULL_WITH_CONTEXT(ctx, p);
    return ge::GRAPH_SUCCESS;
}

// OP_CHECK_IF runs its log and return expressions only when the condition holds
extern "C" int64_t check_if(int64_t v) { return checked(int(v)); }

// OP_CHECK_NULL_WITH_CONTEXT returns GRAPH_FAILED for a null pointer, logging the context's node
extern "C" int64_t check_null(int64_t is_null) {
    gert::KgsimOpIO io;
    io.name = "ProbeNode";
    gert::TilingContext ctx(&io);
    int x = 0;
    auto st = null_checked(&ctx, is_null ? nullptr : &x);
    OP_LOGE_FOR_INVALID_DTYPE(&ctx, "x", "DT_INT8", "float16 or float32");
    OP_LOGE(&ctx, "context log %d", 7);
    OP_LOGD(&ctx, "debug is off %d", 1);
    return st == ge::GRAPH_FAILED ? 1 : 0;
}

// the integer helpers: CeilDiv(7, 2), CeilDiv(-7, 2), CeilAlign(33, 32), FloorAlign(33, 32),
// FloorDiv(7, 0) (x), CeilAlign(5, 0) (0), CeilDiv on unsigned
extern "C" int64_t int_math(int64_t k) {
    switch (k) {
        case 0: return Ops::Base::CeilDiv<int64_t>(7, 2);
        case 1: return Ops::Base::CeilDiv<int64_t>(-7, 2);
        case 2: return Ops::Base::CeilAlign<int64_t>(33, 32);
        case 3: return Ops::Base::FloorAlign<int64_t>(33, 32);
        case 4: return Ops::Base::FloorDiv<int64_t>(7, 0);
        case 5: return Ops::Base::CeilAlign<int64_t>(5, 0);
        case 6: return int64_t(Ops::Base::CeilDiv<uint32_t>(9u, 4u));
        default: return -99;
    }
}

// shapes: unknown rank, unknown shape, axis bounds, a scalar made [1]
extern "C" int64_t shapes(int64_t k) {
    gert::Shape s{2, 3};
    switch (k) {
        case 0: Ops::Base::SetUnknownRank(s); return Ops::Base::IsUnknownRank(s) ? s.GetDim(0) : 0;
        case 1: Ops::Base::SetUnknownShape(3, s); return Ops::Base::IsUnknownShape(s) ? int64_t(s.GetDimNum()) : 0;
        case 2: return Ops::Base::CheckAxisBounds(2, -2) && !Ops::Base::CheckAxisBounds(2, 2) ? 1 : 0;
        case 3: { gert::Shape scalar; return Ops::Base::EnsureNotScalar(scalar).GetDim(0) * 10 +
                      int64_t(Ops::Base::EnsureNotScalar(scalar).GetDimNum()); }
        case 4: { gert::KgsimOpIO io; gert::TilingContext ctx(&io); return Ops::Base::IsRegbaseSocVersion(&ctx) ? 1 : 0; }
        case 5: return Ops::Base::GetUbBlockSize() + Ops::Base::GetVRegSize();
        default: return -99;
    }
}
"""

PLATFORM = r"""
#include "aclnn/opdev/platform.h"
#include "aclnn_kernels/common/op_error_check.h"
#include "opdev/aicpu/aicpu_task.h"
#include "opdev/fp16_t.h"
#include "opdev/tensor_view_utils.h"
#include "platform/soc_spec.h"
#include "tiling/platform/platform_ascendc.h"

extern "C" int64_t npu_arch(int64_t which) {
    if (which == 0) return int64_t(platform_ascendc::PlatformAscendC().GetCurNpuArch());
    if (which == 1) return int64_t(op::GetCurrentPlatformInfo().GetCurNpuArch());
    return op::GetCurrentPlatformInfo().GetSocVersion() != op::SocVersion::ASCEND950 &&
                   op::SocVersion::ASCEND950 == op::SocVersion::ASCEND910_95
               ? int64_t(NpuArch::DAV_3510)
               : -1;
}

// a 2x3 view over 6 elements at `offset` with row stride `stride`: whether op::Validate accepts it
extern "C" int64_t validate(int64_t offset, int64_t stride) {
    int64_t dims[2] = {2, 3}, strides[2] = {stride, 1}, storage[1] = {6};
    float buf[6] = {};
    aclTensor* t = aclCreateTensor(dims, 2, ACL_FLOAT, strides, offset, ACL_FORMAT_ND, storage, 1, buf);
    bool ok = op::Validate(t);
    bool named = std::string(t->ToString().GetString()).find("2, 3") != std::string::npos;
    aclDestroyTensor(t);
    return (ok ? 1 : 0) + (named ? 10 : 0);
}

// OP_CHECK_BROADCAST_AND_INFER_SHAPE: (2, 1) and (3) broadcast to (2, 3); (2) and (3) do not
static bool broadcasts(const aclTensor* a, const aclTensor* b, op::Shape& out) {
    OP_CHECK_BROADCAST_AND_INFER_SHAPE(a, b, out, return false);
    return true;
}
extern "C" int64_t broadcast_check(int64_t compatible) {
    int64_t a_dims[2] = {2, 1}, a1[1] = {2}, b_dims[1] = {3};
    float buf[8] = {};
    aclTensor* a = compatible ? aclCreateTensor(a_dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, a_dims, 2, buf)
                              : aclCreateTensor(a1, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, a1, 1, buf);
    aclTensor* b = aclCreateTensor(b_dims, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, b_dims, 1, buf);
    op::Shape out;
    bool ok = broadcasts(a, b, out);
    aclDestroyTensor(a);
    aclDestroyTensor(b);
    return ok ? int64_t(out.GetDim(0) * 10 + out.GetDim(1)) : -1;
}

// aclGetIntArraySize / aclGetTensorListSize: the element count, ACLNN_ERR_PARAM_NULLPTR for null
extern "C" int64_t container_sizes(int64_t n) {
    std::vector<int64_t> v(size_t(n), 1);
    aclIntArray* a = aclCreateIntArray(v.data(), uint64_t(n));
    uint64_t size = 0;
    int64_t rc = aclGetIntArraySize(a, &size);
    int64_t rc_null = aclGetIntArraySize(nullptr, &size) == ACLNN_ERR_PARAM_NULLPTR ? 1 : 0;
    // FVector<bool>: elements with a bool& (an aclnn layer's per-dim flags)
    op::FVector<bool, 8> flags(4);
    flags[2] = true;
    bool& ref = flags[3];
    ref = true;
    if (!(flags[2] && flags[3] && !flags[0] && flags.size() == 4 && *(flags.begin() + 2))) return -3;
    // the containers' ToString members (an aclnn layer's log lines): the values as text
    if (std::string(a->ToString().GetString()).find('1') == std::string::npos) return -2;
    aclDestroyIntArray(a);
    return rc == ACLNN_SUCCESS ? int64_t(size) * 10 + rc_null : -1;
}

// aclScalar::CheckOverflows<T>: a float 70000 overflows fp16 and int16, not float; -1 overflows
// uint8; infinity carries over to a floating type
extern "C" int64_t overflows() {
    float big = 70000.0f, inf = 1.0f / 0.0f;
    int32_t minus = -1;
    aclScalar* a = aclCreateScalar(&big, ACL_FLOAT);
    aclScalar* b = aclCreateScalar(&minus, ACL_INT32);
    aclScalar* c = aclCreateScalar(&inf, ACL_FLOAT);
    int64_t r = (a->CheckOverflows<op::fp16_t>() ? 1 : 0) + (a->CheckOverflows<float>() ? 10 : 0) +
                (a->CheckOverflows<int16_t>() ? 100 : 0) + (b->CheckOverflows<uint8_t>() ? 1000 : 0) +
                (b->CheckOverflows<int8_t>() ? 10000 : 0) + (c->CheckOverflows<op::fp16_t>() ? 100000 : 0);
    aclDestroyScalar(a);
    aclDestroyScalar(b);
    aclDestroyScalar(c);
    static op::internal::AicpuTaskSpace space("Probe");
    return r;
}
"""


def _lib(source: str, name: str) -> NativeLibrary:
    probe = f"// ops-math host api probe {time.time():f}\n"
    path = compile_shared({name: probe + source}, flags=["-O1", "-std=c++20", "-I", str(INCLUDE)], cache_subdir="test")
    return NativeLibrary(path, parse_extern_c(source))


def test_opbase_log_and_check_macros(capfd):
    lib = _lib(OPBASE, "opbase.cpp")
    assert lib.check_if(4) == 8
    assert lib.check_if(-1) == -1
    assert "negative value -1" in capfd.readouterr().err
    assert lib.check_null(1) == 1
    err = capfd.readouterr().err
    assert "ProbeNode" in err and "p is nullptr" in err
    assert "invalid dtype" in err and "DT_INT8" in err and "context log 7" in err
    assert "debug is off" not in err
    assert lib.check_null(0) == 0


def test_opbase_math_and_shape_helpers():
    lib = _lib(OPBASE, "opbase.cpp")
    assert [lib.int_math(k) for k in range(7)] == [4, -3, 64, 32, 7, 0, 3]
    assert lib.shapes(0) == -2
    assert lib.shapes(1) == 3
    assert lib.shapes(2) == 1
    assert lib.shapes(3) == 11
    assert lib.shapes(4) == 0
    assert lib.shapes(5) == 32 + 256


def test_npu_arch_and_opdev_tensor_checks():
    lib = _lib(PLATFORM, "platform.cpp")
    assert lib.npu_arch(0) == 2201
    assert lib.npu_arch(1) == 2201
    assert lib.npu_arch(2) == 3510
    assert lib.validate(0, 3) == 11  # the contiguous view fits
    assert lib.validate(1, 3) == 10  # one element on, the last row runs past the storage
    assert lib.validate(0, 4) == 10  # a row stride of 4 reaches element 6
    assert lib.container_sizes(5) == 51


def test_tiling_base_class_runs_its_steps_in_order():
    lib = _lib(OPBASE, "opbase.cpp")
    assert lib.tiling_frame(1, 0) == 1234567 * 1000 + 77  # every step, then the key
    assert lib.tiling_frame(0, 0) == 123 * 1000 + 200  # not capable: GRAPH_PARAM_INVALID, no key
    assert lib.tiling_frame(1, 5) == 12345 * 1000 + 100  # DoLibApiTiling fails: stops there
    assert lib.securec_eok() == 1


def test_scalar_overflow_checks():
    lib = _lib(PLATFORM, "platform.cpp")
    assert lib.overflows() == 1 + 100 + 1000


def test_opbase_half_shape_ranges_and_broadcast_check(capfd):
    assert _lib(OPBASE, "opbase.cpp").fp16_and_ranges() == 115
    lib = _lib(PLATFORM, "platform.cpp")
    assert lib.broadcast_check(1) == 23
    assert lib.broadcast_check(0) == -1
    assert "can not broadcast" in capfd.readouterr().err


def test_basic_api_part_headers_forward_to_kernel_operator():
    # Ascend C's basic-API part headers (asc-devkit include/basic_api) that kernels include by name
    for name in ("kernel_operator_mm_intf.h", "kernel_operator_fixpipe_intf.h"):
        text = (INCLUDE / name).read_text()
        assert '#include "kernel_operator.h"' in text and "#pragma once" in text
