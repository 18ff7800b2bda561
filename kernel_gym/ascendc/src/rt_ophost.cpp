// Operator-project entry points, compiled once into the runtime library: the op's metadata as
// JSON, InferShape and TilingFunc driven from flat arrays (kernel_gym/ascendc/op_project.py calls
// them through each project's generated unit, which passes its OpDef).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "kgsim/op_host_entry.h"

namespace kgsim_gen_host {
namespace {
std::string json_str(const std::string& s) {
    std::string o = "\"";
    for (char c : s) { if (c == '"' || c == '\\') o += '\\'; o += c; }
    return o + "\"";
}
template <class T>
std::string json_list(const std::vector<T>& v) {
    std::string o = "[";
    for (size_t k = 0; k < v.size(); ++k) {
        char b[64];
        snprintf(b, sizeof b, "%.9g", double(v[k]));
        o += (k ? "," : "") + std::string(b);
    }
    return o + "]";
}
std::string params_json(const std::deque<::ops::OpParamDef>& ps) {
    std::string o = "[";
    for (size_t i = 0; i < ps.size(); ++i) {
        if (i) o += ",";
        o += "{\"name\":" + json_str(ps[i].name_) + ",\"option\":" + std::to_string(int(ps[i].option_)) +
             ",\"scalar\":" + std::to_string(ps[i].scalar_) +
             ",\"value_depend\":" + (ps[i].value_depend_ ? "true" : "false") + ",\"dtypes\":[";
        for (size_t j = 0; j < ps[i].dtypes_.size(); ++j) o += (j ? "," : "") + std::to_string(int(ps[i].dtypes_[j]));
        o += "]}";
    }
    return o + "]";
}
// A list attribute's values come as text in the string channel: "1,2,3", lists of a ListListInt
// separated by ';' ("1,2;3"); a ListBool is kept as 0/1 integers, as OpAttrDef::ListBool stores it.
void parse_list_attr(::gert::KgsimAttrValue& v) {
    std::vector<std::string> lists(1);
    for (char c : v.s) {
        if (c == ';') lists.emplace_back();
        else lists.back() += c;
    }
    auto numbers = [](const std::string& t) {
        std::vector<double> out;
        size_t k = 0;
        while (k < t.size()) {
            size_t e = t.find(',', k);
            if (e == std::string::npos) e = t.size();
            if (e > k) out.push_back(strtod(t.substr(k, e - k).c_str(), nullptr));
            k = e + 1;
        }
        return out;
    };
    if (v.type == 7) {
        for (const auto& l : lists) {
            if (l.empty() && lists.size() == 1) break;
            std::vector<int64_t> row;
            for (double x : numbers(l)) row.push_back(int64_t(x));
            v.lli.push_back(row);
        }
        return;
    }
    for (double x : numbers(lists[0])) {
        if (v.type == 5) v.lf.push_back(float(x));
        else v.li.push_back(int64_t(x));
    }
}

void fill_io(::gert::KgsimOpIO& io, ::ops::OpDef* def, const int64_t* in_dims, const int64_t* in_ndims,
                          const int64_t* in_dtypes, int64_t n_in, const int64_t* attr_i, const double* attr_f,
                          const uint8_t* attr_s, int64_t n_attr, const int64_t* out_dims, const int64_t* out_ndims,
                          const int64_t* out_dtypes, int64_t n_out) {
    io.name = def->name_;
    for (int64_t k = 0; k < n_in; ++k) {
        ::gert::Shape s;
        for (int64_t d = 0; d < in_ndims[k] && in_ndims[k] >= 0; ++d) s.AppendDim(in_dims[k * 25 + d]);
        ::gert::StorageShape ss; ss.Set(s);
        io.in_shapes.push_back(ss);
        ::gert::Tensor t; t.shape_ = ss; t.dtype_ = ::ge::DataType(in_dtypes[k]);
        io.in_tensors.push_back(t);
        ::gert::CompileTimeTensorDesc desc; desc.dtype_ = ::ge::DataType(in_dtypes[k]);
        io.in_desc.push_back(desc);
        io.in_present.push_back(in_ndims[k] >= 0);
    }
    for (int64_t k = 0; k < n_out; ++k) {
        ::gert::Shape s;
        for (int64_t d = 0; d < out_ndims[k]; ++d) s.AppendDim(out_dims[k * 25 + d]);
        ::gert::StorageShape ss; ss.Set(s);
        io.out_shapes.push_back(ss);
        ::gert::Tensor t; t.shape_ = ss; t.dtype_ = ::ge::DataType(out_dtypes[k]);
        io.out_tensors.push_back(t);
        ::gert::CompileTimeTensorDesc desc; desc.dtype_ = ::ge::DataType(out_dtypes[k]);
        io.out_desc.push_back(desc);
    }
    const char* sp = reinterpret_cast<const char*>(attr_s);
    for (int64_t a = 0; a < n_attr; ++a) {
        ::gert::KgsimAttrValue v;
        v.type = a < int64_t(def->attrs_.size()) ? def->attrs_[a].type_ : 0;
        v.i = attr_i[a]; v.f = float(attr_f[a]); v.b = attr_i[a] != 0;
        v.s = sp ? std::string(sp) : std::string();
        if (sp) sp += v.s.size() + 1;
        if (v.type >= 4 && v.type <= 7) parse_list_attr(v);
        io.attrs.attrs_.push_back(v);
    }
    for (auto& a : io.attrs.attrs_) a.BindLists();  // views into the stored values, once they stay put
}
}  // namespace

int64_t op_meta(::ops::OpDef* def, uint8_t* buf, int64_t cap) {
    std::string o;
    if (!def) {
        o = "{}";
    } else {
        o = "{\"op\":" + json_str(def->name_) + ",\"inputs\":" + params_json(def->inputs_) +
            ",\"outputs\":" + params_json(def->outputs_) + ",\"has_infer_shape\":" +
            (def->infer_shape_ ? "true" : "false") + ",\"has_infer_dtype\":" + (def->infer_dtype_ ? "true" : "false") +
            ",\"has_tiling\":" + (def->aicore_.tiling_ ? "true" : "false") + ",\"attrs\":[";
        for (size_t i = 0; i < def->attrs_.size(); ++i) {
            const auto& a = def->attrs_[i];
            char fbuf[64]; snprintf(fbuf, sizeof fbuf, "%.9g", double(a.f_));
            o += std::string(i ? "," : "") + "{\"name\":" + json_str(a.name_) + ",\"type\":" + std::to_string(a.type_) +
                 ",\"option\":" + std::to_string(int(a.option_)) + ",\"has_default\":" + (a.has_default_ ? "true" : "false") +
                 ",\"i\":" + std::to_string(a.i_) + ",\"f\":" + fbuf + ",\"b\":" + (a.b_ ? "true" : "false") +
                 ",\"s\":" + json_str(a.s_) + ",\"li\":" + json_list(a.li_) + ",\"lf\":" + json_list(a.lf_) +
                 ",\"lli\":[";
            for (size_t k = 0; k < a.lli_.size(); ++k) o += (k ? "," : "") + json_list(a.lli_[k]);
            o += "]}";
        }
        o += "]}";
    }
    int64_t n = int64_t(o.size());
    if (n < cap) { memcpy(buf, o.data(), size_t(n)); buf[n] = 0; }
    return n;
}

int64_t op_infer(::ops::OpDef* def, const int64_t* in_dims, const int64_t* in_ndims, const int64_t* in_dtypes, int64_t n_in,
                                  const int64_t* attr_i, const double* attr_f, const uint8_t* attr_s, int64_t n_attr,
                                  int64_t* out_dims, int64_t* out_ndims, int64_t* out_dtypes, int64_t n_out) {
    if (!def) return -2;
    ::gert::KgsimOpIO io;
    fill_io(io, def, in_dims, in_ndims, in_dtypes, n_in, attr_i, attr_f, attr_s, n_attr, out_dims, out_ndims,
                  out_dtypes, n_out);
    int64_t rc = 1;
    if (def->infer_shape_) {
        ::gert::InferShapeContext ctx(&io);
        if (def->infer_shape_(&ctx) != ::ge::GRAPH_SUCCESS) return -1;
        rc = 0;
    }
    if (def->infer_dtype_) {
        ::gert::InferDataTypeContext dctx(&io);
        if (def->infer_dtype_(&dctx) != ::ge::GRAPH_SUCCESS) return -1;
    }
    for (int64_t k = 0; k < n_out; ++k) {
        const ::gert::Shape& s = io.out_shapes[k].GetStorageShape();
        out_ndims[k] = int64_t(s.GetDimNum());
        for (size_t d = 0; d < s.GetDimNum(); ++d) out_dims[k * 25 + d] = s.GetDim(d);
        out_dtypes[k] = int64_t(io.out_desc[k].dtype_);
    }
    return rc;
}

int64_t op_tiling(::ops::OpDef* def, const int64_t* in_dims, const int64_t* in_ndims, const int64_t* in_dtypes, int64_t n_in,
                                   const int64_t* attr_i, const double* attr_f, const uint8_t* attr_s, int64_t n_attr,
                                   const int64_t* out_dims, const int64_t* out_ndims, const int64_t* out_dtypes,
                                   int64_t n_out, int64_t* info, uint8_t* tiling_buf, int64_t tiling_cap) {
    if (!def) return -2;
    if (!def->aicore_.tiling_) return -3;
    ::gert::KgsimOpIO io;
    fill_io(io, def, in_dims, in_ndims, in_dtypes, n_in, attr_i, attr_f, attr_s, n_attr, out_dims, out_ndims,
                  out_dtypes, n_out);
    ::gert::TilingContext ctx(&io);
    ctx.tiling_.data_ = tiling_buf;
    ctx.tiling_.cap_ = size_t(tiling_cap);
    if (def->aicore_.tiling_(&ctx) != ::ge::GRAPH_SUCCESS) return -1;
    size_t ws = 0;
    for (size_t w : ctx.workspace_) ws += w;
    info[0] = int64_t(ctx.block_dim_);
    info[1] = int64_t(ctx.tiling_key_);
    info[2] = int64_t(ctx.tiling_.size_);
    info[3] = int64_t(ws);
    return 0;
}
}  // namespace kgsim_gen_host
