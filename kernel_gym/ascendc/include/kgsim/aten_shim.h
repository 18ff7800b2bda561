// The slice of ATen, torch and pybind11 that MultiKernelBench-style python bindings use,
// for the simulator: a binding's C++ really runs (argument checks, output allocation with
// at::empty / empty_like, EXEC_NPU_CMD), without the real torch headers. Tensors are host
// memory; EXEC_NPU_CMD runs the operator project's TilingFunc and kernel on the simulator
// (see kgsim_gen_bind in kernel_gym/ascendc/multikernelbench.py's generated unit).
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernel_operator.h"

// sampled simulation's lazy output buffers (src/rt_sampling.cpp)
extern "C" void* kgsim_lazy_output(unsigned long long nbytes, int dtype);
extern "C" void kgsim_lazy_free(void* base);
extern "C" void* kgsim_gm_alloc(unsigned long long bytes);  // zero-filled GM pages (rt_gm_alloc.cpp)
extern "C" int kgsim_gm_free(void* p);
// an aten op that moves `bytes` on the NPU (a device kernel there, not host work; rt_scalar.cpp)
extern "C" void kgsim_eager_op(unsigned long long bytes);

namespace c10 {
// Codes are the GE data types the operator-project shims use (ge::DataType).
enum class ScalarType : int64_t {
    Float = 0, Half = 1, Char = 2, Int = 3, Byte = 4, Short = 6, Long = 9, Double = 11, Bool = 12, BFloat16 = 27,
};
// The runtime's lazy dtype codes (rt_sampling.cpp) of each ScalarType.
inline int lazy_dtype(ScalarType t) {
    switch (t) {
        case ScalarType::Float: return 0;
        case ScalarType::Half: return 1;
        case ScalarType::BFloat16: return 2;
        case ScalarType::Double: return 3;
        case ScalarType::Char: return 4;
        case ScalarType::Byte: return 5;
        case ScalarType::Short: return 6;
        case ScalarType::Int: return 7;
        case ScalarType::Long: return 8;
        default: return 9;
    }
}
// A list of sizes; `.vec()` gives the std::vector, as c10::ArrayRef does.
struct IntArrayRef : std::vector<int64_t> {
    using std::vector<int64_t>::vector;
    IntArrayRef() = default;
    IntArrayRef(const std::vector<int64_t>& v) : std::vector<int64_t>(v) {}
    IntArrayRef(std::vector<int64_t>&& v) : std::vector<int64_t>(std::move(v)) {}
    std::vector<int64_t> vec() const { return *this; }
    bool equals(const IntArrayRef& o) const {  // c10::ArrayRef::equals: same length, same elements
        return static_cast<const std::vector<int64_t>&>(*this) == static_cast<const std::vector<int64_t>&>(o);
    }
};
template <class T>
using optional = std::optional<T>;
using Scalar = double;

inline size_t element_size(ScalarType t) {
    switch (t) {
        case ScalarType::Float: case ScalarType::Int: return 4;
        case ScalarType::Half: case ScalarType::BFloat16: case ScalarType::Short: return 2;
        case ScalarType::Long: case ScalarType::Double: return 8;
        default: return 1;
    }
}

// Every tensor a binding sees lives on "the NPU" (PrivateUse1, as torch_npu registers it);
// a copy to another device is a plain copy in host memory.
enum class DeviceType : int16_t { CPU = 0, CUDA = 1, PrivateUse1 = 20 };
constexpr DeviceType kCPU = DeviceType::CPU, kPrivateUse1 = DeviceType::PrivateUse1;

struct Device {
    DeviceType type_ = DeviceType::PrivateUse1;
    Device() = default;
    Device(DeviceType t, int = 0) : type_(t) {}  // NOLINT: implicit, as c10::Device
    DeviceType type() const { return type_; }
    bool is_cpu() const { return type_ == DeviceType::CPU; }
    bool is_privateuseone() const { return type_ == DeviceType::PrivateUse1; }
    int index() const { return 0; }
};

struct TensorOptions {
    ScalarType dtype_ = ScalarType::Float;
    Device device_{};
    TensorOptions dtype(ScalarType t) const { TensorOptions o = *this; o.dtype_ = t; return o; }
    template <class D>
    TensorOptions device(const D& d) const {  // a Device or DeviceType; anything else leaves the NPU
        TensorOptions o = *this;
        if constexpr (std::is_constructible_v<Device, D>) o.device_ = Device(d);
        return o;
    }
    Device device() const { return device_; }
    TensorOptions requires_grad(bool = true) const { return *this; }
    ScalarType dtype() const { return dtype_; }
};
}  // namespace c10

