"""Host-side APIs the cann-ops operator projects use (issue 28), written here from CANN's
documentation of them, never from an op's code: gert::ExtendedKernelContext (the base of the
tiling and inference contexts) and its ComputeNodeInfo, StorageShape's equality, ge::Operator /
TensorDesc / AscendString, ge::TypeUtils' names, ge::GetPrimaryFormat, ge::SUCCESS / ge::FAILED,
ge::Format's and the graph status codes' values, the headers the library's own log macros write
through (base/alog_pub.h, base/err_msg.h, aclnn/opdev/op_log.h, securec's snprintf_s), and
aclDestroyTensorList's documented ownership (its tensors need not be destroyed again; a
second destroy of a tensor does nothing)."""

from __future__ import annotations

import time
from pathlib import Path

from kernel_gym.native import NativeLibrary, compile_shared, parse_extern_c

INCLUDE = Path(__file__).resolve().parents[3] / "kernel_gym" / "ascendc" / "include"

SOURCE = r"""
#include "register/op_def_registry.h"
#include "base/alog_pub.h"
#include "base/err_msg.h"
#include "aclnn/opdev/op_log.h"
#include "securec.h"
#include "graph/utils/type_utils.h"

static gert::KgsimOpIO make_io(int n_in, int n_out) {
    gert::KgsimOpIO io;
    io.name = "Probe";
    for (int i = 0; i < n_in; ++i) {
        gert::StorageShape s;
        s.Set(gert::Shape{2, 3 + i});
        io.in_shapes.push_back(s);
        io.in_present.push_back(true);
        io.in_desc.emplace_back();
        io.in_desc.back().SetDataType(i == 0 ? ge::DT_FLOAT16 : ge::DT_FLOAT);
    }
    for (int i = 0; i < n_out; ++i) {
        io.out_shapes.emplace_back();
        io.out_desc.emplace_back();
    }
    return io;
}

// the node's counts through each context, its ComputeNodeInfo and the ExtendedKernelContext view
extern "C" int64_t node_counts(int64_t n_in, int64_t n_out) {
    gert::KgsimOpIO io = make_io(int(n_in), int(n_out));
    gert::TilingContext tiling(&io);
    gert::InferShapeContext shape(&io);
    auto* ext = reinterpret_cast<gert::ExtendedKernelContext*>(&tiling);
    const gert::ComputeNodeInfo* node = ext->GetComputeNodeInfo();
    bool same = tiling.GetComputeNodeOutputNum() == shape.GetComputeNodeOutputNum() &&
                node->GetInputsNum() == tiling.GetComputeNodeInputNum() &&
                std::string(node->GetNodeName()) == "Probe" &&
                node->GetInputTdInfo(0)->GetDataType() == ge::DT_FLOAT16 &&
                node->GetInputTdInfo(size_t(n_in)) == nullptr;
    return same ? int64_t(node->GetInputsNum() * 10 + node->GetOutputsNum()) : -1;
}

// AnchorInstanceInfo of each IR input: a dynamic input of n_dyn tensors, then a required one, then an
// optional one given or not; the outputs one each
extern "C" int64_t instance_info(int64_t n_dyn, int64_t optional_given) {
    gert::KgsimOpIO io = make_io(int(n_dyn) + 2, 2);
    io.in_present.back() = optional_given != 0;
    io.ir_first = {0, size_t(n_dyn), size_t(n_dyn) + 1};
    gert::TilingContext tiling(&io);
    const gert::ComputeNodeInfo* node = tiling.GetComputeNodeInfo();
    const gert::AnchorInstanceInfo* dyn = node->GetInputInstanceInfo(0);
    const gert::AnchorInstanceInfo* req = node->GetInputInstanceInfo(1);
    const gert::AnchorInstanceInfo* opt = node->GetInputInstanceInfo(2);
    if (node->GetInputInstanceInfo(3) != nullptr || node->GetOutputInstanceInfo(1)->GetInstanceStart() != 1)
        return -1;
    return int64_t(dyn->GetInstanceStart() * 100000 + dyn->GetInstanceNum() * 10000 + req->GetInstanceStart() * 1000 +
                   req->GetInstanceNum() * 100 + opt->GetInstanceStart() * 10 + opt->GetInstanceNum());
}

// StorageShape == compares both shapes
extern "C" int storage_shapes_equal(int64_t a0, int64_t b0, int64_t origin_b0) {
    gert::StorageShape a, b;
    a.Set(gert::Shape{a0, 4});
    b.Set(gert::Shape{b0, 4});
    b.MutableOriginShape() = gert::Shape{origin_b0, 4};
    return (a == b ? 1 : 0) + (a != b ? 2 : 0);
}

// StorageShape's (origin, storage) constructor; GetShape / MutableShape are the origin shape (CANN's
// exe_graph/runtime/storage_shape.h); Shape::SetScalar and kInvalidDimValue
extern "C" int64_t storage_shape_members(int64_t origin0, int64_t storage0) {
    gert::StorageShape s({origin0, 4}, {storage0, 4, 1});
    if (s.GetShape() != s.GetOriginShape() || s.GetStorageShape().GetDimNum() != 3) return -1;
    s.MutableShape().SetDim(1, 5);
    gert::Shape scalar{3, 3};
    scalar.SetScalar();
    if (!scalar.IsScalar() || gert::Shape::kInvalidDimValue >= 0) return -2;
    return s.GetOriginShape().GetShapeSize() * 1000 + s.GetStorageShape().GetShapeSize();
}

// ge::Format's documented values of the formats the library's host code names
static_assert(ge::FORMAT_HWCN == 16 && ge::FORMAT_CHWN == 14 && ge::FORMAT_NC1HWC0_C04 == 12);
static_assert(ge::FORMAT_NDC1HWC0 == 32 && ge::FORMAT_FRACTAL_Z_3D == 33 && ge::FORMAT_NC == 35);

// ge::Operator as an OpDef's CheckSupport callback reads it: descs by tensor name, attributes
static ge::graphStatus check_support(const ge::Operator& op, ge::AscendString& result) {
    ge::TensorDesc x = op.GetInputDescByName("x");
    int64_t axis = -1;
    if (op.GetAttr("axis", axis) != ge::GRAPH_SUCCESS || x.GetDataType() != ge::DT_FLOAT16) {
        result = ge::AscendString("unsupported");
        return ge::GRAPH_FAILED;
    }
    result = ge::AscendString("supported");
    return x.GetShape().GetDim(size_t(axis)) == 7 && op.GetInputDescByName("absent").GetShape().GetDimNum() == 0
               ? ge::GRAPH_SUCCESS
               : ge::GRAPH_FAILED;
}
extern "C" int64_t operator_check(int64_t with_axis, int64_t dim) {
    ge::Operator op("Probe");
    op.UpdateInputDesc("x", ge::TensorDesc(ge::Shape({2, dim}), ge::FORMAT_ND, ge::DT_FLOAT16));
    if (with_axis) op.SetAttr("axis", int64_t(1));
    ge::AscendString result;
    ge::graphStatus s = check_support(op, result);
    return (s == ge::GRAPH_SUCCESS ? 10 : 20) + (std::string(result.GetString()) == "supported" ? 1 : 2);
}

// ge::TypeUtils' names of formats and data types, GetPrimaryFormat's low byte
extern "C" int64_t type_names() {
    bool ok = ge::TypeUtils::FormatToSerialString(ge::FORMAT_FRACTAL_NZ) == "FRACTAL_NZ" &&
              ge::TypeUtils::FormatToSerialString(ge::FORMAT_HWCN) == "HWCN" &&
              ge::TypeUtils::FormatToSerialString(ge::Format(200)) == "RESERVED" &&
              std::string(ge::TypeUtils::DataTypeToAscendString(ge::DT_FLOAT16).GetString()) == "DT_FLOAT16" &&
              std::string(ge::TypeUtils::FormatToAscendString(ge::FORMAT_ND).GetString()) == "ND";
    return ok ? ge::GetPrimaryFormat(int32_t(ge::FORMAT_FRACTAL_NZ) | (16 << 24)) : -1;
}

// graph status codes' documented values
static_assert(ge::GRAPH_NOT_CHANGED == 1343242304u && ge::GRAPH_NODE_WITHOUT_CONST_INPUT == 50331648u);

// ge::SUCCESS and ge::FAILED as host tiling code compares them (`using namespace ge`)
using namespace ge;
static Status check_positive(int64_t v) { return v > 0 ? SUCCESS : FAILED; }
extern "C" int64_t status_of(int64_t v) { return int64_t(check_positive(v)); }

// the op log macros (aclnn/opdev/op_log.h), the device log (base/alog_pub.h) and the error report
// (base/err_msg.h): errors reach stderr, levels below ERROR are not written
extern "C" int64_t log_records(int64_t v) {
    OP_LOGD("Probe", "debug %ld", long(v));
    OP_LOGE("Probe", "error %ld", long(v));
    if (AlogCheckDebugLevel(OP, DLOG_INFO) == 1) AlogRecord(OP, DLOG_TYPE_DEBUG, DLOG_INFO, "info %ld", long(v));
    AlogRecord(OP, DLOG_TYPE_DEBUG, DLOG_ERROR, "alog %ld [%s]", long(v), OPS_UTILS_LOG_SUB_MOD_NAME);
    REPORT_INNER_ERR_MSG("89999", "reported %ld", long(v));
    char buf[8];
    int cut = snprintf_s(buf, sizeof(buf), sizeof(buf) - 1, "%s", "0123456789");
    int fits = snprintf_s(buf, sizeof(buf), sizeof(buf) - 1, "%ld", long(v));
    return AlogCheckDebugLevel(OP, DLOG_ERROR) * 100 + (cut == -1 ? 10 : 0) + (fits == 2 ? 1 : 0);
}
"""


