// kgsim stand-in for CANN's built-in l0 ops, compiled in a unit of its own (kernel_gym/ascendc/aclnn.py
// adds it to an operator project whose aclnn layer is written on opdev): Contiguous, ViewCopy, Cast,
// Transpose, Reshape, TransData (between plain formats only), ReFormat, UnsqueezeNd, SqueezeNd,
// BroadcastTo, Expand, Fill, ZerosLike, OnesLike, TensorMove, Slice, Pad. On the NPU each is a kernel of
// CANN's own; here GetWorkspaceSize computes the result's description (and storage) and queues a
// host function that moves the elements when the executor runs, charged as one eager device op (a
// launch plus the bytes it reads and writes through HBM: kgsim_eager_op). A view op (Reshape,
// UnsqueezeNd, SqueezeNd, ReFormat, Contiguous of a contiguous tensor) moves nothing and costs
// nothing. The definitions are weak: a project defining one of these itself keeps its own.
#pragma once
#include "opdev/kgsim_opdev.h"

#define KGSIM_L0_BUILTIN __attribute__((weak))

namespace kgsim_opdev {
// Every element of `src`'s view, in row-major order, into `dst`'s view (same element count),
// converted to dst's dtype.
inline void copy_elems(const aclTensor& src, const aclTensor& dst) {
    int64_t n = src.Size();
    size_t ss = aclDataTypeSize(src.dtype), ds = aclDataTypeSize(dst.dtype);
    const uint8_t* sp = static_cast<const uint8_t*>(src.data);
    uint8_t* dp = static_cast<uint8_t*>(dst.data);
    if (!sp || !dp || n <= 0) return;
    std::vector<int64_t> si(src.view_dims.size(), 0), di(dst.view_dims.size(), 0);
    int64_t so = src.offset, dofs = dst.offset;
    bool same = src.dtype == dst.dtype;
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t* s = sp + so * int64_t(ss);
        uint8_t* d = dp + dofs * int64_t(ds);
        if (same) std::memcpy(d, s, ss);
        else set_value(d, dst.GetDataType(), get_value(s, src.GetDataType()));
        for (size_t k = si.size(); k-- > 0;) {  // next index of the source view
            so += src.strides[k];
            if (++si[k] < src.view_dims[k]) break;
            so -= src.strides[k] * si[k];
            si[k] = 0;
        }
        for (size_t k = di.size(); k-- > 0;) {
            dofs += dst.strides[k];
            if (++di[k] < dst.view_dims[k]) break;
            dofs -= dst.strides[k] * di[k];
            di[k] = 0;
        }
    }
}
// Queue a copy of src's view into dst's (both described now, moved when the executor runs)
inline void queue_copy(aclOpExecutor* ex, const aclTensor* src, aclTensor* dst) {
    storage_of(ex, const_cast<aclTensor*>(src));
    storage_of(ex, dst);
    aclTensor s = *src, d = *dst;
    ex->tasks.push_back([s, d](void*, uint64_t) {
        copy_elems(s, d);
        kgsim_eager_op((unsigned long long)(s.Size()) * (aclDataTypeSize(s.dtype) + aclDataTypeSize(d.dtype)));
    });
}
inline aclTensor* contiguous_like(aclOpExecutor* ex, const aclTensor* x, ge::DataType dt) {
    aclTensor* out = new_tensor(ex, x->view_dims, dt, x->GetViewFormat());
    out->storage_format = x->storage_format;
    out->origin_format = x->origin_format;
    return out;
}
inline aclTensor* view_of(aclOpExecutor* ex, const aclTensor* x, const std::vector<int64_t>& dims) {
    aclTensor* v = new_tensor(ex, dims, x->GetDataType(), x->GetViewFormat());
    v->data = storage_of(ex, const_cast<aclTensor*>(x));
    v->storage_dims = x->storage_dims;
    v->offset = x->offset;
    v->storage_format = x->storage_format;
    v->origin_format = x->origin_format;
    v->from_workspace = x->from_workspace;
    return v;
}
inline bool resolve_shape(const aclTensor* x, std::vector<int64_t>& dims) {
    int64_t known = 1, infer = -1;
    for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == -1 && infer < 0) infer = int64_t(k);
        else known *= dims[k];
    }
    if (infer >= 0) dims[size_t(infer)] = known ? x->Size() / known : 0;
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n == x->Size();
}
inline const aclTensor* reshape(const aclTensor* x, std::vector<int64_t> dims, aclOpExecutor* ex) {
    if (!x || !ex) return nullptr;
    if (!resolve_shape(x, dims)) {
        log_error(int64_t(ACLNN_ERR_INNER), "l0op::Reshape: %s elements can not take the shape asked for",
                  std::to_string(x->Size()).c_str());
        return nullptr;
    }
    const aclTensor* c = l0op::Contiguous(x, ex);
    return c ? view_of(ex, c, dims) : nullptr;
}
inline int64_t wrap_dim(int64_t d, size_t rank) { return d < 0 ? d + int64_t(rank) : d; }
}  // namespace kgsim_opdev