namespace at {
using c10::IntArrayRef;
using c10::ScalarType;
using c10::TensorOptions;
using c10::Device;
using c10::DeviceType;
using c10::kCPU;
using c10::kPrivateUse1;
constexpr ScalarType kFloat = ScalarType::Float, kHalf = ScalarType::Half, kBFloat16 = ScalarType::BFloat16,
                     kInt = ScalarType::Int, kLong = ScalarType::Long, kBool = ScalarType::Bool,
                     kChar = ScalarType::Char, kByte = ScalarType::Byte, kShort = ScalarType::Short,
                     kDouble = ScalarType::Double;

class Tensor {
public:
    Tensor() = default;
    // A view of memory owned elsewhere (the caller's torch tensor).
    Tensor(void* data, IntArrayRef sizes, ScalarType dtype) : data_(static_cast<uint8_t*>(data)), sizes_(std::move(sizes)), dtype_(dtype) {}
    static Tensor allocate(IntArrayRef sizes, ScalarType dtype) {
        Tensor t;
        t.sizes_ = std::move(sizes);
        t.dtype_ = dtype;
        size_t bytes = std::max<size_t>(t.nbytes(), 1);
        size_t rounded = npu_block_bytes(bytes);
        // sampled simulation: a large output is a lazy, poisoned region (rt_sampling.cpp)
        if (void* lazy = kgsim_lazy_output(rounded, lazy_dtype(dtype)))
            t.owner_ = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(lazy), [](uint8_t* q) { kgsim_lazy_free(q); });
        else
            t.owner_ = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(kgsim_gm_alloc(rounded)),
                                                [](uint8_t* q) { kgsim_gm_free(q); });
        t.data_ = t.owner_.get();
        return t;
    }

    bool defined() const { return data_ != nullptr || !sizes_.empty(); }
    int64_t dim() const { return int64_t(sizes_.size()); }
    int64_t size(int64_t d) const {
        int64_t n = dim();
        if (d < 0) d += n;
        if (d < 0 || d >= n) throw std::out_of_range("Tensor::size: dimension out of range");
        return sizes_[size_t(d)];
    }
    // a reference, as c10's ArrayRef view: sizes().begin() and sizes().end() are one range
    const IntArrayRef& sizes() const { return sizes_; }
    IntArrayRef strides() const {
        IntArrayRef s(sizes_.size(), 1);
        for (int64_t k = dim() - 2; k >= 0; --k) s[size_t(k)] = s[size_t(k + 1)] * sizes_[size_t(k + 1)];
        return s;
    }
    int64_t stride(int64_t d) const { return strides()[size_t(d < 0 ? d + dim() : d)]; }
    KGSIM_UNINSTRUMENTED int64_t numel() const {
        int64_t n = 1;
        for (int64_t s : sizes_) n *= s;
        return n;
    }
    KGSIM_UNINSTRUMENTED size_t element_size() const { return c10::element_size(dtype_); }
    size_t itemsize() const { return element_size(); }
    size_t nbytes() const { return size_t(numel()) * element_size(); }
    // Bytes of the device allocation behind the tensor: torch_npu's caching allocator hands out
    // blocks of (size + 32) rounded up to 512 B, and an access in that tail does not fault on the
    // NPU; a view of memory owned elsewhere is exactly its bytes.
    static size_t npu_block_bytes(size_t bytes) { return (std::max<size_t>(bytes, 1) + 32 + 511) / 512 * 512; }
    size_t storage_bytes() const { return owner_ ? npu_block_bytes(nbytes()) : nbytes(); }
    ScalarType scalar_type() const { return dtype_; }
    ScalarType dtype() const { return dtype_; }
    TensorOptions options() const { return TensorOptions{}.dtype(dtype_).device(device_); }
    // the device a binding asked for (`.to(at::kCPU)`, `.device(at::kCPU)` options): a tag only, the
    // bytes stay in host memory, so that bindings that check `is_cpu()` on a host copy pass
    Device device() const { return device_; }
    bool is_privateuseone() const { return device().is_privateuseone(); }  // at::TensorBase's, as torch_npu's tensors are
    bool is_contiguous() const { return true; }
    bool is_floating_point() const {
        return dtype_ == kFloat || dtype_ == kHalf || dtype_ == kBFloat16 || dtype_ == kDouble;
    }
    Tensor contiguous() const { return *this; }
    void* data_ptr() const { return data_; }
    template <class T>
    T* data_ptr() const { return reinterpret_cast<T*>(data_); }
    template <class T>
    T* mutable_data_ptr() const { return reinterpret_cast<T*>(data_); }
    template <class T>
    const T* const_data_ptr() const { return reinterpret_cast<const T*>(data_); }

    Tensor view(IntArrayRef shape) const {
        Tensor t = *this;
        int64_t known = 1, infer = -1;
        for (size_t k = 0; k < shape.size(); ++k) {
            if (shape[k] == -1) infer = int64_t(k); else known *= shape[k];
        }
        if (infer >= 0) shape[size_t(infer)] = known ? numel() / known : 0;
        t.sizes_ = shape;
        if (t.numel() != numel()) throw std::runtime_error("view: shape is invalid for the tensor's size");
        return t;
    }
    Tensor reshape(IntArrayRef shape) const { return view(std::move(shape)); }
    // expand / expand_as / broadcast_to: the shim's tensors are contiguous, so the broadcast is
    // materialised (a fresh tensor of the new shape; size-1 and missing leading dimensions repeat).
    KGSIM_UNINSTRUMENTED Tensor expand(IntArrayRef shape, bool /*implicit*/ = false) const {
        const size_t nd = shape.size(), od = sizes_.size();
        if (nd < od) throw std::runtime_error("expand: the number of sizes is less than the tensor's dimensions");
        IntArrayRef src_stride(nd, 0);
        const IntArrayRef st = strides();
        for (size_t j = 0; j < nd; ++j) {
            if (j < nd - od) {
                if (shape[j] < 0) throw std::runtime_error("expand: -1 is not allowed in a new leading dimension");
                continue;
            }
            const size_t k = j - (nd - od);
            if (shape[j] == -1) shape[j] = sizes_[k];
            if (sizes_[k] == shape[j]) src_stride[j] = st[k];
            else if (sizes_[k] != 1) throw std::runtime_error("expand: a non-singleton dimension must match");
        }
        Tensor out = allocate(shape, dtype_);
        const size_t es = element_size();
        const int64_t n = out.numel();
        kgsim_eager_op((unsigned long long)(n) * es * 2);
        IntArrayRef idx(nd, 0);
        for (int64_t i = 0; i < n; ++i) {
            int64_t off = 0;
            for (size_t j = 0; j < nd; ++j) off += idx[j] * src_stride[j];
            std::memcpy(out.data_ + size_t(i) * es, data_ + size_t(off) * es, es);
            for (size_t j = nd; j-- > 0;) {
                if (++idx[j] < shape[j]) break;
                idx[j] = 0;
            }
        }
        return out;
    }
    Tensor expand(std::initializer_list<int64_t> shape, bool implicit = false) const {
        return expand(IntArrayRef(shape), implicit);
    }
    Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
    Tensor broadcast_to(IntArrayRef shape) const { return expand(std::move(shape)); }
    // permute / transpose: materialised too (a fresh contiguous tensor of the permuted shape)
    KGSIM_UNINSTRUMENTED Tensor permute(IntArrayRef dims) const {
        const size_t nd = sizes_.size();
        if (dims.size() != nd) throw std::runtime_error("permute: the number of dims does not match the tensor");
        std::vector<bool> seen(nd, false);
        for (auto& d : dims) {
            if (d < 0) d += int64_t(nd);
            if (d < 0 || d >= int64_t(nd) || seen[size_t(d)]) throw std::runtime_error("permute: dims is not a permutation");
            seen[size_t(d)] = true;
        }
        IntArrayRef shape(nd), src_stride(nd);
        const IntArrayRef st = strides();
        for (size_t j = 0; j < nd; ++j) {
            shape[j] = sizes_[size_t(dims[j])];
            src_stride[j] = st[size_t(dims[j])];
        }
        Tensor out = allocate(shape, dtype_);
        const size_t es = element_size();
        const int64_t n = out.numel();
        kgsim_eager_op((unsigned long long)(n) * es * 2);
        IntArrayRef idx(nd, 0);
        for (int64_t i = 0; i < n; ++i) {
            int64_t off = 0;
            for (size_t j = 0; j < nd; ++j) off += idx[j] * src_stride[j];
            std::memcpy(out.data_ + size_t(i) * es, data_ + size_t(off) * es, es);
            for (size_t j = nd; j-- > 0;) {
                if (++idx[j] < shape[j]) break;
                idx[j] = 0;
            }
        }
        return out;
    }
    Tensor permute(std::initializer_list<int64_t> dims) const { return permute(IntArrayRef(dims)); }
    Tensor transpose(int64_t d0, int64_t d1) const {
        IntArrayRef dims(sizes_.size());
        for (size_t j = 0; j < dims.size(); ++j) dims[j] = int64_t(j);
        if (d0 < 0) d0 += dim();
        if (d1 < 0) d1 += dim();
        if (d0 < 0 || d1 < 0 || d0 >= dim() || d1 >= dim()) throw std::out_of_range("transpose: dimension out of range");
        std::swap(dims[size_t(d0)], dims[size_t(d1)]);
        return permute(std::move(dims));
    }
    Tensor flatten() const { return view({numel()}); }
    // squeeze / unsqueeze: the same bytes with size-1 dimensions dropped or one added (views, as in ATen)
    Tensor squeeze() const {
        Tensor t = *this;
        t.sizes_.clear();
        for (int64_t s : sizes_)
            if (s != 1) t.sizes_.push_back(s);
        return t;
    }
    Tensor squeeze(int64_t d) const {
        d = wrap_dim(d, dim(), "squeeze");
        Tensor t = *this;
        if (sizes_[size_t(d)] == 1) t.sizes_.erase(t.sizes_.begin() + d);
        return t;
    }
    Tensor unsqueeze(int64_t d) const {
        d = wrap_dim(d, dim() + 1, "unsqueeze");
        Tensor t = *this;
        t.sizes_.insert(t.sizes_.begin() + d, 1);
        return t;
    }
    // select: the slice at `index` of dimension `d`, without that dimension (narrow's view or copy)
    Tensor select(int64_t d, int64_t index) const {
        d = wrap_dim(d, dim(), "select");
        const int64_t n = sizes_[size_t(d)];
        if (index < -n || index >= n) throw std::out_of_range("select: index out of range for the dimension");
        return narrow(d, index < 0 ? index + n : index, 1).squeeze(d);
    }
    Tensor clone() const {
        Tensor t = allocate(sizes_, dtype_);
        t.device_ = device_;
        kgsim_eager_op(2ull * nbytes());
        if (nbytes()) std::memcpy(t.data_, data_, nbytes());
        return t;
    }
    // narrow: `length` entries of dimension `d` from `start`; a view of dimension 0, else a fresh
    // tensor (as select)
    KGSIM_UNINSTRUMENTED Tensor narrow(int64_t d, int64_t start, int64_t length) const {
        d = wrap_dim(d, dim(), "narrow");
        const int64_t n = sizes_[size_t(d)];
        if (start < 0) start += n;
        if (start < 0 || length < 0 || start + length > n) throw std::out_of_range("narrow: start + length exceeds the dimension");
        IntArrayRef shape = sizes_;
        shape[size_t(d)] = length;
        const size_t es = element_size();
        const int64_t inner = strides()[size_t(d)], outer = d == 0 ? 1 : numel() / (n * inner);
        if (d == 0) {
            Tensor t = *this;
            t.sizes_ = shape;
            t.data_ = data_ + size_t(start * inner) * es;
            return t;
        }
        Tensor out = allocate(shape, dtype_);
        out.device_ = device_;
        kgsim_eager_op((unsigned long long)(outer * length * inner) * es * 2);
        for (int64_t o = 0; o < outer; ++o)
            std::memcpy(out.data_ + size_t(o * length * inner) * es, data_ + size_t((o * n + start) * inner) * es,
                        size_t(length * inner) * es);
        return out;
    }
    // copy_: src's values (converted to this dtype) into this tensor's bytes; same element count
    Tensor& copy_(const Tensor& src, bool /*non_blocking*/ = false) {
        if (src.numel() != numel()) throw std::runtime_error("copy_: the source has another number of elements");
        const Tensor v = src.to(dtype_);
        kgsim_eager_op(2ull * nbytes());
        if (nbytes()) std::memmove(data_, v.data_, nbytes());
        return *this;
    }
    // new_empty / new_zeros: a tensor of this one's dtype and device unless the options say otherwise
    Tensor new_empty(IntArrayRef shape) const { return allocate(std::move(shape), dtype_).to(device_); }
    Tensor new_empty(IntArrayRef shape, TensorOptions o) const { return allocate(std::move(shape), o.dtype()).to(o.device()); }
    Tensor new_zeros(IntArrayRef shape) const { return new_empty(std::move(shape)).zero_(); }
    Tensor new_zeros(IntArrayRef shape, TensorOptions o) const { return new_empty(std::move(shape), o).zero_(); }
    Tensor& zero_() {
        kgsim_eager_op(nbytes());
        if (nbytes()) std::memset(data_, 0, nbytes());
        return *this;
    }
    Tensor& fill_(double v);
    Tensor to(ScalarType t, bool non_blocking = false, bool copy = false) const;
    Tensor to(const TensorOptions& o) const { return to(o.dtype()); }
    // A device move: host memory stays host memory; `copy` asks for a fresh buffer.
    Tensor to(Device d, bool non_blocking = false, bool copy = false) const {
        Tensor t = copy ? clone() : *this;
        t.device_ = d;
        return t;
    }
    Tensor to(DeviceType d, bool non_blocking = false, bool copy = false) const {
        return to(Device(d), non_blocking, copy);
    }
    template <class T>
    T item() const;
    Tensor cpu() const { return to(DeviceType::CPU); }
    Tensor npu() const { return to(DeviceType::PrivateUse1); }

