// kgsim stand-in for CANN's op-API framework ("opdev"): what an operator project's own aclnn layer
// (op_host/aclnn_<op>.cpp on l0 ops, op_host/<op>_l0.cpp) is written against. Every opdev/*.h,
// aclnn_kernels/*.h and aclnnop/aclnn_util.h header of the simulator includes this one.
//
// Modelled: the executor (CREATE_EXECUTOR / UniqueExecutor / ReleaseTo / GetWorkspaceSize /
// CommonOpExecutorRun), the aclTensor views (shape, strides, offset, dtype, formats), the dtype,
// shape and format utilities, the log and check macros, the platform query, and the l0 launch of
// the project's own kernel (ADD_TO_LAUNCHER_LIST_AICORE with OP_INPUT / OP_OUTPUT / OP_ATTR, and
// INFER_SHAPE): GetWorkspaceSize runs the op's TilingFunc (InferShape) then, as CANN does, and
// queues the launch; the second call runs what was queued, in order. CANN's built-in l0 ops
// (Contiguous, ViewCopy, Cast, Transpose, Reshape, ...) are host functions on the GM tensors
// (opdev/kgsim_opdev_builtins.h), each charged as one eager device op (kgsim_eager_op).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "aclnn/acl_meta.h"
#include "graph/types.h"
#include "kgsim/aclnn_exec.h"
#include "register/op_def_registry.h"
#include "register/op_impl_registry.h"

extern "C" void kgsim_eager_op(unsigned long long bytes);

