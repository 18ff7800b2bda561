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
#include <cstddef>
#include <cstring>
#include <type_traits>

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

// An access known to lie wholly inside a GM buffer: a fast stretch's, loop skipping's bounds-only
// path, or the detailed one (cache model, race record, bytes).
void gm_inside(uintptr_t a, size_t n, bool write) {
    if (!loop_skipping() && ff_take(a, uint32_t(n), write)) {  // a fast stretch: no model, no race record
        ++scalar.gm_accesses;
        return;
    }
    ++g_scalar_gm_ops;
    if (loop_skipping()) {  // skipping: bounds only, the prediction times it
        ff.paused_left -= ff.paused_left != 0;  // (as the inline path: ff_window_open)
        if (write && g_track_writes) track_write(a, n);  // a store still lands: the check counts it
        return;
    }
    record_access(a, n, write ? AK_WRITE : AK_READ, Loc{});
    if (rt.cur) (write ? rt.cur->gm_write : rt.cur->gm_read) += n;
    hot.s_time += ff_detailed(scalar_gm_cycles(a, n), write);
    ++scalar.gm_accesses;
}

// The last two GM buffers an access landed in (a scalar loop reads one and writes another), each one
// that no earlier buffer of rt.gm overlaps, so an access inside it is what the search below would
// find: it skips the local memories' and rt.gm's search (a third of GroupNorm's host time was that).
struct SeenBuf {
    uint64_t gen = ~0ull;
    uintptr_t lo = 0;
    uint64_t size = 0;
};
SeenBuf g_seen[2];