private:
    // a dimension index as ATen takes it (negative counts from the end), checked against n dimensions
    static int64_t wrap_dim(int64_t d, int64_t n, const char* what) {
        if (d < 0) d += n;
        if (d < 0 || d >= n) throw std::out_of_range(std::string(what) + ": dimension out of range");
        return d;
    }
    uint8_t* data_ = nullptr;
    std::shared_ptr<uint8_t> owner_;
    IntArrayRef sizes_;
    ScalarType dtype_ = ScalarType::Float;
    Device device_{};
};

namespace detail {
KGSIM_UNINSTRUMENTED inline double load(const uint8_t* p, ScalarType t) {
    switch (t) {
        case kFloat: return *reinterpret_cast<const float*>(p);
        case kHalf: return double(float(*reinterpret_cast<const half*>(p)));
        case kBFloat16: return double(float(*reinterpret_cast<const bfloat16_t*>(p)));
        case kDouble: return *reinterpret_cast<const double*>(p);
        case kInt: return *reinterpret_cast<const int32_t*>(p);
        case kLong: return double(*reinterpret_cast<const int64_t*>(p));
        case kShort: return *reinterpret_cast<const int16_t*>(p);
        case kChar: return *reinterpret_cast<const int8_t*>(p);
        default: return *p;
    }
}
KGSIM_UNINSTRUMENTED inline void store(uint8_t* p, ScalarType t, double v) {
    switch (t) {
        case kFloat: *reinterpret_cast<float*>(p) = float(v); break;
        case kHalf: *reinterpret_cast<half*>(p) = half(float(v)); break;
        case kBFloat16: *reinterpret_cast<bfloat16_t*>(p) = bfloat16_t(float(v)); break;
        case kDouble: *reinterpret_cast<double*>(p) = v; break;
        case kInt: *reinterpret_cast<int32_t*>(p) = int32_t(v); break;
        case kLong: *reinterpret_cast<int64_t*>(p) = int64_t(v); break;
        case kShort: *reinterpret_cast<int16_t*>(p) = int16_t(v); break;
        case kChar: *reinterpret_cast<int8_t*>(p) = int8_t(v); break;
        case kBool: *p = v != 0; break;
        default: *p = uint8_t(v); break;
    }
}
}  // namespace detail

