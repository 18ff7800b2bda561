"""Host-side APIs the cann-ops operator projects use (issue 28), written here from CANN's
documentation of them, never from an op's code: gert::ExtendedKernelContext (the base of the
tiling and inference contexts) and its ComputeNodeInfo, StorageShape's equality, ge::SUCCESS /
ge::FAILED, ge::Format's values, the library's log and check macros (log/ops_log.h, error/ops_error.h, base/err_msg.h),
and aclDestroyTensorList's documented ownership (the list's tensors need not be destroyed again)."""

from __future__ import annotations

import time
from pathlib import Path

from kernel_gym.native import NativeLibrary, compile_shared, parse_extern_c

INCLUDE = Path(__file__).resolve().parents[3] / "kernel_gym" / "ascendc" / "include"

SOURCE = r"""
#include "register/op_def_registry.h"
#include "error/ops_error.h"
#include "base/err_msg.h"
#include "aclnn/opdev/op_log.h"

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

// StorageShape == compares both shapes
extern "C" int storage_shapes_equal(int64_t a0, int64_t b0, int64_t origin_b0) {
    gert::StorageShape a, b;
    a.Set(gert::Shape{a0, 4});
    b.Set(gert::Shape{b0, 4});
    b.MutableOriginShape() = gert::Shape{origin_b0, 4};
    return (a == b ? 1 : 0) + (a != b ? 2 : 0);
}

// ge::Format's documented values of the formats the library's host code names
static_assert(ge::FORMAT_HWCN == 16 && ge::FORMAT_CHWN == 14 && ge::FORMAT_NC1HWC0_C04 == 12);
static_assert(ge::FORMAT_NDC1HWC0 == 32 && ge::FORMAT_FRACTAL_Z_3D == 33 && ge::FORMAT_NC == 35);

// ge::SUCCESS and ge::FAILED as host tiling code compares them (`using namespace ge`)
using namespace ge;
static Status check_positive(int64_t v) { return v > 0 ? SUCCESS : FAILED; }
extern "C" int64_t status_of(int64_t v) { return int64_t(check_positive(v)); }

// the check macros: a failing check logs and runs its expression; a passing one does nothing
static ge::graphStatus checked(gert::InferShapeContext* context, int64_t v) {
    OPS_LOG_D(context->GetNodeName(), "checking %ld", long(v));
    OPS_CHECK(v < 0, OPS_REPORT_VECTOR_INNER_ERR(context->GetNodeName(), "negative: %ld", long(v)),
              return ge::GRAPH_FAILED);
    const gert::Shape* missing = v == 0 ? nullptr : context->GetInputShape(0);
    OPS_LOG_E_IF_NULL(context, missing, return ge::GRAPH_PARAM_INVALID);
    OP_TILING_CHECK(v > 100, VECTOR_INNER_ERR_REPORT_TILIING(context->GetNodeName(), "too big"), return 7);
    if (v == 50) REPORT_INNER_ERR_MSG("89999", "reported %d", 50);
    return ge::GRAPH_SUCCESS;
}
extern "C" int64_t check_macros(int64_t v) {
    gert::KgsimOpIO io = make_io(1, 1);
    gert::InferShapeContext ctx(&io);
    return int64_t(checked(&ctx, v));
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
    # StorageShape ==: equal only when the origin shape is too
    assert lib.storage_shapes_equal(5, 5, 5) == 1
    assert lib.storage_shapes_equal(5, 6, 6) == 2
    assert lib.storage_shapes_equal(5, 5, 9) == 2
    # ge::SUCCESS is 0, ge::FAILED every bit set
    assert lib.status_of(3) == 0
    assert lib.status_of(-3) == 0xFFFFFFFF
    # the check macros, and where their messages go (stderr; the debug level prints nothing)
    assert lib.check_macros(5) == 0
    assert lib.check_macros(-1) == 0xFFFFFFFF
    assert lib.check_macros(0) == 50331649  # GRAPH_PARAM_INVALID from OPS_LOG_E_IF_NULL's expression
    assert lib.check_macros(500) == 7
    assert lib.check_macros(50) == 0
    out, err = capfd.readouterr()
    assert out == ""
    assert "negative: -1" in err and "missing is nullptr" in err and "too big" in err and "reported 50" in err
    assert "checking" not in err


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