void on_access_slow(uintptr_t a, size_t n, bool write) {
    if (ff.left != 0) {  // a fast stretch: a cached range check before anything else
        for (uint32_t i = 0; i < ff.nbufs; ++i) {
            const uint64_t off = a - ff.lo[i];
            if (off >= ff.size[i]) continue;
            if (ff.size[i] - off < n) break;  // runs past the buffer's end: the full check below faults
            ff_charge(a, uint32_t(n), write);
            ++scalar.gm_accesses;
            return;
        }
    }
    for (int m = 0; m < MEM_COUNT; ++m)  // UB and the other local memories: not GM
        if (a - reinterpret_cast<uintptr_t>(hot.mem[m]) < kLocalMemBytes) {
            if (m == MEM_UB) ub_scalar_order(write);  // a store then a load: the load waits (base.h)
            return;
        }
    const GmBuf* near = nullptr;
    for (size_t i = 0; i < rt.gm.size(); ++i) {
        const GmBuf& g = rt.gm[i];
        if (a - g.base < g.size) {
            if (a + n > g.base + g.size)
                trap("a scalar %s of %zu bytes at offset %llu of GM buffer '%s' (%llu bytes) runs past its end",
                     write ? "write" : "read", n, (unsigned long long)(a - g.base), g.name.c_str(),
                     (unsigned long long)g.size);
            bool alone = true;
            for (size_t j = 0; j < i && alone; ++j)
                alone = rt.gm[j].base >= g.base + g.size || rt.gm[j].base + rt.gm[j].size <= g.base;
            if (alone) g_seen[1] = g_seen[0], g_seen[0] = SeenBuf{g_gm_gen, g.base, g.size};
            gm_inside(a, n, write);
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

inline void on_access(uintptr_t a, size_t n, bool write) {
    if (rt.faulted) return;
    if (!hot.in_launch || n == 0) return;
    if (a - scalar.stack_lo < scalar.stack_bytes) return;  // the block's own stack (most accesses)
    if (a == scalar.skip_once) {  // GlobalTensor::operator() already charged this access
        scalar.skip_once = 0;
        return;
    }
    for (const SeenBuf& s : g_seen)
        if (s.gen == g_gm_gen && a - s.lo < s.size && s.size - (a - s.lo) >= n) {
            // gm_inside's two cheap cases here, inline (most of a scalar loop's accesses, and the
            // out-of-line call was an eighth of GroupNorm's host time)
            if (loop_skipping()) {
                ++g_scalar_gm_ops;
                if (write && g_track_writes) track_write(a, n);  // a store still lands: the check counts it
                return;
            }
            if (ff.left != 0) {
                ff_charge(a, uint32_t(n), write);
                ++scalar.gm_accesses;
                return;
            }
            return gm_inside(a, n, write);
        }
    on_access_slow(a, n, write);
}

}  // namespace

// The scalar unit reaches GM through a per-core data cache (CANN Ascend C guide, "Compute Units" and
// "Reading/Writing Data by the Scalar Unit": a 16 KB DCache filled in 64-byte cache lines, each AIC/AIV
// core its own; SetValue writes into the cached line, written back later). So a scalar loop over
// consecutive GM elements pays a line fill once per 64 bytes and a cache hit otherwise, as on the
// NPU; a hit or fill per line touched by the access. Associativity and the set-index function are not
// published: scalar_dcache_ways 0 is fully associative with LRU (misses on first touch and capacity
// only, the two things the guide's size and line fix); a number of ways is set-associative, indexed by
// line number mod sets. The profile's 4 ways are fitted on KernelBench level-2 scalar convolutions
// (soc.py): fully associative, every one of them ran 0.16-0.78x of the 910B; 4 ways puts a window's
// power-of-two-strided rows into shared sets, whose conflict misses brought them to 0.67-2.3x.
// Write-backs overlap the scalar unit: not charged to it.
namespace {
// The cache's shape from the profile, worked out again only when the profile's constants change
// (this runs on every scalar GM access: a scalar loop's host time was 40 % this function).
struct DcacheShape {
    double line_bytes = -1, ways_cfg = -1, bytes = -1;
    bool on = false;
    uint64_t line = 1, sets = 1;
    int ways = 1;
    // powers of two (the profile's 64-byte lines, the set counts of 16 KB): shifts and masks instead
    // of 64-bit divisions on every access; -1 / 0 when not
    int line_shift = -1;
    uint64_t set_mask = 0;
    uint64_t line_of(uintptr_t a) const { return line_shift >= 0 ? uint64_t(a) >> line_shift : uint64_t(a) / line; }
    uint32_t set_of(uint64_t l) const { return uint32_t(set_mask || sets == 1 ? l & set_mask : l % sets); }
};
DcacheShape g_dc_shape;

const DcacheShape& dcache_shape() {
    DcacheShape& g = g_dc_shape;
    if (g.line_bytes == cfg.scalar_dcache_line_bytes && g.ways_cfg == cfg.scalar_dcache_ways &&
        g.bytes == cfg.scalar_dcache_bytes)
        return g;
    g.line_bytes = cfg.scalar_dcache_line_bytes, g.ways_cfg = cfg.scalar_dcache_ways, g.bytes = cfg.scalar_dcache_bytes;
    g.on = !(g.line_bytes < 1 || g.ways_cfg < 0 || g.bytes < g.line_bytes);
    if (!g.on) return g;
    g.line = uint64_t(g.line_bytes);
    // 0 ways: fully associative, one set of every line the cache holds
    const double ways = g.ways_cfg < 1 ? g.bytes / g.line_bytes : g.ways_cfg;
    g.ways = int(std::min<double>(ways, BlockState::kDcacheSlots));
    g.sets = std::max<uint64_t>(1, uint64_t(g.bytes) / g.line / uint64_t(g.ways));
    g.sets = std::min<uint64_t>(g.sets, uint64_t(BlockState::kDcacheSlots / g.ways));
    const auto pow2 = [](uint64_t v) { return v != 0 && (v & (v - 1)) == 0; };
    g.line_shift = pow2(g.line) ? __builtin_ctzll(g.line) : -1;
    g.set_mask = pow2(g.sets) ? g.sets - 1 : 0;
    return g;
}

// The cached lines are found through an exact hash index (line -> slot, linear probing), and each
// set keeps its ways in a circular list from most to least recently used, so a hit, a fill and the
// LRU victim all cost O(1) host time whatever the associativity (a fully associative cache searched
// way by way cost a 256-slot scan per line fill).
constexpr uint32_t kIndexMask = BlockState::kDcacheIndex - 1;
constexpr int kIndexBits = __builtin_ctz(BlockState::kDcacheIndex);
// Fibonacci hashing: the product's top bits spread consecutive lines (and lines a power of two apart)
inline uint32_t index_home(uint64_t line_tag) { return uint32_t((line_tag * 0x9E3779B97F4A7C15ull) >> (64 - kIndexBits)); }

inline int index_find(const BlockState& b, uint64_t tag) {
    for (uint32_t i = index_home(tag);; i = (i + 1) & kIndexMask) {
        const uint16_t e = b.dc_index[i];
        if (e == 0) return -1;
        if (b.dc_line[e - 1] == tag) return e - 1;
    }
}

inline void index_insert(BlockState& b, uint64_t tag, int slot) {
    uint32_t i = index_home(tag);
    while (b.dc_index[i] != 0) i = (i + 1) & kIndexMask;
    b.dc_index[i] = uint16_t(slot + 1);
}

// Linear probing's deletion: later entries of the probe run move back into the hole when their home
// lies at or before it (cyclically), so every lookup still meets its entry before an empty one.
inline void index_erase(BlockState& b, uint64_t tag) {
    uint32_t i = index_home(tag);
    while (b.dc_line[b.dc_index[i] - 1] != tag) i = (i + 1) & kIndexMask;
    for (uint32_t j = (i + 1) & kIndexMask;; j = (j + 1) & kIndexMask) {
        const uint16_t e = b.dc_index[j];
        if (e == 0) break;
        const uint32_t home = index_home(b.dc_line[e - 1]);
        if (((j - home) & kIndexMask) >= ((j - i) & kIndexMask)) {
            b.dc_index[i] = e;
            i = j;
        }
    }
    b.dc_index[i] = 0;
}

// Make `slot` the most recently used way of its set (a hit).
inline void touch(BlockState& b, uint32_t set, uint16_t slot) {
    uint16_t& head = b.dc_mru[set];
    if (slot == head) return;
    if (slot == b.dc_prev[head]) {  // the least recently used: the circle turns by one
        head = slot;
        return;
    }
    b.dc_next[b.dc_prev[slot]] = b.dc_next[slot];
    b.dc_prev[b.dc_next[slot]] = b.dc_prev[slot];
    b.dc_prev[slot] = b.dc_prev[head];
    b.dc_next[slot] = head;
    b.dc_next[b.dc_prev[head]] = slot;
    b.dc_prev[head] = slot;
    head = slot;
}
}  // namespace

void dcache_reset() {
    BlockState& b = rt.blk;
    std::memset(b.dc_line, 0, sizeof b.dc_line);
    std::memset(b.dc_index, 0, sizeof b.dc_index);
    std::memset(b.dc_stamp, 0, sizeof b.dc_stamp);
    b.dc_epoch = b.dc_fresh = 0, b.dc_counting = false;
    b.miss_group_bb = ~uint64_t(0), b.miss_group_left = 0;
    const DcacheShape& g = dcache_shape();
    if (!g.on) return;
    for (uint64_t s = 0; s < g.sets; ++s) {  // each set's ways in a circle, all empty
        const uint64_t w0 = s * uint64_t(g.ways);
        for (int w = 0; w < g.ways; ++w) {
            b.dc_next[w0 + w] = uint16_t(w0 + (w + 1) % g.ways);
            b.dc_prev[w0 + w] = uint16_t(w0 + (w + g.ways - 1) % g.ways);
        }
        b.dc_mru[s] = uint16_t(w0);
    }
}

double scalar_gm_cycles(uintptr_t a, size_t n) {
    const DcacheShape& g = dcache_shape();
    if (!g.on) return hot.scalar_gm_cycles;  // no cache
    BlockState& b = rt.blk;
    const uint64_t first = g.line_of(a), last = g.line_of(a + (n ? n : 1) - 1);
    double cycles = 0;
    for (uint64_t l = first; l <= last; ++l) {
        const uint64_t tag = l + 1;
        const uint32_t set = g.set_of(l);
        const int slot = index_find(b, tag);
        if (slot >= 0) {
            touch(b, set, uint16_t(slot));
            if (b.dc_counting && b.dc_stamp[slot] != b.dc_epoch) b.dc_stamp[slot] = b.dc_epoch, ++b.dc_fresh;
            cycles += cfg.scalar_dcache_hit_cycles;
            continue;
        }
        uint16_t& head = b.dc_mru[set];
        const uint16_t victim = b.dc_prev[head];  // the least recently used way (an empty one first)
        if (b.dc_line[victim] != 0) index_erase(b, b.dc_line[victim]);
        b.dc_line[victim] = tag;
        index_insert(b, tag, victim);
        head = victim;  // the circle turns by one: the refilled way is the most recent
        if (b.dc_counting && b.dc_stamp[victim] != b.dc_epoch) b.dc_stamp[victim] = b.dc_epoch, ++b.dc_fresh;
        // Misses in flight together: the in-order scalar unit waits for a load where its value is
        // used, not where it is issued. A basic block's loads run up to its first use (a compare and
        // branch ends the block), so line fills with no block boundary between them overlap, up to
        // scalar_gm_outstanding_misses at a time: the first of a group pays the fill, the others
        // their issue (a hit). A fill in another block starts a new group.
        if (b.miss_group_left > 0 && b.miss_group_bb == scalar.blocks) {
            --b.miss_group_left;
            cycles += cfg.scalar_dcache_hit_cycles;
            continue;
        }
        b.miss_group_bb = scalar.blocks, b.miss_group_left = int(cfg.scalar_gm_outstanding_misses) - 1;
        cycles += hot.scalar_gm_cycles;
    }
    return cycles;
}

// ---- scalar fast-forward ------------------------------------------------------------------------
// Under sampled simulation a block's scalar GM accesses (GlobalTensor GetValue/SetValue/operator(),
// raw __gm__ pointers) alternate between detailed windows, which run the data-cache model and the
// race detector, and fast stretches, in which an access keeps its bounds check, its read or write, its
// GM bytes and its written span (the sampled check), and is charged the mean cycles per read / per
// write of the block's measured windows so far (ff_charge, kgsim/base.h). A scalar loop's accesses
// repeat a pattern (the same strides over a tile, a row, a filter window), so the cache's hit rate in
// a window stands for the stretch around it.
//  - The block's first kFirstWindow accesses are detailed and charged exactly; the cold cache fills in
//    its first half, its second half is the first measured window.
//  - Then, repeatedly: a fast stretch, a warm-up of detailed accesses charged at the mean, and a
//    measured window of kMeasure accesses charged exactly. The warm-up brings the cache model, stale
//    after a stretch, back to the state a full simulation would have: once every slot of the cache has
//    been touched since the warm-up began, an LRU cache holds exactly the most recent lines of each set
//    (of all lines, fully associative), as it would have. How many accesses that takes is counted (from the cold
//    start, then in every warm-up), and each warm-up lasts twice the longest count so far, within
//    [kWarmMin, kWarmMax] (a working set under the cache's size never touches every slot; its lines
//    stay resident anyway). A fixed 4096-access warm-up was too short: a depthwise convolution reuses
//    an input row one output row, some 20,000 accesses, later, and its windows missed lines the full
//    run hit (+4 %).
//    A stretch is kFastRatio times its window (warm-up + measure) on average: detailed is 1/32 of the
//    accesses past the first window. Published-shape blocks make 10^8 to 10^9 scalar accesses,
//    thousands of windows each, so the mean's standard error stays far under a percent.
//  - A stretch's length is drawn uniformly from [0.5, 1.5) times its mean by a generator seeded
//    with the block's core uid (results repeat run to run): with fixed lengths, a kernel loop whose
//    period divides the cycle would meet every window at the same point of itself.
//  - At the block's end every access charged a running mean (fast, warm-up, and those of iterations a
//    native loop jump passed) is charged the final mean instead (the first window left out from
//    kFirstOut windows on: it sits at the block's start, where a large working set still fills).
//  - Bracket: per read / write, three standard errors of the final mean over the n accesses charged
//    it, n x 3 s / sqrt(windows). The windows sit at random points of the block's
//    access stream (the jittered stretches), so their means sample the block's; s is the spread of
//    the means of the windows' sub-windows (kSubWindow accesses, 4 a window), at least that of whole
//    windows, so a block with one or two windows still gets a width (whole windows of a regular loop
//    can agree to 0.01 % while the stretches between them differ by more). Where a kind has too few
//    accesses per sub-window, the sub-windows of both kinds stand in. The block's cycle bracket widens
//    by the sum.
// Full simulation (no block sampling) and the knob (kgsim_set_scalar_fast_forward(0)) leave the
// phase off: ff.left stays 0 and every access takes the detailed path, exactly as before.
ScalarFastForward ff{};
bool g_scalar_ff = true;

namespace {
enum : uint8_t { FF_OFF = 0, FF_FIRST, FF_FAST, FF_WARM, FF_MEASURE };
constexpr uint64_t kFirstWindow = 8192, kMeasure = 4096, kWarmMin = 4096, kWarmMax = 1 << 16;
constexpr uint64_t kFastRatio = 31;
constexpr uint64_t kSubWindow = 1024;
constexpr uint64_t kMinWindowAccesses = 32;  // a kind's sub-window mean counts toward the bracket from here
constexpr uint64_t kFirstOut = 5;            // windows from which the first one leaves the mean (ff_mean)
uint64_t g_ff_sink[2];                        // the GM byte counts of a block with no launch record


// The mean cycles per read (k 0), write (1) or access (2) of the block's measured windows. The first
// window sits at the block's start, not at a random point of its stream: where the block's working
// set is larger than half the first window fills, its measured half still fills the cache (a
// convolution over 64 channels: +2 % latency at a reduced shape, and a mean that native loop jumps
// carried over ten times the work). From kFirstOut windows on it is left out.
double ff_mean(const BlockState::ScalarFf& f, int k) {
    const bool later = f.windows >= kFirstOut;
    const double sum = f.sum[k] - (later ? f.first_sum[k] : 0.0);
    const uint64_t n = f.n[k] - (later ? f.first_n[k] : 0);
    if (n >= kMinWindowAccesses) return sum / double(n);
    const double all = f.sum[2] - (later ? f.first_sum[2] : 0.0);
    const uint64_t all_n = f.n[2] - (later ? f.first_n[2] : 0);
    return all_n ? all / double(all_n) : hot.scalar_gm_cycles;
}

// a measured access: into the window's sums and its sub-window's, whose mean joins the range when full
void ff_measure(BlockState::ScalarFf& f, double cyc, int write) {
    f.win_sum[write] += cyc, ++f.win_n[write];
    f.sub_sum[write] += cyc, ++f.sub_n[write];
    if (f.sub_n[0] + f.sub_n[1] < kSubWindow) return;
    const auto note = [&](int k, double sum, uint64_t n) {
        if (n < kMinWindowAccesses) return;
        const double m = sum / double(n);
        ++f.subs[k], f.sub_m1[k] += m, f.sub_m2[k] += m * m;
    };
    note(0, f.sub_sum[0], f.sub_n[0]);
    note(1, f.sub_sum[1], f.sub_n[1]);
    note(2, f.sub_sum[0] + f.sub_sum[1], f.sub_n[0] + f.sub_n[1]);
    f.sub_sum[0] = f.sub_sum[1] = 0, f.sub_n[0] = f.sub_n[1] = 0;
}

void ff_close_window(BlockState::ScalarFf& f) {
    ff_flush();
    if (f.windows++ == 0) {
        for (int k = 0; k < 2; ++k) f.first_sum[k] = f.win_sum[k], f.first_n[k] = f.win_n[k];
        f.first_sum[2] = f.win_sum[0] + f.win_sum[1], f.first_n[2] = f.win_n[0] + f.win_n[1];
    }
    for (int k = 0; k < 2; ++k) f.sum[k] += f.win_sum[k], f.n[k] += f.win_n[k];
    f.sum[2] += f.win_sum[0] + f.win_sum[1], f.n[2] += f.win_n[0] + f.win_n[1];
    f.win_sum[0] = f.win_sum[1] = 0, f.win_n[0] = f.win_n[1] = 0;
    ff.cycles[0] = ff_mean(f, 0), ff.cycles[1] = ff_mean(f, 1);
}

// what the running stretch's fast accesses were charged (one mean per kind all through it)
void ff_end_stretch(BlockState::ScalarFf& f) {
    ff_flush();  // at this stretch's means, before a window changes them
    for (int k = 0; k < 2; ++k) f.fast_charged[k] += double(ff.fast[k] - f.stretch_fast[k]) * ff.cycles[k];
    ff.left = 0;
}

void ff_start_stretch(BlockState::ScalarFf& f) {
    f.stretch_fast[0] = ff.fast[0], f.stretch_fast[1] = ff.fast[1];
    f.rng ^= f.rng << 13, f.rng ^= f.rng >> 7, f.rng ^= f.rng << 17;  // xorshift64
    f.phase = FF_FAST, f.pos = 0;
    ff_refresh_bufs();  // buffers registered since the last stretch
    const uint64_t mean = kFastRatio * f.window_len;
    ff.left = mean / 2 + f.rng % mean;
}
}  // namespace

static uint32_t ff_cache_slots() {
    const DcacheShape& g = dcache_shape();
    return g.on ? uint32_t(g.sets * uint64_t(g.ways)) : 0;  // no cache: no state to warm up
}

namespace {
// The warm-up's length is planned before it starts, from how long earlier refreshes took (twice the
// longest, within [kWarmMin, kWarmMax]): ending it when the refresh completes would start every
// measured window right after a burst of line fills (the refresh completes on one), and the windows
// of ConvTransposed1dDilated then saw 6 % fewer misses than the stretches between them.
void ff_count_refresh(BlockState::ScalarFf& f) {
    rt.blk.dc_counting = true, ++rt.blk.dc_epoch, rt.blk.dc_fresh = 0;
    f.refresh_pos = 0;
}

// one more detailed access since the count began: has every slot been touched since?
void ff_refreshed(BlockState::ScalarFf& f) {
    if (!rt.blk.dc_counting) return;
    ++f.refresh_pos;
    if (rt.blk.dc_fresh < ff_cache_slots()) return;
    f.refresh_max = std::max(f.refresh_max, f.refresh_pos);
    rt.blk.dc_counting = false;
}

void ff_end_window(BlockState::ScalarFf& f) {
    if (rt.blk.dc_counting) f.refresh_max = kWarmMax, rt.blk.dc_counting = false;  // not refreshed in time
    f.warm_plan = std::clamp<uint64_t>(2 * f.refresh_max, kWarmMin, kWarmMax);
    ff_close_window(f);
    ff_start_stretch(f);
}
}  // namespace

void ff_block_begin() {
    BlockState::ScalarFf& f = rt.blk.ffb;
    f = BlockState::ScalarFf{};
    ff.left = ff.paused_left = 0, ff.nbufs = 0;
    ff.fast[0] = ff.fast[1] = 0, ff.flushed[0] = ff.flushed[1] = 0;
    ff.gm_bytes[0] = rt.cur ? &rt.cur->gm_read : &g_ff_sink[0];
    ff.gm_bytes[1] = rt.cur ? &rt.cur->gm_write : &g_ff_sink[1];
    if (!g_scalar_ff || g_sample_groups <= 0) return;
    f.phase = FF_FIRST;
    ff_count_refresh(f);  // from the cold cache: how long filling every slot takes
    f.rng = 0x9E3779B97F4A7C15ull ^ (uint64_t(hot.core_uid + 1) * 0xD1B54A32D192ED03ull);
}

// Whether a measured window runs or is due (its stretch has run out). Loop sampling's API-call skip
// neither starts nor goes on then: the skipped periods' accesses count down the stretch they pause,
// and the window runs where the stretch ends, inside the skipped loop. Left to count only the
// accesses a skip leaves simulated, windows fell on what does not repeat (a transposed convolution's
// edge rows and columns, one or two taps per channel, few cache hits: 51 cycles a read against the
// 29.5 of the full run's windows), and that mean priced the template periods every skipped period
// repeats (ConvTranspose2dSoftmaxBiasAddScalingSigmoid: +7.7 % per channel period, +8.6 % in all).
bool ff_window_open() {
    const uint8_t ph = rt.blk.ffb.phase;
    if (ph == FF_FIRST || ph == FF_WARM || ph == FF_MEASURE) return true;
    return ph == FF_FAST && ff.left == 0 && ff.paused_left == 0;
}

double ff_jumped(uint64_t reads, uint64_t writes) {
    BlockState::ScalarFf& f = rt.blk.ffb;
    const uint64_t n[2] = {reads, writes};
    double cycles = 0;
    for (int k = 0; k < 2; ++k) {
        f.jumped_n[k] += n[k], f.jumped_charged[k] += double(n[k]) * ff.cycles[k];
        cycles += double(n[k]) * ff.cycles[k];
    }
    if (rt.cur) rt.cur->scalar_ff_accesses += reads + writes;
    // the passed accesses count toward the stretch's length: windows come as often per access of the
    // block's work as without jumps (left to run alone, a stretch outlasted a jumping block, whose
    // every access was then charged its cold first window's mean: +4.7 %)
    ff.left -= std::min<uint64_t>(ff.left, reads + writes);
    return cycles;
}

double ff_block_end() {
    BlockState::ScalarFf& f = rt.blk.ffb;
    if (f.phase == FF_FAST) ff_end_stretch(f);
    double spread = 0, recharge = 0;
    for (int k = 0; k < 2; ++k) {
        const double n = double(ff.fast[k] + f.warm_n[k] + f.jumped_n[k]);
        const double charged = f.fast_charged[k] + f.warm_charged[k] + f.jumped_charged[k];
        if (n == 0 || f.windows == 0) continue;  // (a stretch starts only after a measured window)
        const int w = f.subs[k] >= 2 ? k : 2;  // a kind with too few sub-windows of its own: both kinds'
        const double mean = ff_mean(f, k);
        double sd = 0;
        if (f.subs[w] >= 2) {
            const double c = double(f.subs[w]), mu = f.sub_m1[w] / c;
            sd = std::sqrt(std::max(0.0, (f.sub_m2[w] - c * mu * mu) / (c - 1)));
        }
        recharge += n * mean - charged;
        spread += n * 3 * sd / std::sqrt(double(f.windows));
    }
    // Every access charged a running mean is charged the block's final one instead: the running
    // means of the first windows weigh as much as the stretches they priced, which native loop jumps
    // made ten times longer in work (a scalar convolution came out 4.8 % over its full simulation).
    hot.s_time += recharge;
    if (rt.cur) rt.cur->scalar_ff_accesses += ff.fast[0] + ff.fast[1];
    ff_flush();
    g_scalar_gm_ops += ff.fast[0] + ff.fast[1], ff.fast[0] = ff.fast[1] = 0;  // scalar_gm_ops() unchanged
    ff.flushed[0] = ff.flushed[1] = 0;
    rt.blk.dc_counting = false;
    ff.left = 0;
    f.phase = FF_OFF;
    return spread;
}


void ff_refresh_bufs() {
    ff.nbufs = uint32_t(std::min<size_t>(rt.gm.size(), ScalarFastForward::kBufs));
    for (uint32_t i = 0; i < ff.nbufs; ++i) ff.lo[i] = rt.gm[i].base, ff.size[i] = rt.gm[i].size;
}

bool ff_take(uintptr_t a, uint32_t n, int write) {
    if (ff.left == 0) return false;
    ff_charge(a, n, write);
    return true;
}

double ff_detailed(double cyc, int write) {
    BlockState::ScalarFf& f = rt.blk.ffb;
    switch (f.phase) {
    case FF_OFF:
        return cyc;
    case FF_FAST:
        if (ff.left != 0) return cyc;  // an access the stretch cannot take (past a buffer's end): as it is
        ff_end_stretch(f);
        f.phase = FF_WARM, f.pos = 0;
        ff_count_refresh(f);
        [[fallthrough]];
    case FF_WARM: {
        // priced on a state that may still be stale: charged the mean
        ff_refreshed(f);
        if (++f.pos >= f.warm_plan) f.phase = FF_MEASURE, f.window_len = f.pos + kMeasure, f.pos = 0;
        const double c = ff.cycles[write];
        f.warm_charged[write] += c, ++f.warm_n[write];
        return c;
    }
    case FF_FIRST:
        ff_refreshed(f);
        if (++f.pos > kFirstWindow - kMeasure) ff_measure(f, cyc, write);
        if (f.pos == kFirstWindow) f.window_len = kFirstWindow, ff_end_window(f);
        return cyc;
    default:  // FF_MEASURE
        ff_refreshed(f);
        ff_measure(f, cyc, write);
        if (++f.pos == kMeasure) ff_end_window(f);
        return cyc;
    }
}

// A loop of plain scalar code that calls no API never reaches slow_tick: the basic-block counter
// looks at the watchdog's host-time and cycle bounds instead. The fault is trapped, not thrown (this
// runs inside the compiler's nothrow callback), and carries no source line (the callback has none).
void scalar_watchdog() {
    scalar.next_check = scalar.blocks + kScalarWatchdogBlocks;
    if (rt.faulted || !hot.in_launch) return;
    ff_flush();
    const std::string why = watchdog_expired();
    if (why.empty()) return;
    record_fault("watchdog", "", 0, why);
    trap_block();
}

}  // namespace kgsim

using kgsim::on_access;

// toolchain/as writes the body of __sanitizer_cov_trace_pc, and the stack test that opens
// on_access, inline into kernel code in place of the calls (a call per basic block and per access
// was most of a scalar loop's host time). It reaches these fields at fixed offsets, through
// kgsim_asm_hot, kgsim_asm_scalar and kgsim_asm_watchdog: change both together.
static_assert(offsetof(kgsim::Hot, s_time) == 88 && offsetof(kgsim::Hot, in_launch) == 117);
static_assert(offsetof(kgsim::ScalarCounters, block_cycles) == 0 && offsetof(kgsim::ScalarCounters, blocks) == 8 &&
              offsetof(kgsim::ScalarCounters, host_blocks) == 16 &&
              offsetof(kgsim::ScalarCounters, next_check) == 32 &&
              offsetof(kgsim::ScalarCounters, stack_lo) == 40 && offsetof(kgsim::ScalarCounters, stack_bytes) == 48);
static_assert(std::is_same_v<decltype(kgsim::Hot::s_time), double> && sizeof(kgsim::Hot::in_launch) == 1 &&
              std::is_same_v<decltype(kgsim::ScalarCounters::block_cycles), double>);
extern "C" kgsim::ScalarCounters kgsim_asm_scalar __attribute__((alias("_ZN5kgsim6scalarE")));

extern "C" {

// the inline counter's call when `blocks` reaches next_check
void kgsim_asm_watchdog() { kgsim::scalar_watchdog(); }

void __sanitizer_cov_trace_pc() {
    if (kgsim::hot.in_launch) {
        kgsim::hot.s_time += kgsim::scalar.block_cycles;
        if (++kgsim::scalar.blocks >= kgsim::scalar.next_check) kgsim::scalar_watchdog();
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
// Scalar fast-forward under sampled simulation (above): 1 on (the default), 0 off (every access detailed).
void kgsim_set_scalar_fast_forward(int on) { kgsim::g_scalar_ff = on != 0; }
int kgsim_get_scalar_fast_forward() { return kgsim::g_scalar_ff ? 1 : 0; }
void kgsim_eager_op(unsigned long long bytes) {
    ++kgsim::scalar.eager_ops;
    kgsim::scalar.eager_bytes += bytes;
}

void __asan_handle_no_return() {}
void __asan_before_dynamic_init(const char*) {}
void __asan_after_dynamic_init() {}

}  // extern "C"
