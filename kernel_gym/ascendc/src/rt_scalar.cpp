// Scalar work of kernel code, seen through compiler instrumentation.
//
// Kernel translation units are compiled with -fsanitize-coverage=trace-pc (a call per basic
// block) and -fsanitize=kernel-address with call-only instrumentation (a call per memory access
// with its address). No sanitizer runtime is linked: these callbacks are the whole of it. They
// make computing outside the vector/cube API cost simulated time, and raw `__gm__` pointer
// accesses cost, and are bounds-checked, like GlobalTensor::GetValue/SetValue:
//   - each basic block run inside a launch costs scalar_block_cycles on the scalar unit;
//   - each access that lands in a registered GM buffer costs scalar_gm_access_cycles and is
//     recorded for the race detector; one just outside a guarded buffer (within kGuard bytes,
//     and not in a local memory) is a gm_out_of_bounds fault, as the NPU's address check would
//     raise;
//   - outside a launch (the host side of the kernel file) basic blocks are counted as host work.
// The simulator's own inline API code is compiled without instrumentation (KGSIM_UNINSTRUMENTED
// in kgsim/base.h) where it accounts for itself.
#include "rt.h"

namespace kgsim {

ScalarCounters scalar;

namespace {

constexpr uint64_t kGuard = 512;  // bytes either side of a GM buffer treated as out of bounds
// Only guarded buffers (GmBuf::guarded, rt_gm_alloc.cpp) are checked for near misses: the bytes
// next to any other buffer may belong to an object the kernel's inline API code reads.

// A gm_out_of_bounds fault from inside an access callback: recorded, then the block traps
// (trap_block; a C++ exception must not leave a callback the compiler declared nothrow). Outside
// a block's fiber (not expected) the fault is recorded and the launch reports it when it ends.
template <class... A>
void trap(const char* f, A... args) {
    if (rt.faulted) return;
    record_fault("gm_out_of_bounds", "", 0, fmt(f, args...));
    trap_block();
}

inline void on_access(uintptr_t a, size_t n, bool write) {
    if (rt.faulted) return;
    if (!hot.in_launch || n == 0) return;
    if (a == scalar.skip_once) {  // GlobalTensor::operator() already charged this access
        scalar.skip_once = 0;
        return;
    }
    for (int m = 0; m < MEM_COUNT; ++m)  // UB and the other local memories: not GM
        if (a - reinterpret_cast<uintptr_t>(hot.mem[m]) < kLocalMemBytes) return;
    const GmBuf* near = nullptr;
    for (const GmBuf& g : rt.gm) {
        if (a - g.base < g.size) {
            if (a + n > g.base + g.size)
                trap("a scalar %s of %zu bytes at offset %llu of GM buffer '%s' (%llu bytes) runs past its end",
                     write ? "write" : "read", n, (unsigned long long)(a - g.base), g.name.c_str(),
                     (unsigned long long)g.size);
            record_access(a, n, write ? AK_WRITE : AK_READ, Loc{});
            if (rt.cur) (write ? rt.cur->gm_write : rt.cur->gm_read) += n;
            hot.s_time += hot.scalar_gm_cycles;
            ++scalar.gm_accesses;
            return;
        }
        if (g.guarded &&
            ((a < g.base && g.base - a <= kGuard) || (a >= g.base + g.size && a - (g.base + g.size) < kGuard)))
            near = &g;
    }
    if (near != nullptr) {
        long long off = (long long)(a - near->base);
        trap("a scalar %s through a raw GM pointer at offset %lld of GM buffer '%s' (%llu bytes) is outside the "
             "buffer", write ? "write" : "read", off, near->name.c_str(), (unsigned long long)near->size);
    }
}

}  // namespace
}  // namespace kgsim

using kgsim::on_access;

extern "C" {

void __sanitizer_cov_trace_pc() {
    if (kgsim::hot.in_launch) {
        kgsim::hot.s_time += kgsim::scalar.block_cycles;
        ++kgsim::scalar.blocks;
    } else {
        ++kgsim::scalar.host_blocks;
    }
}

#define KGSIM_ACCESS_HOOKS(N)                                                                          \
    void __asan_load##N##_noabort(uintptr_t a) { on_access(a, N, false); }                            \
    void __asan_store##N##_noabort(uintptr_t a) { on_access(a, N, true); }                            \
    void __asan_load##N(uintptr_t a) { on_access(a, N, false); }                                      \
    void __asan_store##N(uintptr_t a) { on_access(a, N, true); }
KGSIM_ACCESS_HOOKS(1)
KGSIM_ACCESS_HOOKS(2)
KGSIM_ACCESS_HOOKS(4)
KGSIM_ACCESS_HOOKS(8)
KGSIM_ACCESS_HOOKS(16)
#undef KGSIM_ACCESS_HOOKS

void __asan_loadN_noabort(uintptr_t a, size_t n) { on_access(a, n, false); }
void __asan_storeN_noabort(uintptr_t a, size_t n) { on_access(a, n, true); }
void __asan_loadN(uintptr_t a, size_t n) { on_access(a, n, false); }
void __asan_storeN(uintptr_t a, size_t n) { on_access(a, n, true); }
void __asan_handle_no_return() {}
void __asan_before_dynamic_init(const char*) {}
void __asan_after_dynamic_init() {}

}  // extern "C"
