// aclnn/acl_meta.h for the kernel-gym Ascend C simulator: the aclnn argument objects (aclTensor,
// aclScalar, aclIntArray, aclFloatArray, aclBoolArray, aclTensorList, aclScalarList) and their
// create/destroy calls, as CANN's single-operator API documents them. An aclTensor describes device
// memory the caller owns (aclrtMalloc); destroying it frees only the description. The generated
// aclnn<Op>GetWorkspaceSize / aclnn<Op> pair (kernel_gym/ascendc/aclnn.py) reads these objects.
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "acl/acl.h"
#include "graph/types.h"

typedef int32_t aclnnStatus;
// the export attribute CANN's aclnn headers put on their entry points
#ifndef ACLNN_API
#define ACLNN_API __attribute__((visibility("default")))
#endif
#ifndef ACLNN_SUCCESS
#define ACLNN_SUCCESS 0
#endif
#define ACLNN_ERR_PARAM_NULLPTR 161001
#define ACLNN_ERR_PARAM_INVALID 161002
#define ACLNN_ERR_RUNTIME_ERROR 361001
#define ACLNN_ERR_INNER 561000
#define ACLNN_ERR_INNER_INFERSHAPE_ERROR 561001
#define ACLNN_ERR_INNER_TILING_ERROR 561002
#define ACLNN_ERR_INNER_FIND_KERNEL_ERROR 561003
#define ACLNN_ERR_INNER_CREATE_EXECUTOR 561101
#define ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR 561102
#define ACLNN_ERR_INNER_NULLPTR 561103
#define ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE 561104
#define ACLNN_ERR_INNER_KEY_CONFILICT 561105
#define ACLNN_ERR_INNER_INVALID_IMPL_MODE 561106
#define ACLNN_ERR_INNER_OPP_PATH_NOT_FOUND 561107
#define ACLNN_ERR_INNER_LOAD_JSON_FAILED 561108
#define ACLNN_ERR_INNER_JSON_VALUE_NOT_FOUND 561109
#define ACLNN_ERR_INNER_JSON_FORMAT_INVALID 561110
#define ACLNN_ERR_INNER_OPP_KERNEL_PKG_NOT_FOUND 561111
#define ACLNN_ERR_INNER_STATIC_WORKSPACE_INVALID 561112

// The member functions declared below without a body are CANN's op-API framework's (opdev) view
// of these objects (GetViewShape, GetDataType, ...): defined in opdev/kgsim_opdev.h, which every
// opdev header includes, for the operator projects whose own aclnn layer is written on it.
namespace gert {
class Shape;
}
namespace op {
template <class T, size_t N>
class FVector;
class KgsimString;
struct fp16_t;
struct bfloat16;
}
namespace kgsim_acl_meta {
template <class T>
struct is_complex : std::false_type {};
template <class F>
struct is_complex<std::complex<F>> : std::true_type {};
// the largest finite value of a floating type (fp16: 65504, bf16: 0x7F7F)
template <class T>
constexpr double float_max() {
    if constexpr (std::is_same_v<T, op::fp16_t>) return 65504.0;
    else if constexpr (std::is_same_v<T, op::bfloat16>) return 3.3895313892515355e38;
    else if constexpr (is_complex<T>::value) return float_max<typename T::value_type>();
    else return double(std::numeric_limits<T>::max());
}
}  // namespace kgsim_acl_meta
struct aclTensor {
    // (mutable: CANN's opdev setters are const members, called on `const aclTensor *`)
    mutable std::vector<int64_t> view_dims, strides, storage_dims;
    mutable int64_t offset = 0;  // in elements, as aclCreateTensor's offset
    mutable aclDataType dtype = ACL_DT_UNDEFINED;
    mutable aclFormat format = ACL_FORMAT_ND;
    mutable void* data = nullptr;
    // (opdev) the original shape and formats, and whether the executor owns the memory
    mutable std::vector<int64_t> origin_dims;
    mutable bool has_origin = false;
    mutable int32_t storage_format = -1, origin_format = -1;  // -1: `format`
    mutable bool from_workspace = false;

