// Operator-project entry points, compiled once into the runtime library: the op's metadata as
// JSON, InferShape and TilingFunc driven from flat arrays (kernel_gym/ascendc/op_project.py calls
// them through each project's generated unit, which passes its OpDef).
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "kgsim/op_host_entry.h"

namespace kgsim {
bool lazy_address(const void* addr);  // rt_sampling.cpp: an address of sampled simulation's lazy memory
}

namespace kgsim_gen_host {
namespace {
// ---- a crash in the op's host code ------------------------------------------------------------
// InferShape and TilingFunc run in the caller's process (CANN runs them in the host program too).
// A fault there (a null pointer read, a failed assert) would end the Python process with no word;
// while one runs, SIGSEGV, SIGBUS, SIGILL and SIGABRT jump back to the call instead, which then
// reports what happened (crash_message). Only for that call and that thread: the previous actions
// (Python's faulthandler, the sampled simulation's lazy pages) are back as soon as it returns, and a
// signal of another thread meanwhile goes to them. SIGFPE is left to rt_divzero.cpp (an integer
// division by zero in simulated code gives 0, as on the aarch64 host). The host code's stack frames
// are dropped without their destructors (what they own leaks).
constexpr int kHostSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGABRT};
// The guarded call (one at a time: the saved actions are process-wide) and its thread. Plain globals,
// not thread_local: a shared library's TLS may allocate on a thread's first use, in the handler.
std::mutex g_guard_mutex;
sigjmp_buf* volatile g_jump = nullptr;
pthread_t g_owner{};
volatile sig_atomic_t g_signal = 0;
const void* volatile g_addr = nullptr;
struct sigaction g_saved[sizeof kHostSignals / sizeof kHostSignals[0]];
alignas(16) char g_alt_stack[1 << 16];  // a stack overflow in the host code is caught on this one
std::string g_last_crash;                // the last crash's message, for kgsim_ophost_last_crash

const struct sigaction* saved_action(int sig) {
    for (size_t k = 0; k < sizeof kHostSignals / sizeof kHostSignals[0]; ++k)
        if (kHostSignals[k] == sig) return &g_saved[k];
    return nullptr;
}

void on_host_signal(int sig, siginfo_t* info, void* uctx) {
    const void* addr = info ? info->si_addr : nullptr;
    // (a touch of sampled simulation's lazy memory is served by its handler, the one saved)
    const bool lazy = sig == SIGSEGV && addr && ::kgsim::lazy_address(addr);
    sigjmp_buf* j = g_jump;
    if (j && !lazy && pthread_equal(pthread_self(), g_owner)) {
        g_jump = nullptr;
        g_signal = sig;
        g_addr = addr;
        siglongjmp(*j, 1);
    }
    // another thread's signal, or a lazy page: the action that was there before
    const struct sigaction* prev = saved_action(sig);
    if (prev && (prev->sa_flags & SA_SIGINFO)) {
        if (prev->sa_sigaction) return prev->sa_sigaction(sig, info, uctx);
    } else if (prev && prev->sa_handler == SIG_IGN) {
        return;
    } else if (prev && prev->sa_handler != SIG_DFL) {
        return prev->sa_handler(sig);
    }
    signal(sig, SIG_DFL);  // returning re-runs the faulting instruction, which now takes the default action
    if (sig == SIGABRT) raise(sig);
}

// The actions and the alternate signal stack while a host function runs; the previous ones after.
struct HostSignalScope {
    stack_t old_stack{};
    bool stack_set = false;
    HostSignalScope() {
        stack_t ss{};
        ss.ss_sp = g_alt_stack;
        ss.ss_size = sizeof g_alt_stack;
        stack_set = sigaltstack(&ss, &old_stack) == 0;
        struct sigaction sa {};
        sa.sa_sigaction = on_host_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        for (size_t k = 0; k < sizeof kHostSignals / sizeof kHostSignals[0]; ++k)
            sigaction(kHostSignals[k], &sa, &g_saved[k]);
    }
    ~HostSignalScope() {
        for (size_t k = 0; k < sizeof kHostSignals / sizeof kHostSignals[0]; ++k)
            sigaction(kHostSignals[k], &g_saved[k], nullptr);
        if (stack_set) sigaltstack(&old_stack, nullptr);
    }
    HostSignalScope(const HostSignalScope&) = delete;
    HostSignalScope& operator=(const HostSignalScope&) = delete;
};

const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV";
        case SIGBUS: return "SIGBUS";
        case SIGILL: return "SIGILL";
        case SIGABRT: return "SIGABRT";
        default: return "a signal";
    }
}

