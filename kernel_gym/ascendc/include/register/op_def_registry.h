// kgsim operator-project shim: gert contexts, ops::OpDef and OP_ADD. The registry is queried by
// the entry points that kernel_gym/ascendc/op_project.py generates.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>
#include "ge/ge_api_error_codes.h"
#include "kgsim/tiling_bind.h"
#include "graph/ge_error_codes.h"
#include "graph/operator.h"
#include "graph/types.h"
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"

namespace gert {
class Shape {
public:
    static constexpr size_t kMaxDimNum = 25;
    static constexpr int64_t kInvalidDimValue = std::numeric_limits<int64_t>::min();
    Shape() = default;
    Shape(std::initializer_list<int64_t> d) { for (auto v : d) AppendDim(v); }
    size_t GetDimNum() const { return n_; }
    // past kMaxDimNum: kInvalidDimValue (CANN's); below it, the stored dim even past GetDimNum()
    int64_t GetDim(size_t i) const { return i < kMaxDimNum ? dims_[i] : kInvalidDimValue; }
    void SetDimNum(size_t n) { n_ = n < kMaxDimNum ? n : kMaxDimNum; }
    void SetDim(size_t i, int64_t v) { if (i < kMaxDimNum) { dims_[i] = v; if (i >= n_) n_ = i + 1; } }
    Shape& AppendDim(int64_t v) { if (n_ < kMaxDimNum) dims_[n_++] = v; return *this; }
    // the element count; kInvalidDimValue where the product overflows int64 (CANN's)
    int64_t GetShapeSize() const {
        int64_t s = 1;
        for (size_t i = 0; i < n_; ++i) if (__builtin_mul_overflow(s, dims_[i], &s)) return kInvalidDimValue;
        return s;
    }
    bool IsScalar() const { return n_ == 0; }
    void SetScalar() { n_ = 0; }
    const int64_t& operator[](size_t i) const { return dims_[i]; }
    int64_t& operator[](size_t i) { return dims_[i]; }
    bool operator==(const Shape& o) const {
        if (n_ != o.n_) return false;
        for (size_t i = 0; i < n_; ++i) if (dims_[i] != o.dims_[i]) return false;
        return true;
    }
    bool operator!=(const Shape& o) const { return !(*this == o); }
private:
    int64_t dims_[kMaxDimNum] = {};
    size_t n_ = 0;
};

class StorageShape {
public:
    StorageShape() = default;
    StorageShape(std::initializer_list<int64_t> origin, std::initializer_list<int64_t> storage)
        : origin_(origin), storage_(storage) {}
    const Shape& GetStorageShape() const { return storage_; }
    const Shape& GetOriginShape() const { return origin_; }
    const Shape& GetShape() const { return origin_; }  // CANN's: the origin shape
    Shape& MutableStorageShape() { return storage_; }
    Shape& MutableOriginShape() { return origin_; }
    Shape& MutableShape() { return origin_; }
    void Set(const Shape& s) { storage_ = s; origin_ = s; }
    // equal when both the origin and the storage shape are (CANN's StorageShape::operator==)
    bool operator==(const StorageShape& o) const { return origin_ == o.origin_ && storage_ == o.storage_; }
    bool operator!=(const StorageShape& o) const { return !(*this == o); }
private:
    Shape origin_, storage_;
};

// The rule that pads an origin shape with 1s into its storage shape's rank (CANN's gert::ExpandDimsType):
// its full rank and, bit i set, axis i is a padded one. Kept and compared; the simulator pads nothing.
class ExpandDimsType {
public:
    using AxisIndex = uint64_t;
    static constexpr size_t kMaxExpandSize = 56;
    ExpandDimsType() = default;
    // "0110": rank 4, axes 1 and 2 padded
    explicit ExpandDimsType(const char* rule) {
        size_t n = rule ? std::char_traits<char>::length(rule) : 0;
        if (n > kMaxExpandSize) return;
        size_ = n;
        for (size_t i = 0; i < n; ++i) if (rule[i] == '1') SetExpandIndex(i);
    }
    // the packed form: rank in the high 8 bits, the axis bits below
    explicit ExpandDimsType(int64_t packed) {
        uint64_t u = uint64_t(packed), n = u >> kMaxExpandSize;
        if (n > kMaxExpandSize) return;
        size_ = n;
        mask_ = u & ((uint64_t(1) << kMaxExpandSize) - 1);
    }
    bool operator==(const ExpandDimsType& o) const { return size_ == o.size_ && mask_ == o.mask_; }
    AxisIndex GetFullSize() const { return size_; }
    void SetExpandIndex(AxisIndex i) { if (i < kMaxExpandSize) mask_ |= uint64_t(1) << i; }
    bool IsExpandIndex(AxisIndex i) const { return i < kMaxExpandSize && ((mask_ >> i) & 1u); }
    // shape padded to GetFullSize() dims, a 1 at each padded axis (a shape of that rank already: as is)
    ge::graphStatus Expand(const Shape& shape, Shape& out) const {
        if (shape.GetDimNum() == size_) { out = shape; return ge::GRAPH_SUCCESS; }
        Shape r;
        size_t k = 0;
        for (size_t i = 0; i < size_; ++i) {
            if (IsExpandIndex(i)) { r.AppendDim(1); continue; }
            if (k >= shape.GetDimNum()) return ge::GRAPH_FAILED;
            r.AppendDim(shape.GetDim(k++));
        }
        for (; k < shape.GetDimNum(); ++k) r.AppendDim(shape.GetDim(k));
        out = r;
        return ge::GRAPH_SUCCESS;
    }
    ge::graphStatus Expand(Shape& shape) const {
        Shape r;
        ge::graphStatus s = Expand(shape, r);
        if (s == ge::GRAPH_SUCCESS) shape = r;
        return s;
    }
private:
    uint64_t size_ = 0;
    uint64_t mask_ = 0;
};

// A tensor's origin and storage formats and its pad rule (CANN's gert::StorageFormat)
struct StorageFormat {
public:
    StorageFormat() = default;
    StorageFormat(ge::Format origin, ge::Format storage, const ExpandDimsType& expand)
        : origin_(origin), storage_(storage), expand_(expand) {}
    ge::Format GetOriginFormat() const { return origin_; }
    void SetOriginFormat(ge::Format f) { origin_ = f; }
    ge::Format GetStorageFormat() const { return storage_; }
    void SetStorageFormat(ge::Format f) { storage_ = f; }
    ExpandDimsType GetExpandDimsType() const { return expand_; }
    void SetExpandDimsType(const ExpandDimsType& e) { expand_ = e; }
    ExpandDimsType& MutableExpandDimsType() { return expand_; }
    bool operator==(const StorageFormat& o) const {
        return origin_ == o.origin_ && storage_ == o.storage_ && expand_ == o.expand_;
    }
    bool operator!=(const StorageFormat& o) const { return !(*this == o); }
private:
    ge::Format origin_ = ge::FORMAT_ND, storage_ = ge::FORMAT_ND;  // ND unless set: what an aclnn caller gives
    ExpandDimsType expand_;
};

// Where a tensor's data lives (CANN's gert::TensorPlacement); here all memory is host memory.
enum TensorPlacement : int32_t { kOnDeviceHbm, kOnHost, kFollowing, kOnDeviceP2p, kTensorPlacementEnd };

class CompileTimeTensorDesc {
public:
    ge::DataType GetDataType() const { return dtype_; }
    const StorageFormat& GetFormat() const { return format_; }
    ge::Format GetOriginFormat() const { return format_.GetOriginFormat(); }
    ge::Format GetStorageFormat() const { return format_.GetStorageFormat(); }
    ExpandDimsType GetExpandDimsType() const { return format_.GetExpandDimsType(); }
    void SetDataType(ge::DataType d) { dtype_ = d; }
    void SetStorageFormat(ge::Format f) { format_.SetStorageFormat(f); }
    void SetOriginFormat(ge::Format f) { format_.SetOriginFormat(f); }
    void SetExpandDimsType(const ExpandDimsType& e) { format_.SetExpandDimsType(e); }
    // whether an (optional) output exists; true unless SetExist(false)
    void SetExist(bool e) { not_exist_ = !e; }
    bool IsExist() const { return !not_exist_; }
    ge::DataType dtype_ = ge::DT_FLOAT;
    StorageFormat format_;
    bool not_exist_ = false;
};

class Tensor {
public:
    Tensor() = default;
    Tensor(const StorageShape& shape, const StorageFormat& format, ge::DataType dtype)
        : shape_(shape), format_(format), dtype_(dtype) {}
    // addr is the tensor's data, size its bytes (the element count times the dtype's size)
    Tensor(const StorageShape& shape, const StorageFormat& format, TensorPlacement placement, ge::DataType dtype,
           void* addr)
        : shape_(shape), format_(format), dtype_(dtype), data_(addr), placement_(placement) {
        int es = ge::GetSizeByDataType(dtype);
        size_ = es > 0 ? size_t(GetShapeSize()) * size_t(es) : 0;
    }
    const Shape& GetStorageShape() const { return shape_.GetStorageShape(); }
    Shape& MutableStorageShape() { return shape_.MutableStorageShape(); }
    const Shape& GetOriginShape() const { return shape_.GetOriginShape(); }
    Shape& MutableOriginShape() { return shape_.MutableOriginShape(); }
    const StorageShape& GetShape() const { return shape_; }
    StorageShape& GetShape() { return shape_; }
    int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
    ge::DataType GetDataType() const { return dtype_; }
    void SetDataType(ge::DataType d) { dtype_ = d; }
    ge::Format GetStorageFormat() const { return format_.GetStorageFormat(); }
    void SetStorageFormat(ge::Format f) { format_.SetStorageFormat(f); }
    ge::Format GetOriginFormat() const { return format_.GetOriginFormat(); }
    void SetOriginFormat(ge::Format f) { format_.SetOriginFormat(f); }
    const StorageFormat& GetFormat() const { return format_; }
    StorageFormat& MutableFormat() { return format_; }
    ExpandDimsType GetExpandDimsType() const { return format_.GetExpandDimsType(); }
    void SetExpandDimsType(const ExpandDimsType& e) { format_.SetExpandDimsType(e); }
    // a ValueDepend input's values (the aclnn caller's data); nullptr for any other input, as in CANN
    // (a read of nullptr is noted: a crash of the host code then names the input)
    template <class T> const T* GetData() const { return static_cast<const T*>(Data()); }
    template <class T> T* GetData() { return static_cast<T*>(const_cast<void*>(Data())); }
    const void* GetAddr() const { return Data(); }
    void* GetAddr() { return const_cast<void*>(Data()); }
    size_t GetSize() const { return size_; }
    void SetSize(size_t s) { size_ = s; }
    TensorPlacement GetPlacement() const { return placement_; }
    void SetPlacement(TensorPlacement p) { placement_ = p; }
    StorageShape shape_;
    StorageFormat format_;
    ge::DataType dtype_ = ge::DT_FLOAT;
    const void* data_ = nullptr;
    size_t size_ = 0;
    TensorPlacement placement_ = kOnHost;  // device memory is host memory here
    mutable bool kgsim_null_data_read_ = false;

private:
    const void* Data() const {
        if (!data_) kgsim_null_data_read_ = true;
        return data_;
    }
};

class ContinuousVector {
public:
    size_t GetSize() const { return size_; }
    // what the vector was given (cap_), or its size where that was never set
    size_t GetCapacity() const { return cap_ > size_ ? cap_ : size_; }
    // CANN's: fails (GRAPH_PARAM_OUT_OF_RANGE) past the capacity, which does not grow
    ge::graphStatus SetSize(size_t s) {
        if (s > GetCapacity()) return ge::GRAPH_PARAM_OUT_OF_RANGE;
        cap_ = GetCapacity();
        size_ = s;
        return ge::GRAPH_SUCCESS;
    }
    const void* GetData() const { return data_; }
    void* MutableData() { return const_cast<void*>(data_); }
    const void* data_ = nullptr;
    size_t size_ = 0;
    size_t cap_ = 0;
};
// A typed view of a list attribute (GetListInt: int64_t, GetListFloat: float), as CANN's
// TypedContinuousVector<T> gives it; same layout as the untyped one.
template <class T = void>
class TypedContinuousVector : public ContinuousVector {
public:
    const T* GetData() const { return static_cast<const T*>(data_); }
    T* MutableData() { return static_cast<T*>(const_cast<void*>(data_)); }
};
// A list of lists (a ListListInt attribute, CANN's ContinuousVectorVector): Get(i) is list i.
class ContinuousVectorVector {
public:
    size_t GetSize() const { return items_.size(); }
    const ContinuousVector* Get(size_t i) const { return i < items_.size() ? &items_[i] : nullptr; }
    std::vector<ContinuousVector> items_;
};

struct KgsimAttrValue {
    int type = 0;  // 0 int, 1 float, 2 bool, 3 string, 4 list int, 5 list float, 6 list bool, 7 list list int
    int64_t i = 0;
    float f = 0.0f;
    bool b = false;
    std::string s;
    std::vector<int64_t> li;
    std::vector<float> lf;
    ContinuousVector cv;
    std::vector<std::vector<int64_t>> lli;  // a ListListInt attribute's lists; cvv views them (BindLists)
    ContinuousVectorVector cvv;
    // point cv (cvv) at the list values, as the attribute's type says
    void BindLists() {
        if (type == 4) { cv.data_ = li.data(); cv.size_ = li.size(); }
        if (type == 5) { cv.data_ = lf.data(); cv.size_ = lf.size(); }
        if (type == 7) {
            cvv.items_.assign(lli.size(), ContinuousVector());
            for (size_t k = 0; k < lli.size(); ++k) {
                cvv.items_[k].data_ = lli[k].data();
                cvv.items_[k].size_ = lli[k].size();
            }
        }
    }
    mutable double d = 0;  // the attribute read as double (GetAttrPointer<double>), per attribute
};

class RuntimeAttrs {
public:
    template <class T>
    const T* GetAttrPointer(size_t i) const {
        if (i >= attrs_.size()) return nullptr;
        const KgsimAttrValue& a = attrs_[i];
        if constexpr (std::is_same_v<T, int64_t>) return &a.i;
        else if constexpr (std::is_same_v<T, float>) return &a.f;
        else if constexpr (std::is_same_v<T, bool>) return &a.b;
        else if constexpr (std::is_same_v<T, char>) return a.s.c_str();
        else if constexpr (std::is_same_v<T, ContinuousVectorVector>) return &a.cvv;
        // ContinuousVector or a TypedContinuousVector<T> view of it (CANN's GetListInt reads it so)
        else if constexpr (std::is_base_of_v<ContinuousVector, T>) return static_cast<const T*>(&a.cv);
        // An Int attribute read through a narrower integer type: the low bytes of the attribute's own
        // int64 storage (little-endian, as reading it in place on the host does). The documentation
        // returns "a pointer to the attribute", so two attributes never share one pointer.
        else if constexpr (std::is_integral_v<T>) return reinterpret_cast<const T*>(&a.i);
        else if constexpr (std::is_same_v<T, double>) {
            a.d = a.type == 1 ? double(a.f) : double(a.i);
            return &a.d;
        }
        else static_assert(sizeof(T) == 0, "kgsim: unsupported attribute type in GetAttrPointer");
    }
    const int64_t* GetInt(size_t i) const { return GetAttrPointer<int64_t>(i); }
    const float* GetFloat(size_t i) const { return GetAttrPointer<float>(i); }
    const bool* GetBool(size_t i) const { return GetAttrPointer<bool>(i); }
    const char* GetStr(size_t i) const { return GetAttrPointer<char>(i); }
    const TypedContinuousVector<int64_t>* GetListInt(size_t i) const {
        return static_cast<const TypedContinuousVector<int64_t>*>(GetAttrPointer<ContinuousVector>(i));
    }
    const TypedContinuousVector<float>* GetListFloat(size_t i) const {
        return static_cast<const TypedContinuousVector<float>*>(GetAttrPointer<ContinuousVector>(i));
    }
    const ContinuousVectorVector* GetListListInt(size_t i) const { return GetAttrPointer<ContinuousVectorVector>(i); }
    const ContinuousVectorVector* GetListListFloat(size_t i) const { return GetAttrPointer<ContinuousVectorVector>(i); }
    // null: an OpDef cannot declare a Tensor attribute (OpAttrDef has no builder for one)
    const Tensor* GetTensor(size_t) const { return nullptr; }
    size_t GetAttrNum() const { return attrs_.size(); }
    std::vector<KgsimAttrValue> attrs_;
};

// The attribute types TilingData::AppendConvertedAttrVal names (CANN's gert::AttrDataType)
enum class AttrDataType : int32_t {
    kBool = 0, kString, kInt32, kInt64, kUint32, kFloat32, kFloat16, kListBool, kListString, kListInt32,
    kListInt64, kListUint32, kListFloat32, kListFloat16, kListListInt32, kListListInt64, kBfloat16, kInt8,
    kInt16, kListInt8, kListInt16, kListListBool, kListListFloat16, kListBfloat16, kListListBfloat16,
    kListListFloat32, kListListInt8, kListListInt16, kUint8, kListUint8, kListListUint8, kUint16, kListUint16,
    kListListUint16, kListListUint32, kUint64, kListUint64, kListListUint64, kTypeEnd
};

class TilingData {
public:
    void* GetData() { return data_; }
    const void* GetData() const { return data_; }
    size_t GetCapacity() const { return cap_; }
    size_t GetDataSize() const { return size_; }
    void SetDataSize(size_t s) { size_ = s; }
    // size more bytes at the end of the data; null (nothing taken) past the capacity
    void* Expand(size_t size) {
        size_t after;
        if (__builtin_add_overflow(size_, size, &after) || after > cap_) return nullptr;
        void* at = data_ + size_;
        size_ = after;
        return at;
    }
    template <class T, typename std::enable_if<std::is_standard_layout<T>::value, int>::type = 0>
    ge::graphStatus Append(const T& v) {
        void* at = Expand(sizeof(T));
        if (at == nullptr) return ge::GRAPH_FAILED;
        std::memcpy(at, &v, sizeof(T));
        return ge::GRAPH_SUCCESS;
    }
    template <class T, typename std::enable_if<std::is_standard_layout<T>::value, int>::type = 0>
    ge::graphStatus Append(const T* v, size_t n) {
        size_t bytes;
        if (__builtin_mul_overflow(sizeof(T), n, &bytes)) return ge::GRAPH_MUL_OVERFLOW;
        void* at = Expand(bytes);
        if (at == nullptr) return ge::GRAPH_ADD_OVERFLOW;
        if (bytes) std::memcpy(at, v, bytes);
        return ge::GRAPH_SUCCESS;
    }
    void Init(size_t cap, void* data) { cap_ = cap; size_ = 0; data_ = static_cast<uint8_t*>(data); }
    static ge::graphStatus CalcTotalSize(size_t cap, size_t& total) {
        return __builtin_add_overflow(sizeof(TilingData), cap, &total) ? ge::GRAPH_FAILED : ge::GRAPH_SUCCESS;
    }
    // a TilingData of capacity cap whose data follows it in the one buffer
    static std::unique_ptr<uint8_t[]> CreateCap(size_t cap) {
        size_t total;
        if (CalcTotalSize(cap, total) != ge::GRAPH_SUCCESS) return nullptr;
        std::unique_ptr<uint8_t[]> buf(new uint8_t[total]());
        TilingData* td = new (buf.get()) TilingData();
        td->Init(cap, buf.get() + sizeof(TilingData));
        return buf;
    }
    uint8_t* data_ = nullptr;
    size_t cap_ = 0;
    size_t size_ = 0;
};
// appends data (ignored past the capacity: CANN's operator<< cannot report it either)
template <class T> TilingData& operator<<(TilingData& out, const T& data) {
    out.Append(data);
    return out;
}

// What the contexts see of the op: shapes, dtypes, attributes (filled by the generated entries).
struct KgsimOpIO {
    std::string name;
    std::vector<StorageShape> in_shapes, out_shapes;
    std::vector<Tensor> in_tensors, out_tensors;
    std::vector<CompileTimeTensorDesc> in_desc, out_desc;
    std::vector<bool> in_present;
    RuntimeAttrs attrs;
    // compute-node index of each IR input's first instance (a DYNAMIC input is several); empty: one each
    std::vector<size_t> ir_first;
    const void* compile_info = nullptr;  // what the op's TilingParse filled (GetCompileInfo)
    // The flat index of instance j of IR input ir; past the instances that input was given, an index
    // that is not present (a DYNAMIC input's GetDynamicInputTensor(i, n) is null after its last tensor,
    // which the library's tiling loops rely on to count them).
    size_t Flat(size_t ir, size_t j) const {
        if (ir >= ir_first.size()) return ir + j;
        size_t end = ir + 1 < ir_first.size() ? ir_first[ir + 1] : in_shapes.size();
        return ir_first[ir] + j < end ? ir_first[ir] + j : size_t(-1);
    }
};

// Where one IR input's (or output's) instances sit among the node's actual ones (CANN's
// gert::AnchorInstanceInfo): a required input has 1, an optional one 1 or 0, a dynamic one 0..N.
class AnchorInstanceInfo {
public:
    AnchorInstanceInfo() = default;
    AnchorInstanceInfo(uint32_t instance_start, uint32_t instantiation_num)
        : start_(instance_start), num_(instantiation_num) {}
    size_t GetInstanceNum() const { return num_; }
    size_t GetInstanceStart() const { return start_; }
    void SetInstanceStart(uint32_t instance_start) { start_ = instance_start; }
    void SetInstantiationNum(uint32_t instantiation_num) { num_ = instantiation_num; }
private:
    uint32_t start_ = 0;
    uint32_t num_ = 0;
};

// The compute node a kernel context belongs to (CANN's gert::ComputeNodeInfo): its name and type,
// how many inputs and outputs the node has, its attributes and each tensor's compile-time desc.
class ComputeNodeInfo {
public:
    explicit ComputeNodeInfo(const KgsimOpIO* io) : io_(io) {}
    const char* GetNodeName() const { return io_->name.c_str(); }
    const char* GetNodeType() const { return io_->name.c_str(); }
    size_t GetInputsNum() const { return io_->in_shapes.size(); }
    size_t GetOutputsNum() const { return io_->out_shapes.size(); }
    size_t GetIrInputsNum() const { return io_->ir_first.empty() ? io_->in_shapes.size() : io_->ir_first.size(); }
    size_t GetIrOutputsNum() const { return io_->out_shapes.size(); }  // outputs are one instance each
    const RuntimeAttrs* GetAttrs() const { return &io_->attrs; }
    const CompileTimeTensorDesc* GetInputTdInfo(size_t i) const {
        return i < io_->in_desc.size() ? &io_->in_desc[i] : nullptr;
    }
    const CompileTimeTensorDesc* GetOutputTdInfo(size_t i) const {
        return i < io_->out_desc.size() ? &io_->out_desc[i] : nullptr;
    }
    // IR input ir_index's instances: its span of the flattened inputs, less an absent optional one
    const AnchorInstanceInfo* GetInputInstanceInfo(size_t ir_index) const {
        size_t n_ir = GetIrInputsNum();
        if (ir_index >= n_ir) return nullptr;
        in_inst_.resize(n_ir);
        size_t start = io_->ir_first.empty() ? ir_index : io_->ir_first[ir_index];
        size_t end = ir_index + 1 < n_ir ? (io_->ir_first.empty() ? ir_index + 1 : io_->ir_first[ir_index + 1])
                                          : io_->in_shapes.size();
        size_t num = end > start ? end - start : 0;
        if (num == 1 && start < io_->in_present.size() && !io_->in_present[start]) num = 0;
        in_inst_[ir_index] = AnchorInstanceInfo(uint32_t(start), uint32_t(num));
        return &in_inst_[ir_index];
    }
    // outputs are required ones: one instance each
    const AnchorInstanceInfo* GetOutputInstanceInfo(size_t ir_index) const {
        if (ir_index >= io_->out_shapes.size()) return nullptr;
        out_inst_.resize(io_->out_shapes.size());
        out_inst_[ir_index] = AnchorInstanceInfo(uint32_t(ir_index), 1);
        return &out_inst_[ir_index];
    }
private:
    const KgsimOpIO* io_;
    mutable std::vector<AnchorInstanceInfo> in_inst_, out_inst_;
};

// The base of the tiling, shape and data-type inference contexts (CANN's gert::ExtendedKernelContext):
// what each of them answers about the node. Its subobject is the context's first, so a kernel
// context reinterpret_cast to it (as the library's host code does) is the same object.
class ExtendedKernelContext {
public:
    explicit ExtendedKernelContext(KgsimOpIO* io) : io_(io), node_(io) {}
    const ComputeNodeInfo* GetComputeNodeInfo() const { return &node_; }
    size_t GetComputeNodeInputNum() const { return io_->in_shapes.size(); }
    size_t GetComputeNodeOutputNum() const { return io_->out_shapes.size(); }
    const char* GetNodeName() const { return io_->name.c_str(); }
    const char* GetNodeType() const { return io_->name.c_str(); }
    const RuntimeAttrs* GetAttrs() const { return &io_->attrs; }
    // an input's compile-time description (data type, formats); null for an absent optional input
    const CompileTimeTensorDesc* GetInputDesc(size_t i) const {
        return Present(i) && i < io_->in_desc.size() ? &io_->in_desc[i] : nullptr;
    }
    const CompileTimeTensorDesc* GetOptionalInputDesc(size_t i) const { return GetInputDesc(io_->Flat(i, 0)); }
    const CompileTimeTensorDesc* GetRequiredInputDesc(size_t i) const { return GetInputDesc(io_->Flat(i, 0)); }
    const CompileTimeTensorDesc* GetDynamicInputDesc(size_t i, size_t j) const { return GetInputDesc(io_->Flat(i, j)); }
    const CompileTimeTensorDesc* GetOutputDesc(size_t i) const {
        return i < io_->out_desc.size() ? &io_->out_desc[i] : nullptr;
    }
    const AnchorInstanceInfo* GetIrInputInstanceInfo(size_t ir) const { return node_.GetInputInstanceInfo(ir); }
    const AnchorInstanceInfo* GetIrOutputInstanceInfo(size_t ir) const { return node_.GetOutputInstanceInfo(ir); }
    // the kernel is the node's own here (no separate execution-graph kernel to name)
    const char* GetKernelName() const { return io_->name.c_str(); }
    const char* GetKernelType() const { return io_->name.c_str(); }
protected:
    bool Present(size_t i) const { return i < io_->in_shapes.size() && io_->in_present[i]; }
    KgsimOpIO* io_;
    ComputeNodeInfo node_;
};

// A SIMT launch's grid or block dimensions (CANN's gert::Dim3)
struct Dim3 {
    uint32_t x, y, z;
    Dim3(uint32_t dx, uint32_t dy = 1, uint32_t dz = 1) : x(dx), y(dy), z(dz) {}  // NOLINT: implicit, as CANN's
};

class TilingContext : public ExtendedKernelContext {
public:
    // a new tiling call: tiling-data objects bound to earlier calls' buffers (SetDataPtr) are gone
    explicit TilingContext(KgsimOpIO* io) : ExtendedKernelContext(io) { ::kgsim_tiling::clear(); }
    const StorageShape* GetInputShape(size_t i) const { return Present(i) ? &io_->in_shapes[i] : nullptr; }
    const StorageShape* GetOptionalInputShape(size_t i) const { return GetInputShape(io_->Flat(i, 0)); }
    const StorageShape* GetRequiredInputShape(size_t i) const { return GetInputShape(io_->Flat(i, 0)); }
    const StorageShape* GetDynamicInputShape(size_t i, size_t j) const { return GetInputShape(io_->Flat(i, j)); }
    const StorageShape* GetOutputShape(size_t i) const { return i < io_->out_shapes.size() ? &io_->out_shapes[i] : nullptr; }
    const Tensor* GetInputTensor(size_t i) const { return Present(i) ? &io_->in_tensors[i] : nullptr; }
    const Tensor* GetOptionalInputTensor(size_t i) const { return GetInputTensor(io_->Flat(i, 0)); }
    const Tensor* GetRequiredInputTensor(size_t i) const { return GetInputTensor(io_->Flat(i, 0)); }
    const Tensor* GetDynamicInputTensor(size_t i, size_t j) const { return GetInputTensor(io_->Flat(i, j)); }
    // The outputs' slots, as CANN numbers them (what a tiling function sets, in order).
    enum TilingOutputIndex : uint32_t {
        kOutputTilingKey = 0, kOutputBlockDim = 1, kOutputSimdNumBlocks = 1, kOutputAtomicCleanFlag = 2,
        kOutputTilingData = 3, kOutputWorkspace = 4, kOutputTilingCond = 5, kOutputScheduleMode = 6,
        kOutputLocalMemorySize = 7, kOutputDynUBufSize = 7, kOutputAicpuBlockDim = 8, kOutputAicpuNumBlocks = 8,
        kOutputSimtBlockDim = 9, kOutputSimtGridDim = 10, kOutputNum
    };
    ge::graphStatus SetBlockDim(uint32_t d) { block_dim_ = d; return ge::GRAPH_SUCCESS; }
    uint32_t GetBlockDim() const { return block_dim_; }
    // CANN's newer names of SetBlockDim / GetBlockDim (the same value)
    ge::graphStatus SetSimdNumBlocks(uint32_t d) { return SetBlockDim(d); }
    uint32_t GetSimdNumBlocks() const { return GetBlockDim(); }
    ge::graphStatus SetTilingKey(uint64_t k) { tiling_key_ = k; return ge::GRAPH_SUCCESS; }
    uint64_t GetTilingKey() const { return tiling_key_; }
    TilingData* GetRawTilingData() { return &tiling_; }
    // null where T does not fit the tiling buffer (CANN's); otherwise its size is the data size
    template <class T> T* GetTilingData() {
        if (tiling_.cap_ < sizeof(T)) return nullptr;
        tiling_.size_ = sizeof(T);
        return reinterpret_cast<T*>(tiling_.data_);
    }
    // the workspace count becomes n (CANN's SetSize), the sizes already set kept
    size_t* GetWorkspaceSizes(size_t n) { workspace_.resize(n, 0); return workspace_.data(); }
    size_t GetWorkspaceNum() const { return workspace_.size(); }
    fe::PlatFormInfos* GetPlatformInfo() const { return fe::PlatFormInfos::Instance(); }
    template <class T> const T* GetCompileInfo() const { return static_cast<const T*>(io_->compile_info); }
    const void* GetCompileInfo() const { return io_->compile_info; }
    int32_t GetDeterministic() const { return 0; }
    int32_t GetDeterministicLevel() const { return 0; }  // no deterministic computation asked for
    // Kept and read back; the simulator runs the blocks one after another whatever the mode says.
    ge::graphStatus SetScheduleMode(uint32_t m) { schedule_mode_ = m; return ge::GRAPH_SUCCESS; }
    uint32_t GetScheduleMode() const { return schedule_mode_; }
    // Kept and read back; outputs start from the caller's memory, so there is no atomic clean to run.
    ge::graphStatus SetNeedAtomic(bool a) { need_atomic_ = a; return ge::GRAPH_SUCCESS; }
    bool NeedAtomic() const { return need_atomic_; }
    // AI CPU blocks of a fused op: kept and read back (the simulator runs no AI CPU kernel)
    ge::graphStatus SetAicpuBlockDim(uint32_t d) { aicpu_block_dim_ = d; return ge::GRAPH_SUCCESS; }
    uint32_t GetAicpuBlockDim() const { return aicpu_block_dim_; }
    ge::graphStatus SetAicpuNumBlocks(uint32_t d) { return SetAicpuBlockDim(d); }
    uint32_t GetAicpuNumBlocks() const { return GetAicpuBlockDim(); }
    // the dynamic UB size asked for: kept and read back (the simulated UB is the platform's whole)
    ge::graphStatus SetLocalMemorySize(uint32_t n) { local_memory_size_ = n; return ge::GRAPH_SUCCESS; }
    uint32_t GetLocalMemorySize() const { return local_memory_size_; }
    ge::graphStatus SetDynUBufSize(uint32_t n) { return SetLocalMemorySize(n); }
    uint32_t GetDynUBufSize() const { return GetLocalMemorySize(); }
    // a fallible tiling's condition: -1 until set
    ge::graphStatus SetTilingCond(int32_t c) { tiling_cond_ = c; return ge::GRAPH_SUCCESS; }
    int32_t GetTilingCond() const { return tiling_cond_; }
    // SIMT launch dimensions: kept and read back (the simulator runs SIMD kernels only)
    ge::graphStatus SetSimtGridDim(const Dim3& d) { simt_grid_ = d; return ge::GRAPH_SUCCESS; }
    const Dim3* GetSimtGridDim() const { return &simt_grid_; }
    ge::graphStatus SetSimtBlockDim(const Dim3& d) { simt_block_ = d; return ge::GRAPH_SUCCESS; }
    const Dim3* GetSimtBlockDim() const { return &simt_block_; }
    // No input or output is a non-contiguous view here (an aclnn caller's tensors are contiguous).
    bool InputIsView(size_t) const { return false; }
    bool OutputIsView(size_t) const { return false; }
    bool OptionalInputIsView(size_t) const { return false; }
    bool RequiredInputIsView(size_t) const { return false; }
    bool DynamicInputIsView(size_t, size_t) const { return false; }
    int64_t GetInputOffset(size_t) const { return -1; }
    int64_t GetOutputOffset(size_t) const { return -1; }
    int64_t GetOptionalInputOffset(size_t) const { return -1; }
    int64_t GetRequiredInputOffset(size_t) const { return -1; }
    int64_t GetDynamicInputOffset(size_t, size_t) const { return -1; }