    inline gert::Shape GetViewShape() const;
    inline gert::Shape GetStorageShape() const;
    inline gert::Shape GetOriginalShape() const;
    inline op::FVector<int64_t, 25> GetViewStrides() const;
    inline void SetViewShape(const gert::Shape& s) const;
    inline void SetStorageShape(const gert::Shape& s) const;
    inline void SetOriginalShape(const gert::Shape& s) const;
    inline void SetViewStrides(const op::FVector<int64_t, 25>& s) const;
    inline op::KgsimString ToString() const;  // shape, strides, offset, dtype and format, for a log line
    ge::DataType GetDataType() const { return ge::DataType(dtype); }
    void SetDataType(ge::DataType d) const { dtype = aclDataType(d); }
    ge::Format GetViewFormat() const { return ge::Format(format); }
    ge::Format GetStorageFormat() const { return ge::Format(storage_format < 0 ? int32_t(format) : storage_format); }
    ge::Format GetOriginalFormat() const { return ge::Format(origin_format < 0 ? int32_t(format) : origin_format); }
    void SetViewFormat(ge::Format f) const { format = aclFormat(f); }
    void SetStorageFormat(ge::Format f) const { storage_format = int32_t(f); }
    void SetOriginalFormat(ge::Format f) const { origin_format = int32_t(f); }
    int64_t GetViewOffset() const { return offset; }
    void SetViewOffset(int64_t o) const { offset = o; }
    int64_t GetStorageOffset() const { return 0; }
    int64_t Size() const {  // the view's element count
        int64_t n = 1;
        for (int64_t d : view_dims) n *= d;
        return n;
    }
    int64_t Numel() const { return Size(); }
    bool IsEmpty() const { return Size() == 0; }
    void* GetData() const { return data ? static_cast<uint8_t*>(data) + offset * int64_t(aclDataTypeSize(dtype)) : nullptr; }
    void* GetStorageAddr() const { return data; }
    void SetStorageAddr(void* p) const { data = p; }
    bool IsFromWorkspace() const { return from_workspace; }
    void SetFromWorkspace(bool w) const { from_workspace = w; }
};
struct aclScalar {
    inline op::KgsimString ToString() const;  // its value, for a log line
    aclDataType dtype = ACL_DT_UNDEFINED;
    uint8_t bytes[16] = {};
    double ToDouble() const;  // the value, whatever its type
    ge::DataType GetDataType() const { return ge::DataType(dtype); }
    float ToFloat() const { return float(ToDouble()); }
    int64_t ToInt64() const { return int64_t(ToDouble()); }
    int32_t ToInt32() const { return int32_t(ToDouble()); }
    bool ToBool() const { return ToDouble() != 0.0; }
    template <class T>
    T ToValue() const { return T(ToDouble()); }
    // whether the value does not fit type T: out of an integer type's range, or a finite value beyond
    // a floating type's largest (infinities and NaN carry over); never for bool
    template <class T>
    bool CheckOverflows() const {
        double v = ToDouble();
        if constexpr (std::is_same_v<T, bool>) {
            return false;
        } else if constexpr (std::is_integral_v<T>) {
            return std::isnan(v) || v < double(std::numeric_limits<T>::lowest()) ||
                   v > double(std::numeric_limits<T>::max());
        } else {
            return std::isfinite(v) && std::fabs(v) > kgsim_acl_meta::float_max<T>();
        }
    }
    const void* GetData() const { return bytes; }
};
struct aclIntArray {
    inline op::KgsimString ToString() const;  // its values, for a log line
    std::vector<int64_t> values;
    uint64_t Size() const { return values.size(); }
    const int64_t* GetData() const { return values.data(); }
    const int64_t& operator[](size_t i) const { return values[i]; }
    int64_t& operator[](size_t i) { return values[i]; }
};
struct aclFloatArray {
    inline op::KgsimString ToString() const;  // its values, for a log line
    std::vector<float> values;
    uint64_t Size() const { return values.size(); }
    const float* GetData() const { return values.data(); }
    const float& operator[](size_t i) const { return values[i]; }
    float& operator[](size_t i) { return values[i]; }
};
struct aclBoolArray {
    inline op::KgsimString ToString() const;  // its values, for a log line
    std::vector<bool> values;
    uint64_t Size() const { return values.size(); }
    bool operator[](size_t i) const { return values[i]; }
};
struct aclTensorList {
    std::vector<const aclTensor*> tensors;
    uint64_t Size() const { return tensors.size(); }
    const aclTensor* operator[](size_t i) const { return tensors[i]; }
};
struct aclScalarList {
    std::vector<const aclScalar*> scalars;
    uint64_t Size() const { return scalars.size(); }
    const aclScalar* operator[](size_t i) const { return scalars[i]; }
};
struct aclOpExecutor;  // the state one GetWorkspaceSize call hands to its launch (kgsim/aclnn_exec.h)


