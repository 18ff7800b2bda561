// The generic part of a MultiKernelBench binding's calls (include/kgsim/aten_shim.h, kgsim_gen_binding),
// compiled once into the runtime library rather than into every answer's module: marshalling a
// call from Python, EXEC_NPU_CMD (TilingFunc, tiling and workspace buffers, launch) and the
// results. A module passes its own registry entry, OpDef and launch function.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgsim/aten_shim.h"
#include "kgsim/op_host_entry.h"

extern "C" void kgsim_register_gm(const char* name, const void* base, unsigned long long size);
extern "C" int kgsim_lazy_is(const void* base);
extern "C" void* kgsim_gm_alloc(unsigned long long bytes);
extern "C" int kgsim_gm_free(void* p);

namespace kgsim_gen_binding {
namespace {
constexpr size_t kMaxDims = 25;
constexpr size_t kTilingBytes = 64 * 1024;

// Calls are serialised by the loader (one Python lock), so one set of buffers serves them all.
std::vector<std::shared_ptr<uint8_t>> g_scratch;  // tiling and workspace of the current EXEC_NPU_CMD
std::vector<at::Tensor> g_results;                // the last call's results, until Python copies them

// NPU allocations are 512-byte aligned; the buffer (zero-filled GM pages of the simulator's
// own) is registered as GM for the kernel.
uint8_t* scratch(size_t bytes, const char* name) {
    size_t rounded = (std::max<size_t>(bytes, 32) + 511) / 512 * 512;
    std::shared_ptr<uint8_t> p(static_cast<uint8_t*>(kgsim_gm_alloc(rounded)), [](uint8_t* q) { kgsim_gm_free(q); });
    if (!p) throw std::runtime_error(std::string("cannot allocate the ") + name + " buffer");
    kgsim_register_gm(name, p.get(), rounded);
    g_scratch.push_back(p);
    return p.get();
}

void fill_shapes(const std::vector<at::Tensor>& ts, size_t from, size_t count, std::vector<int64_t>& dims,
                 std::vector<int64_t>& ndims, std::vector<int64_t>& dtypes) {
    dims.assign(std::max<size_t>(count, 1) * kMaxDims, 0);
    ndims.assign(std::max<size_t>(count, 1), 0);
    dtypes.assign(std::max<size_t>(count, 1), 0);
    for (size_t k = 0; k < count; ++k) {
        const at::Tensor& t = ts[from + k];
        if (size_t(t.dim()) > kMaxDims) throw std::runtime_error("EXEC_NPU_CMD: more than 25 dimensions");
        ndims[k] = t.dim();
        for (int64_t d = 0; d < t.dim(); ++d) dims[k * kMaxDims + size_t(d)] = t.size(d);
        dtypes[k] = int64_t(t.scalar_type());
    }
}
}  // namespace

void exec(::ops::OpDef* def, LaunchV launch, size_t kernel_params, const char* api, std::vector<Arg> args) {
    if (!def) throw std::runtime_error(std::string(api) + ": the project defines no operator (OP_ADD)");
    // CANN generates aclnn<OpType> for the project's operator; any other aclnn name is one of
    // CANN's built-in operators (aclnnBatchNorm, aclnnGridSampler2D...), which run no project
    // kernel and which the simulator does not provide.
    if (std::string(api) != "aclnn" + def->name_)
        throw std::runtime_error(std::string(api) + " is not this project's operator (aclnn" + def->name_ +
                                 "): CANN's built-in aclnn operators are not simulated; call the project's own");
    size_t n_in = def->inputs_.size(), n_out = def->outputs_.size(), n_attr = def->attrs_.size();
    std::vector<at::Tensor> tensors;
    std::vector<const Arg*> ints;  // attribute values by register class, in the order given (lists: general)
    std::vector<double> floats;
    for (auto& a : args) {
        if (a.kind == 0) tensors.push_back(a.tensor);
        else if (a.fp) floats.push_back(a.number);
        else ints.push_back(&a);
    }
    if (tensors.size() != n_in + n_out)
        throw std::runtime_error(std::string(api) + ": " + std::to_string(tensors.size()) + " tensors given; " +
                                 def->name_ + " has " + std::to_string(n_in) + " inputs and " +
                                 std::to_string(n_out) + " outputs");
    // CANN generates aclnn<Op>GetWorkspaceSize(inputs..., attributes..., outputs..., workspace, executor),
    // and EXEC_NPU_CMD calls it through a function pointer typed by its own arguments, in the order given:
    // a float or double travels in the next floating-point register, a tensor, integer, bool or list in
    // the next general one. So the arguments bind class by class, by position. A tensor that lands on an
    // attribute's slot (or an attribute on a tensor's) is what the NPU would mis-bind: refuse it.
    std::string want, got;
    for (size_t k = 0; k < n_in; ++k) want += 'T';
    for (const auto& d : def->attrs_)
        if (d.type_ != 1) want += 'A';
    for (size_t k = 0; k < n_out; ++k) want += 'T';
    for (const auto& a : args)
        if (!a.fp) got += a.kind == 0 ? 'T' : 'A';
    size_t n_float = 0;
    for (const auto& d : def->attrs_) n_float += d.type_ == 1;
    if (got != want || floats.size() > n_float)
        throw std::runtime_error(
            std::string(api) + ": the arguments bind out of order. " + api + "GetWorkspaceSize takes the inputs, then the " +
            "attributes, then the outputs (" + def->name_ + ": " + std::to_string(n_in) + " inputs, " +
            std::to_string(n_attr) + " attributes of which " + std::to_string(n_float) + " float, " +
            std::to_string(n_out) + " outputs), and EXEC_NPU_CMD passes its arguments by position: tensors and " +
            "integer/bool attributes as " + got + " (T tensor, A attribute) where the operator takes " + want +
            (floats.size() > n_float ? ", and " + std::to_string(floats.size()) + " float values for " +
                                           std::to_string(n_float) + " float attributes"
                                     : std::string()) +
            ". On the NPU they would land in the wrong parameters: pass the inputs, the attributes, then the outputs");
    std::vector<int64_t> attr_i(std::max<size_t>(n_attr, 1), 0);
    std::vector<double> attr_f(std::max<size_t>(n_attr, 1), 0.0);
    std::string attr_text;  // the string channel: per attribute its text and a NUL (a list: "1,2,3")
    size_t next_int = 0, next_float = 0;
    for (size_t a = 0; a < n_attr; ++a) {  // float attributes not given take the OpDef's defaults
        const auto& d = def->attrs_[a];
        const bool is_list = d.type_ >= 4 && d.type_ <= 7;
        if (d.type_ == 1) {
            double v = next_float < floats.size() ? floats[next_float++] : double(d.f_);
            attr_i[a] = int64_t(v);
            attr_f[a] = v;
            attr_text += '\0';
            continue;
        }
        const Arg& given = *ints[next_int++];
        if (is_list != (given.kind == 2))
            throw std::runtime_error(std::string(api) + ": attribute '" + d.name_ + "' of " + def->name_ + " is " +
                                     (is_list ? "a list (pass an at::IntArrayRef or std::vector)" : "not a list") +
                                     ", but EXEC_NPU_CMD was given " + (given.kind == 2 ? "a list" : "a number") +
                                     " for it: pass the argument of the attribute's type");
        if (is_list) {
            for (size_t k = 0; k < given.list.size(); ++k) {
                char b[64];
                if (d.type_ == 5) snprintf(b, sizeof b, "%.17g", given.list[k]);
                else snprintf(b, sizeof b, "%lld", static_cast<long long>(given.list[k]));
                attr_text += (k ? "," : "") + std::string(b);
            }
        } else {
            attr_i[a] = int64_t(given.number);
            attr_f[a] = given.number;
        }
        attr_text += '\0';
    }
    std::vector<uint8_t> attr_s(attr_text.begin(), attr_text.end());
    if (attr_s.empty()) attr_s.push_back(0);
    std::vector<int64_t> in_dims, in_ndims, in_dt, out_dims, out_ndims, out_dt;
    fill_shapes(tensors, 0, n_in, in_dims, in_ndims, in_dt);
    fill_shapes(tensors, n_in, n_out, out_dims, out_ndims, out_dt);
    g_scratch.clear();
    uint8_t* tiling = scratch(kTilingBytes, "tiling");
    int64_t info[4] = {0, 0, 0, 0};
    std::vector<int64_t> in_data(std::max<size_t>(n_in, 1), 0);  // a ValueDepend input's values (GetData)
    for (size_t k = 0; k < n_in; ++k) in_data[k] = int64_t(reinterpret_cast<uintptr_t>(tensors[k].data_ptr()));
    int64_t rc = ::kgsim_gen_host::op_tiling(def, in_dims.data(), in_ndims.data(), in_dt.data(), int64_t(n_in),
                                             attr_i.data(), attr_f.data(), attr_s.data(), int64_t(n_attr),
                                             out_dims.data(), out_ndims.data(), out_dt.data(), int64_t(n_out), info,
                                             tiling, int64_t(kTilingBytes), in_data.data());
    if (rc == ::kgsim_gen_host::kHostCrashed) throw std::runtime_error(std::string(api) + ": " + ::kgsim_gen_host::last_host_crash());
    if (rc < 0) throw std::runtime_error(std::string(api) + ": the TilingFunc failed (status " + std::to_string(rc) + ")");
    std::vector<uint8_t*> ptrs;
    for (size_t k = 0; k < tensors.size(); ++k) {
        const auto& name = k < n_in ? def->inputs_[k].name_ : def->outputs_[k - n_in].name_;
        kgsim_register_gm(name.c_str(), tensors[k].data_ptr(), tensors[k].storage_bytes());
        ptrs.push_back(static_cast<uint8_t*>(tensors[k].data_ptr()));
    }
    if (kernel_params == ptrs.size() + 2) ptrs.push_back(scratch(size_t(info[3]), "workspace"));
    ptrs.push_back(tiling);
    launch(info[0], info[1], ptrs.data(), ptrs.size());
}

int64_t call(const Invoker& fn, int64_t nargs, const int64_t* kinds, const int64_t* ptrs, const int64_t* dims,
             const int64_t* ndims, const int64_t* dtypes, const double* numbers, const double* lists) {
    std::vector<Arg> args(static_cast<size_t>(nargs));
    // The caller's tensors live in NPU allocator blocks on the device (with their tail, see
    // Tensor::npu_block_bytes): each is copied into one and back after the call, so a kernel's
    // over-read of a block's tail does not fault and its writes (out= arguments) reach the caller.
    std::vector<std::pair<at::Tensor, at::Tensor>> copies;
    for (int64_t k = 0; k < nargs; ++k) {
        if (kinds[k] == 0) {
            const int64_t* d = dims + size_t(k) * kMaxDims;
            at::IntArrayRef sizes(d, d + ndims[k]);
            at::Tensor caller(reinterpret_cast<void*>(ptrs[k]), sizes, at::ScalarType(dtypes[k]));
            auto same = std::find_if(copies.begin(), copies.end(), [&](const auto& c) {
                return c.first.data_ptr() == caller.data_ptr() && c.first.nbytes() == caller.nbytes();
            });
            if (same != copies.end()) {  // one tensor passed twice stays one buffer
                args[size_t(k)].tensor = same->second;
                continue;
            }
            if (kgsim_lazy_is(caller.data_ptr())) {  // sampled simulation: copying would read all of it
                args[size_t(k)].tensor = caller;
                continue;
            }
            at::Tensor device = at::Tensor::allocate(sizes, at::ScalarType(dtypes[k]));
            if (caller.nbytes()) std::memcpy(device.data_ptr(), caller.data_ptr(), caller.nbytes());
            args[size_t(k)].tensor = device;
            copies.emplace_back(caller, device);
        } else if (kinds[k] == 2 || kinds[k] == 3) {  // a list: ndims[k] values from lists[ptrs[k]]
            Arg& a = args[size_t(k)];
            a.kind = 2;
            a.float_list = kinds[k] == 3;
            a.list.assign(lists + ptrs[k], lists + ptrs[k] + ndims[k]);
        } else {
            args[size_t(k)].kind = 1;
            args[size_t(k)].number = numbers[k];
        }
    }
    g_results = fn(args);
    for (auto& [caller, device] : copies)
        if (caller.nbytes()) std::memcpy(caller.data_ptr(), device.data_ptr(), caller.nbytes());
    return int64_t(g_results.size());
}

int64_t result(int64_t i, int64_t* dims, int64_t* ndim, int64_t* dtype) {
    const at::Tensor& t = g_results.at(size_t(i));
    *ndim = t.dim();
    for (int64_t d = 0; d < t.dim() && size_t(d) < kMaxDims; ++d) dims[d] = t.size(d);
    *dtype = int64_t(t.scalar_type());
    return int64_t(t.nbytes());
}

void copy_result(int64_t i, uint8_t* dst) {
    const at::Tensor& t = g_results.at(size_t(i));
    if (t.nbytes()) std::memcpy(dst, t.data_ptr(), t.nbytes());
}

}  // namespace kgsim_gen_binding

// Zero-copy handover of a result (sampled simulation: a lazy output must not be read in full):
// its data, and a handle that keeps its storage alive until kgsim_gen_bind_drop.
extern "C" const void* kgsim_gen_bind_data(int64_t i) { return kgsim_gen_binding::g_results.at(size_t(i)).data_ptr(); }
extern "C" void* kgsim_gen_bind_detach(int64_t i) { return new at::Tensor(kgsim_gen_binding::g_results.at(size_t(i))); }
extern "C" void kgsim_gen_bind_drop(void* handle) { delete static_cast<at::Tensor*>(handle); }