namespace op {
// (code written `using namespace op;` names vector and string unqualified: CANN's headers bring them)
using std::string;
using std::vector;
using DataType = ge::DataType;
using Format = ge::Format;
using Shape = gert::Shape;
constexpr size_t MAX_DIM_NUM = 8;

// CANN's FVector: a vector with an inline capacity N (here a capacity hint only)
template <class T, size_t N = 8>
class FVector {
public:
    using value_type = T;
    using iterator = typename std::vector<T>::iterator;
    using const_iterator = typename std::vector<T>::const_iterator;
    FVector() = default;
    FVector(std::initializer_list<T> l) : v_(l) {}
    explicit FVector(size_t n) : v_(n) {}
    FVector(size_t n, const T& x) : v_(n, x) {}
    template <class It, class = decltype(*std::declval<It>())>
    FVector(It b, It e) : v_(b, e) {}
    template <size_t M>
    FVector(const FVector<T, M>& o) : v_(o.begin(), o.end()) {}
    FVector(const std::vector<T>& o) : v_(o) {}
    size_t size() const { return v_.size(); }
    bool empty() const { return v_.empty(); }
    T* data() { return v_.data(); }
    const T* data() const { return v_.data(); }
    T& operator[](size_t i) { return v_[i]; }
    const T& operator[](size_t i) const { return v_[i]; }
    T& at(size_t i) { return v_.at(i); }
    const T& at(size_t i) const { return v_.at(i); }
    iterator begin() { return v_.begin(); }
    iterator end() { return v_.end(); }
    const_iterator begin() const { return v_.begin(); }
    const_iterator end() const { return v_.end(); }
    const_iterator cbegin() const { return v_.cbegin(); }
    const_iterator cend() const { return v_.cend(); }
    T& back() { return v_.back(); }
    const T& back() const { return v_.back(); }
    T& front() { return v_.front(); }
    const T& front() const { return v_.front(); }
    void push_back(const T& x) { v_.push_back(x); }
    template <class... A>
    T& emplace_back(A&&... a) { return v_.emplace_back(std::forward<A>(a)...); }
    void pop_back() { v_.pop_back(); }
    void clear() { v_.clear(); }
    void resize(size_t n) { v_.resize(n); }
    void resize(size_t n, const T& x) { v_.resize(n, x); }
    void reserve(size_t n) { v_.reserve(n); }
    void assign(size_t n, const T& x) { v_.assign(n, x); }
    template <class It>
    void assign(It b, It e) { v_.assign(b, e); }
    iterator insert(const_iterator at, const T& x) { return v_.insert(at, x); }
    template <class It>
    iterator insert(const_iterator at, It b, It e) { return v_.insert(at, b, e); }
    iterator erase(const_iterator at) { return v_.erase(at); }
    iterator erase(const_iterator b, const_iterator e) { return v_.erase(b, e); }
    bool operator==(const FVector& o) const { return v_ == o.v_; }
    bool operator!=(const FVector& o) const { return v_ != o.v_; }

private:
    std::vector<T> v_;
};
// FVector<bool>: real bools in contiguous storage (std::vector<bool> packs bits, so its elements
// have no bool& to hand out: an aclnn layer's `FVector<bool, N> flags; flags[i] = ...` needs one)
template <size_t N>
class FVector<bool, N> {
    struct Cell {
        bool v;
    };
    static_assert(sizeof(Cell) == sizeof(bool), "one bool per cell");

public:
    using value_type = bool;
    using iterator = bool*;
    using const_iterator = const bool*;
    FVector() = default;
    FVector(std::initializer_list<bool> l) { for (bool b : l) push_back(b); }
    explicit FVector(size_t n) : v_(n, Cell{false}) {}
    FVector(size_t n, bool x) : v_(n, Cell{x}) {}
    template <class It, class = decltype(*std::declval<It>())>
    FVector(It b, It e) { for (; b != e; ++b) push_back(bool(*b)); }
    template <size_t M>
    FVector(const FVector<bool, M>& o) : FVector(o.begin(), o.end()) {}
    size_t size() const { return v_.size(); }
    bool empty() const { return v_.empty(); }
    bool* data() { return v_.empty() ? nullptr : &v_[0].v; }
    const bool* data() const { return v_.empty() ? nullptr : &v_[0].v; }
    bool& operator[](size_t i) { return v_[i].v; }
    const bool& operator[](size_t i) const { return v_[i].v; }
    bool& at(size_t i) { return v_.at(i).v; }
    const bool& at(size_t i) const { return v_.at(i).v; }
    iterator begin() { return data(); }
    iterator end() { return data() + size(); }
    const_iterator begin() const { return data(); }
    const_iterator end() const { return data() + size(); }
    const_iterator cbegin() const { return begin(); }
    const_iterator cend() const { return end(); }
    bool& back() { return v_.back().v; }
    const bool& back() const { return v_.back().v; }
    bool& front() { return v_.front().v; }
    const bool& front() const { return v_.front().v; }
    void push_back(bool x) { v_.push_back(Cell{x}); }
    bool& emplace_back(bool x) { return v_.emplace_back(Cell{x}).v; }
    void pop_back() { v_.pop_back(); }
    void clear() { v_.clear(); }
    void resize(size_t n) { v_.resize(n, Cell{false}); }
    void resize(size_t n, bool x) { v_.resize(n, Cell{x}); }
    void reserve(size_t n) { v_.reserve(n); }
    void assign(size_t n, bool x) { v_.assign(n, Cell{x}); }
    bool operator==(const FVector& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }
    bool operator!=(const FVector& o) const { return !(*this == o); }

private:
    std::vector<Cell> v_;
};
template <class T, size_t N = 8>
using SmallVector = FVector<T, N>;
using Strides = FVector<int64_t, 25>;
using ShapeVector = FVector<int64_t, 25>;

}  // namespace op
#include "platform/soc_spec.h"
namespace op {
// ---- platform ------------------------------------------------------------------------------
enum class SocVersion {
    ASCEND910 = 0, ASCEND910B, ASCEND910_93, ASCEND910_95, ASCEND950 = ASCEND910_95, ASCEND910E, ASCEND310,
    ASCEND310P, ASCEND310B, ASCEND310C, ASCEND610LITE, KIRINX90, KIRIN9030, ASCEND350, RESERVED_VERSION = 99999
};
enum SocSpec { INST_MMAD = 0 };
enum SocSpecAbility { INST_MMAD_F162F16 = 0, INST_MMAD_F162F32, INST_MMAD_H322F32, INST_MMAD_F322F32 };
// The simulated SoC is an Atlas A2 (910B) part, as platform_ascendc's GetSocVersion answers.
class PlatformInfo {
public:
    SocVersion GetSocVersion() const { return SocVersion::ASCEND910B; }
    NpuArch GetCurNpuArch() const { return NpuArch::DAV_2201; }  // the Atlas A2/A3 AI Core
    const std::string& GetSocLongVersion() const {
        static const std::string name = kgsim::config_int("aic_cores") == 24 ? "Ascend910B2" : "Ascend910B3";
        return name;
    }
    int64_t GetCubeCoreNum() const { return kgsim::config_int("aic_cores"); }
    int64_t GetVectorCoreNum() const { return kgsim::config_int("aiv_cores"); }
    int32_t GetDeviceId() const { return 0; }
    bool Valid() const { return true; }
    bool CheckSupport(SocSpec, SocSpecAbility) const { return true; }
    uint32_t GetBlockSize() const { return 32; }
    int64_t GetUbSize() const { return kgsim::config_int("usable_ub_bytes"); }
};
inline const PlatformInfo& GetCurrentPlatformInfo() {
    static PlatformInfo p;
    return p;
}

// ---- strings (CANN's ToString returns an AscendString: .GetString()) ---------------------------
class KgsimString {
public:
    KgsimString() = default;
    KgsimString(std::string s) : s_(std::move(s)) {}
    const char* GetString() const { return s_.c_str(); }
    const char* c_str() const { return s_.c_str(); }
    const std::string& str() const { return s_; }
    operator std::string() const { return s_; }

private:
    std::string s_;
};
inline const char* kgsim_dtype_name(DataType d) {
    switch (d) {
        case ge::DT_FLOAT: return "DT_FLOAT";
        case ge::DT_FLOAT16: return "DT_FLOAT16";
        case ge::DT_INT8: return "DT_INT8";
        case ge::DT_INT32: return "DT_INT32";
        case ge::DT_UINT8: return "DT_UINT8";
        case ge::DT_INT16: return "DT_INT16";
        case ge::DT_UINT16: return "DT_UINT16";
        case ge::DT_UINT32: return "DT_UINT32";
        case ge::DT_INT64: return "DT_INT64";
        case ge::DT_UINT64: return "DT_UINT64";
        case ge::DT_DOUBLE: return "DT_DOUBLE";
        case ge::DT_BOOL: return "DT_BOOL";
        case ge::DT_COMPLEX64: return "DT_COMPLEX64";
        case ge::DT_COMPLEX128: return "DT_COMPLEX128";
        case ge::DT_BF16: return "DT_BF16";
        case ge::DT_INT4: return "DT_INT4";
        default: return "DT_UNDEFINED";
    }
}
inline KgsimString ToString(DataType d) { return KgsimString(kgsim_dtype_name(d)); }
inline KgsimString ToString(SocVersion v) {
    switch (v) {
        case SocVersion::ASCEND910: return KgsimString("Ascend910");
        case SocVersion::ASCEND910B: return KgsimString("Ascend910B");
        case SocVersion::ASCEND910_93: return KgsimString("Ascend910_93");
        case SocVersion::ASCEND310P: return KgsimString("Ascend310P");
        default: return KgsimString("unknown");
    }
}
inline KgsimString ToString(Format f) {
    switch (int(f) & 0xff) {
        case ge::FORMAT_NCHW: return KgsimString("NCHW");
        case ge::FORMAT_NHWC: return KgsimString("NHWC");
        case ge::FORMAT_ND: return KgsimString("ND");
        case ge::FORMAT_NC1HWC0: return KgsimString("NC1HWC0");
        case ge::FORMAT_FRACTAL_Z: return KgsimString("FRACTAL_Z");
        case ge::FORMAT_FRACTAL_NZ: return KgsimString("FRACTAL_NZ");
        case ge::FORMAT_NCDHW: return KgsimString("NCDHW");
        case ge::FORMAT_NDHWC: return KgsimString("NDHWC");
        case ge::FORMAT_NDC1HWC0: return KgsimString("NDC1HWC0");
        case ge::FORMAT_HWCN: return KgsimString("HWCN");
        case ge::FORMAT_NCL: return KgsimString("NCL");
        default: return KgsimString("FORMAT_" + std::to_string(int(f)));
    }
}
inline KgsimString ToString(const Shape& s) {
    std::string o = "[";
    for (size_t i = 0; i < s.GetDimNum(); ++i) o += (i ? ", " : "") + std::to_string(s.GetDim(i));
    return KgsimString(o + "]");
}
template <size_t N>
inline KgsimString ToString(const FVector<int64_t, N>& v) {
    std::string o = "[";
    for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + std::to_string(v[i]);
    return KgsimString(o + "]");
}
inline KgsimString ToString(const std::initializer_list<DataType>& l) {
    std::string o = "[";
    size_t i = 0;
    for (DataType d : l) o += (i++ ? ", " : "") + std::string(kgsim_dtype_name(d));
    return KgsimString(o + "]");
}
inline KgsimString ToString(const std::vector<DataType>& l) {
    std::string o = "[";
    for (size_t i = 0; i < l.size(); ++i) o += (i ? ", " : "") + std::string(kgsim_dtype_name(l[i]));
    return KgsimString(o + "]");
}
inline KgsimString ToString(const aclIntArray* a) {
    std::string o = "[";
    for (size_t i = 0; a && i < a->values.size(); ++i) o += (i ? ", " : "") + std::to_string(a->values[i]);
    return KgsimString(o + "]");
}
inline KgsimString ToString(const aclFloatArray* a) {
    std::string o = "[";
    for (size_t i = 0; a && i < a->values.size(); ++i) o += (i ? ", " : "") + std::to_string(a->values[i]);
    return KgsimString(o + "]");
}
inline KgsimString ToString(const aclBoolArray* a) {
    std::string o = "[";
    for (size_t i = 0; a && i < a->values.size(); ++i) o += (i ? ", " : "") + std::string(a->values[i] ? "1" : "0");
    return KgsimString(o + "]");
}
inline KgsimString ToString(const aclScalar* s) { return KgsimString(s ? std::to_string(s->ToDouble()) : "null"); }

// ---- data types ------------------------------------------------------------------------------
inline size_t TypeSize(DataType d) {
    int n = ge::GetSizeByDataType(d);
    return n > 0 ? size_t(n) : 0;
}
inline bool CheckType(DataType d, const std::initializer_list<DataType>& l) {
    return std::find(l.begin(), l.end(), d) != l.end();
}
inline bool CheckType(DataType d, const std::vector<DataType>& l) { return std::find(l.begin(), l.end(), d) != l.end(); }
template <size_t N>
inline bool CheckType(DataType d, const FVector<DataType, N>& l) {
    return std::find(l.begin(), l.end(), d) != l.end();
}
inline bool IsComplexType(DataType d) { return d == ge::DT_COMPLEX64 || d == ge::DT_COMPLEX128; }
inline bool IsFloatingType(DataType d) {
    return d == ge::DT_FLOAT || d == ge::DT_FLOAT16 || d == ge::DT_DOUBLE || d == ge::DT_BF16;
}
inline bool IsIntegralType(DataType d) {
    return d == ge::DT_INT8 || d == ge::DT_INT16 || d == ge::DT_INT32 || d == ge::DT_INT64 || d == ge::DT_UINT8 ||
           d == ge::DT_UINT16 || d == ge::DT_UINT32 || d == ge::DT_UINT64;
}
inline bool IsIntegralType(DataType d, bool include_bool) { return IsIntegralType(d) || (include_bool && d == ge::DT_BOOL); }
inline bool IsBasicType(DataType d) { return IsFloatingType(d) || IsIntegralType(d, true) || IsComplexType(d); }
// PyTorch's type promotion over the dtypes CANN's aclnn layer promotes (bool < integers < floats < complex)
inline int kgsim_promote_rank(DataType d) {
    switch (d) {
        case ge::DT_BOOL: return 0;
        case ge::DT_UINT8: case ge::DT_INT8: case ge::DT_INT16: case ge::DT_UINT16: case ge::DT_INT32:
        case ge::DT_UINT32: case ge::DT_INT64: case ge::DT_UINT64: return 1;
        case ge::DT_FLOAT16: case ge::DT_BF16: case ge::DT_FLOAT: case ge::DT_DOUBLE: return 2;
        case ge::DT_COMPLEX64: case ge::DT_COMPLEX128: return 3;
        default: return -1;
    }
}
inline DataType PromoteType(DataType a, DataType b) {
    if (a == b) return a;
    int ra = kgsim_promote_rank(a), rb = kgsim_promote_rank(b);
    if (ra < 0 || rb < 0) return ge::DT_UNDEFINED;
    if (ra != rb) {
        if (ra == 3 || rb == 3) {  // complex with a real type: the complex of the wider precision
            DataType c = ra == 3 ? a : b, r = ra == 3 ? b : a;
            return r == ge::DT_DOUBLE ? ge::DT_COMPLEX128 : c;
        }
        return ra > rb ? a : b;
    }
    if (ra == 2) {
        if ((a == ge::DT_FLOAT16 && b == ge::DT_BF16) || (a == ge::DT_BF16 && b == ge::DT_FLOAT16)) return ge::DT_FLOAT;
        auto w = [](DataType d) { return d == ge::DT_DOUBLE ? 3 : d == ge::DT_FLOAT ? 2 : 1; };
        return w(a) >= w(b) ? a : b;
    }
    if (ra == 3) return ge::DT_COMPLEX128;
    // integers: signed and unsigned mixes widen; uint8 with int8 is int16
    auto size = [](DataType d) { return ge::GetSizeByDataType(d); };
    bool ua = a == ge::DT_UINT8 || a == ge::DT_UINT16 || a == ge::DT_UINT32 || a == ge::DT_UINT64;
    bool ub = b == ge::DT_UINT8 || b == ge::DT_UINT16 || b == ge::DT_UINT32 || b == ge::DT_UINT64;
    if (ua == ub) return size(a) >= size(b) ? a : b;
    DataType s = ua ? b : a, u = ua ? a : b;
    if (size(s) > size(u)) return s;
    if (u == ge::DT_UINT8) return ge::DT_INT16;
    return ge::DT_UNDEFINED;
}
// whether a result of dtype `from` may be written to a tensor of dtype `to` (PyTorch's can_cast)
inline bool CanCast(DataType from, DataType to) {
    int rf = kgsim_promote_rank(from), rt = kgsim_promote_rank(to);
    if (rf < 0 || rt < 0) return false;
    return rf <= rt;
}
inline DataType ToOpDataType(aclDataType d) { return DataType(d); }
inline aclDataType ToAclDataType(DataType d) { return aclDataType(d); }
inline Format ToOpFormat(aclFormat f) { return Format(f); }
inline aclFormat ToAclFormat(Format f) { return aclFormat(f); }

// ---- formats ---------------------------------------------------------------------------------
inline Format GetPrimaryFormat(Format f) { return Format(int32_t(f) & 0xff); }
inline bool IsPrivateFormat(Format f) {
    switch (int32_t(f) & 0xff) {
        case ge::FORMAT_NC1HWC0: case ge::FORMAT_FRACTAL_Z: case ge::FORMAT_NC1HWC0_C04: case ge::FORMAT_FRACTAL_Z_C04:
        case ge::FORMAT_FRACTAL_NZ: case ge::FORMAT_NDC1HWC0: case ge::FORMAT_FRACTAL_Z_3D: return true;
        default: return false;
    }
}

// ---- shapes ----------------------------------------------------------------------------------
inline FVector<int64_t, 25> ToShapeVector(const Shape& s) {
    FVector<int64_t, 25> v;
    for (size_t i = 0; i < s.GetDimNum(); ++i) v.push_back(s.GetDim(i));
    return v;
}
inline void ToShape(const int64_t* dims, uint64_t n, Shape& out) {
    out.SetDimNum(0);
    for (uint64_t i = 0; i < n; ++i) out.AppendDim(dims[i]);
}
template <size_t N>
inline void ToShape(const FVector<int64_t, N>& v, Shape& out) { ToShape(v.data(), v.size(), out); }
inline Shape ToShape(const aclIntArray* a) {
    Shape s;
    if (a) ToShape(a->values.data(), a->values.size(), s);
    return s;
}
inline bool BroadcastInferShape(const Shape& a, const Shape& b, Shape& out) {
    size_t n = std::max(a.GetDimNum(), b.GetDimNum());
    Shape r;
    for (size_t i = 0; i < n; ++i) {
        int64_t da = i + a.GetDimNum() >= n ? a.GetDim(i + a.GetDimNum() - n) : 1;
        int64_t db = i + b.GetDimNum() >= n ? b.GetDim(i + b.GetDimNum() - n) : 1;
        if (da != db && da != 1 && db != 1) return false;
        r.AppendDim(da == 1 ? db : da);
    }
    out = r;
    return true;
}
inline bool CheckBroadcastShape(const Shape& a, const Shape& b) {
    Shape r;
    return BroadcastInferShape(a, b, r);
}
}  // namespace op