KGSIM_UNINSTRUMENTED inline Tensor Tensor::to(ScalarType t, bool, bool copy) const {
    if (t == dtype_) return copy ? clone() : *this;
    Tensor out = allocate(sizes_, t);
    out.device_ = device_;
    size_t src = element_size(), dst = out.element_size();
    const int64_t n = numel();  // once: a call per element would be host code of its own
    kgsim_eager_op((unsigned long long)(n) * (src + dst));
    for (int64_t i = 0; i < n; ++i)
        detail::store(out.data_ + size_t(i) * dst, t, detail::load(data_ + size_t(i) * src, dtype_));
    return out;
}

KGSIM_UNINSTRUMENTED inline Tensor& Tensor::fill_(double v) {
    size_t size = element_size();
    const int64_t n = numel();
    kgsim_eager_op((unsigned long long)(n) * size);
    for (int64_t i = 0; i < n; ++i) detail::store(data_ + size_t(i) * size, dtype_, v);
    return *this;
}

template <class T>
T Tensor::item() const {
    if (numel() != 1) throw std::runtime_error("item(): the tensor has " + std::to_string(numel()) + " elements, not 1");
    return static_cast<T>(detail::load(data_, dtype_));
}

inline Tensor empty(IntArrayRef sizes, TensorOptions o = {}) {
    return Tensor::allocate(std::move(sizes), o.dtype()).to(o.device());
}
inline Tensor empty(std::initializer_list<int64_t> sizes, TensorOptions o = {}) { return empty(IntArrayRef(sizes), o); }
inline Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.options()); }
inline Tensor empty_like(const Tensor& t, TensorOptions o) { return empty(t.sizes(), o); }
inline Tensor zeros(IntArrayRef sizes, TensorOptions o = {}) { return empty(std::move(sizes), o).zero_(); }
inline Tensor zeros(std::initializer_list<int64_t> sizes, TensorOptions o = {}) { return zeros(IntArrayRef(sizes), o); }
inline Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.options()); }
inline Tensor zeros_like(const Tensor& t, TensorOptions o) { return zeros(t.sizes(), o); }
inline Tensor ones(IntArrayRef sizes, TensorOptions o = {}) { return empty(std::move(sizes), o).fill_(1.0); }
inline Tensor ones(std::initializer_list<int64_t> sizes, TensorOptions o = {}) { return ones(IntArrayRef(sizes), o); }
inline Tensor ones_like(const Tensor& t) { return ones(t.sizes(), t.options()); }
inline Tensor ones_like(const Tensor& t, TensorOptions o) { return ones(t.sizes(), o); }
inline Tensor full(IntArrayRef sizes, double v, TensorOptions o = {}) { return empty(std::move(sizes), o).fill_(v); }
inline Tensor full(std::initializer_list<int64_t> sizes, double v, TensorOptions o = {}) { return full(IntArrayRef(sizes), v, o); }
inline Tensor full_like(const Tensor& t, double v) { return full(t.sizes(), v, t.options()); }
inline Tensor full_like(const Tensor& t, double v, TensorOptions o) { return full(t.sizes(), v, o); }
// broadcast_tensors: every tensor expanded to the common (right-aligned) broadcast shape, as
// torch.broadcast_tensors; bindings use it to pre-expand operands before EXEC_NPU_CMD.
inline std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& ts) {
    size_t nd = 0;
    for (const auto& t : ts) nd = std::max(nd, size_t(t.dim()));
    IntArrayRef shape(nd, 1);
    for (const auto& t : ts) {
        for (size_t k = 0; k < size_t(t.dim()); ++k) {
            int64_t s = t.size(int64_t(k)), &d = shape[nd - size_t(t.dim()) + k];
            if (s == d || s == 1) continue;
            if (d != 1) throw std::runtime_error("broadcast_tensors: the shapes cannot be broadcast together");
            d = s;
        }
    }
    std::vector<Tensor> out;
    for (const auto& t : ts) out.push_back(t.expand(shape));
    return out;
}
}  // namespace at