namespace l0op {
KGSIM_L0_BUILTIN const aclTensor* Contiguous(const aclTensor* x, aclOpExecutor* executor) {
    if (!x || !executor) return nullptr;
    if (op::IsContiguous(x)) return x;
    aclTensor* out = kgsim_opdev::contiguous_like(executor, x, x->GetDataType());
    kgsim_opdev::queue_copy(executor, x, out);
    return out;
}
KGSIM_L0_BUILTIN const aclTensor* PickViewAsContiguous(const aclTensor* x, aclOpExecutor* executor) {
    return op::IsContiguous(x) ? x : Contiguous(x, executor);
}
KGSIM_L0_BUILTIN const aclTensor* ViewCopy(const aclTensor* x, const aclTensor* y, aclOpExecutor* executor) {
    if (!x || !y || !executor) return nullptr;
    if (x->Size() != y->Size()) {
        kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER), "l0op::ViewCopy: %s elements into a view of %s",
                               std::to_string(x->Size()).c_str(), std::to_string(y->Size()).c_str());
        return nullptr;
    }
    if (x->data == y->data && x->data && x->offset == y->offset && x->strides == y->strides && x->dtype == y->dtype)
        return y;  // the result is already in place
    kgsim_opdev::queue_copy(executor, x, const_cast<aclTensor*>(y));
    return y;
}
KGSIM_L0_BUILTIN const aclTensor* TensorMove(const aclTensor* x, const aclTensor* y, aclOpExecutor* executor) {
    return ViewCopy(x, y, executor);
}
KGSIM_L0_BUILTIN const aclTensor* Cast(const aclTensor* x, op::DataType dst, aclOpExecutor* executor) {
    if (!x || !executor) return nullptr;
    if (x->GetDataType() == dst) return x;
    if (op::TypeSize(dst) == 0) {
        kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER), "l0op::Cast: to %s is not simulated",
                               op::ToString(dst).GetString());
        return nullptr;
    }
    aclTensor* out = kgsim_opdev::contiguous_like(executor, x, dst);
    kgsim_opdev::queue_copy(executor, x, out);
    return out;
}
KGSIM_L0_BUILTIN const aclTensor* CastOnlyForConvBackward(const aclTensor* x, op::DataType dst,
                                                          aclOpExecutor* executor) {
    return Cast(x, dst, executor);
}
KGSIM_L0_BUILTIN const aclTensor* Transpose(const aclTensor* x, const aclIntArray* perm, aclOpExecutor* executor) {
    if (!x || !perm || !executor) return nullptr;
    size_t r = x->view_dims.size();
    if (perm->values.size() != r) {
        kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER), "l0op::Transpose: perm of %zu axes for a %zu-d tensor",
                               perm->values.size(), r);
        return nullptr;
    }
    aclTensor src = *x;  // x's view with its axes permuted, read row-major
    for (size_t k = 0; k < r; ++k) {
        int64_t p = kgsim_opdev::wrap_dim(perm->values[k], r);
        if (p < 0 || size_t(p) >= r) return nullptr;
        src.view_dims[k] = x->view_dims[size_t(p)];
        src.strides[k] = x->strides[size_t(p)];
    }
    aclTensor* out = kgsim_opdev::new_tensor(executor, src.view_dims, x->GetDataType(), x->GetViewFormat());
    kgsim_opdev::storage_of(executor, const_cast<aclTensor*>(x));
    src.data = x->data;
    kgsim_opdev::queue_copy(executor, &src, out);
    return out;
}
KGSIM_L0_BUILTIN const aclTensor* Transpose(const aclTensor* x, const aclTensor* y, const aclTensor* perm,
                                            aclOpExecutor* executor) {
    if (!perm || !perm->data) return nullptr;
    std::vector<int64_t> p;
    for (int64_t i = 0; i < perm->Size(); ++i)
        p.push_back(int64_t(kgsim_opdev::get_value(static_cast<const uint8_t*>(perm->GetData()) +
                                                       i * int64_t(aclDataTypeSize(perm->dtype)),
                                                   perm->GetDataType())));
    aclIntArray a{p};
    const aclTensor* t = Transpose(x, &a, executor);
    return y && t ? ViewCopy(t, y, executor) : t;
}
KGSIM_L0_BUILTIN const aclTensor* Reshape(const aclTensor* x, const op::Shape& shape, aclOpExecutor* executor) {
    return kgsim_opdev::reshape(x, kgsim_opdev::dims_of(shape), executor);
}
KGSIM_L0_BUILTIN const aclTensor* Reshape(const aclTensor* x, const aclIntArray* shape, aclOpExecutor* executor) {
    if (!shape) return nullptr;
    return kgsim_opdev::reshape(x, shape->values, executor);
}
KGSIM_L0_BUILTIN const aclTensor* UnsqueezeNd(const aclTensor* x, const aclIntArray* dim, aclOpExecutor* executor) {
    if (!x || !dim) return nullptr;
    std::vector<int64_t> dims = x->view_dims;
    size_t rank = dims.size() + dim->values.size();
    std::vector<int64_t> axes;
    for (int64_t d : dim->values) axes.push_back(kgsim_opdev::wrap_dim(d, rank));
    std::sort(axes.begin(), axes.end());
    for (int64_t a : axes) {
        if (a < 0 || size_t(a) > dims.size()) return nullptr;
        dims.insert(dims.begin() + a, 1);
    }
    return kgsim_opdev::reshape(x, dims, executor);
}
KGSIM_L0_BUILTIN const aclTensor* UnsqueezeNd(const aclTensor* x, int64_t dim, aclOpExecutor* executor) {
    aclIntArray a{{dim}};
    return UnsqueezeNd(x, &a, executor);
}
KGSIM_L0_BUILTIN const aclTensor* SqueezeNd(const aclTensor* x, const aclIntArray* dim, aclOpExecutor* executor) {
    if (!x || !dim) return nullptr;
    size_t rank = x->view_dims.size();
    std::vector<bool> drop(rank, false);
    for (int64_t d : dim->values) {
        int64_t a = kgsim_opdev::wrap_dim(d, rank);
        if (a >= 0 && size_t(a) < rank && x->view_dims[size_t(a)] == 1) drop[size_t(a)] = true;
    }
    std::vector<int64_t> dims;
    for (size_t k = 0; k < rank; ++k)
        if (!drop[k]) dims.push_back(x->view_dims[k]);
    return kgsim_opdev::reshape(x, dims, executor);
}
KGSIM_L0_BUILTIN const aclTensor* SqueezeNd(const aclTensor* x, int64_t dim, aclOpExecutor* executor) {
    aclIntArray a{{dim}};
    return SqueezeNd(x, &a, executor);
}
KGSIM_L0_BUILTIN const aclTensor* ReFormat(const aclTensor* x, const op::Format& format, aclOpExecutor* executor) {
    if (!x) return nullptr;
    aclTensor* v = nullptr;
    if (executor) {
        v = kgsim_opdev::view_of(executor, x, x->view_dims);
        v->strides = x->strides;
    } else {  // CANN changes the tensor's formats in place when no executor is given
        v = const_cast<aclTensor*>(x);
    }
    v->format = aclFormat(format);
    v->storage_format = int32_t(format);
    v->origin_format = int32_t(format);
    return v;
}
KGSIM_L0_BUILTIN const aclTensor* TransData(const aclTensor* x, op::Format dst, int64_t /*groups*/,
                                            aclOpExecutor* executor) {
    if (!x) return nullptr;
    if (op::IsPrivateFormat(dst) || op::IsPrivateFormat(x->GetStorageFormat())) {
        kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER), "l0op::TransData from %s to %s: only between plain formats "
                               "(ND, NCHW, ...) in the simulator", op::ToString(x->GetStorageFormat()).GetString(),
                               op::ToString(dst).GetString());
        return nullptr;
    }
    return ReFormat(x, dst, executor);
}
KGSIM_L0_BUILTIN const aclTensor* TransDataSpecial(const aclTensor* x, op::Format dst, int64_t groups,
                                                   aclOpExecutor* executor) {
    return TransData(x, dst, groups, executor);
}
KGSIM_L0_BUILTIN const aclTensor* BroadcastTo(const aclTensor* x, const aclIntArray* shape, aclOpExecutor* executor) {
    if (!x || !shape || !executor) return nullptr;
    const std::vector<int64_t>& to = shape->values;
    size_t r = to.size(), xr = x->view_dims.size();
    if (xr > r) return nullptr;
    aclTensor src = *x;  // x's view with broadcast axes of stride 0
    src.view_dims = to;
    src.strides.assign(r, 0);
    for (size_t k = 0; k < xr; ++k) {
        size_t o = k + r - xr;
        if (x->view_dims[k] == to[o]) src.strides[o] = x->strides[k];
        else if (x->view_dims[k] != 1) {
            kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER), "l0op::BroadcastTo: %s can not broadcast to %s",
                                   op::ToString(x->GetViewShape()).GetString(), op::ToString(shape).GetString());
            return nullptr;
        }
    }
    kgsim_opdev::storage_of(executor, const_cast<aclTensor*>(x));
    src.data = x->data;
    aclTensor* out = kgsim_opdev::new_tensor(executor, to, x->GetDataType(), x->GetViewFormat());
    kgsim_opdev::queue_copy(executor, &src, out);
    return out;
}
KGSIM_L0_BUILTIN const aclTensor* BroadcastTo(const aclTensor* x, const aclTensor* y, const aclTensor* /*shape*/,
                                              aclOpExecutor* executor) {
    if (!y) return nullptr;
    aclIntArray a{y->view_dims};
    const aclTensor* t = BroadcastTo(x, &a, executor);
    return t ? ViewCopy(t, y, executor) : nullptr;
}
KGSIM_L0_BUILTIN const aclTensor* Expand(const aclTensor* self, const aclIntArray* shape, aclOpExecutor* executor) {
    return BroadcastTo(self, shape, executor);
}
KGSIM_L0_BUILTIN const aclTensor* Fill(const aclTensor* /*dims*/, const aclTensor* value, const aclIntArray* outShape,
                                       aclOpExecutor* executor) {
    if (!value || !outShape || !executor) return nullptr;
    aclTensor* out = kgsim_opdev::new_tensor(executor, outShape->values, value->GetDataType(), ge::FORMAT_ND);
    kgsim_opdev::storage_of(executor, const_cast<aclTensor*>(value));
    kgsim_opdev::storage_of(executor, out);
    aclTensor v = *value, o = *out;
    executor->tasks.push_back([v, o](void*, uint64_t) {
        aclTensor src = v;  // the value's first element, read Size(o) times
        src.view_dims = o.view_dims;
        src.strides.assign(o.view_dims.size(), 0);
        kgsim_opdev::copy_elems(src, o);
        kgsim_eager_op((unsigned long long)(o.Size()) * aclDataTypeSize(o.dtype));
    });
    return out;
}
inline const aclTensor* kgsim_fill_like(const aclTensor* self, double value, aclOpExecutor* executor) {
    if (!self || !executor) return nullptr;
    aclTensor* out = kgsim_opdev::new_tensor(executor, self->view_dims, self->GetDataType(), self->GetViewFormat());
    kgsim_opdev::storage_of(executor, out);
    aclTensor o = *out;
    executor->tasks.push_back([o, value](void*, uint64_t) {
        size_t es = aclDataTypeSize(o.dtype);
        for (int64_t i = 0; i < o.Size(); ++i)
            kgsim_opdev::set_value(static_cast<uint8_t*>(o.data) + i * int64_t(es), o.GetDataType(), value);
        kgsim_eager_op((unsigned long long)(o.Size()) * es);
    });
    return out;
}
KGSIM_L0_BUILTIN const aclTensor* ZerosLike(const aclTensor* self, aclOpExecutor* executor) {
    return kgsim_fill_like(self, 0.0, executor);
}
KGSIM_L0_BUILTIN const aclTensor* OnesLike(const aclTensor* self, aclOpExecutor* executor) {
    return kgsim_fill_like(self, 1.0, executor);
}
KGSIM_L0_BUILTIN const aclTensor* Slice(const aclTensor* x, const aclIntArray* offsets, const aclIntArray* size,
                                        aclOpExecutor* executor) {
    if (!x || !offsets || !size || !executor) return nullptr;
    size_t r = x->view_dims.size();
    if (offsets->values.size() != r || size->values.size() != r) return nullptr;
    aclTensor src = *x;
    for (size_t k = 0; k < r; ++k) {
        int64_t len = size->values[k] < 0 ? x->view_dims[k] - offsets->values[k] : size->values[k];
        src.offset += offsets->values[k] * x->strides[k];
        src.view_dims[k] = len;
    }
    kgsim_opdev::storage_of(executor, const_cast<aclTensor*>(x));
    src.data = x->data;
    aclTensor* out = kgsim_opdev::new_tensor(executor, src.view_dims, x->GetDataType(), x->GetViewFormat());
    kgsim_opdev::queue_copy(executor, &src, out);
    return out;
}
// Pad (aclnn_kernels/pad.h): zeros around `self`, `paddings` an int tensor of (before, after) per
// axis ([rank, 2] or 2 * rank values) known when the call is described, as its InferShape needs them.
KGSIM_L0_BUILTIN const aclTensor* Pad(const aclTensor* self, const aclTensor* paddings, aclOpExecutor* executor) {
    if (!self || !paddings || !executor) return nullptr;
    const size_t r = self->view_dims.size();
    if (paddings->Size() != int64_t(2 * r) || !paddings->data) {
        kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER),
                               "l0op::Pad: paddings must hold (before, after) for each of the %zu axes, known when "
                               "the call is described (%lld values given)", r, (long long)paddings->Size());
        return nullptr;
    }
    const size_t es = aclDataTypeSize(paddings->dtype);
    const auto pad_at = [&](size_t i) {  // i-th value in row-major order of paddings' view
        int64_t off = paddings->offset;
        for (size_t k = paddings->view_dims.size(), rest = i; k-- > 0;) {
            off += int64_t(rest % size_t(paddings->view_dims[k])) * paddings->strides[k];
            rest /= size_t(paddings->view_dims[k]);
        }
        return int64_t(kgsim_opdev::get_value(static_cast<const uint8_t*>(paddings->data) + off * int64_t(es),
                                              paddings->GetDataType()));
    };
    std::vector<int64_t> dims(r);
    std::vector<int64_t> before(r);
    for (size_t k = 0; k < r; ++k) {
        before[k] = pad_at(2 * k);
        const int64_t after = pad_at(2 * k + 1);
        if (before[k] < 0 || after < 0) {
            kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER), "l0op::Pad: negative padding %lld on axis %zu",
                                   (long long)std::min(before[k], after), k);
            return nullptr;
        }
        dims[k] = self->view_dims[k] + before[k] + after;
    }
    aclTensor* out = kgsim_opdev::new_tensor(executor, dims, self->GetDataType(), self->GetViewFormat());
    kgsim_opdev::storage_of(executor, out);
    const aclTensor o = *out;
    executor->tasks.push_back([o](void*, uint64_t) {  // the zeros, before the interior's copy
        std::memset(o.data, 0, size_t(o.Size()) * aclDataTypeSize(o.dtype));
        kgsim_eager_op((unsigned long long)(o.Size()) * aclDataTypeSize(o.dtype));
    });
    aclTensor inner = *out;  // self's place inside the padded tensor
    inner.view_dims = self->view_dims;
    for (size_t k = 0; k < r; ++k) inner.offset += before[k] * out->strides[k];
    kgsim_opdev::storage_of(executor, const_cast<aclTensor*>(self));
    kgsim_opdev::queue_copy(executor, self, &inner);
    return out;
}
}  // namespace l0op
