// kgsim operator-project shim: ge::Operator, ge::TensorDesc and ge::AscendString, the graph-side view
// of an operator that an OpDef's CheckSupport / OpSelectFormat callbacks receive (by tensor name:
// its desc's shape, dtype and format; its attributes). The aclnn path never calls those callbacks
// (graph compilation does); here an Operator holds what is set on it, so they can still be run.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include "graph/ge_error_codes.h"
#include "graph/tensor.h"
#include "graph/types.h"

namespace ge {
class AscendString {
public:
    AscendString() = default;
    AscendString(const char* s) : s_(s ? s : "") {}  // NOLINT: implicit, as CANN's
    const char* GetString() const { return s_.c_str(); }
    size_t GetLength() const { return s_.size(); }
    bool operator==(const AscendString& o) const { return s_ == o.s_; }
    bool operator!=(const AscendString& o) const { return s_ != o.s_; }
    bool operator<(const AscendString& o) const { return s_ < o.s_; }
private:
    std::string s_;
};

class TensorDesc {
public:
    TensorDesc() = default;
    explicit TensorDesc(Shape shape, Format format = FORMAT_ND, DataType dt = DT_FLOAT)
        : shape_(std::move(shape)), origin_shape_(shape_), format_(format), origin_format_(format), dtype_(dt) {}
    Shape GetShape() const { return shape_; }
    void SetShape(const Shape& s) { shape_ = s; }
    Shape GetOriginShape() const { return origin_shape_; }
    void SetOriginShape(const Shape& s) { origin_shape_ = s; }
    Format GetFormat() const { return format_; }
    void SetFormat(Format f) { format_ = f; }
    Format GetOriginFormat() const { return origin_format_; }
    void SetOriginFormat(Format f) { origin_format_ = f; }
    DataType GetDataType() const { return dtype_; }
    void SetDataType(DataType d) { dtype_ = d; }
    int64_t GetRealDimCnt() const { return int64_t(shape_.GetDimNum()); }
private:
    Shape shape_, origin_shape_;
    Format format_ = FORMAT_ND, origin_format_ = FORMAT_ND;
    DataType dtype_ = DT_FLOAT;
};

class Operator {
public:
    Operator() = default;
    explicit Operator(const char* type) : type_(type ? type : "") {}
    const char* GetOpType() const { return type_.c_str(); }
    // a name the operator lacks gives an empty desc (no dims), as CANN's does
    TensorDesc GetInputDescByName(const char* name) const { return Find(inputs_, name); }
    TensorDesc GetOutputDescByName(const char* name) const { return Find(outputs_, name); }
    graphStatus UpdateInputDesc(const char* name, const TensorDesc& d) { inputs_[name] = d; return GRAPH_SUCCESS; }
    graphStatus UpdateOutputDesc(const char* name, const TensorDesc& d) { outputs_[name] = d; return GRAPH_SUCCESS; }
    Operator& SetAttr(const char* name, int64_t v) { ints_[name] = v; return *this; }
    Operator& SetAttr(const char* name, float v) { floats_[name] = v; return *this; }
    Operator& SetAttr(const char* name, bool v) { bools_[name] = v; return *this; }
    Operator& SetAttr(const char* name, const std::vector<int64_t>& v) { lists_[name] = v; return *this; }
    // GRAPH_FAILED for an attribute the operator does not have (the value is left as it was)
    graphStatus GetAttr(const char* name, int64_t& v) const { return Get(ints_, name, v); }
    graphStatus GetAttr(const char* name, int32_t& v) const {
        int64_t w = v;
        graphStatus s = Get(ints_, name, w);
        v = int32_t(w);
        return s;
    }
    graphStatus GetAttr(const char* name, float& v) const { return Get(floats_, name, v); }
    graphStatus GetAttr(const char* name, bool& v) const { return Get(bools_, name, v); }
    graphStatus GetAttr(const char* name, std::vector<int64_t>& v) const { return Get(lists_, name, v); }
private:
    static TensorDesc Find(const std::map<std::string, TensorDesc>& m, const char* name) {
        auto it = m.find(name ? name : "");
        return it == m.end() ? TensorDesc() : it->second;
    }
    template <class V>
    static graphStatus Get(const std::map<std::string, V>& m, const char* name, V& out) {
        auto it = m.find(name ? name : "");
        if (it == m.end()) return GRAPH_FAILED;
        out = it->second;
        return GRAPH_SUCCESS;
    }
    std::string type_;
    std::map<std::string, TensorDesc> inputs_, outputs_;
    std::map<std::string, int64_t> ints_;
    std::map<std::string, float> floats_;
    std::map<std::string, bool> bools_;
    std::map<std::string, std::vector<int64_t>> lists_;
};
}  // namespace ge