def _lib():
    probe = f"// host api probe {time.time():f}\n"
    path = compile_shared(
        {"host_apis.cpp": probe + SOURCE}, flags=["-O1", "-std=c++20", "-I", str(INCLUDE)], cache_subdir="test"
    )
    return NativeLibrary(path, parse_extern_c(SOURCE))


def test_host_contexts_share_the_extended_kernel_context_and_compute_node_info(capfd):
    lib = _lib()
    assert lib.node_counts(3, 2) == 32
    assert lib.node_counts(1, 4) == 14
    # AnchorInstanceInfo: (start, count) per IR input; an optional input not given has none
    assert lib.instance_info(3, 1) == 3 * 10000 + 3 * 1000 + 1 * 100 + 4 * 10 + 1
    assert lib.instance_info(2, 0) == 2 * 10000 + 2 * 1000 + 1 * 100 + 3 * 10 + 0
    # StorageShape ==: equal only when the origin shape is too
    assert lib.storage_shapes_equal(5, 5, 5) == 1
    assert lib.storage_shapes_equal(5, 6, 6) == 2
    assert lib.storage_shapes_equal(5, 5, 9) == 2
    assert lib.storage_shape_members(3, 7) == 15 * 1000 + 28
    # ge::Operator: descs by name, an attribute it lacks is GRAPH_FAILED
    assert lib.operator_check(1, 7) == 11
    assert lib.operator_check(1, 5) == 21
    assert lib.operator_check(0, 7) == 22
    assert lib.type_names() == 29
    # ge::SUCCESS is 0, ge::FAILED every bit set
    assert lib.status_of(3) == 0
    assert lib.status_of(-3) == 0xFFFFFFFF
    # the log headers: errors on stderr, nothing on stdout, the debug and info levels not written
    assert lib.log_records(42) == 111
    out, err = capfd.readouterr()
    assert out == ""
    assert "error 42" in err and "alog 42 [OP_TILING]" in err and "reported 42" in err
    assert "debug" not in err and "info" not in err


