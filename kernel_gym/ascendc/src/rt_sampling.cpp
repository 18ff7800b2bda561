// Sampled simulation: KernelBench-scale shapes in bounded time and memory.
//
// Two parts, independent of each other:
//  - Block sampling. With g_sample_groups = k > 0, a launch of more than k AI Core groups (blocks
//    of an AIV- or AIC-only launch; AIC plus its AIVs in a mixed one) runs k of them, evenly spaced
//    and always the first and the last (where tails live): the first, middle and last first, the
//    rest only where those differ (group_sampled), and more between two sampled groups that
//    differ (refine_group). time_launch gives every skipped block
//    the cycles, pipe busy time and GM bytes of the nearest sampled block of its core type, and
//    brackets the latency: every skipped block at the cheapest and at the dearest sampled block.
//  - Lazy GM regions. A region is reserved PROT_NONE and filled 64 KiB at a time when first
//    touched, through a SIGSEGV handler, whoever touches it (the runtime's copies, raw __gm__
//    pointers, the host, PyTorch). Input regions fill with a counter-based pseudo-random stream
//    (a value is a function of its index and the seed, so an evicted chunk refills identically)
//    and stay read-only until written; clean chunks are evicted first-in first-out above a
//    resident cap. Output regions fill with the verifier's poison (NaN / the type's max / true).
//    Written (dirty) chunks above three quarters of the cap go to an unlinked spill file, oldest
//    first, and are read back from it when touched again: a kernel that writes more output than
//    the cap (GroupNorm at its published shape stores 4.7 GB in its sampled blocks) stays near
//    the cap instead of holding all it wrote.
//  - Written spans. While tracking is on, every GM store the race detector sees (copies, atomics,
//    Fixpipe, scalar and raw-pointer stores) extends a span of its core in that GM buffer (stores
//    that overlap or touch one), so the caller can compare what the sampled blocks stored, and
//    only that, with the reference: a grid-stride kernel's blocks leave other blocks' tiles between
//    their spans. A strided copy is recorded as its whole extent, whose gaps are still poison.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

#include <atomic>
#include <unordered_map>
#include <cmath>
#include <cstring>

#include "rt.h"