// ---- aclTensor's opdev members (declared in aclnn/acl_meta.h) ---------------------------------
inline gert::Shape aclTensor::GetViewShape() const {
    gert::Shape s;
    for (int64_t d : view_dims) s.AppendDim(d);
    return s;
}
inline gert::Shape aclTensor::GetStorageShape() const {
    gert::Shape s;
    for (int64_t d : (storage_dims.empty() ? view_dims : storage_dims)) s.AppendDim(d);
    return s;
}
inline gert::Shape aclTensor::GetOriginalShape() const {
    gert::Shape s;
    for (int64_t d : (has_origin ? origin_dims : view_dims)) s.AppendDim(d);
    return s;
}
inline op::FVector<int64_t, 25> aclTensor::GetViewStrides() const { return op::FVector<int64_t, 25>(strides); }
inline void aclTensor::SetViewShape(const gert::Shape& s) const {
    std::vector<int64_t> d;
    for (size_t i = 0; i < s.GetDimNum(); ++i) d.push_back(s.GetDim(i));
    bool same_rank = d.size() == view_dims.size();
    view_dims = d;
    if (!same_rank || strides.size() != d.size()) {  // contiguous strides for the new shape
        strides.assign(d.size(), 1);
        for (size_t k = d.size(); k-- > 1;) strides[k - 1] = strides[k] * d[k];
    }
}
inline void aclTensor::SetStorageShape(const gert::Shape& s) const {
    storage_dims.clear();
    for (size_t i = 0; i < s.GetDimNum(); ++i) storage_dims.push_back(s.GetDim(i));
}
inline void aclTensor::SetOriginalShape(const gert::Shape& s) const {
    origin_dims.clear();
    for (size_t i = 0; i < s.GetDimNum(); ++i) origin_dims.push_back(s.GetDim(i));
    has_origin = true;
}
inline void aclTensor::SetViewStrides(const op::FVector<int64_t, 25>& s) const { strides.assign(s.begin(), s.end()); }

namespace op {
inline bool IsContiguous(const aclTensor* t) {
    if (!t) return false;
    int64_t expect = 1;
    for (size_t k = t->view_dims.size(); k-- > 0;) {
        if (t->view_dims[k] != 1 && k < t->strides.size() && t->strides[k] != expect) return false;
        expect *= t->view_dims[k];
    }
    return true;
}
}  // namespace op
inline op::KgsimString aclIntArray::ToString() const { return op::ToString(this); }
inline op::KgsimString aclFloatArray::ToString() const { return op::ToString(this); }
inline op::KgsimString aclBoolArray::ToString() const { return op::ToString(this); }
inline op::KgsimString aclScalar::ToString() const { return op::ToString(this); }
inline op::KgsimString aclTensor::ToString() const {
    std::string s = std::string("aclTensor(shape=") + op::ToString(GetViewShape()).GetString() +
                    ", strides=" + op::ToString(GetViewStrides()).GetString() + ", offset=" + std::to_string(offset) +
                    ", dtype=" + op::ToString(GetDataType()).GetString() + ", format=" +
                    op::ToString(GetViewFormat()).GetString() + ")";
    return op::KgsimString(s);
}
namespace op {
// whether a tensor's view lies within its storage: as many strides as view dims, and every element
// the view reaches (from its offset, strides possibly negative) inside the storage shape's elements
inline bool Validate(const aclTensor* t) {
    if (!t) return false;
    if (t->view_dims.size() != t->strides.size()) return false;
    int64_t hi = t->offset, lo = t->offset;
    for (size_t k = 0; k < t->strides.size(); ++k) {
        int64_t reach = t->strides[k] * (t->view_dims[k] - 1);
        hi += std::max<int64_t>(0, reach);
        lo += std::min<int64_t>(0, reach);
    }
    return hi + 1 <= t->GetStorageShape().GetShapeSize() && lo >= 0;
}
}  // namespace op

