// The generic part of a generated aclnn<Op>GetWorkspaceSize / aclnn<Op> pair (the generator is
// kernel_gym/ascendc/aclnn.py): the first call gathers the arguments in OpDef order (inputs,
// attributes, outputs), runs the project's TilingFunc on them and reports the workspace size; the
// second launches the kernel with (inputs..., outputs..., workspace, tiling). A DYNAMIC parameter
// (aclTensorList) is one GM argument in the ListTensorDesc layout the kernel reads.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "aclnn/acl_meta.h"
#include "register/op_def_registry.h"
#include "register/op_impl_registry.h"

struct aclOpExecutor {
    ::ops::OpDef* def = nullptr;
    std::string api;
    ::gert::KgsimOpIO io;
    std::vector<uint8_t*> gm;                     // kernel GM arguments: inputs, then outputs
    std::vector<std::shared_ptr<uint8_t>> owned;  // list descriptors, tiling
    std::vector<int64_t> dtypes;                  // each parameter's dtype (a list: its first tensor's)
    size_t n_inputs = 0, n_attrs = 0;
    uint32_t block_dim = 0;
    uint64_t tiling_key = 0;
    size_t workspace = 0;
    std::vector<uint8_t> tiling;
    std::string error;

    // An executor of an operator project's own aclnn layer, written on CANN's op-API framework
    // (opdev/kgsim_opdev.h defines these): what its l0 calls queued in GetWorkspaceSize (the
    // project's kernel launches, the built-in l0 ops), run in order by CommonOpExecutorRun; the
    // objects it allocated, freed with it.
    std::vector<std::function<void(void* workspace, uint64_t size)>> tasks;
    std::vector<std::shared_ptr<void>> keep;
    uint64_t opdev_workspace = 0;
    inline aclTensor* AllocTensor(const gert::Shape& shape, ge::DataType dt, ge::Format format = ge::FORMAT_ND);
    inline aclTensor* AllocTensor(const gert::Shape& storage, const gert::Shape& origin, ge::DataType dt,
                                  ge::Format storage_format, ge::Format origin_format);
    inline aclTensor* AllocTensor(ge::DataType dt, ge::Format storage_format, ge::Format origin_format);
    inline aclTensor* AllocHostTensor(const gert::Shape& shape, ge::DataType dt, ge::Format format = ge::FORMAT_ND);
    inline aclTensor* AllocHostTensor(const int64_t* value, uint64_t size, ge::DataType dt);
    inline aclTensor* AllocHostTensor(const float* value, uint64_t size, ge::DataType dt);
    inline aclTensor* AllocHostTensor(const int32_t* value, uint64_t size, ge::DataType dt);
    inline aclTensor* AllocHostTensor(const bool* value, uint64_t size, ge::DataType dt);
    inline aclTensor* AllocHostTensor(const double* value, uint64_t size, ge::DataType dt);
    inline aclIntArray* AllocIntArray(const int64_t* value, uint64_t size);
    inline aclFloatArray* AllocFloatArray(const float* value, uint64_t size);
    inline aclBoolArray* AllocBoolArray(const bool* value, uint64_t size);
    inline aclTensorList* AllocTensorList(const aclTensor* const* tensors, uint64_t size);
    inline aclScalar* AllocScalar(const void* value, ge::DataType dt);
    template <class T>
    aclScalar* AllocScalar(T value);
    inline const aclTensor* ConvertToTensor(const aclScalar* s, ge::DataType dt);
    inline const aclTensor* ConvertToTensor(const aclIntArray* a, ge::DataType dt);
    inline const aclTensor* ConvertToTensor(const aclFloatArray* a, ge::DataType dt);
    inline const aclTensor* ConvertToTensor(const aclBoolArray* a, ge::DataType dt);
    template <class T>
    const aclTensor* ConvertToTensor(const T* value, uint64_t size, ge::DataType dt);
    inline aclTensor* CreateView(const aclTensor* t, const gert::Shape& shape, int64_t offset);
    inline aclTensor* CreateView(const aclTensor* t, const gert::Shape& shape, const op::FVector<int64_t, 25>& strides,
                                 int64_t offset);
    inline uint64_t GetWorkspaceSize() const;
    void AbandonCache(bool = false) {}
    void SetRepeatable() {}
};