namespace kgsim {

int64_t g_sample_groups = 0;
bool g_track_writes = false;

namespace {
struct Written {
    int64_t uid;
    uintptr_t lo, hi;
    uint64_t bytes;
    uint64_t seq = 0;  // creation order (a span cut in two keeps it): see RewriteMark
};
uint64_t g_span_seq = 0;
std::vector<Written> g_written;  // spans of stored bytes per (core, GM buffer), in first-write order
// Stores left out of g_written because their block had skipped loop iterations: one hull per GM
// buffer, so that a check that finds nothing to compare can tell "stored nothing" from "stored
// only after a skip" (RmsNorm's first channel loop skips before its first output store).
std::vector<Written> g_untracked;
// The hull of the tracked spans (most stores land outside it: nothing to look through), and per
// core the loop event count at its last store over bytes a tracked store of any core of the
// launch wrote (a rewrite: a masking or accumulating pass; in a mixed launch the AIV may mask what
// the AIC's Matmul stored). Only the kRecentSpans latest spans are looked through.
uintptr_t g_hull_lo = UINTPTR_MAX, g_hull_hi = 0;
std::unordered_map<int64_t, int64_t> g_rewrite_event;
constexpr size_t kRecentSpans = 256;
constexpr size_t kMaxSpans = size_t(1) << 20;  // written spans kept for the check (32 MB)
int64_t loop_events();  // events recorded in the running block (below)
// loop_block_skipped(), inline here (the exported one is called through the PLT: a store's cost)
bool block_skipped();

bool overlaps_tracked(uintptr_t lo, uintptr_t hi) {
    if (hi <= g_hull_lo || lo >= g_hull_hi) return false;
    size_t first = g_written.size() > kRecentSpans ? g_written.size() - kRecentSpans : 0;
    // newest first: a scalar loop's read-modify-write of an output lands in the span it just extended
    for (size_t k = g_written.size(); k-- > first;)
        if (lo < g_written[k].hi && hi > g_written[k].lo) return true;
    return false;
}

// g_rewrite_event[core] = loop_events(), skipped when it holds that already: a scalar loop that
// accumulates into its output (a transposed convolution's y[o] += x * w) rewrites on every store,
// all between two loop events, and the hash map's write was a fifth of its host time.
int64_t g_rewrite_memo_uid = -1, g_rewrite_memo_event = -1;
void note_rewrite() {
    const int64_t ev = loop_events();
    if (hot.core_uid == g_rewrite_memo_uid && ev == g_rewrite_memo_event) return;
    g_rewrite_event[hot.core_uid] = ev;
    g_rewrite_memo_uid = hot.core_uid, g_rewrite_memo_event = ev;
}
void forget_rewrites(int64_t uid) {  // -1: every core's
    if (uid < 0) g_rewrite_event.clear(); else g_rewrite_event.erase(uid);
    g_rewrite_memo_uid = -1;
}

// A store after a loop skip overwrites [lo, hi) of what was stored before: those bytes no longer
// hold what the tracked store wrote, so they leave the check (MatmulForUpperTriangularMatrices
// zeroes the strict lower part of a tile its matmul stored).
void untrack_overlap(uintptr_t lo, uintptr_t hi) {
    if (!overlaps_tracked(lo, hi)) return;
    std::vector<Written> cut;
    size_t first = g_written.size() > kRecentSpans ? g_written.size() - kRecentSpans : 0;
    for (size_t k = first; k < g_written.size(); ++k) {
        Written& w = g_written[k];
        if (hi <= w.lo || lo >= w.hi) continue;
        if (w.hi > hi) cut.push_back(Written{w.uid, hi, w.hi, w.hi - hi, w.seq});
        w.hi = std::max(w.lo, lo), w.bytes = w.hi - w.lo;
    }
    g_written.insert(g_written.end(), cut.begin(), cut.end());
    std::erase_if(g_written, [](const Written& w) { return w.hi <= w.lo; });
}

// The hull of the last buffer a store landed in, tried first: a scalar loop's stores after a skip go
// to one output, and finding its buffer and hull at every 4-byte store was a fifth of GroupNorm's
// host time. Valid while rt.gm is unchanged (g_gm_gen) and the hull is still that buffer's.
struct UntrackedMemo {
    uint64_t gen = ~0ull;
    uintptr_t blo = 0, bhi = 0;
    size_t k = 0;
} g_untracked_memo;

void note_untracked(uintptr_t lo, uint64_t n) {
    UntrackedMemo& m = g_untracked_memo;
    if (m.gen == g_gm_gen && lo >= m.blo && lo < m.bhi && m.k < g_untracked.size() && g_untracked[m.k].lo >= m.blo &&
        g_untracked[m.k].lo < m.bhi) {
        Written& w = g_untracked[m.k];
        w.lo = std::min(w.lo, lo), w.hi = std::max(w.hi, lo + n), w.bytes += n;
        return;
    }
    uintptr_t blo = lo, bhi = lo + n;  // the GM buffer the store lands in (itself if none)
    bool found = false;
    for (const GmBuf& b : rt.gm)
        if (lo >= b.base && lo < b.base + b.size) { blo = b.base, bhi = b.base + b.size, found = true; break; }
    size_t k = 0;
    while (k < g_untracked.size() && !(g_untracked[k].lo >= blo && g_untracked[k].lo < bhi)) ++k;
    if (k < g_untracked.size()) {
        Written& w = g_untracked[k];
        w.lo = std::min(w.lo, lo), w.hi = std::max(w.hi, lo + n), w.bytes += n;
    } else {
        g_untracked.push_back(Written{-1, lo, lo + n, n});
    }
    m = found ? UntrackedMemo{g_gm_gen, blo, bhi, k} : UntrackedMemo{};
}
}  // namespace

uint64_t g_block_checked_stores = 0;  // stores of the running block tracked for the check (loop_iter)
uint64_t g_launch_checked_stores = 0;  // and of the launch's blocks so far

// Rewrites that stay inside one iteration (loop_iter, VALUES_ONLY loops). At each iteration of such a
// loop its mark records what was stored before it: every span older than the newest, and the newest
// span's extent then. A rewrite of those bytes carries data from an earlier iteration into this one
// (an accumulation over the loop), and the loop may no longer jump: iterations it passed would have
// rewritten bytes the check holds. A rewrite of bytes stored since the mark (a transposed
// convolution zeroes its output row, then accumulates into it) is the iteration's own.
namespace {
struct RewriteMark {
    bool* carried;
    uint64_t seq;       // the newest span's sequence number at the mark (0: none)
    uintptr_t lo, hi;   // its extent then
};
std::vector<RewriteMark*> g_marks;  // the running block's marked loops

void judge_rewrite(uintptr_t lo, uintptr_t hi) {
    if (g_marks.empty()) return;
    size_t first = g_written.size() > kRecentSpans ? g_written.size() - kRecentSpans : 0;
    for (size_t k = g_written.size(); k-- > first;) {
        const Written& w = g_written[k];
        if (!(lo < w.hi && hi > w.lo)) continue;
        for (RewriteMark* m : g_marks)
            if (w.seq < m->seq || (w.seq == m->seq && lo < m->hi && hi > m->lo)) *m->carried = true;
    }
}
}  // namespace

void track_write(uintptr_t lo, uint64_t n) {
    if (block_skipped()) {  // after a loop skip the block's local data may be stale: not checked
        note_untracked(lo, n);
        if (overlaps_tracked(lo, lo + n)) {  // a rewrite after the skip: the next skip would miss its stores
            note_rewrite();
            judge_rewrite(lo, lo + n);
            untrack_overlap(lo, lo + n);
        }
        return;
    }
    if (overlaps_tracked(lo, lo + n)) note_rewrite(), judge_rewrite(lo, lo + n);
    ++g_block_checked_stores, ++g_launch_checked_stores;
    g_hull_lo = std::min(g_hull_lo, lo), g_hull_hi = std::max(g_hull_hi, lo + n);
    // the GM buffer the store lands in (a span never crosses two buffers; the first in rt.gm that holds
    // it): the last one found is tried first, as a scalar loop stores into one output (scanning every
    // buffer was a tenth of its host time), where no earlier buffer overlaps it and rt.gm is unchanged
    static uint64_t cached_gen = ~0ull;
    static uintptr_t cached_lo = 0, cached_size = 0;
    uintptr_t blo = 0, bhi = UINTPTR_MAX;
    if (cached_gen == g_gm_gen && lo - cached_lo < cached_size) {
        blo = cached_lo, bhi = cached_lo + cached_size;
    } else {
        for (size_t i = 0; i < rt.gm.size(); ++i) {
            const GmBuf& b = rt.gm[i];
            if (!(lo >= b.base && lo < b.base + b.size)) continue;
            blo = b.base, bhi = b.base + b.size;
            bool alone = true;
            for (size_t j = 0; j < i && alone; ++j) alone = rt.gm[j].base >= bhi || rt.gm[j].base + rt.gm[j].size <= blo;
            if (alone) cached_gen = g_gm_gen, cached_lo = blo, cached_size = b.size;
            break;
        }
    }
    const uintptr_t hi = lo + n;
    // Past kMaxSpans a store is left out of the check (before the search below, which would look
    // through every span of the other blocks for one of this block's). Widening a span over the gap
    // instead took in bytes other blocks write (ConvDepthwiseSeparable2d stores 8 floats per channel
    // row, 1.4M spans per block: a widened span held another block's unwritten, poisoned tile).
    if (g_written.size() >= kMaxSpans) {
        const Written& last = g_written.back();
        if (last.uid == hot.core_uid && lo <= last.hi && hi >= last.lo) {  // still extends the latest
            Written& w = g_written.back();
            w.lo = std::min(w.lo, lo), w.hi = std::max(w.hi, hi), w.bytes += n;
        } else {
            note_untracked(lo, n);
        }
        return;
    }
    // extend a recent span of this core that the store overlaps or touches (a block's stores are
    // mostly in order); 8 of its spans in the buffer at most, and 64 spans in all (another block's
    // or another buffer's spans in between must not make each store a scan of every span)
    int looked = 0, seen = 0;
    for (auto it = g_written.rbegin(); it != g_written.rend() && ++seen <= 64; ++it) {
        if (it->uid != hot.core_uid || it->lo < blo || it->hi > bhi) continue;
        if (lo <= it->hi && hi >= it->lo) {
            it->lo = std::min(it->lo, lo), it->hi = std::max(it->hi, hi), it->bytes += n;
            return;
        }
        if (++looked == 8) break;
    }
    g_written.push_back(Written{hot.core_uid, lo, hi, n, ++g_span_seq});
}

namespace {
// The j-th of k evenly spaced groups of n: round(j (n-1) / (k-1)).
int64_t sample_position(int64_t j, int64_t k, int64_t n) { return (j * (n - 1) * 2 + (k - 1)) / (2 * (k - 1)); }
}  // namespace

bool group_in_sample(int64_t g, int64_t n) {
    int64_t k = g_sample_groups;
    if (k <= 0 || n <= k) return true;
    if (k == 1) return g == 0;
    for (int64_t j = 0; j < k; ++j)
        if (sample_position(j, k, n) == g) return true;
    return false;
}

// Staged block sampling. Of the k evenly spaced groups, the first, the middle one and the last run
// first; the other k - 3 run only where those three cost differently (stage_agrees). Most launches
// split their work evenly over their blocks, so a sample of 5 cost 5 blocks of host time to learn
// what 3 already showed: for a scalar-loop convolution, 40 % of its simulation. Where the three
// differ (a tail in the last block, a batch more in the first ones) the rest of the k run, then
// refine_group as before.
bool group_sampled(int64_t g, int64_t n) {
    int64_t k = g_sample_groups;
    if (k < 4 || n <= k) return group_in_sample(g, n);
    return g == sample_position(0, k, n) || g == sample_position((k - 1) / 2, k, n) ||
           g == sample_position(k - 1, k, n);
}

// Costs that agree: every pair of ran groups within kStageSpread (1 %) of the dearer one, in cycles
// (beyond each block's own bracket: loop sampling and scalar fast-forward make equal blocks differ
// by their estimates' error) and in GM bytes.
constexpr double kStageSpread = 0.01;

bool stage_agrees(const std::vector<double>& cost, const std::vector<double>& spread, const std::vector<double>& gm,
                  const std::vector<uint8_t>& ran) {
    double cmin = 0, cmax = 0, gmin = 0, gmax = 0, widest = 0;
    bool first = true;
    for (size_t i = 0; i < ran.size(); ++i) {
        if (!ran[i]) continue;
        if (first) cmin = cmax = cost[i], gmin = gmax = gm[i], first = false;
        cmin = std::min(cmin, cost[i]), cmax = std::max(cmax, cost[i]);
        gmin = std::min(gmin, gm[i]), gmax = std::max(gmax, gm[i]);
        widest = std::max(widest, spread[i]);
    }
    return cmax - cmin <= kStageSpread * cmax + 2 * widest && gmax - gmin <= kStageSpread * gmax;
}

// Block sampling assigns each skipped group the cost of the nearest sampled one, so a step in the
// work between two sampled groups (blocks below `batch % blockDim` doing one batch more, blocks past
// the last batch doing none) lands at their midpoint, wherever it really is: BatchedMatrixMultiplication
// (its AIV blocks take 2, 1 and 0 of the 128 batches) came out 9 % under full simulation. Between
// two neighbouring sampled groups the nearest-group estimate is off by at most half the groups
// between them times their cost difference; where that bound is over kRefineShare of the launch's
// estimated cycles or GM bytes, the middle group runs too (bisection finds a step in log2(gap)
// groups), at most kRefineGroupsPerSample extra groups per requested one.
constexpr double kRefineShare = 0.005;
constexpr int64_t kRefineGroupsPerSample = 4;

int64_t refine_group(const std::vector<double>& cost, const std::vector<double>& gm, const std::vector<uint8_t>& ran) {
    std::vector<int64_t> g;
    for (size_t i = 0; i < ran.size(); ++i)
        if (ran[i]) g.push_back(int64_t(i));
    if (g.size() < 2 || int64_t(g.size()) >= g_sample_groups * (1 + kRefineGroupsPerSample)) return -1;
    double total_c = 0, total_m = 0;  // the launch's estimate: every group at its nearest sampled one
    for (size_t j = 0; j < g.size(); ++j) {
        int64_t lo = j == 0 ? 0 : (g[j - 1] + g[j]) / 2 + 1, hi = j + 1 == g.size() ? int64_t(ran.size()) - 1 : (g[j] + g[j + 1]) / 2;
        total_c += double(hi - lo + 1) * cost[size_t(g[j])];
        total_m += double(hi - lo + 1) * gm[size_t(g[j])];
    }
    int64_t best = -1;
    double best_w = 0;
    for (size_t j = 0; j + 1 < g.size(); ++j) {
        int64_t a = g[j], b = g[j + 1];
        if (b - a < 2) continue;
        double half = double(b - a - 1) / 2;
        double wc = total_c > 0 ? half * std::fabs(cost[size_t(a)] - cost[size_t(b)]) / total_c : 0;
        double wm = total_m > 0 ? half * std::fabs(gm[size_t(a)] - gm[size_t(b)]) / total_m : 0;
        double w = std::max(wc, wm);
        if (w > kRefineShare && w > best_w) best = (a + b) / 2, best_w = w;
    }
    return best;
}

namespace {

struct Kind {
    int64_t first, count, cores, used;
};

struct CoreTimes {
    double max_core = 0;
    double max_core_gm = 0;  // the most GM bytes one core moves (its blocks' sum)
    std::array<double, P_COUNT> busy{};
    int64_t waves = 0, used = 0;
};

// AIV blocks (uids [0, n_aiv)) run on the AIV cores, AIC blocks (the rest) on the AIC cores, round
// robin: a core's time is the sum of its blocks; the kernel's is the slowest core's.
CoreTimes time_cores(const Kind (&kinds)[2], const std::vector<double>& cyc,
                     const std::vector<std::array<double, P_COUNT>>& busy, const std::vector<double>& gm) {
    CoreTimes r;
    for (const Kind& k : kinds) {
        int64_t used = std::min(k.count, k.cores);
        r.used += used;
        if (k.count == 0) continue;
        r.waves = std::max(r.waves, (k.count + k.cores - 1) / k.cores);
        std::vector<double> core_t(size_t(used), 0.0), core_gm(size_t(used), 0.0);
        for (int64_t i = 0; i < k.count && size_t(k.first + i) < cyc.size(); ++i)
            core_t[size_t(i % used)] += cyc[size_t(k.first + i)];
        for (int64_t i = 0; i < k.count && size_t(k.first + i) < gm.size(); ++i)
            core_gm[size_t(i % used)] += gm[size_t(k.first + i)];
        for (double g : core_gm) r.max_core_gm = std::max(r.max_core_gm, g);
        size_t crit = 0;
        for (size_t c = 1; c < core_t.size(); ++c)
            if (core_t[c] > core_t[crit]) crit = c;
        if (core_t[crit] < r.max_core) continue;
        r.max_core = core_t[crit];
        r.busy.fill(0);
        for (size_t i = crit; i < size_t(k.count) && size_t(k.first) + i < busy.size(); i += core_t.size())
            for (int p = 0; p < P_COUNT; ++p) r.busy[p] += busy[size_t(k.first) + i][p];
    }
    return r;
}

}  // namespace

// The launch's body from its three bounds (the critical core's pipes, HBM, the busiest core's GM
// port): their p-norm, p = overlap_norm (<= 0: the largest alone). The three overlap, but not
// perfectly: a bound that is nearly reached queues the others' requests behind its own, so two
// equal bounds cost more than one (2^(1/p): 9 % at p = 8) and a bound far under the largest costs
// nothing (at half of it, 0.05 %). With the plain maximum, 32 and 48 streaming cores tied at the HBM
// bound and only the launch cost per core separated them (the wrong way).
static double overlapped(double compute, double hbm, double port) {
    const double top = std::max({compute, hbm, port});
    const double p = cfg.overlap_norm;
    if (p <= 0 || top <= 0) return top;
    double sum = 0;
    for (double x : {compute, hbm, port}) sum += std::pow(x / top, p);
    return top * std::pow(sum, 1.0 / p);
}

void time_launch(LaunchRec& L) {
    int64_t nb = std::max<int64_t>(0, L.num_blocks);
    size_t rec = L.block_cycles.size();
    int64_t n_aic = std::min<int64_t>(L.aic_blocks, int64_t(rec));
    int64_t n_aiv = L.aic_blocks > 0 ? int64_t(rec) - n_aic : nb;
    if (L.aiv_blocks >= 0) {  // the scheduler's own count: sampled launches leave trailing blocks unrecorded
        n_aiv = L.aiv_blocks;
        n_aic = L.aic_blocks;
    }
    Kind kinds[2] = {{0, n_aiv, std::max<int64_t>(1, int64_t(cfg.aiv_cores)), 0},
                     {n_aiv, n_aic, std::max<int64_t>(1, int64_t(cfg.aic_cores)), 0}};
    std::vector<double> cyc = L.block_cycles;
    std::vector<std::array<double, P_COUNT>> busy = L.block_busy;
    double gm_bytes = double(L.gm_read + L.gm_write);
    // GM bytes per block (by core uid), for the per-core GM port bound
    std::vector<double> blk_gm(L.block_gm.begin(), L.block_gm.end()), lo_blk_gm, hi_blk_gm;
    double clock = cfg.clock_hz > 0 ? cfg.clock_hz : 1.85e9;
    // Memory time: the whole launch's bytes through HBM, and each core's bytes through its own GM
    // port (gm_port_bytes_per_cycle, CANN's per-core ddr_rate): with few streaming cores the port
    // binds before HBM does (24 x 32 B/cycle at 1.85 GHz is 1.42 TB/s, under 1.6 TB/s).
    auto latency = [&](const CoreTimes& ct, double bytes, double* compute, double* hbm, double* port,
                       double* launch) {
        *compute = ct.max_core / clock;
        *hbm = cfg.hbm_bytes_per_s > 0 ? bytes / cfg.hbm_bytes_per_s : 0;
        *port = cfg.gm_port_bytes_per_cycle > 0 ? ct.max_core_gm / (cfg.gm_port_bytes_per_cycle * clock) : 0;
        *launch = cfg.launch_base_s + cfg.launch_per_core_s * double(ct.used);
        return overlapped(*compute, *hbm, *port) + *launch;
    };

    L.blocks_skipped = 0;
    std::vector<double> lo_cyc, hi_cyc;
    double lo_gm = 0, hi_gm = 0;
    // loop sampling: each core's own bracket
    bool loops = false;
    for (double w : L.block_spread) loops = loops || w > 0;
    if (loops) {
        lo_cyc = hi_cyc = cyc;
        for (size_t i = 0; i < cyc.size() && i < L.block_spread.size(); ++i)
            lo_cyc[i] = std::max(0.0, cyc[i] - L.block_spread[i]), hi_cyc[i] = cyc[i] + L.block_spread[i];
        lo_gm = hi_gm = gm_bytes;
    }
    if (L.blocks_run < n_aiv + n_aic && L.faults.empty()) {
        size_t total = size_t(n_aiv + n_aic);
        cyc.resize(total, 0.0);
        busy.resize(total, std::array<double, P_COUNT>{});
        std::vector<uint8_t> ran = L.block_ran;
        ran.resize(total, 0);
        std::vector<uint64_t> gm = L.block_gm;
        gm.resize(total, 0);
        std::vector<double> own_lo = lo_cyc.empty() ? cyc : lo_cyc, own_hi = hi_cyc.empty() ? cyc : hi_cyc;
        own_lo.resize(total, 0.0), own_hi.resize(total, 0.0);
        lo_cyc = own_lo, hi_cyc = own_hi;
        blk_gm.assign(gm.begin(), gm.end());
        lo_blk_gm = hi_blk_gm = blk_gm;
        double est_gm = 0;
        lo_gm = hi_gm = 0;
        for (const Kind& k : kinds) {
            std::vector<int64_t> sampled;
            double cmin = 0, cmax = 0, gmin = 0, gmax = 0;
            for (int64_t i = k.first; i < k.first + k.count; ++i)
                if (ran[size_t(i)]) {
                    double c = cyc[size_t(i)], g = double(gm[size_t(i)]);
                    if (sampled.empty()) cmin = cmax = c, gmin = gmax = g;
                    cmin = std::min(cmin, own_lo[size_t(i)]), cmax = std::max(cmax, own_hi[size_t(i)]);
                    gmin = std::min(gmin, g), gmax = std::max(gmax, g);
                    sampled.push_back(i);
                }
            size_t j = 0;  // sampled[j]: the sampled block nearest to i (i only grows)
            for (int64_t i = k.first; i < k.first + k.count; ++i) {
                if (ran[size_t(i)]) {
                    double g = double(gm[size_t(i)]);
                    est_gm += g, lo_gm += g, hi_gm += g;
                    continue;
                }
                ++L.blocks_skipped;
                if (sampled.empty()) continue;
                while (j + 1 < sampled.size() && std::llabs(sampled[j + 1] - i) <= std::llabs(sampled[j] - i)) ++j;
                size_t s = size_t(sampled[j]);
                cyc[size_t(i)] = cyc[s];
                busy[size_t(i)] = busy[s];
                lo_cyc[size_t(i)] = cmin;
                hi_cyc[size_t(i)] = cmax;
                est_gm += double(gm[s]);
                lo_gm += gmin, hi_gm += gmax;
                blk_gm[size_t(i)] = double(gm[s]);
                lo_blk_gm[size_t(i)] = gmin, hi_blk_gm[size_t(i)] = gmax;
            }
        }
        // the report describes the whole launch: GM traffic scaled to the estimate
        double measured = double(L.gm_read + L.gm_write);
        if (measured > 0) {
            L.gm_read = uint64_t(double(L.gm_read) * est_gm / measured + 0.5);
            L.gm_write = uint64_t(double(L.gm_write) * est_gm / measured + 0.5);
        }
        gm_bytes = est_gm;
    }

    CoreTimes t = time_cores(kinds, cyc, busy, blk_gm);
    L.waves = t.waves;
    L.cores_used = t.used;
    L.critical_busy = t.busy;
    L.latency_s = latency(t, gm_bytes, &L.compute_s, &L.hbm_s, &L.gm_port_s, &L.launch_s);
    L.cycles = L.latency_s * clock;
    double mem = std::max(L.hbm_s, L.gm_port_s), body = std::max(L.compute_s, mem);
    L.bound = L.launch_s > body ? "launch"
              : mem > L.compute_s ? (L.gm_port_s > L.hbm_s ? "gm_port" : "hbm")
                                  : "pipe";
    L.latency_lo_s = L.latency_hi_s = L.latency_s;
    if (L.blocks_skipped > 0 || loops) {
        double c, h, g, l;
        if (lo_blk_gm.empty()) lo_blk_gm = hi_blk_gm = blk_gm;
        L.latency_lo_s = latency(time_cores(kinds, lo_cyc, busy, lo_blk_gm), lo_gm, &c, &h, &g, &l);
        L.latency_hi_s = latency(time_cores(kinds, hi_cyc, busy, hi_blk_gm), hi_gm, &c, &h, &g, &l);
    }
}

// ---- loop sampling -----------------------------------------------------------------------------
// Inside a block, the heavy API calls (vector instructions, DataCopy, the cube's loads, Mmad and
// Fixpipe) form a stream of events, each keyed by its call site and its arguments (GM addresses
// left out, local addresses, lengths, masks and strides in). A tile loop makes that stream
// periodic. Before each event the block's timing state is recorded (scalar time, each pipe's
// free and done times and busy time, GM bytes, and the scalar work's counts: basic blocks run,
// scalar reads of local memory, scalar GM accesses). When the keys of the last three periods
// agree, the period's cost (the change of every state variable over one period) agrees within
// kTol and no GM store was atomic, the block starts skipping: loop_skip returns true while the
// calls keep repeating the period. The first call that differs (a tail tile, the code after the
// loop) or the block's end stops the skip: the state becomes what the periods predict (the state
// at the skip's start plus whole periods plus the partial period), and simulation goes on.
// Skipped events enter the history with their predicted state, so an outer loop around an inner
// one is found too.
// While skipping, every skipped period must repeat the template's scalar work (counts of basic
// blocks run, local reads and scalar GM accesses): a period whose scalar work differs (a trip
// count or branch that depends on data) stops the skip there, and what the difference costs
// widens the bracket.
// Scalar reads of local memory (GetValue, operator(), GetReduce*Spr) in the periods: what the
// kernel reads may steer its scalar work (a trip count, a branch, a loop's exit). Such periods
// skip only their timing: the skipped calls still do their functional work (copies move data,
// vector instructions compute) with the block's timing state frozen (issue() returns at once),
// so the kernel reads what a full simulation would, and the scalar work's counts must agree
// exactly over the three periods, not only its time.
// The kernel's scalar code runs while skipping (the host must reach the code after the loop), but
// its GM accessors take a fast path (loop_skipping(): bounds only; no race tracking, data-cache
// model or GM byte counts, which the prediction replaces; UB accessors cost ~4 ns and are left).
// The first AI Core group of a launch (block index 0) runs in full unless the mode is 2 (every
// block skips; then the check covers every sampled block's iterations before its first skip);
// a block's stores after its first skip of calls' work are not tracked for the check (its local
// data may be stale); a timing-only skip (above) leaves them tracked. Blocks that wait for each
// other stop loop sampling for the launch.
bool g_loop_on = false;
bool g_loop_skipping = false;
bool g_loop_timing_only = false;
uint64_t g_scalar_gm_ops = 0;
bool g_loop_block0 = false;  // mode 2: block index 0 may skip too (one-block launches, a long block 0)
// mode 3 ("all_checked"): as mode 2, but block 0's skips keep every call's work (timing-only) until it
// has stored something the check sees: a kernel whose every sampled block stores only after a skip
// (RmsNorm's per-tile channel sum) then has block 0's first stores to check, where mode 1 ran all of
// block 0 in full for them
bool g_loop_block0_keeps = false;

namespace {

struct Snap {
    double s;
    double fr[P_COUNT], dn[P_COUNT], busy[P_COUNT];
    uint64_t gr, gw, reads;
    uint64_t bb, gs;  // basic blocks of kernel code run, scalar GM accesses (counts, not extrapolated)
    uint64_t ffr, ffw;  // reads and writes charged fast-forward's running mean (fast, or in passed iterations)
    double spread;      // the block's bracket so far (half-width, cycles)
};

constexpr int64_t kWin = 4096;       // events kept
constexpr int64_t kMaxPeriod = 1000; // the longest period looked for (4 periods fit in the window)
constexpr double kTol = 0.01;        // costs agree within 1 % of a period's length

struct LoopState {
    bool launch_off = false;       // blocks of this launch interact: no loop sampling
    bool eligible = false;         // this block may skip
    bool skipping = false;
    bool skipped = false;          // has skipped: stores are no longer tracked
    int64_t n = 0;                 // events recorded (index of the next)
    int64_t P = 0, match = 0;      // candidate period, events (ending at the last) matching it
    std::vector<uint64_t> key = std::vector<uint64_t>(size_t(kWin));
    std::vector<uint8_t> flag = std::vector<uint8_t>(size_t(kWin));
    std::vector<Snap> snap = std::vector<Snap>(size_t(kWin));
    std::unordered_map<uint64_t, int64_t> last;  // key -> index of its last event
    int64_t t0 = 0, m = 0;         // skip: first skipped index, events skipped so far
    double s_at_last = 0;          // scalar time at the last skipped event
    double spread = 0;             // half-width of the block's cycle bracket
    double spread_pending = 0;     // the running skip's cost difference between its periods
    double spread_extra = 0;       // scalar work a skipped period did beyond the template's (cycles)
    bool period_gm = false;        // the running skip's periods access GM as scalars
    Snap mark{};                   // the state (its counts) at the running skip's last period boundary
    std::vector<Snap> tmpl;        // the running skip's template: the states before events t0 - P .. t0
    std::vector<uint64_t> tmpl_key;
    std::vector<uint8_t> skipped_uid;  // cores of the launch that skipped calls' work (their data may be stale)
} g_loop;

// API-call skips started so far: a native loop tells one that began inside its running iteration
// (a skip of its own iterations' calls) from one it runs inside (loop_iter)
uint64_t g_skip_starts = 0;

Snap& at(int64_t i) { return g_loop.snap[size_t(i % kWin)]; }
uint64_t key_at(int64_t i) { return g_loop.key[size_t(i % kWin)]; }

struct NativeLoop;
uint64_t g_native_jumps = 0;  // native loop jumps (pass_iterations) and instances that sample or wait to
NativeLoop* g_holding = nullptr;  // a variable step's loop whose period is being sampled (no API-call skip starts)
NativeLoop* g_periodic = nullptr;  // a variable step's loop that found its period (its inner short loops run whole)

Snap take() {
    Snap x;
    const BlockState& b = rt.blk;
    x.s = hot.s_time;
    for (int p = 0; p < P_COUNT; ++p) x.fr[p] = b.free_[p], x.dn[p] = b.done_[p], x.busy[p] = b.busy[p];
    x.gr = rt.cur ? rt.cur->gm_read : 0;
    x.gw = rt.cur ? rt.cur->gm_write : 0;
    x.reads = hot.local_reads;
    x.bb = scalar.blocks;
    x.gs = scalar_gm_ops();
    // (with the accesses of iterations passed so far: an outer loop's jump passes its inner loops' too)
    x.ffr = ff.fast[0] + b.ffb.jumped_n[0], x.ffw = ff.fast[1] + b.ffb.jumped_n[1];
    x.spread = g_loop.spread;
    return x;
}

// The state before event t0 + m of the running skip (template: the period [t0 - P, t0)).
Snap predicted(int64_t P, int64_t m) {
    const std::vector<Snap>& T = g_loop.tmpl;
    const Snap &a = T[0], &b = T[size_t(P)], &c = T[size_t(m % P)];
    double K = double(m / P);
    Snap x = b;
    auto ext = [&](double va, double vb, double vc) { return vb + K * (vb - va) + (vc - va); };
    x.s = ext(a.s, b.s, c.s);
    for (int p = 0; p < P_COUNT; ++p) {
        x.fr[p] = ext(a.fr[p], b.fr[p], c.fr[p]);
        x.dn[p] = ext(a.dn[p], b.dn[p], c.dn[p]);
        x.busy[p] = ext(a.busy[p], b.busy[p], c.busy[p]);
    }
    x.gr = b.gr + uint64_t(m / P) * (b.gr - a.gr) + (c.gr - a.gr);
    x.gw = b.gw + uint64_t(m / P) * (b.gw - a.gw) + (c.gw - a.gw);
    return x;
}

// Why three periods ending at event i (exclusive) are not steady.
enum Unsteady : int { STEADY = 0, COSTS_DIFFER, READS_WORK_DIFFERS };

// The three periods ending at event i (exclusive) cost the same: every state variable moves by
// the same amount in each, within kTol of a period's length (GM bytes exactly); with scalar reads
// of local memory in them, the scalar work's counts agree exactly too (see the section's comment).
// `spread`: the largest difference of the scalar or a pipe's done time between them.
Unsteady steady_snaps(const Snap& s0, const Snap& s1, const Snap& s2, const Snap& s3, double* spread) {
    if (s1.gr - s0.gr != s3.gr - s2.gr || s2.gr - s1.gr != s3.gr - s2.gr) return COSTS_DIFFER;
    if (s1.gw - s0.gw != s3.gw - s2.gw || s2.gw - s1.gw != s3.gw - s2.gw) return COSTS_DIFFER;
    if (s3.reads != s0.reads) {  // the work may depend on data
        auto same_count = [&](uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3) {
            return a1 - a0 == a3 - a2 && a2 - a1 == a3 - a2;
        };
        if (!same_count(s0.reads, s1.reads, s2.reads, s3.reads) || !same_count(s0.bb, s1.bb, s2.bb, s3.bb) ||
            !same_count(s0.gs, s1.gs, s2.gs, s3.gs))
            return READS_WORK_DIFFERS;
    }
    double len = s3.s - s2.s;
    for (int p = 0; p < P_COUNT; ++p) len = std::max(len, s3.dn[p] - s2.dn[p]);
    if (!(len > 0)) return COSTS_DIFFER;
    double tol = kTol * len, worst = 0;
    auto same = [&](double a0, double a1, double a2, double a3, bool time) {
        double d1 = a1 - a0, d2 = a2 - a1, d3 = a3 - a2;
        double dev = std::max(std::fabs(d1 - d3), std::fabs(d2 - d3));
        if (time) worst = std::max(worst, dev);
        return dev <= tol;
    };
    if (!same(s0.s, s1.s, s2.s, s3.s, true)) return s3.reads != s0.reads ? READS_WORK_DIFFERS : COSTS_DIFFER;
    for (int p = 0; p < P_COUNT; ++p)
        if (!same(s0.fr[p], s1.fr[p], s2.fr[p], s3.fr[p], false) || !same(s0.dn[p], s1.dn[p], s2.dn[p], s3.dn[p], true) ||
            !same(s0.busy[p], s1.busy[p], s2.busy[p], s3.busy[p], false))
            return COSTS_DIFFER;
    *spread = worst;
    return STEADY;
}

Unsteady steady(int64_t i, int64_t P, double* spread) {
    return steady_snaps(at(i - 3 * P), at(i - 2 * P), at(i - P), at(i), spread);
}

void note_fallback(const char* why) {
    if (rt.cur && rt.cur->loop_fallback.empty())
        rt.cur->loop_fallback = fmt("block %lld: %s", (long long)hot.block_idx, why);
}

// Record event i with the state `x` before it and follow the candidate period.
void record_event(uint64_t k, uint8_t fl, const Snap& x) {
    LoopState& L = g_loop;
    int64_t i = L.n++;
    L.key[size_t(i % kWin)] = k;
    L.flag[size_t(i % kWin)] = fl;
    at(i) = x;
    if (L.P > 0 && i - L.P >= 0 && key_at(i - L.P) == k) {
        ++L.match;
    } else {
        auto it = L.last.find(k);
        L.P = it != L.last.end() ? i - it->second : 0;
        L.match = 0;
        if (L.P > kMaxPeriod || L.P * 4 > kWin) L.P = 0;
        for (int64_t j = i; L.P > 0 && j - L.P >= 0 && i - j < 3 * L.P && key_at(j) == key_at(j - L.P); --j) ++L.match;
    }
    L.last[k] = i;
}

void stop_skip() {
    LoopState& L = g_loop;
    int64_t P = L.P;
    Snap x = predicted(P, L.m);
    double drift = hot.s_time - L.s_at_last;  // scalar work after the last skipped event
    double shift = x.s - L.tmpl[size_t(P)].s;  // queue and event times set while skipping were stale
    BlockState& b = rt.blk;
    // The prediction before the stopping call already holds the template's scalar work between the
    // last skipped call and this one; `drift` is that work as it ran. Counting both charged it twice
    // (a whole tile when a scalar loop lies between the calls): the larger of the two stands.
    if (L.m > 0) {
        const double prev = predicted(P, L.m - 1).s;
        hot.s_time = prev + std::max(x.s - prev, drift);
    } else {
        hot.s_time = x.s + std::max(0.0, drift);
    }
    for (int p = 0; p < P_COUNT; ++p) b.free_[p] = x.fr[p], b.done_[p] = x.dn[p], b.busy[p] = x.busy[p];
    if (rt.cur) rt.cur->gm_read = x.gr, rt.cur->gm_write = x.gw;
    for (Queue& q : b.queues)
        for (Slot& sl : q.slots) sl.ready += shift, sl.freed += shift;
    for (auto& byte_code : b.events)
        for (EventQ& e : byte_code)
            for (double& t : e.times) t += shift;
    if (rt.cur) rt.cur->loop_periods_skipped += uint64_t(L.m / P);
    // The bracket: the periods' cost differences, once per skipped period, plus one period's
    // length. The periods do not carry every state that timing reads (the data cache, the L2 and
    // GM port models, queue slots), so the first events after the skip can land up to about a
    // period off what the periods predict even when the periods cost exactly the same.
    const Snap &a = L.tmpl[0], &e = L.tmpl[size_t(P)];
    double period = e.s - a.s;
    for (int p = 0; p < P_COUNT; ++p) period = std::max(period, e.dn[p] - a.dn[p]);
    L.spread += double(L.m / P) * L.spread_pending + (L.m > 0 ? std::max(0.0, period) : 0.0) + L.spread_extra;
    L.spread_extra = 0;
    L.skipping = false;
    g_loop_skipping = g_loop_timing_only = false;
    ff.skipping = false;
    ff.left = ff.paused_left, ff.paused_left = 0;  // scalar fast-forward's stretch goes on
}

// A whole period has been skipped since the last boundary: did its scalar work repeat the
// template's (counts of basic blocks, local reads and GM accesses)? If not, the cycles the
// difference costs at most (a GM access at a line fill) go to the bracket. (No watchdog stop here:
// the watchdog looks every 4096 API calls, so a full simulation of a long scalar block runs past
// watchdog_cycles unchecked, and stopping every period there widened GroupNorm's bracket to 74 %.)
bool period_repeats(int64_t P) {
    LoopState& L = g_loop;
    const Snap &a = L.tmpl[0], &b = L.tmpl[size_t(P)];
    const Snap now = take();
    auto diff = [](uint64_t x0, uint64_t x1, uint64_t y0, uint64_t y1) {
        return std::fabs(double(x1 - x0) - double(y1 - y0));
    };
    const double dbb = diff(L.mark.bb, now.bb, a.bb, b.bb), drd = diff(L.mark.reads, now.reads, a.reads, b.reads),
                 dgs = diff(L.mark.gs, now.gs, a.gs, b.gs);
    L.mark = now;
    if (dbb + drd + dgs > 0) {
        L.spread_extra += dbb * scalar.block_cycles + drd * hot.scalar_ub_cycles + dgs * hot.scalar_gm_cycles;
        note_fallback("a skipped period's scalar work (basic blocks, scalar reads of local memory, scalar GM "
                      "accesses) differed from the periods before it (a trip count or branch that depends on data): "
                      "the skip stopped there");
        return false;
    }
    return true;
}

}  // namespace

namespace {
// The call site of the last event: the instructions it issues are not events of their own.
const char* g_event_file = nullptr;
uint32_t g_event_line = 0, g_event_col = 0;
}  // namespace

bool loop_issue(Pipe p, double occ, double lat, const char* api, const Loc& loc) {
    if (g_loop.launch_off || !hot.in_launch) return false;
    if (loc.file_name() == g_event_file && loc.line() == g_event_line && loc.column() == g_event_col) return false;
    uint64_t o, l;
    std::memcpy(&o, &occ, 8);
    std::memcpy(&l, &lat, 8);
    return loop_skip_slow(loc, loop_key(uintptr_t(api), uint64_t(p), o, l), 0);
}

bool loop_skip_slow(const Loc& loc, uint64_t key, uint8_t flags) {
    LoopState& L = g_loop;
    if (L.launch_off || !hot.in_launch) return false;
    g_event_file = loc.file_name(), g_event_line = loc.line(), g_event_col = loc.column();
    const BlockState& b = rt.blk;
    uint64_t k = loop_key(key, uintptr_t(loc.file_name()), loc.line(), loc.column(), b.mask_lo, b.mask_hi,
                          b.mask_count, b.counter_mode, b.atomic, loop_key(b.fm_h[0], b.fm_w[0], b.fm_h[1], b.fm_w[1]),
                          b.load3d_pad, b.deq_scale);
    if (L.skipping) {
        // (a window of scalar fast-forward that comes due stops the skip: it is measured here, in the loop)
        if (k == L.tmpl_key[size_t(L.m % L.P)] && (L.m == 0 || L.m % L.P != 0 || period_repeats(L.P)) &&
            !(L.period_gm && ff_window_open())) {
            // the skipped event enters the history with its predicted state
            int64_t m = L.m++;
            Snap x = predicted(L.P, m);
            x.reads = hot.local_reads, x.bb = scalar.blocks, x.gs = scalar_gm_ops();  // counts: actual
            int64_t P = L.P;
            record_event(k, flags, x);
            L.P = P;  // the period being skipped stays the candidate
            L.s_at_last = hot.s_time;
            return !g_loop_timing_only;  // with scalar reads: the call does its work, untimed
        }
        stop_skip();
    }
    record_event(k, flags, take());
    int64_t i = L.n - 1, P = L.P;
    if (!L.eligible || P == 0 || L.match < 2 * P + 1) return false;
    // (periods that access GM as scalars wait for a window of scalar fast-forward to be measured)
    if (at(i).gs != at(i - P).gs && ff_window_open()) return false;
    // (a variable step's period is being sampled: its cost is the detailed one; the skip's
    // predictions of its tiles came out 16 % dearer, and every jump carried them)
    if (g_holding != nullptr) return false;
    for (int64_t j = i - P; j < i; ++j)
        if (L.flag[size_t(j % kWin)] & 1) {
            note_fallback("a GM store under an atomic mode inside the loop: it accumulates across iterations");
            L.eligible = false;
            return false;
        }
    if (auto c = g_rewrite_event.find(hot.core_uid); c != g_rewrite_event.end() && c->second >= i - 3 * P) {
        // the loop stores over what the block stored before: a skipped iteration's store would
        // leave a stale value in a checked span
        note_fallback("GM stores inside the loop overwrite what the block stored before (a masking or accumulating "
                      "pass): skipped iterations would leave checked output stale");
        return false;
    }
    double spread = 0;
    const Unsteady why = steady(i, P, &spread);
    if (why == READS_WORK_DIFFERS)
        note_fallback("scalar reads of local memory (GetValue, operator(), GetReduce*Spr) inside the loop, and its "
                      "periods' scalar work differs: the work depends on data");
    if (why != STEADY) return false;
    // skip from event i on; the history's event i is the first skipped one
    L.tmpl.assign(size_t(P + 1), Snap{});
    L.tmpl_key.assign(size_t(P), 0);
    for (int64_t j = 0; j <= P; ++j) L.tmpl[size_t(j)] = at(i - P + j);
    for (int64_t j = 0; j < P; ++j) L.tmpl_key[size_t(j)] = key_at(i - P + j);
    L.n = i;
    L.t0 = i;
    L.m = 0;
    L.skipping = true;
    g_loop_skipping = true;
    ++g_skip_starts;
    L.period_gm = at(i).gs != at(i - P).gs;
    ff_flush();
    ff.paused_left = ff.left, ff.left = 0;  // its accessors take loop skipping's bounds-only path
    ff.skipping = true, ff_refresh_bufs();    // (inline in GetValue/SetValue: ff_gm)
    g_loop_timing_only = at(i).reads != at(i - P).reads ||
                         (g_loop_block0_keeps && hot.block_idx == 0 && g_block_checked_stores == 0);
    L.mark = at(i);
    L.spread_extra = 0;
    if (!L.skipped && rt.cur) ++rt.cur->loop_sampled_blocks;
    L.skipped = true;
    if (!g_loop_timing_only) {  // a timing-only skip did every call's work: its stores stay checked
        if (size_t(hot.core_uid) >= L.skipped_uid.size()) L.skipped_uid.resize(size_t(hot.core_uid) + 1, 0);
        L.skipped_uid[size_t(hot.core_uid)] = 1;
    }
    L.spread_pending = spread;
    return loop_skip_slow(loc, key, flags);  // the first skipped event
}

namespace {
uint64_t g_block_epoch = 0;            // NativeLoop::epoch: one per simulated block
constexpr uint32_t kSiteMisses = 256;  // iterations that could not jump before a loop stops recording
constexpr __int128 kKeep = 2;          // iterations before the loop's end that always run
constexpr __int128 kMinLeft = 16;      // iterations left from which an instance is sampled
constexpr __int128 kSamples = 24;      // sampled iterations an instance aims at
// Where the samples' lengths spread, up to kDenser times as many: the gap shrinks until the
// instance's extrapolated length has a relative standard error of about kRelError (a loop whose
// boundary rows cost three times the interior's, 1 in 16 of them, put MaxPooling3d's 24-sample
// estimate 7 % off every iteration's)
constexpr __int128 kDenser = 4;
constexpr double kRelError = 0.01;
// A for loop's instance whose iterations are light (fewer than kLightBlocks basic blocks of kernel code
// and no pipe instruction each) and whose trip would leave a mean gap under kLightGap iterations runs as it is: a jump of
// one or two passes less work than a sample's bookkeeping costs the host (an output-channel loop of
// 64 iterations, one GetValue and one SetValue each: 40 % of a transposed convolution's host time)
constexpr uint64_t kLightBlocks = 32;
constexpr __int128 kLightGap = 4;
// A counted loop whose iterations each run at least kHeavyBlocks basic blocks of kernel code may stop
// an API-call skip that began inside its running iteration though it makes no scalar GM access: such
// a skip passes only the calls, and the loop's scalar work (a pointwise convolution's 64 x 16 x 16
// products per task, read back with GetValue) ran in every iteration of every sampled block
constexpr uint64_t kHeavyBlocks = 4096;
// A while loop whose periods hold an inner loop's jumps samples its periods too only where the
// periods cost the same: kUniformPeriods of them run first (the inner loops sampling), and their
// lengths must lie within kUniformTol of each other; a sampled period outside that band (times
// 1 -+ kUniformTol) turns the loop off from there on. A scalar matmul's tile loop of four dot
// products of 8192 terms each ran every tile (22 k per block) with its dot loops sampled one by
// one; a strided transposed convolution's tiles, whose rows alternate between no taps and three,
// differ by far more than the band.
constexpr int kUniformPeriods = 32;
constexpr double kUniformTol = 0.02;

// Iterations left in a counted loop, the one starting at `i` included (0: none or not computable).
__int128 iterations_left(__int128 i, __int128 b, __int128 s, int cmp) {
    switch (cmp) {
    case 0: return s > 0 && b > i ? (b - i + s - 1) / s : 0;
    case 1: return s > 0 && b >= i ? (b - i) / s + 1 : 0;
    case 2: return s < 0 && i > b ? (i - b - s - 1) / -s : 0;
    case 3: return s < 0 && i >= b ? (i - b) / -s + 1 : 0;
    case 4: return s == 1 && b > i ? b - i : s == -1 && i > b ? i - b : 0;
    default: return 0;
    }
}

// One hooked loop's state in the running block.
struct NativeLoop {
    uint64_t epoch = 0;
    __int128 next = 0;  // the variable's value at the next iteration of the same instance
    // (a variable step) the instance's bound, the variable at the last call, the steps recorded and,
    // once they repeat, their period (steps), its distance and the position in it
    __int128 bound = 0, vlast = 0;
    std::vector<long long> steps;
    size_t period = 0, pos = 0;
    long long period_dist = 0;
    uint64_t gs_last = 0;  // scalar GM accesses at the last call while recording
    uint64_t jumps_seen = 0;  // g_native_jumps at its last period's start
    struct Owed {
        Snap a, b;    // the sample's state at its start and end
        __int128 k;   // the iterations its jump passes
    };
    std::vector<Owed> owed;  // (a variable step) jumps waiting for a period where one may happen
    int n = 0;          // iterations of the instance seen from their start (up to 3 kept)
    Snap last{};        // the state at the start of the running iteration
    uint32_t misses = 0;
    bool off = false;
    // the running instance's sample (see loop_iter)
    bool sampling = false;
    bool commit = false;                     // the running sample is followed by a jump
    __int128 gap = 0;                        // mean iterations passed after a sampled one
    __int128 span = 0;                       // iterations of the instance from its first sample on
    uint64_t rng = 0;
    int64_t m = 0;                           // sampled iterations
    double sum = 0, sum2 = 0, len_max = 0;   // of their lengths (cycles)
    double passed = 0, passed2 = 0;          // iterations passed, and the sum of each jump's square
    // (VALUES_ONLY loops) the rewrite mark at the running iteration's start, and whether a rewrite
    // carried data from one iteration to another
    RewriteMark mark{};
    bool marked = false, carried = false;
    bool samples = false;     // it qualified for sampling through scalar GM accesses, in this block
    uint64_t skip_seen = 0;   // g_skip_starts at its last iteration's start
    __int128 trip = 0;        // iterations left at the instance's first recorded iteration
    // (a counted loop) the variable's value at the next iteration and the basic blocks run at the last
    // call, whatever the call did, and whether an iteration ran kHeavyBlocks or more
    __int128 seen_next = 0;
    uint64_t bb_seen = 0;
    bool heavy = false;
    // (a variable step whose periods hold an inner loop's jumps) the periods' lengths seen so far,
    // and whether they agreed (kUniformPeriods, kUniformTol)
    int uniform_n = 0;
    double uniform_lo = 0, uniform_hi = 0;
    bool uniform = false;
};
constexpr size_t kMaxMarks = 32;  // marked loops per block; a loop beyond them counts as carrying
constexpr size_t kMinSteps = 64;     // a variable step's steps recorded before a period is taken
constexpr size_t kStepWindow = 256;  // and the most recorded looking for one

std::vector<NativeLoop*> g_native_touched;  // loops with a sample to close at the block's end

// An iteration's length: its scalar time, or a pipe's busy time in it where that is longer (a loop
// bound by the pipe). Not a pipe's done times: those of a copy at the top of each row are a row
// apart, so their difference spans the end of one row and the start of the next, and taken as the
// length (the longest clock) the dearer of two neighbouring rows stood for every row a jump passed (a
// transposed convolution whose rows alternate between one and two taps came out 34 % over).
double iteration_length(const Snap& a, const Snap& b) {
    double len = b.s - a.s;
    for (int p = 0; p < P_COUNT; ++p) len = std::max(len, b.busy[p] - a.busy[p]);
    return std::max(0.0, len);
}

// The instance's sample ends: its bracket joins the block's.
void close_sample(NativeLoop& N) {
    if (N.m > 0 && N.passed > 0) {
        const double mean = N.sum / double(N.m);
        const double var = N.m >= 2 ? std::max(0.0, (N.sum2 - double(N.m) * mean * mean) / double(N.m - 1)) : 0.0;
        g_loop.spread += 3.0 * std::sqrt(var * N.passed2) + N.len_max;
    }
    N.sampling = false;
    N.owed.clear();
    if (g_holding == &N) g_holding = nullptr;
    N.m = 0, N.sum = N.sum2 = N.len_max = N.passed = N.passed2 = 0;
}

// The shortest period P of the recorded steps' latest stretch (the last max(kMinSteps, 2P) steps,
// each equal to the one P before it; kMinSteps recorded at least): sets the loop's period, its
// distance and the position in it (the next call starts a period). False where there is none yet.
// The latest stretch, not every step since the instance began: a block that starts part-way along a
// row has a first row of other tiles, and held to its whole history it never found a period
// (Conv2dSubtractSubtractMish's blocks but the first ran every tile).
bool find_period(NativeLoop& N) {
    const size_t n = N.steps.size();
    if (n < kMinSteps) return false;
    for (size_t P = 1; 2 * P <= n; ++P) {
        const size_t from = n - std::max(kMinSteps, 2 * P);
        bool same = true;
        for (size_t j = from + P; j < n && same; ++j) same = N.steps[j] == N.steps[j - P];
        if (!same) continue;
        N.period = P, N.pos = 0;
        N.period_dist = 0;
        for (size_t j = n - P; j < n; ++j) N.period_dist += N.steps[j];
        N.steps.erase(N.steps.begin(), N.steps.begin() + long(n - P));  // the pattern, from the step the next call records on
        return true;
    }
    return false;
}

// A step off the period: the instance's recording starts over (its sample, if any, ends).
void on_pattern_break(NativeLoop& N) {
    if (N.sampling) close_sample(N);
    if (g_periodic == &N) g_periodic = nullptr;
    N.steps.clear(), N.period = 0, N.pos = 0, N.n = 0;
}

// The loop stops sampling for the rest of the block (its running sample, if any, joins the bracket).
void turn_off(NativeLoop& N) {
    if (N.sampling) close_sample(N);
    if (g_periodic == &N) g_periodic = nullptr;
    N.off = true;
}

// Moves the block's state forward by `k` iterations that each change it as a -> b did.
void pass_iterations(const Snap& a, const Snap& b, __int128 k) {
    // Every clock the sample moved (scalar time, a pipe's free and done times, queue and event
    // times) moves by J periods of the sample's length: in a steady loop each advances by the
    // period. Moved each by its own change, a pipe the sample left behind the scalar time (or ahead
    // of it) drifted further at every jump, and its catching up made the next sample longer still:
    // a loop of DataCopy, PipeBarrier and GetValue ran past the watchdog. A clock the sample did not
    // move (a pipe the loop does not use) stays.
    const double J = double(k), ds = iteration_length(a, b);
    BlockState& bs = rt.blk;
    // what the sample's own estimates (its inner loops' samples, its API-call skips) may be off by is
    // off by as much in every iteration passed: their bracket counts once per iteration (counted
    // once, a task loop over sampled channel loops held its full simulation 0.002 % outside)
    g_loop.spread += J * std::max(0.0, b.spread - a.spread);
    for (int p = 0; p < P_COUNT; ++p) {
        if (b.fr[p] != a.fr[p] || b.dn[p] != a.dn[p]) bs.free_[p] += J * ds, bs.done_[p] += J * ds;
        bs.busy[p] += J * (b.busy[p] - a.busy[p]);
    }
    if (b.s != a.s) hot.s_time += J * ds;
    // (the passed iterations' scalar GM accesses, all fast in a stretch, join fast-forward's bracket)
    if (b.ffr != a.ffr || b.ffw != a.ffw) ff_jumped(uint64_t(k) * (b.ffr - a.ffr), uint64_t(k) * (b.ffw - a.ffw));
    if (rt.cur) {
        rt.cur->gm_read += uint64_t(k) * (b.gr - a.gr);
        rt.cur->gm_write += uint64_t(k) * (b.gw - a.gw);
        rt.cur->loop_periods_skipped += uint64_t(k);
        ++rt.cur->loop_jumps;
        ++g_native_jumps;
        if (!g_loop.skipped) ++rt.cur->loop_sampled_blocks;
    }
    for (Queue& q : bs.queues)
        for (Slot& sl : q.slots) sl.ready += J * ds, sl.freed += J * ds;
    for (auto& byte_code : bs.events)
        for (EventQ& e : byte_code)
            for (double& t : e.times) t += J * ds;
    // the API calls' history holds the times before the jump: a period across it would stand for
    // the passed iterations' time again (a loop of DataCopy and GetValue ran into the watchdog)
    g_loop.n = g_loop.P = g_loop.match = 0;
    g_loop.last.clear();
    g_loop.skipped = true;
    if (size_t(hot.core_uid) >= g_loop.skipped_uid.size()) g_loop.skipped_uid.resize(size_t(hot.core_uid) + 1, 0);
    g_loop.skipped_uid[size_t(hot.core_uid)] = 1;
}
}  // namespace

// A kernel's own counted loop (base.h, KGSIM_LOOP_ITER; called at the start of every iteration but
// the first). Under loop sampling the loop is sampled, not run: from an instance's fourth iteration
// on (the first ones run as they are), while at least kMinLeft iterations are left, each iteration
// that runs is a sample, and after it the loop's
// variable moves forward past a number of iterations drawn uniformly from [gap/2, 3 gap/2) (gap: the
// iterations left over kSamples), never closer than kKeep to the end; the iterations passed change
// the block's state as the sample just run did (scalar and pipe times, busy time, GM bytes, queue
// and event times with the scalar time), and the last kKeep run. Drawn, not fixed, jumps cannot fall
// into step with a pattern of the loop's (a boundary row every 64), so every iteration is as likely
// to be sampled and the estimate is unbiased whatever the iterations cost, data-dependent work
// included. Nested loops compose (an inner loop's estimate is part of its outer loop's samples).
// Bracket, per instance: three standard deviations of the samples' lengths times the root of the
// sum of the jumps' squares, plus the longest sample (the data cache, L2 and port models see the
// iterations after a jump start from where the last sample left them).
// Not sampled: an instance whose first iterations made no scalar GM accesses (a loop of API calls is
// loop sampling's own) or read local memory as scalars (what they read may steer the work: loop
// sampling keeps such work and skips its timing only), unless the hook says the loop's reads are
// values only (cmp | 8: loop_hooks.py found that no read value reaches a condition, a subscript, a
// call's argument or state outside the loop's functions, so a stale read after a jump changes
// values, never work; its local reads then count as the scalar work that qualifies it); while an
// API-call skip that began outside the running iteration runs (one that began inside it is stopped:
// see the skip's comment below). No jump after a sample with scalar GM accesses that started outside a fast
// stretch of scalar fast-forward (passed iterations leave the
// data-cache model without the lines they would have touched; in a stretch accesses cost the
// windows' mean, and the windows run every iteration; the passed accesses count toward the
// stretch's length, so windows keep coming), before the launch stored anything the check sees
// (every store after a jump is out of the check, the block's local data being stale: the first
// checked stores come from a block that jumped nowhere before them; a later block may jump in its
// statistics pass, where waiting for its own first store ran a matmul's first output row in full),
// or where it rewrote what it stored.
namespace {
long long g_last_jump = 0;  // iterations the last loop_iter call passed (loop_jumped)
}  // namespace
long long loop_jumped() noexcept { return g_last_jump; }

long long loop_iter(LoopSite* site, long long i, long long bound, long long step_in, int cmp, bool u64) noexcept {
    g_last_jump = 0;
    const bool values_only = (cmp & 8) != 0;  // loop_hooks.VALUES_ONLY: its local reads steer no work
    // loop_hooks.VARIABLE_STEP: a while loop's hook, `step` the iteration's own (a tile that shrinks
    // at a row's end), so the next iteration's value is not known ahead
    const bool variable_step = (cmp & 16) != 0;
    cmp &= 7;
    LoopState& L = g_loop;
    if (!g_loop_on || L.launch_off || !hot.in_launch || !L.eligible) return i;
    if (site->state == nullptr) site->state = new NativeLoop{};
    NativeLoop& N = *static_cast<NativeLoop*>(site->state);
    if (N.epoch != g_block_epoch)
        N = NativeLoop{}, N.epoch = g_block_epoch, N.rng = 0x9E3779B97F4A7C15ull ^ uint64_t(hot.core_uid + 1);
    if (N.off) return i;
    if (values_only) {  // the iteration starting now: what was stored before it
        if (!N.marked) {
            N.marked = true, N.mark.carried = &N.carried;
            if (g_marks.size() < kMaxMarks) g_marks.push_back(&N.mark); else N.carried = true;
        }
        const Written* newest = g_written.empty() ? nullptr : &g_written.back();
        N.mark.seq = newest ? newest->seq : 0;
        N.mark.lo = newest ? newest->lo : 0, N.mark.hi = newest ? newest->hi : 0;
    }
    // a rewrite of what the block stored before: for a VALUES_ONLY loop, one that crossed its
    // iterations; for any other, any rewrite in the block
    const auto rewrites = [&] { return values_only ? N.carried : g_rewrite_event.count(hot.core_uid) > 0; };
    const bool rewrote = rewrites();
    const __int128 I = u64 ? __int128((unsigned long long)i) : __int128(i);
    const __int128 B = u64 ? __int128((unsigned long long)bound) : __int128(bound);
    // A variable step (a while loop's tile that shrinks at each row's end, its length computed from
    // the position alone: loop_hooks.py) is sampled a period of steps at a time. A jump of whole
    // iterations by the last step would land off the tiles the loop visits (a row's tiles started
    // part-way along it, its tail a different length: 3.7 % under for tiles of 16 over rows of 100):
    // the instance's steps are recorded until they repeat with a period of P steps over D (at least
    // kMinSteps of them, two periods), and from then on only every P-th call samples, with D as the
    // step: a sample is a whole period and a jump passes whole periods, landing where the loop would
    // be. A step off the pattern (the block's last tile) starts the recording over; no period within
    // kStepWindow steps: the instance is left alone.
    long long step = step_in;
    if (!variable_step) {
        if (I == N.seen_next && scalar.blocks - N.bb_seen >= kHeavyBlocks) N.heavy = true;
        N.seen_next = I + step_in, N.bb_seen = scalar.blocks;
    }
    if (variable_step) {
        const bool on = !N.steps.empty() && B == N.bound && (step_in > 0 ? I > N.vlast : I < N.vlast);
        N.vlast = I, N.bound = B;
        if (on && N.period > 0 && step_in != N.steps[N.pos]) on_pattern_break(N);
        if (!on) {
            if (N.sampling) close_sample(N);
            if (g_periodic == &N) g_periodic = nullptr;
            N.steps.clear(), N.period = 0, N.n = 0;
        }
        if (N.period == 0) {
            // (while the steps are recorded an API-call skip may run the loop's calls: whether its
            // iterations access GM as scalars, which lets the loop stop that skip, is seen here)
            const uint64_t gs = scalar_gm_ops();
            if (on && gs != N.gs_last) N.samples = true;
            N.gs_last = gs;
            if (N.steps.size() >= kStepWindow) return i;
            N.steps.push_back(step_in);
            if (!find_period(N)) return i;
            g_periodic = &N;
        } else {
            N.pos = (N.pos + 1) % N.period;
            if (N.pos != 0) return i;  // inside a period
        }
        step = N.period_dist;
    }
    // the running instance goes on: the variable is where the last step put it (a variable step:
    // it moved on towards the same bound)
    const auto goes_on = [&] {
        if (!variable_step) return N.n > 0 && I == N.next;
        return N.n > 0 && (step > 0 ? I > N.next : I < N.next);
    };
    // may the block pass iterations now? not before the launch stored anything the check sees (every
    // store after a jump is out of the check), unless an API-call skip already left its stores out; not
    // where it rewrote what it stored (passed iterations would leave checked bytes stale)
    const auto may_pass = [&] {
        return !(g_track_writes && g_launch_checked_stores == 0 && !loop_block_skipped()) && !rewrites();
    };
    if (L.skipping) {
        // An API-call skip runs: one mechanism at a time. One that began inside this loop's running
        // iteration skips this loop's own iterations' calls, but runs every iteration's scalar code (a
        // convolution's 4608 scalar GM reads per output): a loop that samples natively passes them
        // instead, so it stops the skip (the state becomes what the skip predicts) and goes on. A skip
        // it runs inside (an outer loop's) goes on, and this instance starts over; so does one in a loop
        // whose iterations access no GM as scalars (InstanceNorm's plane loop of tile loops, its local
        // reads values only: the skip runs little of its own, and plane jumps from the stopped skip's
        // predictions came out 31 % under its full simulation), unless its iterations are heavy
        // (kHeavyBlocks: a task loop of scalar products, whose every task the skip ran). So does one this loop
        // could not jump from yet (the block has stored nothing the check sees, or rewrote what it
        // stored): stopped, it would only be found again a few iterations on, at every iteration.
        const bool continues = variable_step || goes_on() || (N.heavy && N.n == 0 && !N.sampling);
        const bool own = (N.samples || (N.heavy && values_only)) && continues && N.skip_seen != g_skip_starts && may_pass();
        if (!own) {
            if (N.sampling) close_sample(N);
            N.n = 0;
            N.skip_seen = g_skip_starts;
            return i;
        }
        stop_skip();
        g_loop.n = g_loop.P = g_loop.match = 0;  // the skip's periods are this loop's iterations: found again
        g_loop.last.clear();
    }
    N.skip_seen = g_skip_starts;
    if (N.n > 0 && !goes_on()) {  // another instance of the loop
        if (N.sampling) close_sample(N);
        N.n = 0;
    }
    // an instance too short ever to be sampled (a pooling window's three taps): nothing to record;
    // after kSiteMisses of them the loop stops recording (its state snapshots cost the host more
    // than the loop's own work)
    if (!N.sampling && N.n == 0 && iterations_left(I, B, step, cmp) + 1 < kMinLeft + 3) {
        if (++N.misses >= kSiteMisses) N.off = true;
        return i;
    }
    N.next = variable_step ? I : I + step;  // (a variable step: the value the next one must pass)
    ff_flush();  // the state must hold the fast accesses' cycles, as an API call's does
    const Snap x = take();
    const Snap prev = N.last;
    const bool had_iteration = N.n > 0;
    N.last = x;
    N.n = std::min(N.n + 1, 3);
    // (a variable step's period in which an inner loop jumped: the inner loop samples it, and this
    // one runs as it is. Both sampling, a strided transposed convolution's tile loop over its
    // outputs' loop came out 66 % over its full simulation, 12 % with every sample's jump kept
    // (owed, below) and the inner loops held still while a period is sampled: its tiles, of no taps
    // in one row and three in the next, come in long runs of each, which a few dozen samples of a
    // 1-in-3 chance each do not average out)
    const uint64_t inner_jumps = g_native_jumps - N.jumps_seen;
    N.jumps_seen = g_native_jumps;
    if (variable_step && had_iteration && (inner_jumps > 0 || N.uniform_n > 0) && !N.uniform) {
        // (the periods so far: the inner loops' jumps count in each, and a period without one is as
        // much a period of the loop)
        const double len = iteration_length(prev, x);
        N.uniform_lo = N.uniform_n == 0 ? len : std::min(N.uniform_lo, len);
        N.uniform_hi = N.uniform_n == 0 ? len : std::max(N.uniform_hi, len);
        ++N.uniform_n;
        const bool agree = N.uniform_hi - N.uniform_lo <= kUniformTol * N.uniform_lo;
        if (agree && N.uniform_n < kUniformPeriods) return i;
        if (!agree) {
            turn_off(N);
            return i;
        }
        N.uniform = true;  // from the next period on it samples as a loop without inner jumps
        return i;
    }
    if (variable_step && N.uniform && N.sampling && had_iteration) {
        const double len = iteration_length(prev, x);
        if (len < N.uniform_lo * (1 - kUniformTol) || len > N.uniform_hi * (1 + kUniformTol)) {
            ++N.m, N.sum += len, N.sum2 += len * len, N.len_max = std::max(N.len_max, len);  // it joins the bracket
            turn_off(N);
            return i;
        }
    }
    if (!had_iteration) {
        N.trip = iterations_left(I, B, step, cmp);
        return i;
    }
    if (rewrote) {  // no jump in it: passed iterations would leave checked bytes stale
        if (N.sampling) close_sample(N);
        N.off = true;
        return i;
    }
    const __int128 left = iterations_left(I, B, step, cmp);
    // may the iteration starting now be followed by a jump? decided before it runs, never from what
    // it costs: a jump that depended on the sample (a stretch it exhausted, a cap by its accesses)
    // would pass more iterations after cheap samples than after dear ones (a transposed convolution
    // whose every fourth row does the work: 0.18x)
    // (the iteration just run made scalar GM accesses: then a jump waits for a fast stretch)
    const bool scalar_gm = x.gs != prev.gs;
    const auto may_jump = [&] { return (ff.left > 0 || !scalar_gm) && may_pass(); };
    if (!N.sampling) {
        // (the first iterations of an instance run as they are; the loop is sampled only where they
        // did scalar GM work without scalar reads of local memory)
        // (a VALUES_ONLY loop's scalar reads of local memory are such work too: a loop of DataCopy
        // and GetValue that loop sampling would only skip the timing of)
        const bool local_reads = x.reads != prev.reads;
        const bool gm_work = (scalar_gm || (values_only && local_reads)) && (values_only || !local_reads);
        if (!gm_work) {
            if (++N.misses >= kSiteMisses) N.off = true;
            return i;
        }
        N.samples = N.samples || scalar_gm;
        if (N.n < 3 || left < kMinLeft) return i;
        bool issued = false;  // (did the iteration that ended keep a pipe busy: an API call's work)
        for (int p = 0; p < P_COUNT; ++p) issued = issued || x.busy[p] != prev.busy[p];
        // (nor does one of such a trip inside a while loop that samples whole periods of its steps:
        // the outer loop's jumps pass far more; sampled too, its jumps would turn the outer loop off,
        // and a scalar convolution's tile loop then ran every tile's channel loop, 30 of 64 channels)
        if (!variable_step && N.trip < kLightGap * kSamples &&
            ((g_periodic != nullptr && !g_periodic->off) || (x.bb - prev.bb < kLightBlocks && !issued))) {
            if (++N.misses >= kSiteMisses) N.off = true;
            return i;
        }
        // (an instance that samples, or waits to, counts as one that jumped for an outer while loop:
        // one waiting for a window of scalar fast-forward has not jumped yet, but will)
        if (!variable_step) ++g_native_jumps;
        if (!may_jump()) return i;
        N.sampling = true, N.commit = true;
        if (variable_step) g_holding = &N;
        N.gap = std::max<__int128>(2, left / kSamples);
        N.span = left;
        const double len = iteration_length(prev, x);  // the second iteration joins the spread's estimate
        N.m = 1, N.sum = len, N.sum2 = len * len, N.len_max = len;
        g_native_touched.push_back(&N);
        return i;  // this iteration is the first sample
    }
    // the iteration that ended was a sample: every sample counts, whatever it cost
    const double len = iteration_length(prev, x);
    ++N.m, N.sum += len, N.sum2 += len * len, N.len_max = std::max(N.len_max, len);
    if (left <= kKeep) {
        close_sample(N);
        return i;
    }
    __int128 jump = 0;
    if (N.commit) {
        N.rng ^= N.rng << 13, N.rng ^= N.rng >> 7, N.rng ^= N.rng << 17;  // xorshift64
        const uint64_t g = uint64_t(N.gap);
        jump = std::min<__int128>(__int128(g / 2 + N.rng % g), left - kKeep);
    }
    // the next jump's mean gap, from the samples so far: the jump after a sample never depends on it (a
    // spread of lengths c = sd / mean over a gap g of S iterations leaves c * sqrt(g / S) of error)
    if (N.m >= 4 && N.sum > 0) {
        const double mean = N.sum / double(N.m);
        const double var = std::max(0.0, (N.sum2 - double(N.m) * mean * mean) / double(N.m - 1));
        const double want = kRelError * kRelError * double(N.span) * mean * mean / std::max(var, 1e-300);
        const __int128 lo = std::max<__int128>(2, N.span / (kSamples * kDenser)), hi = std::max<__int128>(2, N.span / kSamples);
        N.gap = want >= double(hi) ? hi : want <= double(lo) ? lo : __int128(want);
    }
    if (variable_step) {
        // Every sample of a variable step's loop is followed by its jump: one that may not happen now
        // (a window of scalar fast-forward is open) is owed, and passed with its own sample's change
        // at the next period where a jump may happen. Dropped, the jumps that waited for a window
        // were those after cheap periods: a strided transposed convolution's tiles in rows of no
        // taps (few scalar accesses, so a window stays open for many of them) went without jumps,
        // those in rows of three taps had them, and its tile loop came out 66 % over
        if (jump >= 1) N.owed.push_back({prev, x, jump});
        jump = 0;
        if (may_jump()) {
            for (const NativeLoop::Owed& o : N.owed) {
                const __int128 k = std::min<__int128>(o.k, left - kKeep - jump);
                if (k < 1) break;
                pass_iterations(o.a, o.b, k);
                N.passed += double(k), N.passed2 += double(k) * double(k);
                jump += k;
            }
            N.owed.clear();
        }
        if (jump >= 1) N.misses = 0, N.next = I + jump * step;
    } else if (jump >= 1) {
        pass_iterations(prev, x, jump);
        N.passed += double(jump), N.passed2 += double(jump) * double(jump);
        N.misses = 0;
        N.next = I + jump * step + step;
    }
    N.commit = variable_step || may_jump();
    N.jumps_seen = g_native_jumps;  // (its own jumps are no inner loop's)
    N.last = take();  // the next sample starts here
    N.seen_next = I + jump * step + step;
    g_last_jump = (long long)jump;
    return (long long)(I + jump * step);
}

void loop_launch_begin() {
    g_launch_checked_stores = 0;
    g_loop.launch_off = false;
    g_loop.skipped_uid.clear();
}

void loop_block_begin() {
    LoopState& L = g_loop;
    L.eligible = g_loop_on && (hot.block_idx != 0 || g_loop_block0);  // mode 1: block 0 in full, all checked
    ++g_block_epoch;
    g_native_touched.clear();
    g_marks.clear();
    g_holding = nullptr;
    g_periodic = nullptr;
    g_block_checked_stores = 0;
    L.skipping = L.skipped = false;
    g_loop_skipping = g_loop_timing_only = false;
    ff.skipping = false;
    L.n = L.P = L.match = L.t0 = L.m = 0;
    L.spread = L.spread_pending = L.spread_extra = 0;
    L.last.clear();
    forget_rewrites(hot.core_uid);
}

double loop_block_end() {
    LoopState& L = g_loop;
    if (L.skipping) stop_skip();
    for (NativeLoop* N : g_native_touched)
        if (N->sampling && N->epoch == g_block_epoch) close_sample(*N);
    g_native_touched.clear();
    double s = L.spread;
    L.eligible = L.skipped = false;
    return s;
}

void loop_blocks_interact(const Loc& loc) {
    LoopState& L = g_loop;
    if (!g_loop_on || L.launch_off) return;
    if (L.skipped)
        fault("unsupported_api", loc,
              "loop sampling skipped iterations of block %lld, which then waits for or signals another block (SyncAll, "
              "CrossCoreSetFlag/WaitFlag, IBSet/IBWait, GroupBarrier): blocks that wait for each other cannot be loop "
              "sampled; simulate with loops off (sampled_simulation(loops=False), or sampled=False)",
              (long long)hot.block_idx);
    L.launch_off = true;
    L.eligible = false;
    note_fallback("blocks wait for each other (SyncAll, cross-core flags, IBWait or GroupBarrier): loop sampling is off "
                  "for the launch");
}

namespace {
int64_t loop_events() { return g_loop.n; }
bool block_skipped() {
    const LoopState& L = g_loop;
    return size_t(hot.core_uid) < L.skipped_uid.size() && L.skipped_uid[size_t(hot.core_uid)];
}
}  // namespace

bool loop_block_skipped() { return block_skipped(); }

// ---- lazy GM regions -------------------------------------------------------------------------
namespace {

constexpr size_t kChunk = size_t(64) << 10;
constexpr int kMaxRegions = 256;
constexpr size_t kRing = size_t(1) << 20;  // clean chunks in fill order, for eviction

enum Fill : int { FILL_ZERO = 0, FILL_NORMAL = 1, FILL_UNIFORM = 2, FILL_RANDINT = 3, FILL_POISON = 4 };
// dtype codes shared with sampling.py
enum Dtype : int { D_F32 = 0, D_F16, D_BF16, D_F64, D_I8, D_U8, D_I16, D_I32, D_I64, D_BOOL };
enum ChunkState : uint8_t { C_EMPTY = 0, C_CLEAN = 1, C_DIRTY = 2 };

struct Region {
    uintptr_t base = 0;
    size_t size = 0, chunks = 0;
    int fill = 0, dtype = 0;
    uint64_t seed = 0;
    double a = 0, b = 1;
    uint8_t* state = nullptr;
    uint8_t* in_file = nullptr;  // 1: the spill file holds the chunk's content (whenever it is not dirty)
    uint64_t* file_blocks = nullptr;  // of a chunk in the file: its kSpillBlock blocks there (bit k: block k)
    uint64_t file_off = 0;       // the region's place in the spill file
    bool live = false;
};

Region g_regions[kMaxRegions];
uint64_t* g_ring = nullptr;  // (region << 40) | chunk
size_t g_ring_head = 0, g_ring_tail = 0;
uint64_t* g_dring = nullptr;  // chunks in the order they were dirtied, for spilling
size_t g_dring_head = 0, g_dring_tail = 0;
int g_spill_fd = -1;        // unlinked temporary file; -1: none could be made (written chunks stay)
uint64_t g_file_end = 0;    // spill-file bytes handed to regions (reset when no region is live)
size_t g_spilled = 0;       // bytes written to the spill file
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;
struct sigaction g_prev {};
bool g_installed = false;
size_t g_cap = size_t(2) << 30;
size_t g_resident = 0, g_peak = 0, g_faults = 0, g_evictions = 0;
// Clean (evictable) input bytes. The cap bounds all resident bytes, written ones included, but
// only clean chunks can go, and never below a quarter of the cap (nor the chunk just filled):
// evicting every input chunk as soon as it was filled, once the kernel had written more than the
// cap, made the faulting access re-fault forever (Softmax, Cumsum at published shapes).
size_t g_clean = 0;

size_t clean_target() {
    const size_t dirty = g_resident - g_clean;
    return std::max(g_cap / 4, g_cap > dirty ? g_cap - dirty : size_t(0));
}
// Written bytes kept resident before the oldest go to the spill file: with the clean floor of a
// quarter of the cap, all resident lazy bytes stay within the cap.
size_t dirty_limit() { return g_cap - g_cap / 4; }
double g_quantile[65537];  // standard normal quantiles at (i + 0.5) / 65537 ... see init_quantiles

uint64_t mix(uint64_t z) {  // splitmix64's finaliser
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Inverse normal CDF by bisection on erfc: done once, outside any signal handler.
void init_quantiles() {
    for (int i = 0; i <= 65536; ++i) {
        double p = (double(i) + 0.5) / 65537.0, lo = -9, hi = 9;
        for (int it = 0; it < 60; ++it) {
            double mid = 0.5 * (lo + hi);
            (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
        }
        g_quantile[i] = 0.5 * (lo + hi);
    }
}

uint64_t stream(const Region& r, uint64_t index) {  // splitmix64's stream for the region's seed
    return mix(r.seed * 0x2545F4914F6CDD1Dull + index * 0x9E3779B97F4A7C15ull);
}

size_t dtype_size(int d) {
    switch (d) {
        case D_F32: case D_I32: return 4;
        case D_F16: case D_BF16: case D_I16: return 2;
        case D_F64: case D_I64: return 8;
        default: return 1;
    }
}

uint16_t to_bf16(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if (x != x) return uint16_t(0x7FC0);
    return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);  // round to nearest even
}

// Store value(i) for the n elements of type `d` at p (element i of the chunk is first + i).
template <class V>
void store_all(int d, uint8_t* p, size_t n, uint64_t first, V value) {
    auto put = [&](auto* q, auto conv) {
        for (size_t i = 0; i < n; ++i) q[i] = conv(value(first + i));
    };
    switch (d) {
        case D_F32: put(reinterpret_cast<float*>(p), [](double v) { return float(v); }); break;
        case D_F64: put(reinterpret_cast<double*>(p), [](double v) { return v; }); break;
        case D_F16: put(reinterpret_cast<_Float16*>(p), [](double v) { return _Float16(float(v)); }); break;
        case D_BF16: put(reinterpret_cast<uint16_t*>(p), [](double v) { return to_bf16(float(v)); }); break;
        case D_I8: put(reinterpret_cast<int8_t*>(p), [](double v) { return int8_t(v); }); break;
        case D_U8: put(reinterpret_cast<uint8_t*>(p), [](double v) { return uint8_t(v); }); break;
        case D_I16: put(reinterpret_cast<int16_t*>(p), [](double v) { return int16_t(v); }); break;
        case D_I32: put(reinterpret_cast<int32_t*>(p), [](double v) { return int32_t(v); }); break;
        case D_I64: put(reinterpret_cast<int64_t*>(p), [](double v) { return int64_t(v); }); break;
        default: put(reinterpret_cast<uint8_t*>(p), [](double v) { return uint8_t(v != 0); }); break;
    }
}

// The F32 normal and uniform fills, the same values as store_all's, vectorised (the lazy inputs of a
// published-shape reduction fill 5 to 20 GiB, a third of its host time): the stream's index
// multiply and mix in 64-bit lanes, the quantile table by gathers; an AVX-512 clone where the host has
// it (3x on the normal fill, 5x on the uniform one, measured bit for bit against the scalar loop).
#define KGSIM_FILL_VECTOR __attribute__((optimize("O3"), target_clones("default", "arch=x86-64-v4")))
KGSIM_FILL_VECTOR void fill_normal_f32(float* __restrict q, size_t n, uint64_t first, uint64_t seed, double a,
                                       double b) {
    const uint64_t base = seed * 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t h = mix(base + (first + i) * 0x9E3779B97F4A7C15ull);
        const size_t k = size_t(h >> 48);
        const double f = double((h >> 32) & 0xFFFF) * (1.0 / 65536.0);
        q[i] = float(a + b * (g_quantile[k] + f * (g_quantile[k + 1] - g_quantile[k])));
    }
}
KGSIM_FILL_VECTOR void fill_uniform_f32(float* __restrict q, size_t n, uint64_t first, uint64_t seed, double a,
                                        double b) {
    const uint64_t base = seed * 0x2545F4914F6CDD1Dull;
    const double w = b - a;
    for (size_t i = 0; i < n; ++i)  // (h >> 11 < 2^53: a signed conversion, which vectorises, is exact)
        q[i] = float(a + w * double(int64_t(mix(base + (first + i) * 0x9E3779B97F4A7C15ull) >> 11)) * 0x1.0p-53);
}
// The randint fill of one-byte elements (bool masks, uint8 and int8 inputs) over a power-of-two span
// whose values the type holds: the same values as store_all's (h % span is h & (span - 1)), 16 lanes
// at a time (MaskedCumsum's bool mask: the scalar loop was half its host time). as_bool: 1 where the
// value is not zero.
KGSIM_FILL_VECTOR void fill_randint_u8(uint8_t* __restrict q, size_t n, uint64_t first, uint64_t seed, int64_t a,
                                       uint64_t mask, bool as_bool) {
    const uint64_t base = seed * 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < n; ++i) {
        const int64_t v = a + int64_t(mix(base + (first + i) * 0x9E3779B97F4A7C15ull) & mask);
        q[i] = as_bool ? uint8_t(v != 0) : uint8_t(v);
    }
}
#undef KGSIM_FILL_VECTOR

// Chunk c's fill, written to p (its own address, or a scratch buffer)
void fill_chunk(const Region& r, size_t c, uint8_t* p) {
    size_t es = dtype_size(r.dtype);
    size_t n = std::min(kChunk, r.size - c * kChunk) / es;
    uint64_t first = c * kChunk / es;
    switch (r.fill) {
        case FILL_ZERO: return;  // fresh anonymous pages read as zero
        case FILL_POISON: {
            bool fp = r.dtype <= D_F64;
            double v = fp ? __builtin_nan("")
                          : r.dtype == D_I8 ? INT8_MAX : r.dtype == D_U8 ? UINT8_MAX : r.dtype == D_I16 ? INT16_MAX
                          : r.dtype == D_I32 ? INT32_MAX : r.dtype == D_I64 ? 0 : 1;
            if (r.dtype == D_I64) {  // INT64_MAX is not a double
                std::fill_n(reinterpret_cast<int64_t*>(p), n, INT64_MAX);
                return;
            }
            store_all(r.dtype, p, n, first, [v](uint64_t) { return v; });
            return;
        }
        case FILL_NORMAL:  // a 16-bit quantile table, interpolated with 16 more bits
            if (r.dtype == D_F32) return fill_normal_f32(reinterpret_cast<float*>(p), n, first, r.seed, r.a, r.b);
            store_all(r.dtype, p, n, first, [&r](uint64_t i) {
                uint64_t h = stream(r, i);
                size_t q = size_t(h >> 48);
                double f = double((h >> 32) & 0xFFFF) * (1.0 / 65536.0);
                return r.a + r.b * (g_quantile[q] + f * (g_quantile[q + 1] - g_quantile[q]));
            });
            return;
        case FILL_UNIFORM:
            if (r.dtype == D_F32) return fill_uniform_f32(reinterpret_cast<float*>(p), n, first, r.seed, r.a, r.b);
            store_all(r.dtype, p, n, first,
                      [&r](uint64_t i) { return r.a + (r.b - r.a) * double(stream(r, i) >> 11) * 0x1.0p-53; });
            return;
        default: {  // FILL_RANDINT
            uint64_t span = uint64_t(std::max(1.0, r.b - r.a));
            const bool byte = r.dtype == D_BOOL || r.dtype == D_U8 || r.dtype == D_I8;
            const double lo = r.dtype == D_I8 ? -128 : 0, hi = r.dtype == D_I8 ? 127 : 255;
            if (byte && (span & (span - 1)) == 0 && r.a == std::floor(r.a) &&
                (r.dtype == D_BOOL || (r.a >= lo && r.a + double(span - 1) <= hi)) && std::fabs(r.a) < 0x1p52)
                return fill_randint_u8(p, n, first, r.seed, int64_t(r.a), span - 1, r.dtype == D_BOOL);
            store_all(r.dtype, p, n, first, [&r, span](uint64_t i) { return r.a + double(stream(r, i) % span); });
        }
    }
}

void fill_chunk(const Region& r, size_t c) { fill_chunk(r, c, reinterpret_cast<uint8_t*>(r.base + c * kChunk)); }

bool evictable(const Region& r) { return r.fill != FILL_POISON && r.fill != FILL_ZERO; }

// Whole-chunk file I/O (async-signal-safe calls only: these run in the SIGSEGV handler).
bool file_io(bool write_it, uint8_t* p, size_t n, uint64_t off) {
    while (n > 0) {
        ssize_t k = write_it ? pwrite(g_spill_fd, p, n, off_t(off)) : pread(g_spill_fd, p, n, off_t(off));
        if (k <= 0) return false;
        p += k, n -= size_t(k), off += uint64_t(k);
    }
    return true;
}

// Spilled chunks go to the file in blocks of kSpillBlock bytes. A written chunk of a region with a
// constant fill (an output's poison, zeros) keeps only the blocks that differ from the fill: a
// grid-stride kernel stores a tile of a few hundred bytes into every 64 KiB chunk of its output
// (RmsNorm at its published shape: 7.5 GB of chunks, 1 KB of each written by one block), and
// writing the chunks whole was a fifth of its host time. Bytes equal to the fill refill identically.
constexpr size_t kSpillBlock = 1024;
static_assert(kChunk / kSpillBlock <= 64, "a chunk's blocks are a 64-bit mask");

bool constant_fill(const Region& r) { return r.fill == FILL_POISON || r.fill == FILL_ZERO; }

// The blocks of the n bytes at p (a chunk of r) that differ from what its fill writes there.
uint64_t blocks_to_keep(const Region& r, const uint8_t* p, size_t n) {
    const size_t nblocks = (n + kSpillBlock - 1) / kSpillBlock;
    const uint64_t all = nblocks == 64 ? ~0ull : (1ull << nblocks) - 1;
    if (!constant_fill(r)) return all;
    // the fill's bytes for one block: the chunk starts at a multiple of every element size
    alignas(64) uint8_t fill[kSpillBlock];
    std::memset(fill, 0, sizeof fill);
    if (r.fill == FILL_POISON) {
        Region one = r;
        one.base = reinterpret_cast<uintptr_t>(fill), one.size = sizeof fill;
        fill_chunk(one, 0);
    }
    uint64_t keep = 0;
    for (size_t k = 0; k < nblocks; ++k) {
        const size_t len = std::min(kSpillBlock, n - k * kSpillBlock);
        if (std::memcmp(p + k * kSpillBlock, fill, len) != 0) keep |= 1ull << k;
    }
    return keep;
}

// Reads (write_it false) or writes the blocks `mask` of the chunk at p (n bytes) from or to the file
// at `off`, a run of consecutive blocks per call.
bool blocks_io(bool write_it, uint8_t* p, size_t n, uint64_t off, uint64_t mask) {
    while (mask != 0) {
        const size_t k0 = size_t(__builtin_ctzll(mask));
        const uint64_t from = mask >> k0;
        const size_t run = ~from == 0 ? 64 - k0 : size_t(__builtin_ctzll(~from));
        const size_t lo = k0 * kSpillBlock, hi = std::min(n, (k0 + run) * kSpillBlock);
        if (!file_io(write_it, p + lo, hi - lo, off + lo)) return false;
        mask = run + k0 >= 64 ? 0 : mask & ~(((1ull << run) - 1) << k0);
    }
    return true;
}

// A chunk's content: from the spill file where it was spilled (the fill under its blocks there),
// else its region's fill.
void load_chunk(const Region& r, size_t c, uint8_t* p) {
    size_t n = std::min(kChunk, r.size - c * kChunk);
    if (r.in_file[c]) {
        if (constant_fill(r)) fill_chunk(r, c, p);
        if (blocks_io(false, p, n, r.file_off + c * kChunk, r.file_blocks[c])) return;
    }
    fill_chunk(r, c, p);
}
void load_chunk(const Region& r, size_t c) { load_chunk(r, c, reinterpret_cast<uint8_t*>(r.base + c * kChunk)); }

// A chunk's content written into its pages while they are still inaccessible, through /proc/self/mem
// (the kernel writes there whatever the protection): made readable only once whole. Made writable
// first and filled in place, another thread of the process (torch's copy of a lazy input runs on
// several) read zeros or part of the fill, or had its write overwritten by the fill (a clone of a
// lazy tensor differed from a second clone 1 time in 30 on two threads). -1: not available (the
// fill then goes in place).
int g_mem_fd = -1;
pid_t g_mem_pid = 0;  // the process g_mem_fd was opened in: a forked child has a memory of its own
alignas(64) uint8_t g_scratch[kChunk];  // (used under Lock only)

// Opens /proc/self/mem and proves that it writes into an inaccessible page (a kernel may forbid it:
// proc_mem.force_override); -1 where it does not. Async-signal-safe calls only.
int open_self_mem() {
    const int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    const long page = 4096;  // (the kernel rounds up to its page; sysconf is no signal-safe call)
    void* probe = mmap(nullptr, size_t(page), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    bool ok = false;
    if (probe != MAP_FAILED) {
        const uint8_t one = 0x5A;
        ok = pwrite(fd, &one, 1, off_t(reinterpret_cast<uintptr_t>(probe))) == 1 &&
             mprotect(probe, size_t(page), PROT_READ) == 0 && *static_cast<volatile uint8_t*>(probe) == one;
        munmap(probe, size_t(page));
    }
    if (!ok) close(fd);
    return ok ? fd : -1;
}

uint64_t g_whole_fills = 0;  // chunk fills installed whole (lazy_stats: whole_fills)

bool install_filled(const Region& r, size_t c, uint8_t* p, size_t n) {
    if (g_mem_pid != getpid()) {  // (first use, or a fork)
        if (g_mem_fd >= 0) close(g_mem_fd);
        g_mem_fd = open_self_mem(), g_mem_pid = getpid();
    }
    if (g_mem_fd < 0) return false;
    if (r.fill == FILL_ZERO && !r.in_file[c]) return ++g_whole_fills, true;  // fresh pages read as zero
    if (r.fill == FILL_ZERO) std::memset(g_scratch, 0, n);
    load_chunk(r, c, g_scratch);
    size_t done = 0;
    while (done < n) {
        const ssize_t k = pwrite(g_mem_fd, g_scratch + done, n - done, off_t(reinterpret_cast<uintptr_t>(p) + done));
        if (k <= 0) return false;
        done += size_t(k);
    }
    ++g_whole_fills;
    return true;
}

// Write the oldest dirty chunks to the spill file until at most `limit` dirty bytes stay
// resident; never the two dirtied last (an access that straddles two chunks needs both).
void spill_down_to(size_t limit) {
    if (g_spill_fd < 0) return;
    while (g_resident - g_clean > limit && g_dring_head - g_dring_tail > 2u) {
        uint64_t e = g_dring[g_dring_tail++ % kRing];
        Region& r = g_regions[e >> 40];
        size_t c = size_t(e & ((uint64_t(1) << 40) - 1));
        if (!r.live || c >= r.chunks || r.state[c] != C_DIRTY) continue;  // gone, spilled or evicted already
        uint8_t* p = reinterpret_cast<uint8_t*>(r.base + c * kChunk);
        size_t n = std::min(kChunk, r.size - c * kChunk);
        // read-only first, so that no other thread's store lands between the copy and the unmap
        // (it faults, waits for the lock and then reads the chunk back)
        if (mprotect(p, n, PROT_READ) != 0) continue;
        const uint64_t keep = blocks_to_keep(r, p, n);
        if (!blocks_io(true, p, n, r.file_off + c * kChunk, keep)) {  // disk full: keep written chunks from now on
            mprotect(p, n, PROT_READ | PROT_WRITE);
            close(g_spill_fd);
            g_spill_fd = -1;
            return;
        }
        mprotect(p, n, PROT_NONE);
        madvise(p, n, MADV_DONTNEED);
        r.state[c] = C_EMPTY;
        r.in_file[c] = 1;
        r.file_blocks[c] = keep;
        g_resident -= n;
        for (uint64_t m = keep; m != 0; m &= m - 1)
            g_spilled += std::min(kSpillBlock, n - size_t(__builtin_ctzll(m)) * kSpillBlock);
    }
}

void note_dirty(const Region& r, size_t c) {
    if (g_dring_head - g_dring_tail >= kRing) ++g_dring_tail;  // only with spilling off: forget the oldest
    g_dring[g_dring_head++ % kRing] = (uint64_t(&r - g_regions) << 40) | c;
}

// Evict the oldest clean chunks until at most `cap` clean bytes stay; `keep_newest`: never the
// chunk filled last (the access that faulted it in is about to re-run).
void evict_down_to(size_t cap, bool keep_newest = false) {
    while (g_clean > cap && g_ring_head - g_ring_tail > (keep_newest ? 1u : 0u)) {
        uint64_t e = g_ring[g_ring_tail++ % kRing];
        Region& r = g_regions[e >> 40];
        size_t c = size_t(e & ((uint64_t(1) << 40) - 1));
        if (!r.live || c >= r.chunks || r.state[c] != C_CLEAN) continue;  // gone, dirtied or evicted already
        void* p = reinterpret_cast<void*>(r.base + c * kChunk);
        size_t n = std::min(kChunk, r.size - c * kChunk);
        // first: a reader now faults and refills rather than seeing zeros (a failure keeps it resident)
        if (mprotect(p, n, PROT_NONE) != 0) continue;
        madvise(p, n, MADV_DONTNEED);
        r.state[c] = C_EMPTY;
        g_resident -= n;
        g_clean -= n;
        ++g_evictions;
    }
}

// mprotect fails with ENOMEM once the process would hold more than vm.max_map_count mappings, and
// every chunk whose protection differs from its neighbours' is one (a grid-stride kernel touches
// scattered chunks): evicting the clean input chunks merges theirs back. Past that, the process
// cannot go on; it says why (only async-signal-safe calls here).
void protect(void* p, size_t n, int prot) {
    if (mprotect(p, n, prot) == 0) return;
    evict_down_to(0);
    if (mprotect(p, n, prot) == 0) return;
    static const char msg[] =
        "kgsim sampled simulation: out of memory mappings (vm.max_map_count): the kernel touches too many "
        "scattered 64 KiB chunks of lazy GM; simulate fewer blocks, or raise vm.max_map_count\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(86);
}

struct Lock {
    Lock() {
        while (g_lock.test_and_set(std::memory_order_acquire)) sched_yield();  // the holder may need our core
    }
    ~Lock() { g_lock.clear(std::memory_order_release); }
};

void on_segv(int sig, siginfo_t* info, void* uctx) {
    uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr);
    {
        Lock lock;
        for (Region& r : g_regions) {
            if (!r.live || a < r.base || a >= r.base + r.size) continue;
            size_t c = (a - r.base) / kChunk;
            void* p = reinterpret_cast<void*>(r.base + c * kChunk);
            size_t n = std::min(kChunk, r.size - c * kChunk);
#if defined(__x86_64__)
            // a read that faulted while another thread filled the chunk: it is readable now (taken
            // for a write, the chunk became written data, neither evictable nor refilled)
            const bool wrote = (static_cast<ucontext_t*>(uctx)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
            if (r.state[c] == C_CLEAN && !wrote) return;
#endif
            ++g_faults;
            if (r.state[c] == C_CLEAN) {  // a write to a filled input chunk: it now holds data of its own
                protect(p, n, PROT_READ | PROT_WRITE);
                if (r.state[c] == C_EMPTY) {  // evicted by protect to free mappings: refill it
                    load_chunk(r, c);
                    g_resident += n;
                } else {
                    g_clean -= n;
                }
                r.state[c] = C_DIRTY;
                note_dirty(r, c);
                spill_down_to(dirty_limit());
                return;
            }
            if (r.state[c] == C_DIRTY) break;  // writable already: not our fault
            if (!install_filled(r, c, static_cast<uint8_t*>(p), n)) {
                protect(p, n, PROT_READ | PROT_WRITE);
                load_chunk(r, c);
            }
            g_resident += n;
            g_peak = std::max(g_peak, g_resident);
            if (evictable(r) || r.in_file[c]) {  // it can be filled again identically: clean until written
                protect(p, n, PROT_READ);
                r.state[c] = C_CLEAN;
                g_clean += n;
                if (g_ring_head - g_ring_tail >= kRing) evict_down_to(0);  // only with a cap above kRing chunks
                g_ring[g_ring_head++ % kRing] = (uint64_t(&r - g_regions) << 40) | c;
                evict_down_to(clean_target(), true);
            } else {
                protect(p, n, PROT_READ | PROT_WRITE);  // (installed through /proc/self/mem: still inaccessible)
                r.state[c] = C_DIRTY;
                note_dirty(r, c);
                spill_down_to(dirty_limit());
            }
            return;
        }
    }
    // not a lazy region: whoever handled SIGSEGV before us (a crash stays a crash)
    if (g_prev.sa_flags & SA_SIGINFO) {
        if (g_prev.sa_sigaction) return g_prev.sa_sigaction(sig, info, uctx);
    } else if (g_prev.sa_handler != SIG_DFL && g_prev.sa_handler != SIG_IGN) {
        return g_prev.sa_handler(sig);
    }
    signal(SIGSEGV, SIG_DFL);  // returning re-runs the access, which now takes the default action
}

void install() {
    if (g_installed) return;
    init_quantiles();
    g_ring = new uint64_t[kRing];
    g_dring = new uint64_t[kRing];
    // No spill file under a file-size limit (the verifier's sandboxed runner has one): a write past
    // it raises SIGXFSZ, which kills a process that does not ignore it. Written chunks then stay.
    struct rlimit fsize {};
    const bool unlimited = getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur == RLIM_INFINITY;
    const char* dir = std::getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    if (unlimited) g_spill_fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);  // gone with the process
    if (unlimited && g_spill_fd < 0) {  // a file system without O_TMPFILE: a named file, unlinked at once
        std::string path = std::string(dir) + "/kgsim-spill-XXXXXX";
        g_spill_fd = mkstemp(path.data());
        if (g_spill_fd >= 0) unlink(path.c_str());
    }
    g_mem_fd = open_self_mem(), g_mem_pid = getpid();
    struct sigaction sa {};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;  // a fault inside the handler is a crash, not a deadlock on the lock
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_prev);
    g_installed = true;
}