    uint32_t block_dim_ = 0;
    uint64_t tiling_key_ = 0;
    TilingData tiling_;
    std::vector<size_t> workspace_;
    uint32_t schedule_mode_ = 0, aicpu_block_dim_ = 0, local_memory_size_ = 0;
    bool need_atomic_ = false;
    int32_t tiling_cond_ = -1;
    Dim3 simt_grid_{1}, simt_block_{1};
};

class InferShapeContext : public ExtendedKernelContext {
public:
    explicit InferShapeContext(KgsimOpIO* io) : ExtendedKernelContext(io) {}
    const Shape* GetInputShape(size_t i) const { return Present(i) ? &io_->in_shapes[i].GetStorageShape() : nullptr; }
    const Shape* GetOptionalInputShape(size_t i) const { return GetInputShape(io_->Flat(i, 0)); }
    const Shape* GetDynamicInputShape(size_t i, size_t j) const { return GetInputShape(io_->Flat(i, j)); }
    Shape* GetOutputShape(size_t i) { return i < io_->out_shapes.size() ? &io_->out_shapes[i].MutableStorageShape() : nullptr; }
    const Tensor* GetInputTensor(size_t i) const { return Present(i) ? &io_->in_tensors[i] : nullptr; }
    const Tensor* GetOptionalInputTensor(size_t i) const { return GetInputTensor(io_->Flat(i, 0)); }
    const Tensor* GetRequiredInputTensor(size_t i) const { return GetInputTensor(io_->Flat(i, 0)); }
    const Tensor* GetDynamicInputTensor(size_t i, size_t j) const { return GetInputTensor(io_->Flat(i, j)); }
    const Shape* GetRequiredInputShape(size_t i) const { return GetInputShape(io_->Flat(i, 0)); }
};

class InferDataTypeContext : public ExtendedKernelContext {
public:
    explicit InferDataTypeContext(KgsimOpIO* io) : ExtendedKernelContext(io) {}
    ge::DataType GetInputDataType(size_t i) const { return i < io_->in_desc.size() ? io_->in_desc[i].dtype_ : ge::DT_UNDEFINED; }
    ge::DataType GetOptionalInputDataType(size_t i) const { return GetInputDataType(io_->Flat(i, 0)); }
    ge::DataType GetRequiredInputDataType(size_t i) const { return GetInputDataType(io_->Flat(i, 0)); }
    // Dynamic inputs are flattened in order, as GetDynamicInputShape of the other contexts does.
    ge::DataType GetDynamicInputDataType(size_t i, size_t j) const { return GetInputDataType(io_->Flat(i, j)); }
    ge::DataType GetOutputDataType(size_t i) const { return i < io_->out_desc.size() ? io_->out_desc[i].dtype_ : ge::DT_UNDEFINED; }
    ge::graphStatus SetOutputDataType(size_t i, ge::DataType d) {
        if (i >= io_->out_desc.size()) return ge::GRAPH_FAILED;  // no such output (CANN's)
        io_->out_desc[i].dtype_ = d;
        return ge::GRAPH_SUCCESS;
    }
};
// A range of values (metadef's exe_graph/runtime/range.h): its least and greatest, the same object
// for a fixed value.
template <class T>
class Range {
public:
    Range() = default;
    Range(T* min, T* max) : min_(min), max_(max) {}
    explicit Range(T* same) : min_(same), max_(same) {}
    bool operator==(const Range<T>& o) const { return *min_ == *o.min_ && *max_ == *o.max_; }
    const T* GetMin() const { return min_; }
    const T* GetMax() const { return max_; }
    T* GetMin() { return min_; }
    T* GetMax() { return max_; }
    void SetMin(T* min) { min_ = min; }
    void SetMax(T* max) { max_ = max; }
private:
    T* min_ = nullptr;
    T* max_ = nullptr;
};
// Shape-range inference (graph mode's dynamic shapes). The simulator runs static shapes only, so an
// op's InferShapeRange is registered and never called; the context still gives each input and
// output the range of its one shape, as a static-shape graph would.
class InferShapeRangeContext : public ExtendedKernelContext {
public:
    explicit InferShapeRangeContext(KgsimOpIO* io) : ExtendedKernelContext(io) {
        for (auto& s : io->in_shapes) in_.emplace_back(const_cast<Shape*>(&s.GetStorageShape()));
        for (auto& s : io->out_shapes) out_.emplace_back(&s.MutableStorageShape());
    }
    const Range<Shape>* GetInputShapeRange(size_t i) const { return Present(i) ? &in_[i] : nullptr; }
    const Range<Shape>* GetOptionalInputShapeRange(size_t i) const { return GetInputShapeRange(io_->Flat(i, 0)); }
    const Range<Shape>* GetRequiredInputShapeRange(size_t i) const { return GetInputShapeRange(io_->Flat(i, 0)); }
    const Range<Shape>* GetDynamicInputShapeRange(size_t i, size_t j) const {
        return GetInputShapeRange(io_->Flat(i, j));
    }
    Range<Shape>* GetOutputShapeRange(size_t i) { return i < out_.size() ? &out_[i] : nullptr; }
private:
    std::vector<Range<Shape>> in_, out_;
};
// TilingParse (tiling preparation): fills the op's compile info from the platform, once.
class TilingParseContext {
public:
    explicit TilingParseContext(void* info = nullptr) : info_(info) {}
    template <class T> T* GetCompiledInfo() { return static_cast<T*>(info_); }
    fe::PlatFormInfos* GetPlatformInfo() const { return fe::PlatFormInfos::Instance(); }
    const char* GetNodeName() const { return ""; }
    const char* GetNodeType() const { return ""; }
private:
    void* info_;
};
}  // namespace gert

