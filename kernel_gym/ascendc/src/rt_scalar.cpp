// Scalar work of kernel code, seen through compiler instrumentation.
//
// Kernel translation units are compiled with -fsanitize-coverage=trace-pc (a call per basic
// block) and -fsanitize=kernel-address with call-only instrumentation (a call per memory access
// with its address). No sanitizer runtime is linked: these callbacks are the whole of it. They
// make computing outside the vector/cube API cost simulated time, and raw `__gm__` pointer
// accesses cost, and are bounds-checked, like GlobalTensor::GetValue/SetValue:
//   - each basic block run inside a launch costs scalar_block_cycles on the scalar unit;
//   - each access that lands in a registered GM buffer goes through the core's scalar data cache
//     (scalar_gm_cycles below: a hit costs scalar_dcache_hit_cycles, a line fill
//     scalar_gm_access_cycles) and is recorded for the race detector; one just outside a guarded buffer (within kGuard bytes,
//     and not in a local memory) is a gm_out_of_bounds fault, as the NPU's address check would
//     raise;
//   - outside a launch (the host side of the kernel file) basic blocks are counted as host work.
// The simulator's own inline API code is compiled without instrumentation (KGSIM_UNINSTRUMENTED
// in kgsim/base.h) where it accounts for itself.
#include "rt.h"

#include <algorithm>
#include <cstring>

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
        if (a - reinterpret_cast<uintptr_t>(hot.mem[m]) < kLocalMemBytes) {
            if (m == MEM_UB) ub_scalar_order(write);  // a store then a load: the load waits (base.h)
            return;
        }
    const GmBuf* near = nullptr;
    for (const GmBuf& g : rt.gm) {
        if (a - g.base < g.size) {
            if (a + n > g.base + g.size)
                trap("a scalar %s of %zu bytes at offset %llu of GM buffer '%s' (%llu bytes) runs past its end",
                     write ? "write" : "read", n, (unsigned long long)(a - g.base), g.name.c_str(),
                     (unsigned long long)g.size);
            ++g_scalar_gm_ops;
            if (loop_skipping()) return;  // skipping: bounds only, the prediction times it
            record_access(a, n, write ? AK_WRITE : AK_READ, Loc{});
            if (rt.cur) (write ? rt.cur->gm_write : rt.cur->gm_read) += n;
            hot.s_time += scalar_gm_cycles(a, n);
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

// The scalar unit reaches GM through a per-core data cache (CANN Ascend C guide, "Compute Units" and
// "Reading/Writing Data by the Scalar Unit": a 16 KB DCache filled in 64-byte cache lines, each AIC/AIV
// core its own; SetValue writes into the cached line, written back later). So a scalar loop over
// consecutive GM elements pays a line fill once per 64 bytes and a cache hit otherwise, as on the
// NPU; a hit or fill per line touched by the access. Associativity is not published: set-associative
// with LRU (scalar_dcache_ways, assumed). Write-backs overlap the scalar unit: not charged to it.
void dcache_reset() {
    BlockState& b = rt.blk;
    std::memset(b.dc_line, 0, sizeof b.dc_line);
    std::memset(b.dc_used, 0, sizeof b.dc_used);
    b.dc_clock = 0;
    std::memset(b.dc_hint, 0, sizeof b.dc_hint);
}

namespace {
// The cache's shape from the profile, worked out again only when the profile's constants change
// (this runs on every scalar GM access: a scalar loop's host time was 40 % this function).
struct DcacheShape {
    double line_bytes = -1, ways_cfg = -1, bytes = -1;
    bool on = false;
    uint64_t line = 1, sets = 1;
    int ways = 1;
};
DcacheShape g_dc_shape;

const DcacheShape& dcache_shape() {
    DcacheShape& g = g_dc_shape;
    if (g.line_bytes == cfg.scalar_dcache_line_bytes && g.ways_cfg == cfg.scalar_dcache_ways &&
        g.bytes == cfg.scalar_dcache_bytes)
        return g;
    g.line_bytes = cfg.scalar_dcache_line_bytes, g.ways_cfg = cfg.scalar_dcache_ways, g.bytes = cfg.scalar_dcache_bytes;
    g.on = !(g.line_bytes < 1 || g.ways_cfg < 1 || g.bytes < g.line_bytes);
    if (!g.on) return g;
    g.line = uint64_t(g.line_bytes);
    g.ways = std::min(int(g.ways_cfg), BlockState::kDcacheSlots);
    g.sets = std::max<uint64_t>(1, uint64_t(g.bytes) / g.line / uint64_t(g.ways));
    g.sets = std::min<uint64_t>(g.sets, uint64_t(BlockState::kDcacheSlots / g.ways));
    return g;
}
}  // namespace

double scalar_gm_cycles(uintptr_t a, size_t n) {
    const DcacheShape& g = dcache_shape();
    if (!g.on) return hot.scalar_gm_cycles;  // no cache
    BlockState& b = rt.blk;
    const uint64_t line = g.line;
    const int ways = g.ways;
    const uint64_t sets = g.sets;
    const uint64_t first = a / line, last = (a + (n ? n : 1) - 1) / line;
    double cycles = 0;
    for (uint64_t l = first; l <= last; ++l) {
        uint16_t& hint = b.dc_hint[(l * 0x9E3779B97F4A7C15ull) >> 60];
        if (b.dc_line[hint] == l + 1) {  // a line lives in one slot only: the hint's slot is the hit
            b.dc_used[hint] = ++b.dc_clock;
            cycles += cfg.scalar_dcache_hit_cycles;
            continue;
        }
        const uint64_t set0 = (l % sets) * uint64_t(ways);
        uint64_t* tags = b.dc_line + set0;
        uint64_t* used = b.dc_used + set0;
        ++b.dc_clock;
        int hit = -1, victim = 0;  // an empty way has used == 0, so the LRU choice takes it first
        for (int w = 0; w < ways; ++w) {
            if (tags[w] == l + 1) {
                hit = w;
                break;
            }
            if (used[w] < used[victim]) victim = w;
        }
        const int slot = hit >= 0 ? hit : victim;
        if (hit >= 0) {
            cycles += cfg.scalar_dcache_hit_cycles;
        } else {
            tags[victim] = l + 1;
            cycles += hot.scalar_gm_cycles;
        }
        used[slot] = b.dc_clock;
        hint = uint16_t(set0 + uint64_t(slot));
    }
    return cycles;
}

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
// An aten op of a binding's C++ (cast, fill, a materialised expand or permute; kgsim/aten_shim.h): on
// the NPU an eager device kernel, not host code, so it is charged as the eager reference is
// (reference_estimate.py: a launch plus its bytes through HBM; loader.py adds it to the call).
void kgsim_eager_op(unsigned long long bytes) {
    ++kgsim::scalar.eager_ops;
    kgsim::scalar.eager_bytes += bytes;
}

void __asan_handle_no_return() {}
void __asan_before_dynamic_init(const char*) {}
void __asan_after_dynamic_init() {}

}  // extern "C"