// One sentence: the op, the host function, the signal, and the likely fix.
std::string crash_message(const ::ops::OpDef* def, const ::gert::KgsimOpIO& io, const char* where, int sig,
                          const void* addr) {
    std::string read_null;  // inputs whose data the host code asked for and did not get (no ValueDepend)
    for (size_t k = 0; k < io.in_tensors.size(); ++k) {
        if (!io.in_tensors[k].kgsim_null_data_read_ || io.in_tensors[k].data_) continue;
        std::string name = k < def->inputs_.size() ? def->inputs_[k].name_ : std::to_string(k);
        read_null += (read_null.empty() ? "" : ", ") + ("'" + name + "' (input " + std::to_string(k) + ")");
    }
    char at[64];
    snprintf(at, sizeof at, "%p", addr);
    std::string o = def->name_ + ": its " + where + " crashed with " + signal_name(sig);
    if (sig == SIGSEGV || sig == SIGBUS) o += std::string(" (an access to address ") + at + ")";
    o += " and was stopped; ";
    if (!read_null.empty() && (sig == SIGSEGV || sig == SIGBUS))
        o += "it read the data of " + read_null + " through GetInputTensor(...)->GetData, which is nullptr for "
             "an input the OpDef does not declare ValueDepend (CANN gives such an input no host data): declare "
             "it .ValueDepend(REQUIRED) in the OpDef, or compute from its shape and the attributes instead";
    else if (sig == SIGABRT)
        o += "the host code aborted (a failed assert, or std::terminate): fix the condition it checks";
    else if ((sig == SIGSEGV || sig == SIGBUS) && reinterpret_cast<uintptr_t>(addr) < 4096)
        o += "a null pointer was dereferenced: check the pointers the host code reads (GetInputShape or "
             "GetInputTensor of an absent input, GetAttrs()->Get* of an attribute index the OpDef lacks, "
             "GetPlatformInfo)";
    else
        o += "fix the host code's pointers and indexing (an address it reads or writes is invalid, or its "
             "recursion overflows the stack)";
    return o;
}