namespace kgsim_aclnn {
using LaunchV = void (*)(int64_t block_dim, int64_t tiling_key, uint8_t** ptrs, size_t n);

inline void fail(aclOpExecutor* ex, const std::string& why) {
    if (ex->error.empty()) ex->error = ex->api + ": " + why;
}
inline uint8_t* gm_buffer(aclOpExecutor* ex, size_t bytes, const char* name) {
    size_t rounded = (std::max<size_t>(bytes, 32) + 511) / 512 * 512;
    std::shared_ptr<uint8_t> p(static_cast<uint8_t*>(kgsim_gm_alloc(rounded)), [](uint8_t* q) { kgsim_gm_free(q); });
    if (!p) throw std::bad_alloc();
    kgsim_register_gm(name, p.get(), rounded);
    ex->owned.push_back(p);
    return p.get();
}
inline uint8_t* data_of(const aclTensor* t) {
    return static_cast<uint8_t*>(t->data) + t->offset * int64_t(aclDataTypeSize(t->dtype));
}
inline ::gert::StorageShape shape_of(const aclTensor* t) {
    ::gert::Shape s;
    for (int64_t d : t->view_dims) s.AppendDim(d);
    ::gert::StorageShape ss;
    ss.Set(s);
    return ss;
}
inline void add_in(aclOpExecutor* ex, const aclTensor* t) {
    ::gert::Tensor gt;
    ::gert::CompileTimeTensorDesc desc;
    if (t) {
        gt.shape_ = shape_of(t);
        gt.dtype_ = ::ge::DataType(t->dtype);
        desc.dtype_ = gt.dtype_;
        gt.data_ = data_of(t);  // device memory is host memory: a ValueDepend input's values are readable
        gt.size_ = size_t(gt.shape_.GetStorageShape().GetShapeSize()) * aclDataTypeSize(t->dtype);
    }
    ex->io.in_shapes.push_back(gt.shape_);
    ex->io.in_tensors.push_back(gt);
    ex->io.in_desc.push_back(desc);
    ex->io.in_present.push_back(t != nullptr);
}
inline aclOpExecutor* begin(::ops::OpDef* def, const char* api) {
    auto* ex = new aclOpExecutor;
    ex->def = def;
    ex->api = api;
    if (!def) fail(ex, "the project defines no operator (OP_ADD)");
    else ex->io.name = def->name_;
    return ex;
}
// A single tensor (nullptr: an OPTIONAL input left out).
inline void input(aclOpExecutor* ex, const aclTensor* t) {
    ex->io.ir_first.push_back(ex->io.in_shapes.size());
    add_in(ex, t);
    ex->gm.push_back(t ? data_of(t) : nullptr);
    ex->dtypes.push_back(t ? int64_t(t->dtype) : -1);
    ++ex->n_inputs;
}
// The ListTensorDesc layout (kernel_operator_list_tensor_intf.h): the pointer array's offset, one
// descriptor per tensor (dimension count | index << 32, then the dims), the data pointers.
inline uint8_t* list_desc(aclOpExecutor* ex, const aclTensorList* l, const char* name) {
    size_t n = l->tensors.size();
    size_t dim = n ? l->tensors[0]->view_dims.size() : 0;
    bool same_rank = true;
    for (const aclTensor* t : l->tensors) same_rank = same_rank && t && t->view_dims.size() == dim;
    std::vector<uint64_t> words;
    if (same_rank && dim) {
        words.push_back(8 + 8 * (1 + dim) * n);
        for (size_t i = 0; i < n; ++i) {
            words.push_back(uint64_t(dim) | (uint64_t(i) << 32));
            for (int64_t d : l->tensors[i]->view_dims) words.push_back(uint64_t(d));
        }
    } else {
        words.push_back(8 + 8 * 2);
        words.push_back(0);
        words.push_back(0xFFFFFFFFull);
    }
    for (const aclTensor* t : l->tensors) words.push_back(t ? uint64_t(reinterpret_cast<uintptr_t>(data_of(t))) : 0);
    uint8_t* buf = gm_buffer(ex, words.size() * 8, name);
    std::memcpy(buf, words.data(), words.size() * 8);
    return buf;
}
inline void input_list(aclOpExecutor* ex, const aclTensorList* l) {
    ex->io.ir_first.push_back(ex->io.in_shapes.size());
    if (!l) {
        fail(ex, "a DYNAMIC input (aclTensorList) is null");
        return;
    }
    for (const aclTensor* t : l->tensors) add_in(ex, t);
    ex->gm.push_back(list_desc(ex, l, "aclTensorList"));
    ex->dtypes.push_back(!l->tensors.empty() && l->tensors[0] ? int64_t(l->tensors[0]->dtype) : -1);
    ++ex->n_inputs;
}
// An input the OpDef marks Scalar(): the aclScalar becomes a one-element tensor of its dtype.
inline void input_scalar(aclOpExecutor* ex, const aclScalar* s) {
    if (!s) {
        input(ex, nullptr);
        return;
    }
    size_t bytes = aclDataTypeSize(s->dtype);
    uint8_t* buf = gm_buffer(ex, bytes, "aclScalar");
    std::memcpy(buf, s->bytes, bytes);
    int64_t one = 1;
    std::unique_ptr<aclTensor> t(aclCreateTensor(&one, 1, s->dtype, nullptr, 0, ACL_FORMAT_ND, &one, 1, buf));
    input(ex, t.get());
}
// An input the OpDef marks ScalarList(): the scalars become a one-dimensional tensor of the first
// scalar's dtype, one element each (a scalar of another dtype is converted to it).
inline void input_scalar_list(aclOpExecutor* ex, const aclScalarList* l) {
    if (!l || l->scalars.empty()) {
        input(ex, nullptr);
        return;
    }
    aclDataType dt = l->scalars[0]->dtype;
    size_t each = aclDataTypeSize(dt), n = l->scalars.size();
    uint8_t* buf = gm_buffer(ex, n * each, "aclScalarList");
    for (size_t k = 0; k < n; ++k) {
        const aclScalar* s = l->scalars[k];
        if (s->dtype == dt) std::memcpy(buf + k * each, s->bytes, each);
        else fail(ex, "an aclScalarList mixes scalar dtypes");
    }
    int64_t len = int64_t(n);
    std::unique_ptr<aclTensor> t(aclCreateTensor(&len, 1, dt, nullptr, 0, ACL_FORMAT_ND, &len, 1, buf));
    input(ex, t.get());
}
// A ValueDepend input passed as an array (aclIntArray: int64, aclFloatArray: float, aclBoolArray):
// a one-dimensional tensor holding the values.
template <class A, class V>
inline void input_values(aclOpExecutor* ex, const A* a, aclDataType dt) {
    if (!a) {
        input(ex, nullptr);
        return;
    }
    size_t n = a->values.size();
    uint8_t* buf = gm_buffer(ex, std::max<size_t>(n, 1) * sizeof(V), "aclnn array");
    for (size_t k = 0; k < n; ++k) {
        V v = V(a->values[k]);
        std::memcpy(buf + k * sizeof(V), &v, sizeof(V));
    }
    int64_t len = int64_t(n);
    std::unique_ptr<aclTensor> t(aclCreateTensor(&len, 1, dt, nullptr, 0, ACL_FORMAT_ND, &len, 1, buf));
    input(ex, t.get());
}
inline void input_ints(aclOpExecutor* ex, const aclIntArray* a) { input_values<aclIntArray, int64_t>(ex, a, ACL_INT64); }
inline void input_floats(aclOpExecutor* ex, const aclFloatArray* a) {
    input_values<aclFloatArray, float>(ex, a, ACL_FLOAT);
}
inline void input_bools(aclOpExecutor* ex, const aclBoolArray* a) { input_values<aclBoolArray, bool>(ex, a, ACL_BOOL); }
inline ::gert::KgsimAttrValue& next_attr(aclOpExecutor* ex, int type) {
    ex->io.attrs.attrs_.emplace_back();
    auto& a = ex->io.attrs.attrs_.back();
    a.type = type;
    ++ex->n_attrs;
    return a;
}
inline void attr_int(aclOpExecutor* ex, int64_t v) { auto& a = next_attr(ex, 0); a.i = v; a.f = float(v); a.b = v != 0; }
inline void attr_float(aclOpExecutor* ex, double v) { auto& a = next_attr(ex, 1); a.f = float(v); a.i = int64_t(v); }
inline void attr_bool(aclOpExecutor* ex, bool v) { auto& a = next_attr(ex, 2); a.b = v; a.i = v; }
inline void attr_str(aclOpExecutor* ex, const char* v) { next_attr(ex, 3).s = v ? v : ""; }
inline void attr_ints(aclOpExecutor* ex, const aclIntArray* v) {
    auto& a = next_attr(ex, 4);
    if (v) a.li = v->values;
}
inline void attr_floats(aclOpExecutor* ex, const aclFloatArray* v) {
    auto& a = next_attr(ex, 5);
    if (v) a.lf = v->values;
}
inline void attr_bools(aclOpExecutor* ex, const aclBoolArray* v) {
    auto& a = next_attr(ex, 4);  // read back as a list of integers, one per flag
    if (v)
        for (bool b : v->values) a.li.push_back(b);
}
inline void add_out(aclOpExecutor* ex, const aclTensor* t) {
    ::gert::StorageShape ss;
    ::gert::CompileTimeTensorDesc desc;
    ::gert::Tensor gt;
    if (t) {
        ss = shape_of(t);
        desc.dtype_ = ::ge::DataType(t->dtype);
        gt.shape_ = ss;
        gt.dtype_ = desc.dtype_;
    }
    ex->io.out_shapes.push_back(ss);
    ex->io.out_desc.push_back(desc);
    ex->io.out_tensors.push_back(gt);
}
inline void output(aclOpExecutor* ex, const aclTensor* t) {
    if (!t) fail(ex, "an output tensor is null");
    add_out(ex, t);
    ex->gm.push_back(t ? data_of(t) : nullptr);
    ex->dtypes.push_back(t ? int64_t(t->dtype) : -1);
}
// An in-place output: the input passed as <name>Ref, written by the kernel through its output slot.
inline void output_ref(aclOpExecutor* ex, const aclTensor* t) {
    add_out(ex, t);
    ex->gm.push_back(t ? data_of(t) : nullptr);
}
inline void output_list(aclOpExecutor* ex, const aclTensorList* l) {
    if (!l) {
        fail(ex, "a DYNAMIC output (aclTensorList) is null");
        return;
    }
    for (const aclTensor* t : l->tensors) add_out(ex, t);
    ex->gm.push_back(list_desc(ex, l, "aclTensorList"));
    ex->dtypes.push_back(!l->tensors.empty() && l->tensors[0] ? int64_t(l->tensors[0]->dtype) : -1);
}
// An in-place DYNAMIC output: the input list again, written through its output slot (its dtypes
// counted once, with the input, as output_ref's are)
inline void output_list_ref(aclOpExecutor* ex, const aclTensorList* l) {
    if (!l) return;  // input_list has already failed the call
    for (const aclTensor* t : l->tensors) add_out(ex, t);
    ex->gm.push_back(list_desc(ex, l, "aclTensorList"));
}
// The attribute lists' ContinuousVector views (GetListInt and friends) point into the values.
inline void bind_lists(aclOpExecutor* ex) {
    for (auto& a : ex->io.attrs.attrs_) a.BindLists();
}

// Runs TilingFunc; `compiled`: the dtypes the DTYPE_<NAME> kernel was built for (null: any).
inline aclnnStatus finish(aclOpExecutor* ex, const int64_t* compiled, size_t n_compiled, uint64_t* workspaceSize,
                          aclOpExecutor** executor) {
    std::unique_ptr<aclOpExecutor> own(ex);
    if (!workspaceSize || !executor) fail(ex, "workspaceSize and executor must not be null");
    if (ex->def && !ex->def->aicore_.tiling_) fail(ex, "the OpDef sets no tiling function (AICore().SetTiling)");
    if (compiled && ex->error.empty()) {
        bool same = n_compiled == ex->dtypes.size();
        std::string given;
        for (size_t k = 0; k < ex->dtypes.size(); ++k) {
            given += (k ? "," : "") + std::to_string(ex->dtypes[k]);
            same = same && (ex->dtypes[k] < 0 || compiled[k] < 0 || compiled[k] == ex->dtypes[k]);
        }
        // The kernel was built for other dtypes: the caller (aclnn.py) rebuilds it for these and reruns.
        if (!same) {
            std::fprintf(stderr, "[kgsim:dtype_column %s]\n", given.c_str());
            std::fflush(stderr);
            std::_Exit(86);
        }
    }
    if (!ex->error.empty()) {
        std::fprintf(stderr, "[ERROR] %s\n", ex->error.c_str());
        kgsim_acl::recent_error() = ex->error;
        return ACLNN_ERR_PARAM_INVALID;
    }
    bind_lists(ex);
    ex->io.compile_info = ::kgsim::op_compile_info(ex->def->name_);
    constexpr size_t kTilingCap = 64 * 1024;
    ex->tiling.assign(kTilingCap, 0);
    ::gert::TilingContext ctx(&ex->io);
    ctx.tiling_.data_ = ex->tiling.data();
    ctx.tiling_.cap_ = kTilingCap;
    if (ex->def->aicore_.tiling_(&ctx) != ::ge::GRAPH_SUCCESS) {
        ex->error = ex->api + ": the operator's TilingFunc returned a failure";
        std::fprintf(stderr, "[ERROR] %s\n", ex->error.c_str());
        kgsim_acl::recent_error() = ex->error;
        return ACLNN_ERR_INNER;
    }
    ex->tiling.resize(std::max<size_t>(ctx.tiling_.size_, 1));
    ex->block_dim = ctx.block_dim_;
    ex->tiling_key = ctx.tiling_key_;
    for (size_t w : ctx.workspace_) ex->workspace += w;
    *workspaceSize = ex->workspace;
    *executor = own.release();
    return ACLNN_SUCCESS;
}

inline aclnnStatus run(aclOpExecutor* ex, void* workspace, uint64_t workspaceSize, LaunchV launch, size_t kernel_params) {
    std::unique_ptr<aclOpExecutor> own(ex);  // an executor serves one launch, as in CANN
    if (!ex) return ACLNN_ERR_PARAM_NULLPTR;
    if (ex->workspace > 0 && (!workspace || workspaceSize < ex->workspace)) {
        kgsim_acl::recent_error() = ex->api + ": the workspace is smaller than GetWorkspaceSize asked for";
        std::fprintf(stderr, "[ERROR] %s\n", kgsim_acl::recent_error().c_str());
        return ACLNN_ERR_PARAM_INVALID;
    }
    std::vector<uint8_t*> ptrs = ex->gm;
    uint8_t* tiling = gm_buffer(ex, ex->tiling.size(), "tiling");
    std::memcpy(tiling, ex->tiling.data(), ex->tiling.size());
    // kernels declare (params..., workspace, tiling) or (params..., tiling)
    if (kernel_params >= ptrs.size() + 2) {
        uint8_t* ws = static_cast<uint8_t*>(workspace);
        if (!ws) ws = gm_buffer(ex, 32, "workspace");
        ptrs.push_back(ws);
    }
    ptrs.push_back(tiling);
    launch(int64_t(ex->block_dim), int64_t(ex->tiling_key), ptrs.data(), ptrs.size());
    return ACLNN_SUCCESS;
}
}  // namespace kgsim_aclnn
