// aclnn_kernels/common/op_error_check.h for the kernel-gym Ascend C simulator: CANN's built-in l0 ops, declared in
// opdev/kgsim_opdev.h and defined (host functions on the GM tensors) in opdev/kgsim_opdev_builtins.h.
#pragma once
#include "opdev/kgsim_opdev.h"

// The N and C dimensions of an op's input and output agree (the resize family's check): N is the
// first dimension, C the second, or the last for a channel-last format (NHWC, NDHWC).
inline bool CheckNCDimValid(const aclTensor* self, const aclTensor* out) {
    if (!self || !out) return false;
    auto a = self->GetViewShape(), b = out->GetViewShape();
    if (a.GetDimNum() < 2 || a.GetDimNum() != b.GetDimNum()) return true;  // other checks report the rank
    size_t c = (self->GetStorageFormat() == op::Format::FORMAT_NHWC || self->GetStorageFormat() == op::Format::FORMAT_NDHWC)
                   ? a.GetDimNum() - 1
                   : 1;
    if (a.GetDim(0) != b.GetDim(0) || a.GetDim(c) != b.GetDim(c)) {
        ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "the N and C dims of %s and %s should be the same.",
                                 op::ToString(a).GetString(), op::ToString(b).GetString());
        return false;
    }
    return true;
}

// A reduction's result has the shape of the output it is copied to.
inline bool CheckReduceOutShape(const aclTensor* result, const aclTensor* out) {
    if (!result || !out) return false;
    if (result->GetViewShape() != out->GetViewShape()) {
        ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "the result's shape %s and out's shape %s differ.",
                                 op::ToString(result->GetViewShape()).GetString(),
                                 op::ToString(out->GetViewShape()).GetString());
        return false;
    }
    return true;
}

// the op-API checks of this header that CANN's operator libraries use beyond opdev's (ops-math's
// aclnn layers): two shapes broadcast, the result shape written to `shape`; two tensors of one
// shape (or both of one element); two tensor lists of one length
#ifndef OP_CHECK_BROADCAST_AND_INFER_SHAPE
#define OP_CHECK_BROADCAST_AND_INFER_SHAPE(t1, t2, shape, ret_expr)                                               \
    do {                                                                                                          \
        if (!::op::BroadcastInferShape((t1)->GetViewShape(), (t2)->GetViewShape(), shape)) {                      \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s %s and %s %s can not broadcast.", #t1,  \
                                     ::op::ToString((t1)->GetViewShape()).GetString(), #t2,                       \
                                     ::op::ToString((t2)->GetViewShape()).GetString());                           \
            ret_expr;                                                                                             \
        }                                                                                                         \
    } while (0)
#endif
#ifndef OP_CHECK_SHAPE_AND_SCALAR_EQUAL
#define OP_CHECK_SHAPE_AND_SCALAR_EQUAL(t1, t2, ret_expr)                                                        \
    do {                                                                                                         \
        if ((t1)->GetViewShape() != (t2)->GetViewShape() &&                                                      \
            !((t1)->GetViewShape().GetShapeSize() == 1 && (t2)->GetViewShape().GetShapeSize() == 1)) {           \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s %s and %s %s differ in shape.", #t1,   \
                                     ::op::ToString((t1)->GetViewShape()).GetString(), #t2,                      \
                                     ::op::ToString((t2)->GetViewShape()).GetString());                          \
            ret_expr;                                                                                            \
        }                                                                                                        \
    } while (0)
#endif
#ifndef OP_CHECK_TENSORLIST_SIZE_EQUAL
#define OP_CHECK_TENSORLIST_SIZE_EQUAL(l1, l2, ret_expr)                                                         \
    do {                                                                                                         \
        if ((l1)->Size() != (l2)->Size()) {                                                                      \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s has %zu tensors, %s %zu.", #l1,        \
                                     size_t((l1)->Size()), #l2, size_t((l2)->Size()));                           \
            ret_expr;                                                                                            \
        }                                                                                                        \
    } while (0)
#endif