namespace ops {
enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };
enum class DependScope : uint32_t { ALL = 0, TILING = 1, INVALID_SCOPE };
enum class FollowType : uint32_t { ALL = 0, DTYPE = 1, FORMAT = 2, SHAPE = 3, INVALID_TYPE };
enum class FormatCheckOption : uint32_t { DEFAULT = 0, STRICT = 1, MAX };
enum class CommentSection : uint32_t {
    CATEGORY = 0, BRIEF = 1, CONSTRAINTS = 2, RESTRICTIONS = 3, SEE = 4, THIRDPARTYFWKCOMPAT = 5, SECTION_MAX
};
enum class AttrDataType {
    ATTR_DT_BOOL = 0, ATTR_DT_FLOAT = 1, ATTR_DT_INT = 2, ATTR_DT_STR = 3, ATTR_DT_LIST_BOOL = 4,
    ATTR_DT_LIST_FLOAT = 5, ATTR_DT_LIST_INT = 6, ATTR_DT_LIST_LIST_INT = 7, ATTR_DT_MAX
};
enum class InitValueType : uint32_t { INIT_VALUE_UINT64_T = 0, INIT_VALUE_DEFAULT = static_cast<uint32_t>(-1) };
enum class ScalarType : uint32_t {
    UINT64 = 0, INT64 = 1, UINT32 = 2, INT32 = 3, UINT16 = 4, INT16 = 5, UINT8 = 6, INT8 = 7, FLOAT32 = 8,
    FLOAT16 = 9, INVALID_DTYPE = static_cast<uint32_t>(-1)
};
enum class HcclServerType : uint32_t { AICPU = 0, AICORE = 1, CCU = 2, MAX };
enum class ItemFindStatus { ITEM_FIND = 0, ITEM_NOEXIST = 1 };