inline double aclScalar::ToDouble() const {
    auto get = [this](auto v) { std::memcpy(&v, bytes, sizeof(v)); return double(v); };
    switch (dtype) {
        case ACL_FLOAT: return get(float(0));
        case ACL_FLOAT16: { _Float16 h; std::memcpy(&h, bytes, 2); return double(h); }
        case ACL_BF16: { uint32_t w = uint32_t(bytes[0] | (bytes[1] << 8)) << 16; float f; std::memcpy(&f, &w, 4); return f; }
        case ACL_DOUBLE: return get(double(0));
        case ACL_INT8: return get(int8_t(0));
        case ACL_UINT8: return get(uint8_t(0));
        case ACL_INT16: return get(int16_t(0));
        case ACL_UINT16: return get(uint16_t(0));
        case ACL_INT32: return get(int32_t(0));
        case ACL_UINT32: return get(uint32_t(0));
        case ACL_INT64: return get(int64_t(0));
        case ACL_UINT64: return get(uint64_t(0));
        case ACL_BOOL: return bytes[0] ? 1.0 : 0.0;
        default: return 0.0;
    }
}

// viewDims/stride/offset describe the logical tensor over storage (strides in elements; null:
// contiguous); storageDims the memory the data pointer holds.
// The aclTensor descriptions alive: a second aclDestroyTensor of one (cann-ops' group_norm_swish
// example destroys an output twice, and runs to its end on the NPU) finds it gone and does nothing.
inline std::unordered_set<const aclTensor*>& kgsim_live_tensors() {
    static std::unordered_set<const aclTensor*> live;
    return live;
}
inline aclTensor* kgsim_track_tensor(aclTensor* t) {
    kgsim_live_tensors().insert(t);
    return t;
}
inline aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                  const int64_t* stride, int64_t offset, aclFormat format, const int64_t* storageDims,
                                  uint64_t storageDimsNum, void* tensorData) {
    if ((viewDimsNum && !viewDims) || (storageDimsNum && !storageDims)) return nullptr;
    auto* t = new aclTensor;
    t->view_dims.assign(viewDims, viewDims + viewDimsNum);
    t->storage_dims.assign(storageDims, storageDims + storageDimsNum);
    if (stride) {
        t->strides.assign(stride, stride + viewDimsNum);
    } else {
        t->strides.assign(viewDimsNum, 1);
        for (size_t d = viewDimsNum; d-- > 1;) t->strides[d - 1] = t->strides[d] * viewDims[d];
    }
    t->offset = offset;
    t->dtype = dataType;
    t->format = format;
    t->data = tensorData;
    return kgsim_track_tensor(t);
}
inline aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
    if (tensor != nullptr && kgsim_live_tensors().erase(tensor) == 1) delete tensor;
    return ACLNN_SUCCESS;
}
inline aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
    size_t n = aclDataTypeSize(dataType);
    if (!value || n == 0) return nullptr;
    auto* s = new aclScalar;
    s->dtype = dataType;
    std::memcpy(s->bytes, value, n);
    return s;
}
inline aclnnStatus aclDestroyScalar(const aclScalar* scalar) {
    delete scalar;
    return ACLNN_SUCCESS;
}
inline aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
    if (size && !value) return nullptr;
    return new aclIntArray{std::vector<int64_t>(value, value + size)};
}
inline aclnnStatus aclDestroyIntArray(const aclIntArray* array) {
    delete array;
    return ACLNN_SUCCESS;
}
inline aclFloatArray* aclCreateFloatArray(const float* value, uint64_t size) {
    if (size && !value) return nullptr;
    return new aclFloatArray{std::vector<float>(value, value + size)};
}
inline aclnnStatus aclDestroyFloatArray(const aclFloatArray* array) {
    delete array;
    return ACLNN_SUCCESS;
}
inline aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size) {
    if (size && !value) return nullptr;
    return new aclBoolArray{std::vector<bool>(value, value + size)};
}
inline aclnnStatus aclDestroyBoolArray(const aclBoolArray* array) {
    delete array;
    return ACLNN_SUCCESS;
}
// A list holds tensor descriptions of its own, copied from the ones given (the same device data):
// destroying the list destroys them ("the aclTensors in the list need not be destroyed again"),
// and a caller that also destroys the tensors it listed (cann-ops' non_finite_check example
// does, and runs to its end on the NPU) frees each object once.
inline aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size) {
    if (size && !value) return nullptr;
    auto* list = new aclTensorList;
    for (uint64_t i = 0; i < size; ++i)
        list->tensors.push_back(value[i] ? kgsim_track_tensor(new aclTensor(*value[i])) : nullptr);
    return list;
}
inline aclnnStatus aclDestroyTensorList(const aclTensorList* array) {
    if (array)
        for (const aclTensor* t : array->tensors) aclDestroyTensor(t);
    delete array;
    return ACLNN_SUCCESS;
}
inline aclScalarList* aclCreateScalarList(const aclScalar* const* value, uint64_t size) {
    if (size && !value) return nullptr;
    return new aclScalarList{std::vector<const aclScalar*>(value, value + size)};
}
inline aclnnStatus aclDestroyScalarList(const aclScalarList* array) {
    if (array)
        for (const aclScalar* s : array->scalars) delete s;
    delete array;
    return ACLNN_SUCCESS;
}
inline aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims, uint64_t* viewDimsNum) {
    if (!tensor || !viewDims || !viewDimsNum) return ACLNN_ERR_PARAM_NULLPTR;
    *viewDimsNum = tensor->view_dims.size();
    *viewDims = new int64_t[tensor->view_dims.size() + 1];
    std::memcpy(*viewDims, tensor->view_dims.data(), tensor->view_dims.size() * sizeof(int64_t));
    return ACLNN_SUCCESS;
}
inline aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType) {
    if (!tensor || !dataType) return ACLNN_ERR_PARAM_NULLPTR;
    *dataType = tensor->dtype;
    return ACLNN_SUCCESS;
}
inline aclnnStatus aclGetFormat(const aclTensor* tensor, aclFormat* format) {
    if (!tensor || !format) return ACLNN_ERR_PARAM_NULLPTR;
    *format = tensor->format;
    return ACLNN_SUCCESS;
}
// the element counts of the aclnn containers (aclnn_base.h's aclGet*Size): null arguments are
// ACLNN_ERR_PARAM_NULLPTR
#define KGSIM_ACL_GET_SIZE(fn, type)                          \
    inline aclnnStatus fn(const type* array, uint64_t* size) { \
        if (!array || !size) return ACLNN_ERR_PARAM_NULLPTR;  \
        *size = array->Size();                                \
        return ACLNN_SUCCESS;                                 \
    }
KGSIM_ACL_GET_SIZE(aclGetIntArraySize, aclIntArray)
KGSIM_ACL_GET_SIZE(aclGetFloatArraySize, aclFloatArray)
KGSIM_ACL_GET_SIZE(aclGetBoolArraySize, aclBoolArray)
KGSIM_ACL_GET_SIZE(aclGetTensorListSize, aclTensorList)
KGSIM_ACL_GET_SIZE(aclGetScalarListSize, aclScalarList)
#undef KGSIM_ACL_GET_SIZE