// ---- the executor ----------------------------------------------------------------------------
namespace kgsim_opdev {
// The storage an executor's tensor gets when first used (its shape may come from INFER_SHAPE)
inline uint8_t* storage_of(aclOpExecutor* ex, aclTensor* t) {
    if (t->data) return static_cast<uint8_t*>(t->data);
    int64_t n = 1;
    for (int64_t d : (t->storage_dims.empty() ? t->view_dims : t->storage_dims)) n *= d;
    if (t->storage_dims.empty()) t->storage_dims = t->view_dims;
    size_t bytes = size_t(std::max<int64_t>(n, 1)) * std::max<size_t>(aclDataTypeSize(t->dtype), 1);
    t->data = ::kgsim_aclnn::gm_buffer(ex, bytes, "opdev tensor");
    t->from_workspace = true;
    return static_cast<uint8_t*>(t->data);
}
inline aclTensor* new_tensor(aclOpExecutor* ex, const std::vector<int64_t>& dims, ge::DataType dt, ge::Format f) {
    auto t = std::make_shared<aclTensor>();
    t->view_dims = dims;
    t->storage_dims = dims;
    t->strides.assign(dims.size(), 1);
    for (size_t k = dims.size(); k-- > 1;) t->strides[k - 1] = t->strides[k] * dims[k];
    t->dtype = aclDataType(dt);
    t->format = aclFormat(f);
    ex->keep.push_back(t);
    return t.get();
}
inline std::vector<int64_t> dims_of(const gert::Shape& s) {
    std::vector<int64_t> d;
    for (size_t i = 0; i < s.GetDimNum(); ++i) d.push_back(s.GetDim(i));
    return d;
}
inline void set_value(uint8_t* p, ge::DataType dt, double v) {
    switch (dt) {
        case ge::DT_FLOAT: { float x = float(v); std::memcpy(p, &x, 4); break; }
        case ge::DT_FLOAT16: { _Float16 x = _Float16(v); std::memcpy(p, &x, 2); break; }
        case ge::DT_BF16: {
            float f = float(v);
            uint32_t w;
            std::memcpy(&w, &f, 4);
            uint16_t h = (w & 0x7fffffffu) > 0x7f800000u ? uint16_t((w >> 16) | 0x40u)
                                                          : uint16_t((w + 0x7fffu + ((w >> 16) & 1u)) >> 16);
            std::memcpy(p, &h, 2);
            break;
        }
        case ge::DT_DOUBLE: std::memcpy(p, &v, 8); break;
        case ge::DT_INT8: { int8_t x = int8_t(v); std::memcpy(p, &x, 1); break; }
        case ge::DT_UINT8: { uint8_t x = uint8_t(v); std::memcpy(p, &x, 1); break; }
        case ge::DT_INT16: { int16_t x = int16_t(v); std::memcpy(p, &x, 2); break; }
        case ge::DT_UINT16: { uint16_t x = uint16_t(v); std::memcpy(p, &x, 2); break; }
        case ge::DT_INT32: { int32_t x = int32_t(v); std::memcpy(p, &x, 4); break; }
        case ge::DT_UINT32: { uint32_t x = uint32_t(v); std::memcpy(p, &x, 4); break; }
        case ge::DT_INT64: { int64_t x = int64_t(v); std::memcpy(p, &x, 8); break; }
        case ge::DT_UINT64: { uint64_t x = uint64_t(v); std::memcpy(p, &x, 8); break; }
        case ge::DT_BOOL: { uint8_t x = v != 0.0; std::memcpy(p, &x, 1); break; }
        default: break;
    }
}
inline double get_value(const uint8_t* p, ge::DataType dt) {
    aclScalar s;
    s.dtype = aclDataType(dt);
    std::memcpy(s.bytes, p, std::min<size_t>(std::max(ge::GetSizeByDataType(dt), 0), sizeof(s.bytes)));
    return s.ToDouble();
}
inline aclTensor* values_tensor(aclOpExecutor* ex, const std::vector<double>& vals, ge::DataType dt, bool scalar) {
    std::vector<int64_t> dims;
    if (!scalar) dims.push_back(int64_t(vals.size()));
    aclTensor* t = new_tensor(ex, dims, dt, ge::FORMAT_ND);
    uint8_t* p = storage_of(ex, t);
    size_t es = aclDataTypeSize(t->dtype);
    for (size_t i = 0; i < vals.size(); ++i) set_value(p + i * es, dt, vals[i]);
    return t;
}
}  // namespace kgsim_opdev

inline aclTensor* aclOpExecutor::AllocTensor(const gert::Shape& shape, ge::DataType dt, ge::Format format) {
    return kgsim_opdev::new_tensor(this, kgsim_opdev::dims_of(shape), dt, format);
}
inline aclTensor* aclOpExecutor::AllocTensor(const gert::Shape& storage, const gert::Shape& origin, ge::DataType dt,
                                             ge::Format storage_format, ge::Format origin_format) {
    aclTensor* t = kgsim_opdev::new_tensor(this, kgsim_opdev::dims_of(origin), dt, origin_format);
    t->storage_dims = kgsim_opdev::dims_of(storage);
    t->SetOriginalShape(origin);
    t->storage_format = int32_t(storage_format);
    t->origin_format = int32_t(origin_format);
    return t;
}
inline aclTensor* aclOpExecutor::AllocTensor(ge::DataType dt, ge::Format storage_format, ge::Format origin_format) {
    aclTensor* t = kgsim_opdev::new_tensor(this, {}, dt, origin_format);
    t->storage_dims.clear();
    t->storage_format = int32_t(storage_format);
    t->origin_format = int32_t(origin_format);
    return t;
}
inline aclTensor* aclOpExecutor::AllocHostTensor(const gert::Shape& shape, ge::DataType dt, ge::Format format) {
    aclTensor* t = AllocTensor(shape, dt, format);
    kgsim_opdev::storage_of(this, t);
    return t;
}
#define KGSIM_OPDEV_HOST_TENSOR(T)                                                                \
    inline aclTensor* aclOpExecutor::AllocHostTensor(const T* value, uint64_t size, ge::DataType dt) { \
        std::vector<double> v;                                                                    \
        for (uint64_t i = 0; i < size; ++i) v.push_back(double(value[i]));                         \
        return kgsim_opdev::values_tensor(this, v, dt, false);                                    \
    }