// One number of an output's initial value (InitValue), read as its ScalarType says.
union ScalarNum {
    uint64_t value_u64;
    int64_t value_i64;
    float value_f32;
    ScalarNum() : value_u64(0) {}
    explicit ScalarNum(uint64_t v) : value_u64(v) {}
    explicit ScalarNum(int64_t v) : value_i64(v) {}
    explicit ScalarNum(float v) : value_f32(v) {}
};
using InitValueNum = ScalarNum;
// A typed initial value: a float type keeps the number as float, an integer type as an integer.
struct ScalarVar {
    ScalarType scalar_type = ScalarType::INVALID_DTYPE;
    ScalarNum scalar_num;
    ScalarVar() = default;
    ScalarVar(ScalarType t, uint64_t n) : scalar_type(t) { Set(float(n), int64_t(n)); }
    ScalarVar(ScalarType t, int64_t n) : scalar_type(t) { Set(float(n), n); }
    ScalarVar(ScalarType t, int n) : ScalarVar(t, int64_t(n)) {}
    ScalarVar(ScalarType t, unsigned int n) : ScalarVar(t, uint64_t(n)) {}
    ScalarVar(ScalarType t, float n) : scalar_type(t) { Set(n, int64_t(n)); }
    ScalarVar(ScalarType t, double n) : scalar_type(t) { Set(float(n), int64_t(n)); }
    bool operator==(const ScalarVar& o) const {
        return scalar_type == o.scalar_type && scalar_num.value_u64 == o.scalar_num.value_u64;
    }
private:
    void Set(float f, int64_t i) {
        if (scalar_type == ScalarType::FLOAT32 || scalar_type == ScalarType::FLOAT16) scalar_num = ScalarNum(f);
        else scalar_num = ScalarNum(i);
    }
};
using TilingFn = ge::graphStatus (*)(gert::TilingContext*);
using InferShapeFn = ge::graphStatus (*)(gert::InferShapeContext*);
using InferDataTypeFn = ge::graphStatus (*)(gert::InferDataTypeContext*);
using InferShapeRangeFn = ge::graphStatus (*)(gert::InferShapeRangeContext*);