// f() under the signal scope: its value, or kHostCrashed after a crash (the message in g_last_crash).
template <class F>
int64_t guarded(const ::ops::OpDef* def, const ::gert::KgsimOpIO& io, const char* where, F&& f) {
    if (g_jump && pthread_equal(pthread_self(), g_owner)) return f();  // already guarded (nested)
    std::lock_guard<std::mutex> lock(g_guard_mutex);
    HostSignalScope scope;
    sigjmp_buf jump;
    if (sigsetjmp(jump, 1) != 0) {
        g_last_crash = crash_message(def, io, where, int(g_signal), g_addr);
        return kHostCrashed;
    }
    g_owner = pthread_self();
    g_jump = &jump;
    int64_t rc = 0;
    try {
        rc = f();
    } catch (...) {
        g_jump = nullptr;
        throw;
    }
    g_jump = nullptr;
    return rc;
}

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
             ",\"value_depend\":" + (ps[i].value_depend_ ? "true" : "false") +
             ",\"dtype_list\":" + (ps[i].dtype_list_ ? "true" : "false") + ",\"follow\":" + json_str(ps[i].follow_) +
             ",\"dtypes\":[";
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
                          const int64_t* out_dtypes, int64_t n_out, const int64_t* in_data) {
    io.name = def->name_;
    for (int64_t k = 0; k < n_in; ++k) {
        ::gert::Shape s;
        for (int64_t d = 0; d < in_ndims[k] && in_ndims[k] >= 0; ++d) s.AppendDim(in_dims[k * 25 + d]);
        ::gert::StorageShape ss; ss.Set(s);
        io.in_shapes.push_back(ss);
        ::gert::Tensor t; t.shape_ = ss; t.dtype_ = ::ge::DataType(in_dtypes[k]);
        // a ValueDepend input's values are the host's (GetData); any other input has none: nullptr, as in CANN
        bool depends = size_t(k) < def->inputs_.size() && def->inputs_[size_t(k)].value_depend_;
        if (depends && in_data && in_data[k] && in_ndims[k] >= 0) {
            t.data_ = reinterpret_cast<const void*>(in_data[k]);
            int es = ::ge::GetSizeByDataType(t.dtype_);
            t.size_ = es > 0 ? size_t(s.GetShapeSize()) * size_t(es) : 0;
        }
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
                                  int64_t* out_dims, int64_t* out_ndims, int64_t* out_dtypes, int64_t n_out,
                                  const int64_t* in_data) {
    if (!def) return -2;
    ::gert::KgsimOpIO io;
    fill_io(io, def, in_dims, in_ndims, in_dtypes, n_in, attr_i, attr_f, attr_s, n_attr, out_dims, out_ndims,
                  out_dtypes, n_out, in_data);
    int64_t rc = 1;
    if (def->infer_shape_) {
        ::gert::InferShapeContext ctx(&io);
        int64_t st = guarded(def, io, "InferShape", [&]() -> int64_t { return int64_t(def->infer_shape_(&ctx)); });
        if (st == kHostCrashed) return kHostCrashed;
        if (st != ::ge::GRAPH_SUCCESS) return -1;
        rc = 0;
    }
    if (def->infer_dtype_) {
        ::gert::InferDataTypeContext dctx(&io);
        int64_t st = guarded(def, io, "InferDataType", [&]() -> int64_t { return int64_t(def->infer_dtype_(&dctx)); });
        if (st == kHostCrashed) return kHostCrashed;
        if (st != ::ge::GRAPH_SUCCESS) return -1;
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
                                   int64_t n_out, int64_t* info, uint8_t* tiling_buf, int64_t tiling_cap,
                                   const int64_t* in_data) {
    if (!def) return -2;
    if (!def->aicore_.tiling_) return -3;
    ::gert::KgsimOpIO io;
    fill_io(io, def, in_dims, in_ndims, in_dtypes, n_in, attr_i, attr_f, attr_s, n_attr, out_dims, out_ndims,
                  out_dtypes, n_out, in_data);
    ::gert::TilingContext ctx(&io);
    ctx.tiling_.data_ = tiling_buf;
    ctx.tiling_.cap_ = size_t(tiling_cap);
    int64_t st = guarded(def, io, "TilingFunc", [&]() -> int64_t { return int64_t(def->aicore_.tiling_(&ctx)); });
    if (st == kHostCrashed) return kHostCrashed;
    if (st != ::ge::GRAPH_SUCCESS) return -1;
    size_t ws = 0;
    for (size_t w : ctx.workspace_) ws += w;
    info[0] = int64_t(ctx.block_dim_);
    info[1] = int64_t(ctx.tiling_key_);
    info[2] = int64_t(ctx.tiling_.size_);
    info[3] = int64_t(ws);
    return 0;
}

const std::string& last_host_crash() { return g_last_crash; }
}  // namespace kgsim_gen_host

// The message of the last crash of an op's host code (kHostCrashed), for Python: its length.
extern "C" int64_t kgsim_ophost_last_crash(char* buf, int64_t cap) {
    const std::string& m = kgsim_gen_host::last_host_crash();
    int64_t n = int64_t(m.size());
    if (buf && cap > 0) {
        size_t c = size_t(std::min<int64_t>(n, cap - 1));
        memcpy(buf, m.data(), c);
        buf[c] = 0;
    }
    return n;
}