KGSIM_OPDEV_HOST_TENSOR(int64_t)
KGSIM_OPDEV_HOST_TENSOR(float)
KGSIM_OPDEV_HOST_TENSOR(int32_t)
KGSIM_OPDEV_HOST_TENSOR(bool)
KGSIM_OPDEV_HOST_TENSOR(double)
#undef KGSIM_OPDEV_HOST_TENSOR
inline aclIntArray* aclOpExecutor::AllocIntArray(const int64_t* value, uint64_t size) {
    auto a = std::make_shared<aclIntArray>();
    if (value) a->values.assign(value, value + size);
    keep.push_back(a);
    return a.get();
}
inline aclFloatArray* aclOpExecutor::AllocFloatArray(const float* value, uint64_t size) {
    auto a = std::make_shared<aclFloatArray>();
    if (value) a->values.assign(value, value + size);
    keep.push_back(a);
    return a.get();
}
inline aclBoolArray* aclOpExecutor::AllocBoolArray(const bool* value, uint64_t size) {
    auto a = std::make_shared<aclBoolArray>();
    if (value) a->values.assign(value, value + size);
    keep.push_back(a);
    return a.get();
}
inline aclTensorList* aclOpExecutor::AllocTensorList(const aclTensor* const* tensors, uint64_t size) {
    auto l = std::make_shared<aclTensorList>();
    if (tensors) l->tensors.assign(tensors, tensors + size);
    keep.push_back(l);
    return l.get();
}
inline aclScalar* aclOpExecutor::AllocScalar(const void* value, ge::DataType dt) {
    auto s = std::make_shared<aclScalar>();
    s->dtype = aclDataType(dt);
    size_t n = std::min(aclDataTypeSize(s->dtype), sizeof(s->bytes));
    if (value) std::memcpy(s->bytes, value, n);
    keep.push_back(s);
    return s.get();
}
template <class T>
aclScalar* aclOpExecutor::AllocScalar(T value) {
    if constexpr (std::is_same_v<T, float>) return AllocScalar(&value, ge::DT_FLOAT);
    else if constexpr (std::is_same_v<T, double>) return AllocScalar(&value, ge::DT_DOUBLE);
    else if constexpr (std::is_same_v<T, bool>) return AllocScalar(&value, ge::DT_BOOL);
    else if constexpr (std::is_same_v<T, int32_t>) return AllocScalar(&value, ge::DT_INT32);
    else if constexpr (std::is_same_v<T, int8_t>) return AllocScalar(&value, ge::DT_INT8);
    else if constexpr (std::is_same_v<T, uint8_t>) return AllocScalar(&value, ge::DT_UINT8);
    else if constexpr (std::is_same_v<T, int16_t>) return AllocScalar(&value, ge::DT_INT16);
    else {
        int64_t v = int64_t(value);
        return AllocScalar(&v, ge::DT_INT64);
    }
}
inline const aclTensor* aclOpExecutor::ConvertToTensor(const aclScalar* s, ge::DataType dt) {
    if (!s) return nullptr;
    return kgsim_opdev::values_tensor(this, {s->ToDouble()}, dt, true);
}
inline const aclTensor* aclOpExecutor::ConvertToTensor(const aclIntArray* a, ge::DataType dt) {
    if (!a) return nullptr;
    return kgsim_opdev::values_tensor(this, std::vector<double>(a->values.begin(), a->values.end()), dt, false);
}
inline const aclTensor* aclOpExecutor::ConvertToTensor(const aclFloatArray* a, ge::DataType dt) {
    if (!a) return nullptr;
    return kgsim_opdev::values_tensor(this, std::vector<double>(a->values.begin(), a->values.end()), dt, false);
}
inline const aclTensor* aclOpExecutor::ConvertToTensor(const aclBoolArray* a, ge::DataType dt) {
    if (!a) return nullptr;
    return kgsim_opdev::values_tensor(this, std::vector<double>(a->values.begin(), a->values.end()), dt, false);
}
template <class T>
const aclTensor* aclOpExecutor::ConvertToTensor(const T* value, uint64_t size, ge::DataType dt) {
    std::vector<double> v;
    for (uint64_t i = 0; value && i < size; ++i) v.push_back(double(value[i]));
    return kgsim_opdev::values_tensor(this, v, dt, false);
}
inline aclTensor* aclOpExecutor::CreateView(const aclTensor* t, const gert::Shape& shape, int64_t offset) {
    if (!t) return nullptr;
    aclTensor* v = kgsim_opdev::new_tensor(this, kgsim_opdev::dims_of(shape), t->GetDataType(), t->GetViewFormat());
    v->storage_dims = t->storage_dims;
    v->data = t->data;
    v->offset = offset;
    return v;
}
inline aclTensor* aclOpExecutor::CreateView(const aclTensor* t, const gert::Shape& shape,
                                            const op::FVector<int64_t, 25>& strides, int64_t offset) {
    aclTensor* v = CreateView(t, shape, offset);
    if (v) v->strides.assign(strides.begin(), strides.end());
    return v;
}
inline uint64_t aclOpExecutor::GetWorkspaceSize() const { return opdev_workspace; }

namespace op {
// A tensor of host values (AllocHostTensor, ConvertToTensor) copied to the device: here device
// memory is host memory and those tensors already live in GM, so the tensor itself.
inline const aclTensor* CopyToNpu(const aclTensor* t, aclOpExecutor* /*executor*/) { return t; }
inline const aclTensor* CopyToNpuSync(const aclTensor* t, aclOpExecutor* /*executor*/) { return t; }
}  // namespace op

// CREATE_EXECUTOR(): the executor of one aclnn call, freed unless released to the caller.
class UniqueExecutor {
public:
    UniqueExecutor() : ex_(new aclOpExecutor) { ex_->api = "aclnn (opdev)"; }
    UniqueExecutor(const char* api) : ex_(new aclOpExecutor) { ex_->api = api ? api : "aclnn (opdev)"; }
    UniqueExecutor(UniqueExecutor&& o) noexcept : ex_(std::move(o.ex_)) {}
    aclOpExecutor* get() const { return ex_.get(); }
    aclOpExecutor* operator->() const { return ex_.get(); }
    void ReleaseTo(aclOpExecutor** out) {
        if (out) *out = ex_.release();
    }

private:
    std::unique_ptr<aclOpExecutor> ex_;
};
#define CREATE_EXECUTOR() UniqueExecutor(__func__)

// The second phase: everything the first queued, in order; the executor is freed (one launch each).
inline aclnnStatus CommonOpExecutorRun(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                       aclrtStream /*stream*/) {
    if (!executor) {
        std::fprintf(stderr, "[ERROR] CommonOpExecutorRun: executor is null\n");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    std::unique_ptr<aclOpExecutor> own(executor);
    if (executor->opdev_workspace > 0 && (!workspace || workspaceSize < executor->opdev_workspace)) {
        kgsim_acl::recent_error() = executor->api + ": the workspace is smaller than GetWorkspaceSize asked for";
        std::fprintf(stderr, "[ERROR] %s\n", kgsim_acl::recent_error().c_str());
        return ACLNN_ERR_PARAM_INVALID;
    }
    for (auto& task : executor->tasks) task(workspace, workspaceSize);
    return ACLNN_SUCCESS;
}

// ---- logging and checks ----------------------------------------------------------------------
#include "opdev/kgsim_oplog.h"
#ifndef OP_LOGE
#define OP_LOGE(code, ...) ::kgsim_opdev::log_error(code, __VA_ARGS__)
#endif
#ifndef OP_LOGE_WITHOUT_REPORT
#define OP_LOGE_WITHOUT_REPORT(code, ...) ::kgsim_opdev::log_error(code, __VA_ARGS__)
#endif
#ifndef OP_LOGW
#define OP_LOGW(...) do { } while (0)
#endif
#ifndef OP_LOGI
#define OP_LOGI(...) do { } while (0)
#endif
#ifndef OP_LOGD
#define OP_LOGD(...) do { } while (0)
#endif
#ifndef OP_LOGI_IF_RETURN
#define OP_LOGI_IF_RETURN(...) do { } while (0)
#endif

#ifndef CHECK_RET
#define CHECK_RET(cond, ret) \
    do {                     \
        if (!(cond)) {       \
            return ret;      \
        }                    \
    } while (0)
#endif
#define CHECK_COND(cond, ret, ...)                               \
    do {                                                         \
        if (!(cond)) {                                           \
            ::kgsim_opdev::log_error(int64_t(ret), __VA_ARGS__); \
            return ret;                                          \
        }                                                        \
    } while (0)
#define OP_CHECK(cond, log_expr, ret_expr) \
    do {                                   \
        if (!(cond)) {                     \
            log_expr;                      \
            ret_expr;                      \
        }                                  \
    } while (0)
#define OP_CHECK_NULL(param, ret_expr)                                                        \
    do {                                                                                      \
        if ((param) == nullptr) {                                                             \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_NULLPTR), "expected %s not to be null.", #param); \
            ret_expr;                                                                         \
        }                                                                                     \
    } while (0)