class OpParamDef {
public:
    explicit OpParamDef(const char* name) : name_(name) {}
    OpParamDef& ParamType(Option o) { option_ = o; return *this; }
    // DataType: one dtype per column of the OpDef (all parameters take the same column);
    // DataTypeList: any of these with every column
    OpParamDef& DataType(std::vector<ge::DataType> d) { dtypes_ = std::move(d); dtype_list_ = false; return *this; }
    OpParamDef& DataTypeList(std::vector<ge::DataType> d) { dtypes_ = std::move(d); dtype_list_ = true; return *this; }
    OpParamDef& Format(std::vector<ge::Format> f) { formats_ = std::move(f); return *this; }
    OpParamDef& FormatList(std::vector<ge::Format> f) { formats_ = std::move(f); return *this; }
    OpParamDef& UnknownShapeFormat(std::vector<ge::Format>) { return *this; }
    // TilingFunc reads this input's values; an aclnn caller passes an int64 one as aclIntArray
    OpParamDef& ValueDepend(Option) { value_depend_ = true; return *this; }
    OpParamDef& ValueDepend(Option, DependScope) { value_depend_ = true; return *this; }
    OpParamDef& IgnoreContiguous() { return *this; }
    OpParamDef& AutoContiguous() { return *this; }
    // an aclnn caller passes this input as an aclScalar (aclScalarList): the generated aclnn takes one
    OpParamDef& Scalar() { scalar_ = 1; return *this; }
    OpParamDef& ScalarList() { scalar_ = 2; return *this; }
    OpParamDef& To(ge::DataType) { return *this; }
    OpParamDef& To(const char*) { return *this; }
    // the binary-query dtypes and formats choose among prebuilt kernels; the simulator builds its own
    OpParamDef& DataTypeForBinQuery(std::vector<ge::DataType>) { return *this; }
    OpParamDef& FormatForBinQuery(std::vector<ge::Format>) { return *this; }
    OpParamDef& Version(uint32_t) { return *this; }  // the aclnn interface version it appears in: one here
    // An output's value before the kernel runs (an atomic-add output's start): recorded; the caller's
    // output memory is what the kernel starts from here.
    OpParamDef& InitValue(uint64_t v) { init_values_.assign(1, ScalarVar(ScalarType::UINT64, v)); return *this; }
    OpParamDef& InitValue(const ScalarVar& v) { init_values_.assign(1, v); return *this; }
    OpParamDef& InitValue(const std::vector<ScalarVar>& v) { init_values_ = v; return *this; }
    // the dtype (and format, shape) of another parameter; FollowType FORMAT or SHAPE: not the dtype
    OpParamDef& Follow(const char* p) { follow_ = p ? p : ""; return *this; }
    OpParamDef& Follow(const char* p, FollowType t) {
        if (t == FollowType::ALL || t == FollowType::DTYPE) follow_ = p ? p : "";
        return *this;
    }
    OpParamDef& OutputShapeDependOnCompute() { return *this; }
    OpParamDef& Comment(const char*) { return *this; }
    std::string name_;
    Option option_ = REQUIRED;
    int scalar_ = 0;
    bool value_depend_ = false;
    bool dtype_list_ = false;
    std::string follow_;
    std::vector<ge::DataType> dtypes_;
    std::vector<ge::Format> formats_;
    std::vector<ScalarVar> init_values_;
};