namespace torch {
using namespace at;
using at::Tensor;
}  // namespace torch

// TORCH_CHECK(cond, message parts...): a failed check is an exception with the message, as in torch.
namespace kgsim_gen_bind {
namespace {  // internal linkage: each compiled module keeps its own registry
inline void cat(std::ostringstream&) {}
template <class A, class... R>
void cat(std::ostringstream& o, const A& a, const R&... r) {
    o << a;
    cat(o, r...);
}
template <class... A>
[[noreturn]] void check_failed(const char* cond, const A&... parts) {
    std::ostringstream o;
    o << "TORCH_CHECK(" << cond << ") failed";
    if constexpr (sizeof...(parts) > 0) {
        o << ": ";
        cat(o, parts...);
    }
    throw std::runtime_error(o.str());
}
}  // namespace
}  // namespace kgsim_gen_bind
#define TORCH_CHECK(cond, ...) \
    do { if (!(cond)) ::kgsim_gen_bind::check_failed(#cond, ##__VA_ARGS__); } while (0)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define TORCH_FN(fn) (fn)

// ---- the generic part of a binding's calls, compiled once into the runtime library ------------
// (src/rt_binding.cpp): marshalling a call's arguments, EXEC_NPU_CMD's tiling, scratch and launch,
// and the results Python reads back. A module passes its own registry entry and operator.
namespace ops {
class OpDef;
}
namespace kgsim_gen_binding {
struct Arg {
    int kind = 0;  // 0 tensor, 1 number, 2 list of numbers (IntArrayRef, std::vector<int64_t>, std::vector<float>)
    at::Tensor tensor;
    double number = 0;
    bool fp = false;  // a float or double: passed in a floating-point register, apart from the others
    std::vector<double> list;  // kind 2: the values
    bool float_list = false;   // kind 2 given as floats (an aclFloatArray through EXEC_NPU_CMD)
};
// A list type a binding takes or EXEC_NPU_CMD passes: IntArrayRef, std::vector of numbers.
template <class T>
struct is_number_list : std::false_type {};
template <>
struct is_number_list<at::IntArrayRef> : std::true_type {};
template <class E, class A>
struct is_number_list<std::vector<E, A>> : std::bool_constant<std::is_arithmetic_v<E>> {};
template <class T>
constexpr bool is_number_list_v = is_number_list<std::decay_t<T>>::value;
using Invoker = std::function<std::vector<at::Tensor>(const std::vector<Arg>&)>;
using LaunchV = void (*)(int64_t block_dim, int64_t tiling_key, uint8_t** ptrs, size_t n);
// EXEC_NPU_CMD: TilingFunc on the tensors' shapes and the attribute values, then the kernel.
void exec(::ops::OpDef* def, LaunchV launch, size_t kernel_params, const char* api, std::vector<Arg> args);
// A binding function called from Python with flat arrays (25 dims per tensor); the number of results.
// A list argument (kinds 2: integers, 3: floats) has its ndims[k] values at lists[ptrs[k]].
int64_t call(const Invoker& fn, int64_t nargs, const int64_t* kinds, const int64_t* ptrs, const int64_t* dims,
             const int64_t* ndims, const int64_t* dtypes, const double* numbers, const double* lists);
int64_t result(int64_t i, int64_t* dims, int64_t* ndim, int64_t* dtype);  // result i's shape and dtype; its bytes
void copy_result(int64_t i, uint8_t* dst);
}  // namespace kgsim_gen_binding

namespace pybind11 {
// `py::arg("alpha") = 0.5`: a numeric default fills the argument when the caller leaves it out.
struct arg {
    explicit arg(const char*) {}
    bool has_default = false;
    double value = 0;
    template <class T>
    arg& operator=(const T& v) {
        if constexpr (std::is_arithmetic_v<T>) {
            has_default = true;
            value = double(v);
        }
        return *this;
    }
};
}  // namespace pybind11
namespace py = pybind11;  // as torch/extension.h declares it

// ---- bindings: PYBIND11_MODULE / TORCH_LIBRARY(_IMPL) register functions by name -------------
namespace kgsim_gen_bind {
namespace {  // internal linkage: each compiled module keeps its own registry
using ::kgsim_gen_binding::Arg;
using ::kgsim_gen_binding::Invoker;

inline std::vector<std::pair<std::string, Invoker>>& registry() {
    static std::vector<std::pair<std::string, Invoker>> r;
    return r;
}

// A tensor argument is handed out by reference, so `at::Tensor&` parameters (the `_out`
// variants of bindings) bind too; other types by value.
template <class T>
using ArgOf = std::conditional_t<std::is_same_v<std::decay_t<T>, at::Tensor>, at::Tensor&, std::decay_t<T>>;

template <class T>
ArgOf<T> from_arg(Arg& a) {
    using D = std::decay_t<T>;
    if constexpr (std::is_same_v<D, at::Tensor>) {
        if (a.kind != 0) throw std::runtime_error("binding argument: expected a tensor, got a number");
        return a.tensor;
    } else if constexpr (std::is_same_v<D, std::optional<at::Tensor>>) {
        return a.kind == 0 ? std::optional<at::Tensor>(a.tensor) : std::nullopt;
    } else if constexpr (std::is_arithmetic_v<D>) {
        if (a.kind != 1)
            throw std::runtime_error(std::string("binding argument: expected a number, got a ") +
                                     (a.kind == 0 ? "tensor" : "list"));
        return static_cast<D>(a.number);
    } else if constexpr (::kgsim_gen_binding::is_number_list_v<D>) {
        if (a.kind != 2)
            throw std::runtime_error(std::string("binding argument: expected a list of numbers, got a ") +
                                     (a.kind == 0 ? "tensor" : "number"));
        D out;
        for (double v : a.list) out.push_back(static_cast<typename D::value_type>(v));
        return out;
    } else {
        static_assert(std::is_arithmetic_v<D>, "binding argument type not supported by the simulator's shim");
    }
}

template <class R>
std::vector<at::Tensor> results(R&& r) {
    using D = std::decay_t<R>;
    if constexpr (std::is_same_v<D, at::Tensor>) {
        return {r};
    } else if constexpr (std::is_same_v<D, std::vector<at::Tensor>>) {
        return r;
    } else {
        std::vector<at::Tensor> out;
        std::apply([&](auto&&... t) { (out.push_back(t), ...); }, r);
        return out;
    }
}

template <class R, class... A, size_t... I>
std::vector<at::Tensor> invoke(R (*fn)(A...), std::vector<Arg> args, std::index_sequence<I...>) {
    if (args.size() != sizeof...(A))
        throw std::runtime_error("binding called with " + std::to_string(args.size()) + " arguments; it takes " +
                                 std::to_string(sizeof...(A)));
    if constexpr (std::is_void_v<R>) {
        fn(from_arg<A>(args[I])...);
        return {};
    } else {
        return results(fn(from_arg<A>(args[I])...));
    }
}

struct Module {
    template <class R, class... A, class... Extra>
    Module& def(const char* name, R (*fn)(A...), const Extra&... extra) {
        std::string n(name);
        size_t at = n.rfind("::");
        if (at != std::string::npos) n = n.substr(at + 2);
        for (auto& e : registry())
            if (e.first == n) return *this;
        std::vector<std::optional<double>> defaults;  // one per py::arg, as pybind11 numbers them
        auto note = [&](const auto& x) {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, ::pybind11::arg>)
                defaults.push_back(x.has_default ? std::optional<double>(x.value) : std::nullopt);
        };
        (note(extra), ...);
        registry().emplace_back(n, [fn, defaults](const std::vector<Arg>& a) {
            std::vector<Arg> full = a;
            if (defaults.size() == sizeof...(A))
                for (size_t k = full.size(); k < defaults.size() && defaults[k]; ++k) {
                    Arg d;
                    d.kind = 1;
                    d.number = *defaults[k];
                    full.push_back(d);
                }
            return invoke(fn, std::move(full), std::index_sequence_for<A...>{});
        });
        return *this;
    }
    Module& def(const char*) { return *this; }  // a TORCH_LIBRARY schema string
    template <class F>
    Module& impl(const char* name, F fn) { return def(name, fn); }
};

struct Init {
    explicit Init(void (*body)(Module&)) {
        Module m;
        body(m);
    }
};
}  // namespace
}  // namespace kgsim_gen_bind


#define KGSIM_GEN_CAT2(a, b) a##b
#define KGSIM_GEN_CAT(a, b) KGSIM_GEN_CAT2(a, b)
#define KGSIM_GEN_BIND_BLOCK(var)                                                                   \
    static void KGSIM_GEN_CAT(kgsim_gen_bind_body_, __LINE__)(::kgsim_gen_bind::Module & var);      \
    static ::kgsim_gen_bind::Init KGSIM_GEN_CAT(kgsim_gen_bind_init_, __LINE__)(                    \
        KGSIM_GEN_CAT(kgsim_gen_bind_body_, __LINE__));                                             \
    static void KGSIM_GEN_CAT(kgsim_gen_bind_body_, __LINE__)(::kgsim_gen_bind::Module & var)
#define PYBIND11_MODULE(name, var) KGSIM_GEN_BIND_BLOCK(var)
#define TORCH_LIBRARY(ns, var) KGSIM_GEN_BIND_BLOCK(var)
#define TORCH_LIBRARY_IMPL(ns, key, var) KGSIM_GEN_BIND_BLOCK(var)
#define TORCH_LIBRARY_FRAGMENT(ns, var) KGSIM_GEN_BIND_BLOCK(var)
#ifndef TORCH_EXTENSION_NAME
#define TORCH_EXTENSION_NAME custom_ops_lib
#endif

// EXEC_NPU_CMD(aclnnXxx, inputs..., attributes..., outputs...): the operator project's
// TilingFunc and kernel, run by the generated unit (kgsim_gen_exec).
namespace kgsim_gen_bind {
namespace {  // internal linkage: each compiled module keeps its own registry
void exec(const char* api, std::vector<Arg> args);
inline void collect(std::vector<Arg>&) {}
template <class A, class... R>
void collect(std::vector<Arg>& out, const A& a, const R&... r) {
    Arg x;
    using D = std::decay_t<A>;
    if constexpr (std::is_same_v<D, at::Tensor>) {
        x.kind = 0;
        x.tensor = a;
    } else if constexpr (std::is_arithmetic_v<D>) {
        x.kind = 1;
        x.number = double(a);
        x.fp = std::is_floating_point_v<D>;
    } else if constexpr (::kgsim_gen_binding::is_number_list_v<D>) {
        // a list attribute (aclIntArray / aclFloatArray on the NPU: a pointer, in a general register)
        x.kind = 2;
        for (const auto& v : a) x.list.push_back(double(v));
        x.float_list = std::is_floating_point_v<typename D::value_type>;
    } else {
        static_assert(std::is_arithmetic_v<D>, "EXEC_NPU_CMD argument type not supported by the simulator's shim");
    }
    out.push_back(std::move(x));
    collect(out, r...);
}
template <class... A>
void exec_cmd(const char* api, const A&... args) {
    std::vector<Arg> v;
    collect(v, args...);
    exec(api, std::move(v));
}
}  // namespace
}  // namespace kgsim_gen_bind
#define EXEC_NPU_CMD(api, ...) ::kgsim_gen_bind::exec_cmd(#api, ##__VA_ARGS__)