ACL_SOURCE = r"""
#include "aclnn/acl_meta.h"
// a list over two tensors: the list sees their data; destroying the tensors and then the list
// (as an example may, though the list's need no second destroy) frees each object once
extern "C" int64_t list_then_destroy_both(int64_t fill) {
    int64_t shape[1] = {4};
    float a[4] = {float(fill), 0, 0, 0}, b[4] = {0, float(fill), 0, 0};
    aclTensor* ta = aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 1, a);
    aclTensor* tb = aclCreateTensor(shape, 1, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, shape, 1, b);
    const aclTensor* members[2] = {ta, tb};
    aclTensorList* list = aclCreateTensorList(members, 2);
    float seen = static_cast<float*>(list->tensors[0]->data)[0] + static_cast<float*>(list->tensors[1]->data)[1];
    aclDestroyTensor(ta);
    aclDestroyTensor(tb);
    aclDestroyTensorList(list);
    aclDestroyTensor(ta);  // a second destroy of a tensor finds it gone
    return int64_t(seen);
}
"""


def test_tensor_list_owns_its_tensor_descriptions():
    probe = f"// acl list probe {time.time():f}\n"
    path = compile_shared(
        {"acl_list.cpp": probe + ACL_SOURCE}, flags=["-O1", "-std=c++20", "-I", str(INCLUDE)], cache_subdir="test"
    )
    lib = NativeLibrary(path, parse_extern_c(ACL_SOURCE))
    assert lib.list_then_destroy_both(21) == 42