class OpAttrDef {
public:
    explicit OpAttrDef(const char* name) : name_(name) {}
    OpAttrDef& AttrType(Option o) { option_ = o; return *this; }
    OpAttrDef& Int() { type_ = 0; return *this; }
    OpAttrDef& Int(int64_t v) { type_ = 0; i_ = v; has_default_ = true; return *this; }
    OpAttrDef& Float() { type_ = 1; return *this; }
    OpAttrDef& Float(float v) { type_ = 1; f_ = v; has_default_ = true; return *this; }
    OpAttrDef& Bool() { type_ = 2; return *this; }
    OpAttrDef& Bool(bool v) { type_ = 2; b_ = v; has_default_ = true; return *this; }
    OpAttrDef& String() { type_ = 3; return *this; }
    OpAttrDef& String(const char* v) { type_ = 3; s_ = v; has_default_ = true; return *this; }
    OpAttrDef& ListInt() { type_ = 4; return *this; }
    OpAttrDef& ListInt(std::vector<int64_t> v) { type_ = 4; li_ = std::move(v); has_default_ = true; return *this; }
    OpAttrDef& ListFloat() { type_ = 5; return *this; }
    OpAttrDef& ListFloat(std::vector<float> v) { type_ = 5; lf_ = std::move(v); has_default_ = true; return *this; }
    OpAttrDef& ListBool() { type_ = 6; return *this; }
    OpAttrDef& ListBool(std::vector<bool> v) {
        type_ = 6;
        for (bool b : v) li_.push_back(b);
        has_default_ = true;
        return *this;
    }
    OpAttrDef& ListListInt() { type_ = 7; return *this; }
    OpAttrDef& ListListInt(std::vector<std::vector<int64_t>> v) {
        type_ = 7;
        lli_ = std::move(v);
        has_default_ = true;
        return *this;
    }
    OpAttrDef& Version(uint32_t) { return *this; }  // the aclnn interface version it appears in: one here
    OpAttrDef& Comment(const char*) { return *this; }
    ge::AscendString& GetName() const { return name_as_; }
    bool IsRequired() { return option_ == REQUIRED; }
    std::string name_;
    mutable ge::AscendString name_as_{name_.c_str()};
    Option option_ = OPTIONAL;
    int type_ = 0;
    bool has_default_ = false;
    int64_t i_ = 0;
    float f_ = 0.0f;
    bool b_ = false;
    std::string s_;
    std::vector<int64_t> li_;
    std::vector<float> lf_;
    std::vector<std::vector<int64_t>> lli_;
};