Region* find(const void* base) {
    for (Region& r : g_regions)
        if (r.live && r.base == reinterpret_cast<uintptr_t>(base)) return &r;
    return nullptr;
}

}  // namespace
// Whether an address lies in a live lazy region (its faults are this file's to serve): the host-code
// guard of rt_ophost.cpp passes those on rather than reporting a crash.
bool lazy_address(const void* addr) {
    if (!g_installed) return false;
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    Lock lock;
    for (const Region& r : g_regions)
        if (r.live && a >= r.base && a < r.base + r.size) return true;
    return false;
}

}  // namespace kgsim

using namespace kgsim;

extern "C" {

void kgsim_set_sampling(long long groups) { g_sample_groups = groups < 0 ? 0 : groups; }
// 0: off; 1: every sampled block but block index 0; 2: every sampled block
void kgsim_set_loop_sampling(int mode) { g_loop_on = mode != 0, g_loop_block0 = mode >= 2, g_loop_block0_keeps = mode == 3; }
int kgsim_get_loop_sampling() { return g_loop_on ? (g_loop_block0 ? (g_loop_block0_keeps ? 3 : 2) : 1) : 0; }
long long kgsim_get_sampling() { return g_sample_groups; }

// Written-span tracking: on (clearing what was recorded) or off, and the hulls as
// (core uid, first address, end address, bytes stored) rows; returns how many there are.
void kgsim_track_writes(int on) {  // the spans stay readable after tracking stops
    g_track_writes = on != 0;
    if (g_track_writes) g_written.clear(), g_untracked.clear(), forget_rewrites(-1), g_hull_lo = UINTPTR_MAX, g_hull_hi = 0;
}
// Hulls of the stores not tracked because their block had skipped loop iterations, one per GM
// buffer, as (first address, end address, bytes stored) rows; returns how many there are.
unsigned long long kgsim_untracked_spans(unsigned long long* out, unsigned long long max_rows) {
    for (size_t i = 0; i < g_untracked.size() && i < max_rows; ++i)
        out[3 * i] = g_untracked[i].lo, out[3 * i + 1] = g_untracked[i].hi, out[3 * i + 2] = g_untracked[i].bytes;
    return g_untracked.size();
}
unsigned long long kgsim_written_spans(unsigned long long* out, unsigned long long max_rows) {
    for (size_t i = 0; i < g_written.size() && i < max_rows; ++i) {
        out[4 * i] = uint64_t(g_written[i].uid), out[4 * i + 1] = g_written[i].lo;
        out[4 * i + 2] = g_written[i].hi, out[4 * i + 3] = g_written[i].bytes;
    }
    return g_written.size();
}

// A lazily filled region of `nbytes`; nullptr when no slot or address space is left.
void* kgsim_lazy_alloc(unsigned long long nbytes, int fill, int dtype, unsigned long long seed, double a, double b) {
    install();
    Lock lock;
    Region* slot = nullptr;
    for (Region& r : g_regions)
        if (!r.live) { slot = &r; break; }
    if (!slot || nbytes == 0) return nullptr;
    void* p = mmap(nullptr, nbytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    Region& r = *slot;
    r = Region{};
    r.base = reinterpret_cast<uintptr_t>(p);
    r.size = nbytes;
    r.chunks = (nbytes + kChunk - 1) / kChunk;
    r.fill = fill, r.dtype = dtype, r.seed = seed, r.a = a, r.b = b;
    r.state = new uint8_t[r.chunks]();
    r.in_file = new uint8_t[r.chunks]();
    r.file_blocks = new uint64_t[r.chunks]();
    r.file_off = g_file_end;
    g_file_end += r.chunks * kChunk;
    r.live = true;
    return p;
}

void kgsim_lazy_free(void* base) {
    Lock lock;
    Region* r = find(base);
    if (!r) return;
    for (size_t c = 0; c < r->chunks; ++c)
        if (r->state[c] != C_EMPTY) g_resident -= std::min(kChunk, r->size - c * kChunk);
    for (size_t c = 0; c < r->chunks; ++c)
        if (r->state[c] == C_CLEAN) g_clean -= std::min(kChunk, r->size - c * kChunk);
    munmap(base, r->size);
    if (g_spill_fd >= 0)  // give the disk back (sparse; the offsets stay reserved until no region is live)
        fallocate(g_spill_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(r->file_off), off_t(r->chunks * kChunk));
    delete[] r->state;
    delete[] r->in_file;
    delete[] r->file_blocks;
    *r = Region{};
    bool any = false;
    for (const Region& o : g_regions) any = any || o.live;
    if (!any && g_spill_fd >= 0 && ftruncate(g_spill_fd, 0) == 0) g_file_end = 0;
}

// Under sampled simulation, an output buffer of at least 16 MiB that a binding allocates
// (at::empty & co.) is a poisoned lazy region, so only what the sampled blocks touch is resident;
// nullptr otherwise (the caller allocates as usual). `dtype` is a lazy dtype code.
void* kgsim_lazy_output(unsigned long long nbytes, int dtype) {
    if (g_sample_groups <= 0 || nbytes < (16ull << 20)) return nullptr;
    return kgsim_lazy_alloc(nbytes, FILL_POISON, dtype, 0, 0, 0);
}

int kgsim_lazy_is(const void* base) {
    Lock lock;
    return find(base) != nullptr;
}

void kgsim_lazy_set_cap(unsigned long long bytes) {
    Lock lock;
    g_cap = bytes;
    evict_down_to(clean_target());
    spill_down_to(dirty_limit());
}

// resident bytes, peak resident bytes, chunk faults, evictions, bytes written to the spill file
void kgsim_lazy_stats(double* out) {
    out[0] = double(g_resident), out[1] = double(g_peak), out[2] = double(g_faults), out[3] = double(g_evictions);
    out[4] = double(g_spilled), out[5] = double(g_whole_fills);
}

void kgsim_lazy_reset_peak() { g_peak = g_resident; }
}
