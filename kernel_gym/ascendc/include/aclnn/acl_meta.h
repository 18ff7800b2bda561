// aclnn/acl_meta.h for the kernel-gym Ascend C simulator: the aclnn argument objects (aclTensor,
// aclScalar, aclIntArray, aclFloatArray, aclBoolArray, aclTensorList, aclScalarList) and their
// create/destroy calls, as CANN's single-operator API documents them. An aclTensor describes device
// memory the caller owns (aclrtMalloc); destroying it frees only the description. The generated
// aclnn<Op>GetWorkspaceSize / aclnn<Op> pair (kernel_gym/ascendc/aclnn.py) reads these objects.
#pragma once
#include <cstdint>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "acl/acl.h"

typedef int32_t aclnnStatus;
#ifndef ACLNN_SUCCESS
#define ACLNN_SUCCESS 0
#endif
#define ACLNN_ERR_PARAM_NULLPTR 161001
#define ACLNN_ERR_PARAM_INVALID 161002
#define ACLNN_ERR_INNER 561000

struct aclTensor {
    std::vector<int64_t> view_dims, strides, storage_dims;
    int64_t offset = 0;  // in elements, as aclCreateTensor's offset
    aclDataType dtype = ACL_DT_UNDEFINED;
    aclFormat format = ACL_FORMAT_ND;
    void* data = nullptr;
};
struct aclScalar {
    aclDataType dtype = ACL_DT_UNDEFINED;
    uint8_t bytes[16] = {};
    double ToDouble() const;  // the value, whatever its type
};
struct aclIntArray {
    std::vector<int64_t> values;
};
struct aclFloatArray {
    std::vector<float> values;
};
struct aclBoolArray {
    std::vector<bool> values;
};
struct aclTensorList {
    std::vector<const aclTensor*> tensors;
};
struct aclScalarList {
    std::vector<const aclScalar*> scalars;
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