class OpAICoreConfig {
public:
    OpAICoreConfig() = default;
    explicit OpAICoreConfig(const char*) {}
    OpParamDef& Input(const char* n) { ins_.emplace_back(n); return ins_.back(); }
    OpParamDef& Output(const char* n) { outs_.emplace_back(n); return outs_.back(); }
    OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
    OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
    OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }
    std::deque<OpParamDef> ins_, outs_;
};

class OpAICoreDef {
public:
    OpAICoreDef& SetTiling(TilingFn f) { tiling_ = f; return *this; }
    template <class... C, class F> OpAICoreDef& SetTilingParse(F) { return *this; }
    template <class F> OpAICoreDef& SetCheckSupport(F) { return *this; }
    template <class F> OpAICoreDef& SetOpSelectFormat(F) { return *this; }
    template <class F> OpAICoreDef& SetOpSupportInfo(F) { return *this; }
    template <class F> OpAICoreDef& SetOpSpecInfo(F) { return *this; }
    template <class F> OpAICoreDef& SetParamGeneralize(F) { return *this; }  // compile-time generalisation only
    // whether to launch when an output has no elements: recorded; the simulator launches anyway
    OpAICoreDef& LaunchWithZeroEleOutputTensors(bool f) { zero_ele_launch_ = f; return *this; }
    TilingFn& GetTiling() { return tiling_; }
    OpAICoreDef& AddConfig(const char* soc) { socs_.emplace_back(soc); return *this; }
    OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig&) { socs_.emplace_back(soc); return *this; }
    TilingFn tiling_ = nullptr;
    std::vector<std::string> socs_;
    bool zero_ele_launch_ = false;
};