#define OP_CHECK_COMM_INPUT(workspaceSize, executor)                                          \
    do {                                                                                      \
        if ((workspaceSize) == nullptr || (executor) == nullptr) {                            \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_NULLPTR), "workspaceSize and executor must not be null."); \
            return ACLNN_ERR_PARAM_NULLPTR;                                                   \
        }                                                                                     \
    } while (0)
#define OP_CHECK_DTYPE_NOT_SUPPORT(tensor, list, ret_expr)                                                   \
    do {                                                                                                     \
        if (!::op::CheckType((tensor)->GetDataType(), list)) {                                               \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s dtype %s should be in dtype support list %s.", \
                                     #tensor, ::op::ToString((tensor)->GetDataType()).GetString(),           \
                                     ::op::ToString(list).GetString());                                      \
            ret_expr;                                                                                        \
        }                                                                                                    \
    } while (0)
#define OP_CHECK_DTYPE_NOT_MATCH(tensor, expected, ret_expr)                                                  \
    do {                                                                                                      \
        if ((tensor)->GetDataType() != (expected)) {                                                          \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s dtype %s should be %s.", #tensor,   \
                                     ::op::ToString((tensor)->GetDataType()).GetString(),                     \
                                     ::op::ToString(::op::DataType(expected)).GetString());                   \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_DTYPE_NOT_SAME(t1, t2, ret_expr)                                                             \
    do {                                                                                                      \
        if ((t1)->GetDataType() != (t2)->GetDataType()) {                                                     \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s dtype %s and %s dtype %s should be the same.", \
                                     #t1, ::op::ToString((t1)->GetDataType()).GetString(), #t2,               \
                                     ::op::ToString((t2)->GetDataType()).GetString());                        \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_RESULT_DTYPE_CAST_FAILED(from, to, ret_expr)                                                 \
    do {                                                                                                      \
        if (!::op::CanCast(from, to)) {                                                                       \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "result dtype %s can not cast to %s.",  \
                                     ::op::ToString(::op::DataType(from)).GetString(),                        \
                                     ::op::ToString(::op::DataType(to)).GetString());                         \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_MAX_DIM(tensor, max_dim, ret_expr)                                                           \
    do {                                                                                                      \
        if ((tensor)->GetViewShape().GetDimNum() > size_t(max_dim)) {                                         \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s has %zu dims, more than %zu.", #tensor, \
                                     (tensor)->GetViewShape().GetDimNum(), size_t(max_dim));                  \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_MIN_DIM(tensor, min_dim, ret_expr)                                                           \
    do {                                                                                                      \
        if ((tensor)->GetViewShape().GetDimNum() < size_t(min_dim)) {                                         \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s has %zu dims, fewer than %zu.", #tensor, \
                                     (tensor)->GetViewShape().GetDimNum(), size_t(min_dim));                  \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_WRONG_DIMENSION(tensor, dim, ret_expr)                                                       \
    do {                                                                                                      \
        if ((tensor)->GetViewShape().GetDimNum() != size_t(dim)) {                                            \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s has %zu dims, expected %zu.", #tensor, \
                                     (tensor)->GetViewShape().GetDimNum(), size_t(dim));                      \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_SHAPE_NOT_EQUAL(t1, t2, ret_expr)                                                            \
    do {                                                                                                      \
        if ((t1)->GetViewShape() != (t2)->GetViewShape()) {                                                   \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s shape %s and %s shape %s should be equal.", \
                                     #t1, ::op::ToString((t1)->GetViewShape()).GetString(), #t2,              \
                                     ::op::ToString((t2)->GetViewShape()).GetString());                       \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_SHAPE_NOT_EQUAL_WITH_EXPECTED_SIZE(tensor, expected, ret_expr)                               \
    do {                                                                                                      \
        if ((tensor)->GetViewShape() != (expected)) {                                                         \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s shape %s should be %s.", #tensor,   \
                                     ::op::ToString((tensor)->GetViewShape()).GetString(),                    \
                                     ::op::ToString(expected).GetString());                                   \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_BROADCAST(t1, t2, ret_expr)                                                                  \
    do {                                                                                                      \
        if (!::op::CheckBroadcastShape((t1)->GetViewShape(), (t2)->GetViewShape())) {                         \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s and %s can not broadcast.", #t1, #t2); \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_BROADCAST_WITH_SHAPE(tensor, shape, ret_expr)                                                \
    do {                                                                                                      \
        ::op::Shape kgsim_bc_;                                                                                \
        if (!::op::BroadcastInferShape((tensor)->GetViewShape(), shape, kgsim_bc_) || kgsim_bc_ != (shape)) { \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_PARAM_INVALID), "%s can not broadcast to %s.", #tensor, \
                                     ::op::ToString(shape).GetString());                                      \
            ret_expr;                                                                                         \
        }                                                                                                     \
    } while (0)
#define OP_CHECK_ADD_TO_LAUNCHER_LIST_AICORE(cond, ret_expr, ...)                          \
    do {                                                                                   \
        if (cond) {                                                                        \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER), __VA_ARGS__);              \
            ret_expr;                                                                      \
        }                                                                                  \
    } while (0)
#define OP_CHECK_INFERSHAPE(cond, ret_expr, ...)                                           \
    do {                                                                                   \
        if (cond) {                                                                        \
            ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER_INFERSHAPE_ERROR), __VA_ARGS__); \
            ret_expr;                                                                      \
        }                                                                                  \
    } while (0)

// ---- dfx: the framework's tracing and profiling hooks (nothing to trace here) -----------------
// (empty: written with and without a semicolon after them)
#define L2_DFX_PHASE_1(...)
#define L2_DFX_PHASE_2(...)
#define L0_DFX(...)
#define DFX_IN(...)
#define DFX_OUT(...)
#define OP_TYPE_REGISTER(type) [[maybe_unused]] static constexpr const char* kgsim_op_type_##type = #type

// ---- the l0 launch of the project's own kernel ------------------------------------------------
namespace kgsim_opdev {
using LaunchV = ::kgsim_aclnn::LaunchV;
struct KernelEntry {
    ::ops::OpDef* (*def)() = nullptr;
    LaunchV launch = nullptr;
    size_t kernel_params = 0;
    std::vector<int64_t> compiled;  // the dtypes a DTYPE_<NAME> kernel was built for (empty: any)
};
// The op types whose kernel this program holds (the project's own, registered by its entry unit)
inline std::map<std::string, KernelEntry>& kernels() {
    static std::map<std::string, KernelEntry> k;
    return k;
}
inline bool register_kernel(const char* type, ::ops::OpDef* (*def)(), LaunchV launch, size_t kernel_params,
                            const int64_t* compiled, size_t n_compiled) {
    KernelEntry e;
    e.def = def;
    e.launch = launch;
    e.kernel_params = kernel_params;
    if (compiled) e.compiled.assign(compiled, compiled + n_compiled);
    kernels()[type] = e;
    return true;
}

struct Item {
    int kind = 0;  // 0 tensor, 1 tensor list, 2 absent
    const aclTensor* t = nullptr;
    const aclTensorList* l = nullptr;
};
struct Inputs {
    std::vector<Item> items;
};
struct Outputs {
    std::vector<Item> items;
};
struct Attrs {
    std::vector<std::function<void(aclOpExecutor*)>> set;
};
struct Ignored {};
inline void add_item(std::vector<Item>& v, const aclTensor* t) { v.push_back(Item{t ? 0 : 2, t, nullptr}); }
inline void add_item(std::vector<Item>& v, aclTensor* t) { add_item(v, static_cast<const aclTensor*>(t)); }
inline void add_item(std::vector<Item>& v, const aclTensorList* l) { v.push_back(Item{l ? 1 : 2, nullptr, l}); }
inline void add_item(std::vector<Item>& v, aclTensorList* l) { add_item(v, static_cast<const aclTensorList*>(l)); }
inline void add_item(std::vector<Item>& v, std::nullptr_t) { v.push_back(Item{2, nullptr, nullptr}); }
template <class... T>
Inputs make_inputs(T... t) {
    Inputs in;
    (add_item(in.items, t), ...);
    return in;
}
template <class... T>
Outputs make_outputs(T... t) {
    Outputs out;
    (add_item(out.items, t), ...);
    return out;
}
template <class T>
std::function<void(aclOpExecutor*)> attr_setter(T v) {
    using D = std::decay_t<T>;
    if constexpr (std::is_same_v<D, bool>) return [v](aclOpExecutor* e) { ::kgsim_aclnn::attr_bool(e, v); };
    else if constexpr (std::is_floating_point_v<D>)
        return [v](aclOpExecutor* e) { ::kgsim_aclnn::attr_float(e, double(v)); };
    else if constexpr (std::is_integral_v<D> || std::is_enum_v<D>)
        return [v](aclOpExecutor* e) { ::kgsim_aclnn::attr_int(e, int64_t(v)); };
    else if constexpr (std::is_same_v<D, std::string>)
        return [v](aclOpExecutor* e) { ::kgsim_aclnn::attr_str(e, v.c_str()); };
    else if constexpr (std::is_convertible_v<D, const char*>) {
        std::string s = v ? v : "";
        return [s](aclOpExecutor* e) { ::kgsim_aclnn::attr_str(e, s.c_str()); };
    } else if constexpr (std::is_convertible_v<D, const aclIntArray*>)
        return [v](aclOpExecutor* e) { ::kgsim_aclnn::attr_ints(e, v); };
    else if constexpr (std::is_convertible_v<D, const aclFloatArray*>)
        return [v](aclOpExecutor* e) { ::kgsim_aclnn::attr_floats(e, v); };
    else if constexpr (std::is_convertible_v<D, const aclBoolArray*>)
        return [v](aclOpExecutor* e) { ::kgsim_aclnn::attr_bools(e, v); };
    else if constexpr (std::is_convertible_v<D, const aclScalar*>)
        return [v](aclOpExecutor* e) { ::kgsim_aclnn::attr_float(e, v ? v->ToDouble() : 0.0); };
    else static_assert(sizeof(D) == 0, "kgsim opdev: an OP_ATTR of a type the simulator does not pass");
}
template <class... T>
Attrs make_attrs(T... v) {
    Attrs a;
    (a.set.push_back(attr_setter(v)), ...);
    return a;
}

// OP_OUTSHAPE({tensor, index}): the shape output of an op whose output shape depends on the
// computation (OutputShapeDependOnCompute): its kernel takes it as one more GM_ADDR after the
// outputs and writes the real shape there
struct OutShape {
    const aclTensor* t = nullptr;
    int64_t index = 0;
};
inline OutShape make_outshape(OutShape o) { return o; }

struct Launch {
    Inputs in;
    Outputs out;
    Attrs attrs;
    OutShape outshape;
};
inline void take(Launch& l, Inputs i) { l.in = std::move(i); }
inline void take(Launch& l, Outputs o) { l.out = std::move(o); }
inline void take(Launch& l, Attrs a) { l.attrs = std::move(a); }
inline void take(Launch&, Ignored) {}
inline void take(Launch& l, OutShape o) { l.outshape = o; }
// the attributes' names as CANN's own macro makes them (`#define OP_ATTR_NAMES ::op::FVector<std::string>`, which
// a project may define itself): the OpDef's attribute order already gives them
inline void take(Launch&, const op::FVector<std::string>&) {}

inline aclnnStatus fail(aclOpExecutor* ex, const std::string& why) {
    std::fprintf(stderr, "[ERROR] %s: %s\n", ex ? ex->api.c_str() : "opdev", why.c_str());
    kgsim_acl::recent_error() = why;
    return ACLNN_ERR_INNER;
}

// The sub-state of one kernel launch: the l0 call's tensors gathered as the generated aclnn pair does.
inline aclOpExecutor* gather(const char* type, const KernelEntry& k, Launch& l, aclOpExecutor* owner) {
    ::ops::OpDef* def = k.def ? k.def() : nullptr;
    aclOpExecutor* sub = ::kgsim_aclnn::begin(def, (std::string("l0op::") + type).c_str());
    for (Item& it : l.in.items) {
        if (it.kind == 1) {
            for (const aclTensor* t : it.l->tensors)
                if (t) storage_of(owner, const_cast<aclTensor*>(t));
            ::kgsim_aclnn::input_list(sub, it.l);
        } else {
            if (it.t) storage_of(owner, const_cast<aclTensor*>(it.t));
            ::kgsim_aclnn::input(sub, it.t);
        }
    }
    for (auto& set : l.attrs.set) set(sub);
    std::vector<std::string> in_names;
    if (def)
        for (auto& p : def->inputs_) in_names.push_back(p.name_);
    for (size_t k2 = 0; k2 < l.out.items.size(); ++k2) {
        Item& it = l.out.items[k2];
        bool ref = def && k2 < def->outputs_.size() &&
                   std::find(in_names.begin(), in_names.end(), def->outputs_[k2].name_) != in_names.end();
        if (it.kind == 1) {
            for (const aclTensor* t : it.l->tensors)
                if (t) storage_of(owner, const_cast<aclTensor*>(t));
            if (ref) ::kgsim_aclnn::output_list_ref(sub, it.l);
            else ::kgsim_aclnn::output_list(sub, it.l);
        } else {
            if (it.t) storage_of(owner, const_cast<aclTensor*>(it.t));
            if (ref) ::kgsim_aclnn::output_ref(sub, it.t);
            else ::kgsim_aclnn::output(sub, it.t);
        }
    }
    if (l.outshape.t) {  // the shape output: a kernel parameter only (no tensor of the OpDef)
        storage_of(owner, const_cast<aclTensor*>(l.outshape.t));
        sub->gm.push_back(::kgsim_aclnn::data_of(l.outshape.t));
    }
    return sub;
}

template <class... P>
aclnnStatus add_aicore(aclOpExecutor* ex, const char* type, P... parts) {
    if (!ex) return ACLNN_ERR_PARAM_NULLPTR;
    auto it = kernels().find(type);
    if (it == kernels().end())
        return fail(ex, std::string("ADD_TO_LAUNCHER_LIST_AICORE(") + type +
                            "): no kernel of this program implements that op type (the simulator runs the "
                            "project's own kernel; CANN's built-in kernels are not simulated)");
    Launch l;
    (take(l, std::move(parts)), ...);
    aclOpExecutor* sub = gather(type, it->second, l, ex);
    uint64_t ws = 0;
    aclOpExecutor* ready = nullptr;
    const auto& compiled = it->second.compiled;
    aclnnStatus rc = ::kgsim_aclnn::finish(sub, compiled.empty() ? nullptr : compiled.data(), compiled.size(), &ws,
                                           &ready);
    if (rc != ACLNN_SUCCESS) return rc;
    ex->opdev_workspace = std::max<uint64_t>(ex->opdev_workspace, ws);
    LaunchV launch = it->second.launch;
    size_t params = it->second.kernel_params;
    ex->tasks.push_back([ready, launch, params](void* w, uint64_t size) mutable {
        if (ready) ::kgsim_aclnn::run(ready, w, size, launch, params);
        ready = nullptr;
    });
    return ACLNN_SUCCESS;
}

// INFER_SHAPE: the op's InferShape on the l0 call's tensors; the outputs take the shapes it gives.
// The shape rules of CANN's own operators whose InferShape an aclnn layer asks for (INFER_SHAPE)
// while the project's kernel does the work: PadV3 and PadV3Grad (ops-math's pad_v3 specification:
// x, paddings (int32/int64, one (before, after) pair per axis of x, [b0, a0, b1, a1, ...] when the
// attribute paddings_contiguous is true, [b0, b1, ..., a0, a1, ...] when false), mode, then
// paddings_contiguous). The forward adds the pairs to each axis, the gradient takes them off.
inline ::ge::graphStatus pad_v3_shape(::gert::InferShapeContext* ctx, int64_t sign) {
    const ::gert::Shape* x = ctx->GetInputShape(0);
    const ::gert::Tensor* p = ctx->GetInputTensor(1);
    ::gert::Shape* y = ctx->GetOutputShape(0);
    if (!x || !p || !y || !p->GetData<uint8_t>()) return ::ge::GRAPH_FAILED;
    const size_t rank = x->GetDimNum();
    if (p->GetShapeSize() != int64_t(2 * rank) ||
        (p->GetDataType() != ::ge::DT_INT32 && p->GetDataType() != ::ge::DT_INT64)) {
        log_error(int64_t(ACLNN_ERR_INNER_INFERSHAPE_ERROR),
                  "InferShape of %s: paddings must hold 2 x rank = %zu int32/int64 values, got %lld",
                  sign > 0 ? "PadV3" : "PadV3Grad", 2 * rank, (long long)p->GetShapeSize());
        return ::ge::GRAPH_FAILED;
    }
    const auto at = [p](size_t i) {
        return p->GetDataType() == ::ge::DT_INT32 ? int64_t(p->GetData<int32_t>()[i]) : p->GetData<int64_t>()[i];
    };
    const bool* contiguous = ctx->GetAttrs() ? ctx->GetAttrs()->GetAttrPointer<bool>(1) : nullptr;
    const bool pairs = contiguous == nullptr || *contiguous;
    y->SetDimNum(rank);
    for (size_t k = 0; k < rank; ++k) {
        const int64_t before = pairs ? at(2 * k) : at(k), after = pairs ? at(2 * k + 1) : at(rank + k);
        const int64_t d = x->GetDim(k) + sign * (before + after);
        if (d < 0) return ::ge::GRAPH_FAILED;
        y->SetDim(k, d);
    }
    return ::ge::GRAPH_SUCCESS;
}
inline ::ge::graphStatus pad_v3_infer(::gert::InferShapeContext* ctx) { return pad_v3_shape(ctx, 1); }
inline ::ge::graphStatus pad_v3_grad_infer(::gert::InferShapeContext* ctx) { return pad_v3_shape(ctx, -1); }
inline ::ops::OpDef* builtin_shape_def(const std::string& type) {
    static const std::map<std::string, ::ops::OpDef*> defs = [] {
        std::map<std::string, ::ops::OpDef*> m;
        for (auto [name, fn] : {std::pair{"PadV3", &pad_v3_infer}, std::pair{"PadV3Grad", &pad_v3_grad_infer}}) {
            auto* d = new ::ops::OpDef(name);  // (lives for the process, as the library's registry does)
            d->SetInferShape(fn);
            m[name] = d;
        }
        return m;
    }();
    auto it = defs.find(type);
    return it == defs.end() ? nullptr : it->second;
}

template <class... P>
aclnnStatus infer_shape(aclOpExecutor* ex, const char* type, P... parts) {
    ::ops::OpDef* def = nullptr;
    auto it = kernels().find(type);
    if (it != kernels().end() && it->second.def) def = it->second.def();
    if (!def) {
        auto& r = ::ops::KgsimOpRegistry();
        auto f = r.find(type);
        if (f != r.end()) def = ::kgsim::apply_op_impl(f->second.get());
    }
    if (!def) def = builtin_shape_def(type);  // a project's own definition of the op comes first
    if (!def || !def->infer_shape_) return fail(ex, std::string("INFER_SHAPE(") + type + "): no InferShape for this op type");
    Launch l;
    (take(l, std::move(parts)), ...);
    std::unique_ptr<aclOpExecutor> sub(::kgsim_aclnn::begin(def, type));
    for (Item& i : l.in.items) {
        if (i.kind == 1) ::kgsim_aclnn::input_list(sub.get(), i.l);
        else ::kgsim_aclnn::input(sub.get(), i.t);
    }
    for (auto& set : l.attrs.set) set(sub.get());
    std::vector<aclTensor*> outs;
    for (Item& i : l.out.items) {
        ::kgsim_aclnn::add_out(sub.get(), i.t);
        outs.push_back(const_cast<aclTensor*>(i.t));
    }
    ::kgsim_aclnn::bind_lists(sub.get());
    ::gert::InferShapeContext ctx(&sub->io);
    if (def->infer_shape_(&ctx) != ::ge::GRAPH_SUCCESS) {
        fail(ex, std::string("INFER_SHAPE(") + type + "): the op's InferShape returned a failure");
        return ACLNN_ERR_INNER_INFERSHAPE_ERROR;
    }
    for (size_t k = 0; k < outs.size(); ++k) {
        if (!outs[k]) continue;
        const gert::Shape& s = sub->io.out_shapes[k].GetStorageShape();
        outs[k]->SetViewShape(s);
        outs[k]->storage_dims = outs[k]->view_dims;
        if (outs[k]->has_origin) outs[k]->SetOriginalShape(s);
    }
    return ACLNN_SUCCESS;
}
}  // namespace kgsim_opdev

#define OP_INPUT(...) ::kgsim_opdev::make_inputs(__VA_ARGS__)
#define OP_OUTPUT(...) ::kgsim_opdev::make_outputs(__VA_ARGS__)
#define OP_ATTR(...) ::kgsim_opdev::make_attrs(__VA_ARGS__)
#define OP_ATTR_NAMES(...) ::kgsim_opdev::Ignored{}
#define OP_MODE(...) ::kgsim_opdev::Ignored{}
#define OP_OPTION(...) ::kgsim_opdev::Ignored{}
#define OP_WORKSPACE(...) ::kgsim_opdev::Ignored{}
#define OP_OUTSHAPE(...) ::kgsim_opdev::make_outshape(__VA_ARGS__)
#define OP_EMPTY_ARG ::kgsim_opdev::Ignored{}
#define OP_EXEC_MODE_HF32 1
#define ADD_TO_LAUNCHER_LIST_AICORE(type, ...) ::kgsim_opdev::add_aicore(executor, #type, ##__VA_ARGS__)
#define INFER_SHAPE(type, ...) ::kgsim_opdev::infer_shape(executor, #type, ##__VA_ARGS__)
#define ADD_TO_LAUNCHER_LIST_AICPU(type, ...)                                                          \
    ::kgsim_opdev::fail(executor, "ADD_TO_LAUNCHER_LIST_AICPU(" #type                                   \
                                  "): AI CPU kernels are not simulated")

// ---- CANN's built-in l0 ops (opdev/kgsim_opdev_builtins.h defines them) -------------------------
namespace l0op {
const aclTensor* Contiguous(const aclTensor* x, aclOpExecutor* executor);
const aclTensor* ViewCopy(const aclTensor* x, const aclTensor* y, aclOpExecutor* executor);
const aclTensor* Cast(const aclTensor* x, op::DataType dst, aclOpExecutor* executor);
const aclTensor* CastOnlyForConvBackward(const aclTensor* x, op::DataType dst, aclOpExecutor* executor);
const aclTensor* Transpose(const aclTensor* x, const aclIntArray* perm, aclOpExecutor* executor);
const aclTensor* Transpose(const aclTensor* x, const aclTensor* y, const aclTensor* perm, aclOpExecutor* executor);
const aclTensor* Reshape(const aclTensor* x, const op::Shape& shape, aclOpExecutor* executor);
const aclTensor* Reshape(const aclTensor* x, const aclIntArray* shape, aclOpExecutor* executor);
const aclTensor* TransData(const aclTensor* x, op::Format dst, int64_t groups, aclOpExecutor* executor);
const aclTensor* TransDataSpecial(const aclTensor* x, op::Format dst, int64_t groups, aclOpExecutor* executor);
const aclTensor* ReFormat(const aclTensor* x, const op::Format& format, aclOpExecutor* executor = nullptr);
const aclTensor* PickViewAsContiguous(const aclTensor* x, aclOpExecutor* executor);
}  // namespace l0op
