// EXEC_NPU_CMD for a MultiKernelBench binding compiled into an
// operator-project unit (kernel_gym/ascendc/multikernelbench.py). Included by the generated unit
// after the project's files and the binding, before the entry points Python calls; uses the unit's
// kgsim_gen_op_* functions and KGSIM_GEN_KERNEL_PARAMS (the kernel's GM_ADDR parameter count).
#pragma once
#include <algorithm>
#include "kgsim/aten_shim.h"
extern "C" void kgsim_register_gm(const char* name, const void* base, unsigned long long size);

namespace kgsim_gen_bind {
namespace {
std::vector<std::shared_ptr<uint8_t>> g_scratch;  // tiling and workspace of the current call

static uint8_t* scratch(size_t bytes, const char* name) {
    size_t rounded = (std::max<size_t>(bytes, 32) + 511) / 512 * 512;
    std::shared_ptr<uint8_t> p(static_cast<uint8_t*>(std::aligned_alloc(512, rounded)), std::free);
    std::memset(p.get(), 0, rounded);
    kgsim_register_gm(name, p.get(), rounded);
    g_scratch.push_back(p);
    return p.get();
}

static void fill_shapes(const std::vector<at::Tensor>& ts, size_t from, size_t count, std::vector<int64_t>& dims,
                        std::vector<int64_t>& ndims, std::vector<int64_t>& dtypes) {
    dims.assign(std::max<size_t>(count, 1) * 25, 0);
    ndims.assign(std::max<size_t>(count, 1), 0);
    dtypes.assign(std::max<size_t>(count, 1), 0);
    for (size_t k = 0; k < count; ++k) {
        const at::Tensor& t = ts[from + k];
        if (t.dim() > 25) throw std::runtime_error("EXEC_NPU_CMD: more than 25 dimensions");
        ndims[k] = t.dim();
        for (int64_t d = 0; d < t.dim(); ++d) dims[k * 25 + size_t(d)] = t.size(d);
        dtypes[k] = int64_t(t.scalar_type());
    }
}

void exec(const char* api, std::vector<Arg> args) {
    ::ops::OpDef* def = kgsim_gen_op_def();
    if (!def) throw std::runtime_error(std::string(api) + ": the project defines no operator (OP_ADD)");
    size_t n_in = def->inputs_.size(), n_out = def->outputs_.size(), n_attr = def->attrs_.size();
    std::vector<at::Tensor> tensors;
    std::vector<double> numbers;
    for (auto& a : args) {
        if (a.kind == 0) tensors.push_back(a.tensor); else numbers.push_back(a.number);
    }
    if (tensors.size() != n_in + n_out)
        throw std::runtime_error(std::string(api) + ": " + std::to_string(tensors.size()) + " tensors given; " +
                                 def->name_ + " has " + std::to_string(n_in) + " inputs and " +
                                 std::to_string(n_out) + " outputs");
    if (numbers.size() > n_attr)
        throw std::runtime_error(std::string(api) + ": " + std::to_string(numbers.size()) + " attribute values given; " +
                                 def->name_ + " has " + std::to_string(n_attr) + " attributes");
    std::vector<int64_t> attr_i(std::max<size_t>(n_attr, 1), 0);
    std::vector<double> attr_f(std::max<size_t>(n_attr, 1), 0.0);
    std::vector<uint8_t> attr_s(std::max<size_t>(n_attr, 1), 0);
    for (size_t a = 0; a < n_attr; ++a) {
        const auto& d = def->attrs_[a];
        double v = a < numbers.size() ? numbers[a] : d.type_ == 1 ? double(d.f_) : d.type_ == 2 ? double(d.b_) : double(d.i_);
        attr_i[a] = int64_t(v);
        attr_f[a] = v;
    }
    std::vector<int64_t> in_dims, in_ndims, in_dt, out_dims, out_ndims, out_dt;
    fill_shapes(tensors, 0, n_in, in_dims, in_ndims, in_dt);
    fill_shapes(tensors, n_in, n_out, out_dims, out_ndims, out_dt);
    g_scratch.clear();
    uint8_t* tiling = scratch(64 * 1024, "tiling");
    int64_t info[4] = {0, 0, 0, 0};
    int64_t rc = kgsim_gen_op_tiling(in_dims.data(), in_ndims.data(), in_dt.data(), int64_t(n_in), attr_i.data(),
                                     attr_f.data(), attr_s.data(), int64_t(n_attr), out_dims.data(), out_ndims.data(),
                                     out_dt.data(), int64_t(n_out), info, tiling, 64 * 1024);
    if (rc < 0) throw std::runtime_error(std::string(api) + ": the TilingFunc failed (status " + std::to_string(rc) + ")");
    std::vector<uint8_t*> ptrs;
    for (size_t k = 0; k < tensors.size(); ++k) {
        const auto& name = k < n_in ? def->inputs_[k].name_ : def->outputs_[k - n_in].name_;
        kgsim_register_gm(name.c_str(), tensors[k].data_ptr(), tensors[k].nbytes());
        ptrs.push_back(static_cast<uint8_t*>(tensors[k].data_ptr()));
    }
    if (KGSIM_GEN_KERNEL_PARAMS == ptrs.size() + 2) ptrs.push_back(scratch(size_t(info[3]), "workspace"));
    ptrs.push_back(tiling);
    kgsim_gen_op_launch_v(info[0], info[1], ptrs.data(), ptrs.size());
}

std::vector<at::Tensor> g_results;
}  // namespace
}  // namespace kgsim_gen_bind