// AI CPU and host CPU kernel registration (OpDef::AICPU / HostCPU): accepted; the simulator runs
// AI Core kernels only. CANN has two classes with the same builders: one template, two types.
template <class Def>
class KgsimCpuKernelDef {
public:
    Def& Engine(const char*) { return self(); }
    Def& FlagPartial(bool) { return self(); }
    Def& ComputeCost(const char*) { return self(); }
    Def& FlagAsync(bool) { return self(); }
    Def& OpKernelLib(const char*) { return self(); }
    Def& KernelSo(const char*) { return self(); }
    Def& FunctionName(const char*) { return self(); }
    Def& UserDefined(bool) { return self(); }
    Def& ExtendCfgInfo(const char*, const char*) { return self(); }
private:
    Def& self() { return static_cast<Def&>(*this); }
};
class OpAICPUDef : public KgsimCpuKernelDef<OpAICPUDef> {};
class OpHostCPUDef : public KgsimCpuKernelDef<OpHostCPUDef> {};

class OpMC2Def {
public:
    OpMC2Def& HcclGroup(const char*) { return *this; }
    OpMC2Def& HcclGroup(std::vector<const char*>) { return *this; }
    // where the collective's server runs: no HCCL in the simulator, so nothing to choose
    void HcclServerType(enum HcclServerType, const char* = nullptr) {}
};

class OpDef {
public:
    explicit OpDef(const char* name) : name_(name) {}
    virtual ~OpDef() = default;
    OpParamDef& Input(const char* n) { inputs_.emplace_back(n); return inputs_.back(); }
    OpParamDef& Output(const char* n) { outputs_.emplace_back(n); return outputs_.back(); }
    OpAttrDef& Attr(const char* n) { attrs_.emplace_back(n); return attrs_.back(); }
    OpDef& SetInferShape(InferShapeFn f) { infer_shape_ = f; return *this; }
    OpDef& SetInferShapeRange(InferShapeRangeFn) { return *this; }
    OpDef& SetInferDataType(InferDataTypeFn f) { infer_dtype_ = f; return *this; }
    OpDef& Comment(const char*) { return *this; }
    OpDef& Comment(CommentSection, const char*) { return *this; }  // documentation only
    OpDef& EnableFallBack() { return *this; }
    // strict format matching picks among prebuilt kernels' formats; every format is ND here
    OpDef& FormatMatchMode(FormatCheckOption) { return *this; }
    InferShapeFn& GetInferShape() { return infer_shape_; }
    InferDataTypeFn& GetInferDataType() { return infer_dtype_; }
    OpAICoreDef& AICore() { return aicore_; }
    OpAICPUDef& AICPU() { return aicpu_; }
    OpHostCPUDef& HostCPU() { return hostcpu_; }
    OpMC2Def& MC2() { return mc2_; }
    std::string name_;
    std::deque<OpParamDef> inputs_, outputs_;
    std::deque<OpAttrDef> attrs_;
    InferShapeFn infer_shape_ = nullptr;
    InferDataTypeFn infer_dtype_ = nullptr;
    OpAICoreDef aicore_;
    OpAICPUDef aicpu_;
    OpHostCPUDef hostcpu_;
    OpMC2Def mc2_;
};

inline std::map<std::string, std::unique_ptr<OpDef>>& KgsimOpRegistry() {
    static std::map<std::string, std::unique_ptr<OpDef>> r;
    return r;
}
struct OpDefRegisterer {
    OpDefRegisterer(const char* name, OpDef* def) { KgsimOpRegistry()[name].reset(def); }
};
}  // namespace ops

#define OP_ADD(opType, ...) static ::ops::OpDefRegisterer g_kgsim_opdef_##opType(#opType, new opType(#opType))
