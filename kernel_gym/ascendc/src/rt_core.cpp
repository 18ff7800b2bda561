// kgsim runtime: configuration, faults, GM registry, race detector, queues and buffers,
// synchronisation, the per-block timeline and launches. C entry points for Python at the end.
#include <chrono>
#include <cstdlib>
#include <exception>

#include "rt.h"

namespace kgsim {

Hot hot{};
Config cfg{};
Runtime rt{};
uint64_t g_gm_gen = 0;

namespace {
constexpr uint32_t kMemBytes = kLocalMemBytes;
constexpr uint8_t kNoPipe = 255;

struct MemInit {
    MemInit() {
        for (int m = 0; m < MEM_COUNT; ++m) {
            hot.mem[m] = static_cast<uint8_t*>(std::aligned_alloc(4096, kMemBytes));
            std::memset(hot.mem[m], 0xFF, kMemBytes);
        }
        hot.next_check = 4096;
        rt.w_end.assign(kMemBytes / 32, 0.0);
        rt.w_pipe.assign(kMemBytes / 32, kNoPipe);
        rt.r_end_v.assign(kMemBytes / 32, 0.0);
        rt.r_end_mte3.assign(kMemBytes / 32, 0.0);
        rt.init.assign(kMemBytes, 0);
        // defaults until Python sets a profile (Ascend910B2)
        cfg.aiv_cores = 48; cfg.aic_cores = 24; cfg.clock_hz = 1.85e9; cfg.ub_bytes = 196608;
        cfg.usable_ub_bytes = 196608; cfg.l1_bytes = 524288; cfg.l0a_bytes = 65536;
        cfg.l0b_bytes = 65536; cfg.l0c_bytes = 131072; cfg.ub_align = 32; cfg.max_buffers = 64;
        cfg.max_tensors_per_position = 8; cfg.max_repeat = 255; cfg.hbm_bytes_per_s = 1.6e12;
        cfg.vec_simple_bytes_per_cycle = 256; cfg.vec_transcendental_elems_per_cycle = 32;
        cfg.vec_cast_elems_per_cycle = 64; cfg.vec_reduce_cycles_per_repeat = 7; cfg.vec_issue_cycles = 16;
        cfg.ub_copy_bytes_per_cycle = 128; cfg.scalar_issue_cycles = 12; cfg.scalar_ub_access_cycles = 8;
        cfg.scalar_gm_access_cycles = 100; cfg.mte2_bytes_per_cycle = 78; cfg.mte2_startup_cycles = 500;
        cfg.mte3_bytes_per_cycle = 80; cfg.mte3_startup_cycles = 400; cfg.dma_issue_cycles = 24;
        cfg.dma_burst_cycles = 2; cfg.launch_base_s = 3e-6; cfg.launch_per_core_s = 3e-8; cfg.align_strict = 0;
        cfg.sync_check = 1; cfg.watchdog_calls = 1091 * 1.85e9; cfg.watchdog_s = 60; cfg.watchdog_cycles = 1091 * 1.85e9;
        cfg.race_check = 1; cfg.mte2_unaligned_efficiency = 0.7; cfg.gm_port_bytes_per_cycle = 32;
        cfg.scalar_ub_store_load_cycles = 24; cfg.overlap_norm = 8;
        cfg.scalar_gm_outstanding_misses = 1;
        hot.scalar_ub_cycles = cfg.scalar_ub_access_cycles;
        hot.scalar_ub_store_load_cycles = cfg.scalar_ub_store_load_cycles;
        hot.scalar_gm_cycles = cfg.scalar_gm_access_cycles;
    }
} mem_init;

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char* pos_name(uint8_t pos) {
    static const char* names[] = {"GM", "A1", "A2", "B1", "B2", "C1", "C2", "CO1", "CO2", "VECIN", "VECOUT", "VECCALC",
                                  "SPM", "TSCM", "C2PIPE2GM", "C2PIPE2LOCAL"};
    return pos < 16 ? names[pos] : "?";
}
uint8_t mem_of_pos(uint8_t pos) {
    switch (pos) {
        case 1: case 3: case 5: case 13: return MEM_L1;  // A1, B1, C1, TSCM
        case 14: return MEM_FB;                           // C2PIPE2GM: the fixpipe buffer
        case 2: return MEM_L0A;
        case 4: return MEM_L0B;
        case 6: return MEM_BT;
        case 7: return MEM_L0C;
        default: return MEM_UB;
    }
}
Pipe producer_of(uint8_t pos) {
    switch (pos) {
        case 9: return P_MTE2;               // VECIN
        case 10: case 11: return P_V;        // VECOUT, VECCALC
        case 1: case 3: case 5: return P_MTE2;
        case 2: case 4: case 6: case 14: return P_MTE1;  // ..., C2PIPE2GM (L1 -> fixpipe buffer)
        case 7: return P_M;
        case 8: return P_FIX;
        case 13: return P_MTE2;                          // TSCM
        default: return P_V;
    }
}
Pipe consumer_of(uint8_t pos) {
    switch (pos) {
        case 9: case 11: return P_V;
        case 10: return P_MTE3;
        case 1: case 3: case 5: case 13: return P_MTE1;
        case 2: case 4: case 6: return P_M;
        case 14: return P_FIX;
        case 7: return P_FIX;
        case 8: return P_MTE3;
        default: return P_V;
    }
}
const char* mem_name(uint8_t mem) {
    static const char* names[] = {"UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"};
    return mem < MEM_COUNT ? names[mem] : "?";
}
double mem_capacity(uint8_t mem) {
    switch (mem) {
        case MEM_UB: return cfg.usable_ub_bytes;
        case MEM_L1: return cfg.l1_bytes;
        case MEM_L0A: return cfg.l0a_bytes;
        case MEM_L0B: return cfg.l0b_bytes;
        case MEM_L0C: return cfg.l0c_bytes;
        case MEM_BT: return cfg.bt_bytes;
        case MEM_FB: return cfg.fb_bytes;
        default: return 1024;
    }
}
uint32_t mem_align(uint8_t mem) {
    switch (mem) {
        case MEM_L0A: case MEM_L0B: return 512;
        case MEM_L0C: case MEM_BT: return 64;
        case MEM_FB: return 128;
        default: return 32;
    }
}
std::string loc_str(const Loc& l) { return fmt("%s:%u", l.file_name(), unsigned(l.line())); }

void record(std::vector<FaultRec>& to, const char* cls, const char* file, uint32_t line, const std::string& msg) {
    FaultRec f;
    f.cls = cls;
    f.msg = msg;
    f.file = file ? file : "";
    f.line = line;
    f.block = hot.in_launch ? hot.block_idx : -1;
    to.push_back(std::move(f));
}
}  // namespace

// Record a fault without throwing (destructors, end-of-launch checks, the block scheduler).
void record_fault(const char* cls, const char* file, uint32_t line, const std::string& msg) {
    if (rt.cur) {
        if (rt.cur->faults.empty()) record(rt.cur->faults, cls, file, line, msg);
    } else if (rt.host_faults.empty()) {
        record(rt.host_faults, cls, file, line, msg);
    }
    rt.faulted = true;
}

// ---- helpers ------------------------------------------------------------------------------
std::string fmt(const char* f, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}
const char* dt_name(DT dt) {
    static const char* names[] = {"float", "half", "bfloat16_t", "int8_t", "uint8_t", "int16_t", "uint16_t",
                                  "int32_t", "uint32_t", "int64_t", "uint64_t", "double", "bool", "int4b_t"};
    return names[int(dt)];
}
uint32_t dt_size(DT dt) {
    static const uint32_t sizes[] = {4, 2, 2, 1, 1, 2, 2, 4, 4, 8, 8, 8, 1, 1};  // int4b_t: two per byte
    return sizes[int(dt)];
}
const char* pipe_name(int p) {
    static const char* names[] = {"S", "V", "MTE1", "MTE2", "MTE3", "M", "FIX"};
    return p >= 0 && p < P_COUNT ? names[p] : "ALL";
}

[[noreturn]] void fault(const char* cls, const Loc& loc, const char* f, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    record_fault(cls, loc.file_name(), loc.line(), buf);
    throw Fault{};
}

bool warn_new(const char* cls, const Loc& loc) {
    LaunchRec* run = rt.cur;
    if (!run || run->warnings.size() >= 16) return false;
    LaunchRec::Warned& seen = run->warned[loc.line() % run->warned.size()];
    if (cls == seen.cls && loc.file_name() == seen.file && loc.line() == seen.line) return false;
    for (auto& w : run->warnings)
        if (w.cls == cls && w.line == loc.line() && w.file == loc.file_name()) {
            seen = {cls, loc.file_name(), loc.line()};
            return false;
        }
    return true;
}

void warn(const char* cls, const Loc& loc, const std::string& msg) {
    if (warn_new(cls, loc)) record(rt.cur->warnings, cls, loc.file_name(), loc.line(), msg);
}

void check_in_launch(const Loc& loc, const char* api) {
    ff_flush();  // an API call: what follows may read the scalar time
    if (!hot.in_launch)
        fault("bad_launch", loc, "%s called outside a kernel launch: launch kernels with kernel<<<blockDim, nullptr, "
              "stream>>>(...) (or kgsim::launch)", api);
}

// The watchdog's host-time and simulated-cycle bounds: why the running block must stop, or "" while
// it may go on. Checked every 4096 API calls (slow_tick) and, for loops of plain scalar code that call
// no API at all, every so many basic blocks (scalar_watchdog, rt_scalar.cpp).
std::string watchdog_expired() {
    if (now_s() - rt.launch_wall_start > cfg.watchdog_s)
        return fmt("the launch ran for more than %.0f s of host time (watchdog_s): an endless loop, or a launch too "
                   "large to simulate in full (the NPU would not stop it: run it with sampled=True, which simulates "
                   "a sample of its blocks and loop iterations, or raise watchdog_s)", cfg.watchdog_s);
    double t = hot.s_time;
    for (int p = 0; p < P_COUNT; ++p) t = std::max(t, rt.blk.done_[p]);
    if (t > cfg.watchdog_cycles)
        return fmt("block %lld has run for more than %.3g simulated cycles (watchdog_cycles): an endless loop?",
                   (long long)hot.block_idx, cfg.watchdog_cycles);
    return {};
}

void slow_tick(const Loc& loc) {
    hot.next_check = hot.api_calls + 4096;
    if (!hot.in_launch) return;
    if (double(hot.api_calls - rt.blk.calls_base) > cfg.watchdog_calls)
        fault("watchdog", loc, "block %lld made more than %.0f API calls (watchdog_calls): an endless loop? On the "
              "NPU the kernel would hang until the device watchdog kills it", (long long)hot.block_idx,
              cfg.watchdog_calls);
    const std::string why = watchdog_expired();
    if (!why.empty()) fault("watchdog", loc, "%s", why.c_str());
}

int config_int(const char* name) {
#define KGSIM_X(n) if (std::strcmp(name, #n) == 0) return int(std::min(cfg.n, 2.0e9));
    KGSIM_CONFIG_FIELDS(KGSIM_X)
#undef KGSIM_X
    return 0;
}

// ---- local memory checks ----------------------------------------------------------------------
uint8_t* mem_ptr(uint8_t mem, uint32_t addr) { return hot.mem[mem] + addr; }

// An access past a LocalTensor's end: the NPU does it when the bytes are inside the physical
// memory (they belong to whatever buffer lies there) and faults only beyond it.
void local_oob(const TRef& r, uint64_t first_byte, uint64_t nbytes, const char* what, const Loc& loc) {
    uint64_t hi = uint64_t(r.addr) + first_byte + nbytes;
    if (!cfg.bounds_strict && hi <= uint64_t(mem_capacity(r.mem))) {
        if (!warn_new("local_out_of_bounds", loc)) return;
        warn("local_out_of_bounds", loc,
             fmt("%s: element bytes [%llu, %llu) of a LocalTensor at %s byte %u lie past the tensor (it ends at byte "
                 "%u); the NPU accesses %s bytes [%llu, %llu) anyway, which may belong to another buffer",
                 what, (unsigned long long)first_byte, (unsigned long long)(first_byte + nbytes), mem_name(r.mem),
                 r.addr, r.end, mem_name(r.mem), (unsigned long long)(hi - nbytes), (unsigned long long)hi));
        return;
    }
    fault("local_out_of_bounds", loc, "%s: element bytes [%llu, %llu) of a LocalTensor at %s byte %u lie outside the "
          "tensor (it ends at byte %u)%s", what, (unsigned long long)first_byte,
          (unsigned long long)(first_byte + nbytes), mem_name(r.mem), r.addr, r.end,
          cfg.bounds_strict ? "" : fmt(" and outside the %s itself (%.0f B)", mem_name(r.mem), mem_capacity(r.mem)).c_str());
}

void check_local(const TRef& t, uint64_t rel_first, uint64_t nbytes, uint32_t align, const char* api,
                 const char* operand, const Loc& loc) {
    // gen 0 marks a default-constructed tensor (blocks count from 1); a live tensor may end at byte 0:
    // one from a queue given buffers of length 0 at the start of the memory
    if (t.gen != hot.gen || t.gen == 0)
        fault("invalid_tensor", loc, "%s: operand %s is not a live LocalTensor of this block (default-constructed, or "
              "obtained in another block/launch): get tensors from AllocTensor/DeQue/TBuf::Get", api, operand);
    if (align && (t.addr % align) != 0)
        fault("unaligned_local_tensor", loc, "%s: operand %s starts at %s byte %u, which is not %u-byte aligned (a "
              "LocalTensor offset view t[k] used as an operand needs k*sizeof(T) to be a multiple of %u)", api,
              operand, mem_name(t.mem), t.addr, align, align);
    uint64_t hi = uint64_t(t.addr) + rel_first + nbytes;
    if (hi > t.end && !cfg.bounds_strict && hi <= uint64_t(mem_capacity(t.mem))) {
        if (warn_new("local_out_of_bounds", loc))
            warn("local_out_of_bounds", loc,
                 fmt("%s: operand %s accesses %s bytes [%llu, %llu) past its buffer's end at byte %u; the NPU does so "
                     "anyway (the bytes may belong to another buffer): the count or repeat parameters exceed the tensor",
                     api, operand, mem_name(t.mem), (unsigned long long)(t.addr + rel_first), (unsigned long long)hi, t.end));
    } else if (hi > t.end)
        fault("local_out_of_bounds", loc, "%s: operand %s accesses %s bytes [%llu, %llu) but its buffer ends at byte "
              "%u (%llu bytes too far): the count or repeat parameters exceed the tensor", api, operand,
              mem_name(t.mem), (unsigned long long)(t.addr + rel_first), (unsigned long long)hi, t.end,
              (unsigned long long)(hi - t.end));
}

void check_init_range(const TRef& t, uint32_t addr, uint32_t nbytes, const char* api, const Loc& loc) {
    if (!cfg.check_uninit || t.mem != MEM_UB) return;
    const uint8_t* s = rt.init.data() + addr;
    for (uint32_t i = 0; i < nbytes; ++i)
        if (!s[i])
            fault("uninitialized_read", loc, "%s reads UB byte %u, which was never written since its buffer was "
                  "allocated (the NPU would read stale data; the simulator filled it with 0xFF/NaN)", api, addr + i);
}
void uninit_check(const TRef& r, uint32_t addr, uint32_t nbytes, const char* what, const Loc& loc) {
    check_init_range(r, addr, nbytes, what, loc);
}
void mark_init_range(uint8_t mem, uint32_t addr, uint32_t nbytes) {
    if (cfg.check_uninit && mem == MEM_UB) std::memset(rt.init.data() + addr, 1, nbytes);
}
void mark_uninit_range(uint8_t mem, uint32_t addr, uint32_t nbytes) {
    if (mem == MEM_UB) std::memset(rt.init.data() + addr, 0, nbytes);
}
void mark_init(uint8_t mem, uint32_t addr, uint32_t nbytes) { mark_init_range(mem, addr, nbytes); }

// ---- GM buffers ------------------------------------------------------------------------------
int32_t gm_lookup(const void* p) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (size_t i = 0; i < rt.gm.size(); ++i)
        if (a >= rt.gm[i].base && a < rt.gm[i].base + rt.gm[i].size) return int32_t(i);
    for (size_t i = 0; i < rt.gm.size(); ++i)
        if (a == rt.gm[i].base + rt.gm[i].size) return int32_t(i);
    return -1;
}

static std::string gm_list() {
    std::string s;
    for (auto& b : rt.gm) {
        if (!s.empty()) s += ", ";
        s += fmt("'%s' %llu B", b.name.c_str(), (unsigned long long)b.size);
    }
    return s.empty() ? std::string("none") : s;
}

int32_t gm_check(int32_t buf, uintptr_t p, uint64_t nbytes, uint32_t es, const char* api, const char* dir,
                 const Loc& loc) {
    if (buf < 0) buf = gm_lookup(reinterpret_cast<void*>(p));
    if (buf < 0)
        fault("gm_out_of_bounds", loc, "%s %s %llu B at GM address 0x%llx, outside every buffer passed to the launch "
              "(%s)", api, dir, (unsigned long long)nbytes, (unsigned long long)p, gm_list().c_str());
    const GmBuf& b = rt.gm[buf];
    if (p < b.base || p + nbytes > b.base + b.size) {
        long long off = (long long)(p - b.base);
        fault("gm_out_of_bounds", loc, "%s %s bytes [%lld, %lld) of GM buffer '%s', which has %llu B (%llu elements "
              "of %u B): element offset %lld..%lld is out of range", api, dir, off, off + (long long)nbytes,
              b.name.c_str(), (unsigned long long)b.size, (unsigned long long)(b.size / es), es, off / (long long)es,
              (off + (long long)nbytes) / (long long)es - 1);
    }
    return buf;
}

GmClip gm_clip(int32_t buf, uintptr_t p, uint64_t nbytes, uint32_t es, const char* api, const char* dir,
               const Loc& loc) {
    constexpr uint64_t kGranule = uint64_t(2) << 20;  // NPU device memory is mapped in 2 MiB pages
    if (buf < 0) buf = gm_lookup(reinterpret_cast<void*>(p));
    if (buf >= 0 && p >= rt.gm[buf].base && p + nbytes <= rt.gm[buf].base + rt.gm[buf].size) return {p, p + nbytes, false};
    if (buf < 0 && !cfg.bounds_strict) {  // past every buffer: the one whose end lies closest below
        uintptr_t best = 0;
        for (size_t i = 0; i < rt.gm.size(); ++i) {
            uintptr_t end = rt.gm[i].base + rt.gm[i].size;
            if (end <= p && p - end < kGranule && end > best) best = end, buf = int32_t(i);
        }
    }
    if (cfg.bounds_strict || buf < 0 || p < rt.gm[buf].base ||
        p + nbytes > rt.gm[buf].base + rt.gm[buf].size + kGranule) {
        gm_check(buf, p, nbytes, es, api, dir, loc);  // faults
    }
    const GmBuf& b = rt.gm[buf];
    uintptr_t lo = std::min(p, b.base + b.size), hi = std::min(p + nbytes, b.base + b.size);
    long long off = (long long)(p - b.base);
    // inside the pages mapped for this buffer alone: done there, as in the buffer's device page
    const bool own_pages = p + nbytes <= b.base + gm_pages(b.base);
    if (warn_new("gm_out_of_bounds", loc))
        warn("gm_out_of_bounds", loc,
             fmt("%s %s bytes [%lld, %lld) of GM buffer '%s', which has %llu B: the NPU does so without a fault (its device "
                 "memory comes in 2 MiB pages), reading whatever lies there and writing over it; %s",
                 api, dir, off, off + (long long)nbytes, b.name.c_str(), (unsigned long long)b.size,
                 own_pages ? "here too, within the buffer's own pages (bytes never written there read as 0xFF)"
                           : "here bytes past the buffer read as 0xFF and writes to them are dropped"));
    return {lo, hi, true, own_pages};
}

void record_access(uintptr_t lo, uint64_t n, uint8_t kind, const Loc& loc) {
    if (g_track_writes && kind != AK_READ && n) track_write(lo, n);
    if (!cfg.race_check || n == 0 || rt.race_overflow) return;
    if (kind != AK_READ) preimage_note(lo, n, nullptr);  // a write whose old bytes nobody noted
    uintptr_t hi = lo + n;
    size_t sz = rt.intervals.size();
    for (size_t k = 0; k < 8 && k < sz; ++k) {
        Interval& iv = rt.intervals[sz - 1 - k];
        if (iv.block == hot.core_uid && iv.kind == kind && lo <= iv.hi && hi >= iv.lo) {
            iv.lo = std::min(iv.lo, lo);
            iv.hi = std::max(iv.hi, hi);
            return;
        }
    }
    if (sz >= (1u << 22)) {
        rt.race_overflow = true;
        warn("race_check_disabled", loc, "more than 4M separate GM access ranges in one launch: the race detector "
             "stopped tracking");
        return;
    }
    rt.intervals.push_back(Interval{lo, hi, hot.core_uid, kind, loc});
}

namespace {
// Mark [lo, hi) as last written by block b.
void paint_writer(uintptr_t lo, uintptr_t hi, int64_t b) {
    auto& seg = rt.last_writer;
    auto split = [&](uintptr_t x) {
        auto it = seg.upper_bound(x);
        if (it == seg.begin()) return;
        --it;
        if (it->first < x && it->second.first > x) {
            auto tail = it->second;
            it->second.first = x;
            seg.emplace(x, tail);
        }
    };
    split(lo);
    split(hi);
    seg.erase(seg.lower_bound(lo), seg.lower_bound(hi));
    seg.emplace(lo, std::make_pair(hi, b));
}

// Intervals are in program order (blocks run one at a time); record_access may still widen
// any of the last 8, so those are painted again (in order, so later writers still win).
void paint_pending() {
    auto& ivs = rt.intervals;
    size_t from = rt.painted_upto > 8 ? rt.painted_upto - 8 : 0;
    for (size_t k = from; k < ivs.size(); ++k)
        if (ivs[k].kind == AK_WRITE || ivs[k].kind == AK_SAME) paint_writer(ivs[k].lo, ivs[k].hi, ivs[k].block);
    rt.painted_upto = ivs.size();
}
}  // namespace

bool written_by_another_block(uintptr_t lo, uint64_t n) {
    if (!cfg.race_check || rt.race_overflow) return false;
    paint_pending();
    const auto& seg = rt.last_writer;
    auto it = seg.upper_bound(lo);
    if (it == seg.begin()) return false;
    --it;
    for (uintptr_t pos = lo, hi = lo + n; pos < hi; ++it) {
        if (it == seg.end() || it->first > pos || it->second.first <= pos || it->second.second == hot.core_uid)
            return false;
        pos = it->second.first;
    }
    return true;
}

void preimage_begin() {
    rt.pre.segs.clear();
    rt.pre.owner = hot.core_uid;
    rt.pre.first_interval = rt.intervals.size();
}

void preimage_drop() {
    rt.pre.segs.clear();
    rt.pre.owner = -1;
}

void preimage_note(uintptr_t lo, uint64_t n, const uint8_t* before) {
    PreImage& P = rt.pre;
    if (!cfg.race_check || rt.race_overflow || P.owner != hot.core_uid || P.owner < 0 || n == 0) return;
    const uintptr_t hi = lo + n;
    auto& segs = P.segs;
    auto it = segs.upper_bound(lo);
    if (it != segs.begin() && std::prev(it)->second.hi > lo) --it;
    bool painted = false;
    for (uintptr_t pos = lo; pos < hi;) {
        if (it != segs.end() && it->first <= pos) {  // noted earlier: the block's own bytes since
            pos = std::max(pos, it->second.hi);
            ++it;
            continue;
        }
        const uintptr_t gap_end = it == segs.end() ? hi : std::min(hi, it->first);
        // a gap right after a segment of the same kind extends it (a loop of scalar stores is one)
        auto extend = [&](uintptr_t a, uintptr_t b, bool valid, const uint8_t* bytes) {
            if (it != segs.begin()) {
                PreSeg& prev = std::prev(it)->second;
                if (prev.hi == a && prev.valid == valid) {
                    if (valid) prev.bytes.insert(prev.bytes.end(), bytes, bytes + (b - a));
                    prev.hi = b;
                    return;
                }
            }
            PreSeg sg{b, valid, {}};
            if (valid) sg.bytes.assign(bytes, bytes + (b - a));
            segs.emplace_hint(it, a, std::move(sg));
        };
        if (!before) {
            extend(pos, gap_end, false, nullptr);
            pos = gap_end;
            continue;
        }
        if (!painted) paint_pending(), painted = true;
        // split the gap by whether another block wrote it last (the block itself has not: a gap)
        const auto& lw = rt.last_writer;
        while (pos < gap_end) {
            auto w = lw.upper_bound(pos);
            uintptr_t next;
            bool other = false;
            if (w != lw.begin() && std::prev(w)->second.first > pos) {
                other = std::prev(w)->second.second != hot.core_uid;
                next = std::min(gap_end, std::prev(w)->second.first);
            } else {
                next = w == lw.end() ? gap_end : std::min(gap_end, w->first);
            }
            extend(pos, next, other, before + (pos - lo));
            pos = next;
        }
    }
}

void preimage_settle(int64_t uid) {
    PreImage& P = rt.pre;
    if (!cfg.race_check || rt.race_overflow || P.owner != uid || P.owner < 0) return preimage_drop();
    auto& ivs = rt.intervals;
    if (P.first_interval > ivs.size()) return preimage_drop();
    std::vector<Interval> out;
    bool changed = false;
    for (size_t k = P.first_interval; k < ivs.size(); ++k) {
        const Interval& iv = ivs[k];
        if (iv.kind != AK_WRITE || iv.block != uid) {
            out.push_back(iv);
            continue;
        }
        // pieces of [lo, hi): AK_SAME where the block's final bytes equal the earlier blocks' there
        std::vector<Interval> pieces;
        auto add = [&](uintptr_t a, uintptr_t b, uint8_t kind) {
            if (a >= b) return;
            if (!pieces.empty() && pieces.back().kind == kind && pieces.back().hi == a) pieces.back().hi = b;
            else pieces.push_back(Interval{a, b, iv.block, kind, iv.loc});
        };
        auto it = P.segs.upper_bound(iv.lo);
        if (it != P.segs.begin() && std::prev(it)->second.hi > iv.lo) --it;
        uintptr_t pos = iv.lo;
        for (; pos < iv.hi && pieces.size() <= 64; ++it) {
            if (it == P.segs.end() || it->first >= iv.hi) break;
            const uintptr_t a = std::max(pos, it->first), b = std::min(iv.hi, it->second.hi);
            add(pos, a, AK_WRITE);  // not noted: not judged
            if (!it->second.valid) {
                add(a, b, AK_WRITE);
            } else {
                const uint8_t* now = reinterpret_cast<const uint8_t*>(a);
                const uint8_t* old = it->second.bytes.data() + (a - it->first);
                if (std::memcmp(now, old, b - a) == 0) {
                    add(a, b, AK_SAME);
                } else {
                    for (uintptr_t x = a; x < b && pieces.size() <= 64;) {
                        const bool eq = now[x - a] == old[x - a];
                        uintptr_t y = x + 1;
                        while (y < b && (now[y - a] == old[y - a]) == eq) ++y;
                        add(x, y, eq ? AK_SAME : AK_WRITE);
                        x = y;
                    }
                }
            }
            pos = std::max(pos, b);
        }
        add(pos, iv.hi, AK_WRITE);
        if (pieces.size() > 64 || (pieces.size() == 1 && pieces[0].kind == AK_WRITE)) {
            out.push_back(iv);  // too fragmented to split (keep the write whole: still checked) or no equal bytes
            continue;
        }
        changed = true;
        out.insert(out.end(), pieces.begin(), pieces.end());
    }
    if (changed) {
        paint_pending();  // the writers stay the same: the painted map needs no repaint
        ivs.resize(P.first_interval);
        ivs.insert(ivs.end(), out.begin(), out.end());
        rt.painted_upto = ivs.size();
    }
    preimage_drop();
}

void record_store(uintptr_t lo, uint64_t n, const uint8_t* before, const Loc& loc) {
    if (n == 0) return;
    preimage_note(lo, n, before);
    if (!cfg.race_check ||
        (std::memcmp(before, reinterpret_cast<const void*>(lo), n) == 0 && written_by_another_block(lo, n))) {
        if (g_track_writes) track_write(lo, n);  // no race to check, but a store all the same
        return;
    }
    record_access(lo, n, AK_WRITE, loc);  // which tracks it too
}

bool gm_scalar(int32_t buf, const void* p, uint32_t nbytes, int write, const Loc& loc) {
    check_in_launch(loc, write == 1 ? "GlobalTensor::SetValue" : write ? "GlobalTensor::operator()" : "GlobalTensor::GetValue");
    tick(loc);
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const bool by_ref = write == 2;
    if (write == 2) {  // a reference: the kernel's own (instrumented) access through it is not charged again
        scalar.skip_once = a;
        write = 0;
    }
    // 3 / 4: Read/WriteGmByPassDCache, the documented cross-core handshake through GM: not a race
    const bool handshake = write >= 3;
    if (handshake) write -= 3;
    const char* api = write ? "GlobalTensor::SetValue" : "GlobalTensor::GetValue";
    const char* dir = write ? "writes" : "reads";
    // GetValue/SetValue (by value) past the buffer within the NPU's page: as a DataCopy there (gm_clip
    // warns, or faults beyond the page or under bounds_mode="strict"); a reference or a handshake cannot
    const bool by_value = !by_ref && !handshake;
    const GmClip clip = by_value ? gm_clip(buf, a, nbytes, nbytes, api, dir, loc)
                                 : (gm_check(buf, a, nbytes, nbytes, api, dir, loc), GmClip{a, a + nbytes, false});
    // a fast stretch of scalar fast-forward (rt_scalar.cpp): bounds checked above, no model, no race record
    if (!clip.clipped && !handshake && !loop_skipping() && ff_take(a, nbytes, write)) return true;
    ++g_scalar_gm_ops;
    if (loop_skipping()) {  // bounds only: the prediction times it
        // a store still lands: the check counts it (unchecked after a skip of calls' work)
        if (write && g_track_writes && !clip.clipped) track_write(a, nbytes);
        return !clip.clipped || clip.own_pages;
    }
    if (clip.clipped) {  // past the buffer: done only within its own pages, and not race-checked
        if (rt.cur) (write ? rt.cur->gm_write : rt.cur->gm_read) += nbytes;
        hot.s_time += scalar_gm_cycles(a, nbytes);
        return clip.own_pages;
    }
    // (record_access does nothing without the race check or write tracking: not called per access then)
    if (!handshake && (cfg.race_check || g_track_writes)) record_access(a, nbytes, write ? AK_WRITE : AK_READ, loc);
    if (rt.cur) (write ? rt.cur->gm_write : rt.cur->gm_read) += nbytes;
    hot.s_time += handshake ? hot.scalar_gm_cycles : ff_detailed(scalar_gm_cycles(a, nbytes), write);  // a bypass skips the cache
    return true;
}

static const char* kind_verb(uint8_t k) { return k == AK_READ ? "reads" : k == AK_ATOMIC ? "atomically updates" : "writes"; }

void race_sweep() {
    auto& ivs = rt.intervals;
    if (ivs.size() < 2) return;
    std::sort(ivs.begin(), ivs.end(), [](const Interval& a, const Interval& b) { return a.lo < b.lo; });
    struct Top {
        uintptr_t end = 0;
        int64_t block = -1;
        size_t idx = 0;
    };
    Top top[4][2];
    // plain writes race with each other unless one left the bytes the others had left (AK_SAME)
    auto conflicts = [](uint8_t a, uint8_t b) {
        const bool wa = a == AK_WRITE || a == AK_SAME, wb = b == AK_WRITE || b == AK_SAME;
        if (wa && wb) return a == AK_WRITE && b == AK_WRITE;
        return !(a == AK_READ && b == AK_READ) && !(a == AK_ATOMIC && b == AK_ATOMIC);
    };
    for (size_t i = 0; i < ivs.size(); ++i) {
        const Interval& iv = ivs[i];
        for (uint8_t k = 0; k < 4; ++k) {
            if (!conflicts(k, iv.kind)) continue;
            for (int j = 0; j < 2; ++j) {
                const Top& t = top[k][j];
                if (t.block >= 0 && t.block != iv.block && t.end > iv.lo) {
                    const Interval& o = ivs[t.idx];
                    uintptr_t lo = std::max(o.lo, iv.lo), hi = std::min(o.hi, iv.hi);
                    int32_t b = gm_lookup(reinterpret_cast<void*>(lo));
                    std::string where = b >= 0 ? fmt("bytes [%llu, %llu) of GM buffer '%s'",
                                                     (unsigned long long)(lo - rt.gm[b].base),
                                                     (unsigned long long)(hi - rt.gm[b].base), rt.gm[b].name.c_str())
                                               : fmt("GM bytes [0x%llx, 0x%llx)", (unsigned long long)lo,
                                                     (unsigned long long)hi);
                    const Interval& first = o.kind != AK_READ ? o : iv;
                    const Interval& second = o.kind != AK_READ ? iv : o;
                    std::string msg = fmt(
                        "block %lld %s %s (%s) that block %lld %s (%s) in the same launch; blocks run in parallel "
                        "on the NPU, so the result depends on timing. Give each block its own output range, or "
                        "accumulate with SetAtomicAdd",
                        (long long)second.block, kind_verb(second.kind), where.c_str(), loc_str(second.loc).c_str(),
                        (long long)first.block, kind_verb(first.kind), loc_str(first.loc).c_str());
                    record_fault("gm_race", second.loc.file_name(), second.loc.line(), msg);
                    return;
                }
            }
        }
        Top* t = top[iv.kind];
        if (t[0].block == iv.block) {
            if (iv.hi > t[0].end) t[0] = Top{iv.hi, iv.block, i};
        } else if (t[1].block == iv.block) {
            if (iv.hi > t[1].end) t[1] = Top{iv.hi, iv.block, i};
            if (t[1].end > t[0].end) std::swap(t[0], t[1]);
        } else if (iv.hi > t[1].end || t[1].block < 0) {
            t[1] = Top{iv.hi, iv.block, i};
            if (t[1].end > t[0].end || t[0].block < 0) std::swap(t[0], t[1]);
        }
    }
}

// ---- timeline ---------------------------------------------------------------------------------
static void hazard(const char* what, Pipe p, double start, uint32_t blk, int other, double other_t, const char* api,
                   const Loc& loc) {
    // (formatted only where it is raised or first warned: a kernel whose every tile races formatted
    // two cycle counts per instruction, a fifth of a softmax matmul's host time)
    if (cfg.sync_check < 2 && rt.sync_warned) return;
    std::string msg = fmt(
        "%s on pipe %s (%s) touches UB bytes [%u, %u) while pipe %s may still be using them (until cycle %.0f; this "
        "instruction starts at cycle %.0f): missing synchronisation (EnQue/DeQue, SetFlag/WaitFlag or PipeBarrier)",
        api, pipe_name(p), what, blk * 32, blk * 32 + 32, pipe_name(other), other_t, start);
    if (cfg.sync_check >= 2) fault("pipe_race", loc, "%s", msg.c_str());
    if (!rt.sync_warned) {
        rt.sync_warned = true;
        warn("pipe_race", loc, msg);
    }
}

double issue(Pipe p, double occ, double lat, const Span* reads, int nr, const Span* writes, int nw, const char* api,
             const Loc& loc) {
    ff_flush();  // the scalar time issues it
    BlockState& b = rt.blk;
    if (g_loop_on && (loop_issue(p, occ, lat, api, loc) || g_loop_timing_only))
        return std::max(hot.s_time, b.free_[p]);  // skipped, or its work done untimed
    double start = std::max(hot.s_time, b.free_[p]);
    hot.s_time += cfg.scalar_issue_cycles;
    double end = start + occ, done = end + lat;
    b.free_[p] = end;
    b.done_[p] = std::max(b.done_[p], done);
    b.busy[p] += occ;
    if (cfg.sync_check > 0) {
        const double eps = 1e-6;
        for (int i = 0; i < nr; ++i) {
            uint32_t lo = reads[i].addr / 32, hi = (reads[i].addr + reads[i].len + 31) / 32;
            for (uint32_t k = lo; k < hi && k < rt.w_pipe.size(); ++k) {
                if (rt.w_pipe[k] != kNoPipe && rt.w_pipe[k] != p && rt.w_end[k] > start + eps)
                    hazard("read after write", p, start, k, rt.w_pipe[k], rt.w_end[k], api, loc);
                if (p == P_V) rt.r_end_v[k] = std::max(rt.r_end_v[k], done);
                else if (p == P_MTE3) rt.r_end_mte3[k] = std::max(rt.r_end_mte3[k], done);
            }
        }
        for (int i = 0; i < nw; ++i) {
            uint32_t lo = writes[i].addr / 32, hi = (writes[i].addr + writes[i].len + 31) / 32;
            for (uint32_t k = lo; k < hi && k < rt.w_pipe.size(); ++k) {
                if (rt.w_pipe[k] != kNoPipe && rt.w_pipe[k] != p && rt.w_end[k] > start + eps)
                    hazard("write after write", p, start, k, rt.w_pipe[k], rt.w_end[k], api, loc);
                if (p != P_V && rt.r_end_v[k] > start + eps)
                    hazard("write after read", p, start, k, P_V, rt.r_end_v[k], api, loc);
                if (p != P_MTE3 && rt.r_end_mte3[k] > start + eps)
                    hazard("write after read", p, start, k, P_MTE3, rt.r_end_mte3[k], api, loc);
                rt.w_end[k] = done;
                rt.w_pipe[k] = uint8_t(p);
            }
        }
    }
    return start;
}

double get_system_cycle() { return hot.s_time; }

// ---- pipes, queues, buffers --------------------------------------------------------------------
static uint32_t alloc_local(uint8_t mem, uint64_t bytes, uint32_t count, const char* what, const Loc& loc) {
    BlockState& b = rt.blk;
    uint32_t al = mem_align(mem);
    uint64_t each = (bytes + al - 1) / al * al;
    uint64_t need = each * count;
    double cap = mem_capacity(mem);
    // The NPU does not check InitBuffer totals (TPipe's size checks are debug-build assertions): a
    // buffer placed past the UB is harmless until the kernel uses it (ub_use_check). Only
    // allocations past the simulator's backing store fault here.
    bool past_ub_unused = mem == MEM_UB && uint64_t(b.top[mem]) + need <= kMemBytes;
    if (double(b.top[mem]) + double(need) > cap && !past_ub_unused) {
        if (mem == MEM_UB)
            fault("ub_overflow", loc, "UB over-allocation: %s needs %llu B (%u x %llu B, each rounded up to 32 B); %u B "
                  "are already allocated, so the total %llu B exceeds the usable UB of %.0f B (UB %.0f B minus the "
                  "reserved bytes)", what, (unsigned long long)need, count, (unsigned long long)each, b.top[mem],
                  (unsigned long long)(b.top[mem] + need), cap, cfg.ub_bytes);
        fault("cube_memory_overflow", loc, "%s over-allocation: %s needs %llu B; %u B already allocated, total %llu B "
              "> %.0f B", mem_name(mem), what, (unsigned long long)need, b.top[mem],
              (unsigned long long)(b.top[mem] + need), cap);
    }
    // The documented 64-buffer and 8-tensors-per-position limits are checked by CANN's CPU debug build
    // and not on the NPU (EvoKernel kernels beyond them ran on a 910B): a fault under
    // bounds_mode="strict", a warning otherwise.
    if (b.buffers + count > uint32_t(cfg.max_buffers)) {
        std::string msg = fmt("%s would bring the kernel to %u buffers; at most %.0f buffers (queue buffers plus "
                              "TBufs) are allowed per kernel", what, b.buffers + count, cfg.max_buffers);
        if (cfg.bounds_strict) fault("too_many_tensors", loc, "%s", msg.c_str());
        warn("too_many_tensors", loc, msg + " (checked by CANN's CPU debug build, not on the NPU)");
    }
    uint32_t addr = b.top[mem];
    b.top[mem] += uint32_t(need);
    b.high[mem] = std::max(b.high[mem], b.top[mem]);
    b.buffers += count;
    std::memset(hot.mem[mem] + addr, 0xFF, need);  // poison: NaN for half/float, -1 for integers
    if (cfg.check_uninit) mark_uninit_range(mem, addr, uint32_t(need));
    return addr;
}

void tpipe_init(void* self, const Loc&) {
    if (!hot.in_launch) return;
    for (int m = 0; m < MEM_COUNT; ++m) rt.blk.top[m] = 0;
    hot.tpipe = self;
    rt.blk.tpipe = self;
}
void tpipe_reset(void* self, const Loc& loc) {
    check_in_launch(loc, "TPipe::Reset");
    for (int m = 0; m < MEM_COUNT; ++m) rt.blk.top[m] = 0;
    for (auto& q : rt.blk.queues) q.live = false;
    rt.blk.buffers = 0;
    for (int& c : rt.blk.live_per_pos) c = 0;
    (void)self;
}
void tpipe_release(void* self) {
    if (hot.tpipe == self) hot.tpipe = nullptr;
}

int32_t que_init(uint8_t src_pos, uint8_t dst_pos, int32_t depth, uint32_t num, uint32_t len, const Loc& loc) {
    check_in_launch(loc, "TPipe::InitBuffer");
    tick(loc);
    if (num == 0)
        fault("invalid_argument", loc, "TPipe::InitBuffer(que, %u, %u): the number of buffers must be positive", num,
              len);
    // A zero length is not checked on the NPU (a debug-build assertion): the queue gets empty buffers,
    // and only a tensor access through them is out of bounds.
    if (len == 0)
        warn("invalid_argument", loc,
             fmt("TPipe::InitBuffer(que, %u, 0): buffers of length 0; a tensor taken from them has no elements", num));
    Queue q;
    q.live = true;
    q.src_pos = src_pos;
    q.dst_pos = dst_pos;
    q.mem = mem_of_pos(src_pos);
    q.prod = producer_of(src_pos);
    q.cons = consumer_of(dst_pos);
    q.depth = depth;
    q.len = len;
    q.init_loc = loc;
    std::string what = fmt("InitBuffer(queue %s, %u, %u)", pos_name(src_pos), num, len);
    uint32_t addr = alloc_local(q.mem, len, num, what.c_str(), loc);
    uint32_t each = (len + mem_align(q.mem) - 1) / mem_align(q.mem) * mem_align(q.mem);
    q.slots.resize(num);
    // InitBuffer pads each buffer up to the memory's alignment (32 B in UB, CANN InitBuffer docs): the padding
    // is part of the buffer, so a 32-byte-granular DataCopyPad into it stays inside
    for (uint32_t i = 0; i < num; ++i) {
        q.slots[i].addr = addr + i * each;
        q.slots[i].len = each;
    }
    if (!rt.blk.free_queues.empty()) {
        const int32_t h = rt.blk.free_queues.back();
        rt.blk.free_queues.pop_back();
        rt.blk.queues[size_t(h)] = std::move(q);
        return h;
    }
    rt.blk.queues.push_back(std::move(q));
    return int32_t(rt.blk.queues.size() - 1);
}

static Queue& get_que(int32_t h, uint32_t gen, const char* api, const Loc& loc) {
    check_in_launch(loc, api);
    tick(loc);
    if (h < 0)
        fault("queue_misuse", loc, "%s on a queue that was never initialised with TPipe::InitBuffer", api);
    if (gen != hot.gen || size_t(h) >= rt.blk.queues.size())
        fault("queue_misuse", loc, "%s on a queue initialised in another block or launch: call InitBuffer in the "
              "kernel, for every block", api);
    Queue& q = rt.blk.queues[h];
    if (!q.live) fault("queue_misuse", loc, "%s on a queue whose buffers were released by TPipe::Reset/Destroy", api);
    return q;
}

static BufInfo info_of(const Queue& q, int32_t h, int slot) {
    BufInfo b;
    b.addr = q.slots[slot].addr;
    b.len = q.slots[slot].len;
    b.que = int16_t(h);
    b.slot = int16_t(slot);
    b.mem = q.mem;
    b.pos = q.src_pos;
    b.gen = hot.gen;
    return b;
}

// A queue buffer or TBuf that InitBuffer placed (partly) past the usable UB, when the kernel takes it.
static void ub_use_check(uint8_t mem, uint64_t addr, uint64_t bytes, const char* api, const Loc& loc) {
    double cap = mem_capacity(mem);
    if (mem != MEM_UB || double(addr + bytes) <= cap) return;
    fault("ub_overflow", loc, "%s: the buffer at UB bytes [%llu, %llu) ends past the usable UB: the InitBuffer sizes "
          "before it and its own, each rounded up to 32 B, total %llu B, which exceeds the usable UB of %.0f B (the NPU "
          "takes the InitBuffer calls unchecked, but a tensor there lies outside the UB)", api,
          (unsigned long long)addr, (unsigned long long)(addr + bytes), (unsigned long long)(addr + bytes), cap);
}

BufInfo que_alloc(int32_t h, uint32_t gen, const Loc& loc) {
    Queue& q = get_que(h, gen, "AllocTensor", loc);
    int n = int(q.slots.size()), pick = -1;
    for (int k = 0; k < n; ++k) {
        int s = int((q.next + k) % n);
        if (q.slots[s].state == S_FREE) {
            pick = s;
            break;
        }
    }
    if (pick < 0) {
        std::string where;
        for (auto& s : q.slots) where += (where.empty() ? "" : ", ") + loc_str(s.alloc_loc);
        fault("queue_full", loc, "AllocTensor on a full queue (%s, %d buffer%s, all in use; allocated at %s): free a "
              "tensor first. On the NPU this call would wait forever", pos_name(q.src_pos), n, n == 1 ? "" : "s",
              where.c_str());
    }
    int& live = rt.blk.live_per_pos[q.src_pos & 31];
    if (live + 1 > int(cfg.max_tensors_per_position)) {  // as the buffer limit above: strict mode faults
        std::string msg = fmt("AllocTensor would make %d tensors allocated at once at position %s; at most %.0f are "
                              "allowed on this SoC (free tensors earlier)", live + 1, pos_name(q.src_pos),
                              cfg.max_tensors_per_position);
        if (cfg.bounds_strict) fault("too_many_tensors", loc, "%s", msg.c_str());
        warn("too_many_tensors", loc, msg + " (checked by CANN's CPU debug build, not on the NPU)");
    }
    live++;
    q.next = uint32_t(pick + 1);
    Slot& s = q.slots[pick];
    ub_use_check(q.mem, s.addr, s.len, "AllocTensor", loc);
    s.state = S_ALLOC;
    s.alloc_loc = loc;
    // the producer may write the buffer only after its previous consumer released it
    rt.blk.free_[q.prod] = std::max(rt.blk.free_[q.prod], s.freed);
    return info_of(q, h, pick);
}

void que_enque(int32_t h, uint32_t gen, const TRef& t, const Loc& loc) {
    Queue& q = get_que(h, gen, "EnQue", loc);
    if (t.que != h || t.gen != gen || t.slot < 0 || size_t(t.slot) >= q.slots.size())
        fault("queue_misuse", loc, "EnQue of a tensor that was not allocated from this queue (%s): EnQue on the queue "
              "the tensor came from", pos_name(q.src_pos));
    Slot& s = q.slots[t.slot];
    if (s.state == S_FREE) fault("queue_misuse", loc, "EnQue of a tensor that was already freed");
    if (s.state == S_QUEUED) fault("queue_misuse", loc, "EnQue of a tensor that is already in the queue");
    if (q.depth > 0 && int(q.fifo.size()) >= q.depth)
        fault("queue_full", loc, "EnQue on a queue that already holds %d tensor%s, its depth (the TQue depth template "
              "argument): DeQue first or declare a deeper queue", q.depth, q.depth == 1 ? "" : "s");
    s.state = S_QUEUED;
    s.ready = rt.blk.done_[q.prod];
    q.fifo.push_back(t.slot);
}

BufInfo que_deque(int32_t h, uint32_t gen, const Loc& loc) {
    Queue& q = get_que(h, gen, "DeQue", loc);
    if (q.fifo.empty())
        fault("queue_empty", loc, "DeQue on an empty queue (%s): nothing was EnQue'd. On the NPU this call would "
              "wait forever", pos_name(q.src_pos));
    int slot = q.fifo.front();
    q.fifo.erase(q.fifo.begin());
    Slot& s = q.slots[slot];
    s.state = S_DEQUEUED;
    rt.blk.free_[q.cons] = std::max(rt.blk.free_[q.cons], s.ready);
    return info_of(q, h, slot);
}

void que_free(int32_t h, uint32_t gen, const TRef& t, const Loc& loc) {
    Queue& q = get_que(h, gen, "FreeTensor", loc);
    if (t.que < 0)
        fault("foreign_free", loc, "FreeTensor of a tensor that does not come from a queue (a TBuf tensor or a "
              "default-constructed LocalTensor)");
    if (t.que != h || t.gen != gen)
        fault("foreign_free", loc, "FreeTensor on queue #%d (%s) of a tensor allocated from another queue (#%d): "
              "free it on its own queue", h, pos_name(q.src_pos), int(t.que));
    Slot& s = q.slots[t.slot];
    if (s.state == S_FREE) fault("foreign_free", loc, "FreeTensor of a tensor that is already free (double free)");
    if (s.state == S_QUEUED) {
        // FreeTensor documents no constraint on the tensor's queue state and the NPU checks none
        // (cann-ops' inplace_attn_softmax frees a tensor it EnQue'd and then used directly): the
        // buffer is released and leaves the queue, so a later DeQue does not return it.
        warn("queue_misuse", loc, "FreeTensor of a tensor that is still in the queue (EnQue'd but not DeQue'd): "
             "the buffer is released and taken out of the queue; the docs pair EnQue with DeQue");
        q.fifo.erase(std::find(q.fifo.begin(), q.fifo.end(), int(t.slot)));
    }
    s.state = S_FREE;
    s.freed = rt.blk.done_[q.cons];
    rt.blk.live_per_pos[q.src_pos & 31]--;
}

int32_t que_query(int32_t h, uint32_t gen, int what) {
    if (!hot.in_launch || h < 0 || gen != hot.gen || size_t(h) >= rt.blk.queues.size()) return 0;
    Queue& q = rt.blk.queues[h];
    if (what == 0) return int32_t(q.fifo.size());
    if (what == 1) {
        int n = 0;
        for (auto& s : q.slots) n += s.state == S_FREE;
        return n;
    }
    return int32_t(q.slots.size());
}

static void leak_check(Queue& q, int h) {
    for (auto& s : q.slots) {
        if (s.state == S_FREE) continue;
        // A warning: the NPU does not check at kernel end, and public samples that leak one (the
        // asc-devkit layernorm sample) run correctly on it; the docs still require the pair.
        std::string msg = fmt("a tensor allocated at %s from queue #%d (%s, %zu x %u B) is %s when the kernel ends; "
                              "the Ascend C docs pair every AllocTensor with a FreeTensor", loc_str(s.alloc_loc).c_str(),
                              h, pos_name(q.src_pos), q.slots.size(), q.len,
                              s.state == S_QUEUED ? "still enqueued" : "never freed");
        warn("tensor_leak", s.alloc_loc, msg);
        return;
    }
}

void que_release(int32_t h, uint32_t gen) {
    if (!hot.in_launch || h < 0 || gen != hot.gen || size_t(h) >= rt.blk.queues.size()) return;
    Queue& q = rt.blk.queues[h];
    if (q.handle_free) return;
    q.handle_free = true;
    rt.blk.free_queues.push_back(h);
    if (!q.live) return;
    q.live = false;
    if (std::uncaught_exceptions() > 0 || rt.faulted) return;
    leak_check(q, h);
}

BufInfo tbuf_init(uint8_t pos, uint32_t len, const Loc& loc) {
    check_in_launch(loc, "TPipe::InitBuffer");
    tick(loc);
    if (len == 0) fault("invalid_argument", loc, "TPipe::InitBuffer(tbuf, 0): the length must be positive");
    uint8_t mem = mem_of_pos(pos);
    std::string what = fmt("InitBuffer(TBuf %s, %u)", pos_name(pos), len);
    BufInfo b;
    b.addr = alloc_local(mem, len, 1, what.c_str(), loc);
    b.len = (len + mem_align(mem) - 1) / mem_align(mem) * mem_align(mem);  // padded, as for queues
    b.que = -1;
    b.slot = -1;
    b.mem = mem;
    b.pos = pos;
    b.gen = hot.gen;
    return b;
}

// Static tensors (LocalMemAllocator, the LocalTensor(pos, addr, size) constructor): the kernel
// places them itself, from address 0, without TPipe; only the memory's capacity is checked.
BufInfo static_tensor(uint8_t pos, uint32_t addr, uint64_t bytes, const Loc& loc) {
    check_in_launch(loc, "LocalMemAllocator::Alloc");
    tick(loc);
    uint8_t mem = mem_of_pos(pos);
    double cap = mem_capacity(mem);
    if (double(addr) + double(bytes) > cap) {
        if (mem == MEM_UB)
            fault("ub_overflow", loc, "UB over-allocation: a static tensor of %llu B at UB byte %u ends at byte %llu, "
                  "beyond the usable UB of %.0f B", (unsigned long long)bytes, addr,
                  (unsigned long long)(addr + bytes), cap);
        fault("cube_memory_overflow", loc, "%s over-allocation: a static tensor of %llu B at byte %u ends beyond its "
              "%.0f B", mem_name(mem), (unsigned long long)bytes, addr, cap);
    }
    uint32_t al = mem_align(mem);
    if (addr % al != 0)
        fault(mem == MEM_UB ? "unaligned_local_tensor" : "unaligned_cube_tensor", loc,
              "a static tensor at %s byte %u is not %u-byte aligned", mem_name(mem), addr, al);
    rt.blk.high[mem] = std::max<uint32_t>(rt.blk.high[mem], uint32_t(addr + bytes));
    BufInfo b;
    b.addr = addr;
    // A static tensor in a cube memory (L1, L0A/L0B/L0C, bias table, fixpipe buffer) is a view the
    // kernel placed itself: a cube instruction may run past its declared size (e.g. Mmad's n rounded
    // up to 32 int8 columns over an L0C tile sized for 16) and stays within the memory, as on the NPU.
    b.len = mem == MEM_UB ? uint32_t(bytes) : uint32_t(cap - double(addr));
    b.que = -1;
    b.slot = -1;
    b.mem = mem;
    b.pos = pos;
    b.gen = hot.gen;
    return b;
}

// PopStackBuffer: all of the position's memory above what TPipe allocated (len 0 when none is left)
BufInfo stack_buffer(uint8_t pos, const Loc& loc) {
    check_in_launch(loc, "PopStackBuffer");
    tick(loc);
    uint8_t mem = mem_of_pos(pos);
    uint32_t al = mem_align(mem);
    uint64_t addr = (uint64_t(rt.blk.top[mem]) + al - 1) / al * al;
    double cap = mem_capacity(mem);
    BufInfo b;
    b.addr = uint32_t(addr);
    b.len = double(addr) < cap ? uint32_t(cap - double(addr)) : 0;
    b.que = -1;
    b.slot = -1;
    b.mem = mem;
    b.pos = pos;
    b.gen = hot.gen;
    if (b.len) rt.blk.high[mem] = std::max<uint32_t>(rt.blk.high[mem], uint32_t(addr + b.len));
    return b;
}

void tbuf_check(const BufInfo& b, uint64_t off, uint64_t nbytes, const Loc& loc) {
    check_in_launch(loc, "TBuf::Get");
    if (b.gen != hot.gen || b.len == 0)
        fault("queue_misuse", loc, "TBuf::Get on a TBuf that was not initialised with TPipe::InitBuffer in this block");
    if (off + nbytes > b.len)
        fault("local_out_of_bounds", loc, "TBuf::Get of %llu B at offset %llu exceeds the TBuf's %u B",
              (unsigned long long)nbytes, (unsigned long long)off, b.len);
    ub_use_check(b.mem, b.addr + off, nbytes ? nbytes : b.len - off, "TBuf::Get", loc);  // 0: the whole TBuf
}

// ---- synchronisation, masks, atomics -------------------------------------------------------------
void pipe_barrier(int pipe, const Loc& loc) {
    check_in_launch(loc, "PipeBarrier");
    tick(loc);
    BlockState& b = rt.blk;
    if (pipe == -1) {  // PIPE_ALL: every pipe and the scalar unit wait for everything issued so far
        double t = hot.s_time;
        for (int p = 0; p < P_COUNT; ++p) t = std::max(t, b.done_[p]);
        for (int p = 0; p < P_COUNT; ++p) b.free_[p] = std::max(b.free_[p], t);
        hot.s_time = t;
    } else if (pipe >= 0 && pipe < P_COUNT) {
        b.free_[pipe] = std::max(b.free_[pipe], b.done_[pipe]);
    }
    hot.s_time += cfg.scalar_issue_cycles;
}

static std::array<EventQ, 8>& event_slot(int event) {
    auto& ev = rt.blk.events;
    if (size_t(event) >= ev.size()) ev.resize(event + 1);
    return ev[event];
}

void set_flag(int src, int dst, int event, int id, const Loc& loc) {
    check_in_launch(loc, "SetFlag");
    tick(loc);
    if (id < 0 || id > 7) fault("invalid_argument", loc, "SetFlag event id %d out of range [0, 7]", id);
    double t = src == P_S ? hot.s_time : (src >= 0 && src < P_COUNT ? rt.blk.done_[src] : hot.s_time);
    event_slot(event)[id].times.push_back(t);
    hot.s_time += cfg.scalar_issue_cycles;
    (void)dst;
}

void wait_flag(int src, int dst, int event, int id, const Loc& loc) {
    check_in_launch(loc, "WaitFlag");
    tick(loc);
    if (id < 0 || id > 7) fault("invalid_argument", loc, "WaitFlag event id %d out of range [0, 7]", id);
    auto& q = event_slot(event)[id].times;
    if (q.empty())
        fault("watchdog", loc, "deadlock: WaitFlag (%s -> %s, event id %d) has no matching SetFlag before it; on the "
              "NPU pipe %s would wait forever", pipe_name(src), pipe_name(dst), id, pipe_name(dst));
    double t = q.front();
    q.erase(q.begin());
    if (dst == P_S) hot.s_time = std::max(hot.s_time, t);
    else if (dst >= 0 && dst < P_COUNT) rt.blk.free_[dst] = std::max(rt.blk.free_[dst], t);
    hot.s_time += cfg.scalar_issue_cycles;
}

int32_t fetch_event_id(int event) {
    if (event < 0 || event > 255) return 0;
    return int32_t(rt.blk.next_event[event]++ % 8);
}

void set_mask_mode(int counter, const Loc& loc) {
    check_in_launch(loc, counter ? "SetMaskCount" : "SetMaskNorm");
    rt.blk.counter_mode = counter != 0;
}

void set_vector_mask(uint64_t hi, uint64_t lo, int es, int by_len, int64_t len, const Loc& loc) {
    check_in_launch(loc, "SetVectorMask");
    tick(loc);
    BlockState& b = rt.blk;
    if (b.counter_mode) {
        b.mask_count = by_len ? len : int64_t(lo);
        if (b.mask_count < 0) fault("mask_out_of_range", loc, "SetVectorMask: negative element count in counter mode");
        b.mask_lo = uint64_t(b.mask_count);
        return;
    }
    uint32_t epr = 256 / uint32_t(es);
    if (by_len) {
        if (len < 1 || len > int64_t(epr))
            fault("mask_out_of_range", loc, "SetVectorMask(len=%lld) out of range [1, %u] for %d-byte elements",
                  (long long)len, epr, es);
        b.mask_lo = len >= 64 ? ~0ull : ((1ull << len) - 1);
        b.mask_hi = len > 64 ? (len >= 128 ? ~0ull : ((1ull << (len - 64)) - 1)) : 0;
    } else {
        if (epr <= 64 && hi != 0)
            fault("mask_out_of_range", loc, "SetVectorMask: maskHigh must be 0 for %d-byte elements (a repeat has "
                  "only %u elements)", es, epr);
        if (hi == 0 && lo == 0) fault("mask_out_of_range", loc, "SetVectorMask: an all-zero mask selects nothing");
        b.mask_lo = lo;
        b.mask_hi = hi;
    }
}

void reset_mask(const Loc& loc) {
    check_in_launch(loc, "ResetMask");
    rt.blk.mask_lo = ~0ull;
    rt.blk.mask_hi = ~0ull;
    rt.blk.mask_count = 0;
}

void set_atomic(int mode, DT dt, const Loc& loc) {
    check_in_launch(loc, "SetAtomic");
    tick(loc);
    if (mode >= 0) rt.blk.atomic = mode;
    rt.blk.atomic_dt = dt;
}

// An API called with a data type it lacks, where asc-devkit checks the type only at run time
// (KGSIM_DTYPES_RUNTIME in base.h)
void dtype_unsupported(const char* api, const char* type, const char* supported, const Loc& loc) {
    check_in_launch(loc, api);
    fault("unsupported_dtype", loc,
          "%s: this data type (%s) is not supported by the API on Atlas A2 (Ascend910B); supported: %s", api, type,
          supported);
}

void set_deq_scale(double scale, const Loc& loc) {
    check_in_launch(loc, "SetDeqScale");
    rt.blk.deq_scale = scale;
}

void sync_all(const Loc& loc, bool aiv_only) {
    check_in_launch(loc, "SyncAll");
    tick(loc);
    pipe_barrier(-1, loc);
    block_barrier(loc, aiv_only);  // rt_blocks.cpp: wait for every block of the launch
}

void kernel_printf(const char* f, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    std::fputs(buf, stdout);
    std::fflush(stdout);
}

void kernel_assert_fail(const char* expr, const Loc& loc) {
    fault("kernel_assert", loc, "assertion failed in the kernel: %s", expr);
}

// AscendC::Trap(): on the NPU the AI Core stops the kernel there (an AI Core exception the host sees at
// the next synchronisation); CANN's CPU debug build treats it as a failed assert. Here the block ends
// with a kernel_trap fault, as a failed assert does.
void kernel_trap(const Loc& loc) {
    check_in_launch(loc, "Trap");
    fault("kernel_trap", loc, "Trap() called: the kernel stops here (AscendC::Trap aborts the AI Core)");
}

// ---- launches --------------------------------------------------------------------------------
bool launch_begin(const char* name, int64_t nb, const char* file, int line) {
    if (rt.faulted) return false;
    rt.launches.emplace_back();
    LaunchRec& L = rt.launches.back();
    rt.cur = &L;
    L.kernel = name ? name : "kernel";
    L.file = file ? file : "";
    L.line = line;
    L.num_blocks = nb;
    if (nb < 1 || nb > 65535) {
        record(L.faults, "bad_launch", L.file.c_str(), uint32_t(line),
               fmt("kernel %s launched with %lld blocks; the block count must be in [1, 65535]", L.kernel.c_str(),
                   (long long)nb));
        rt.faulted = true;
        launch_end();
        return false;
    }
    hot.in_launch = 1;
    hot.block_num = nb;
    hot.api_calls = 0;
    hot.next_check = 4096;
    hot.check_uninit = cfg.check_uninit != 0;
    hot.scalar_ub_cycles = cfg.scalar_ub_access_cycles;
    hot.scalar_ub_store_load_cycles = cfg.scalar_ub_store_load_cycles;
    hot.scalar_gm_cycles = cfg.scalar_gm_access_cycles;
    rt.clear_intervals();
    rt.race_overflow = false;
    rt.sync_warned = false;
    cube_launch_reset();
    rt.launch_wall_start = now_s();
    loop_launch_begin();
    L.block_cycles.reserve(size_t(nb));
    L.block_busy.reserve(size_t(nb));
    return true;
}

void block_begin(int64_t blk) {
    BlockState& b = rt.blk;
    dcache_reset();
    for (int p = 0; p < P_COUNT; ++p) b.free_[p] = b.done_[p] = b.busy[p] = 0;
    for (int m = 0; m < MEM_COUNT; ++m) b.top[m] = b.high[m] = 0;
    b.buffers = 0;
    b.queues.clear();
    b.free_queues.clear();
    for (int& c : b.live_per_pos) c = 0;
    b.counter_mode = false;
    b.mask_lo = b.mask_hi = ~0ull;
    b.mask_count = 0;
    b.atomic = 0;
    b.atomic_dt = DT::F32;
    b.deq_scale = 1.0;
    for (int f = 0; f < 2; ++f) {
        b.fm_h[f] = b.fm_w[f] = 0;
        for (int i = 0; i < 4; ++i) b.fm_pad[f][i] = 0;
    }
    b.load3d_pad = 0;
    b.events.clear();
    std::memset(b.next_event, 0, sizeof b.next_event);
    b.tpipe = nullptr;
    hot.tpipe = nullptr;
    hot.block_idx = blk;
    if (rt.cur) rt.cur->gm_mark = rt.cur->gm_read + rt.cur->gm_write;
    hot.s_time = 0;
    hot.ub_store_pending = 0;
    hot.gen++;
    rt.blk.calls_base = hot.api_calls;
    loop_block_begin();
    ff_block_begin();
    if (cfg.sync_check > 0) {
        uint32_t n = uint32_t(std::min<double>(cfg.ub_bytes, double(kMemBytes)) / 32) + 1;
        std::fill(rt.w_pipe.begin(), rt.w_pipe.begin() + n, kNoPipe);
        std::fill(rt.w_end.begin(), rt.w_end.begin() + n, 0.0);
        std::fill(rt.r_end_v.begin(), rt.r_end_v.begin() + n, 0.0);
        std::fill(rt.r_end_mte3.begin(), rt.r_end_mte3.begin() + n, 0.0);
    }
}

void block_exception(const char* what) {
    record_fault("kernel_exception", "", 0, fmt("the kernel threw a C++ exception: %s", what));
}

bool block_end(int64_t uid) {
    BlockState& b = rt.blk;
    ff_flush();
    if (!rt.faulted) preimage_settle(uid);
    if (!rt.faulted) {
        for (size_t h = 0; h < b.queues.size(); ++h)
            if (b.queues[h].live) {
                leak_check(b.queues[h], int(h));
                b.queues[h].live = false;
                if (rt.faulted) break;
            }
    }
    double spread = loop_block_end();  // a loop skip still running ends here
    spread += ff_block_end();          // and the block's scalar fast-forward
    double t = hot.s_time;
    for (int p = 0; p < P_COUNT; ++p) t = std::max(t, b.done_[p]);
    std::array<double, P_COUNT> busy{};
    for (int p = 0; p < P_COUNT; ++p) busy[p] = b.busy[p];
    busy[P_S] = hot.s_time;
    if (rt.cur) {  // by core: blocks that wait end out of order
        size_t i = size_t(std::max<int64_t>(0, uid));
        if (rt.cur->block_cycles.size() <= i) {
            rt.cur->block_cycles.resize(i + 1, 0.0);
            rt.cur->block_busy.resize(i + 1, std::array<double, P_COUNT>{});
            rt.cur->block_ran.resize(i + 1, 0);
            rt.cur->block_gm.resize(i + 1, 0);
            rt.cur->block_spread.resize(i + 1, 0.0);
        }
        rt.cur->block_spread[i] = spread;
        rt.cur->block_cycles[i] = t;
        rt.cur->block_busy[i] = busy;
        rt.cur->block_ran[i] = 1;
        // exact for blocks that run start to end; a block that waited shares its span with others,
        // which only matters to sampled simulation, and that cannot sample waiting kernels
        rt.cur->block_gm[i] = rt.cur->gm_read + rt.cur->gm_write - rt.cur->gm_mark;
        rt.cur->blocks_run++;
    }
    return !rt.faulted;
}

void launch_end() {
    LaunchRec& L = *rt.cur;
    bool ran = hot.in_launch;
    hot.in_launch = 0;
    ff.left = ff.paused_left = 0, ff.skipping = false;  // a trapped block's fast stretch ends with the launch (accessors outside one must fault)
    if (ran && L.faults.empty() && cfg.race_check) race_sweep();
    rt.clear_intervals();
    time_launch(L);
    rt.cur = nullptr;
}

void host_exception(const char* what) {
    record_fault("host_exception", "", 0, fmt("the host function threw a C++ exception: %s", what));
}

// ---- JSON report -------------------------------------------------------------------------------
static void jstr(std::string& o, const std::string& s) {
    o += '"';
    for (char c : s) {
        switch (c) {
            case '"': o += "\\\""; break;
            case '\\': o += "\\\\"; break;
            case '\n': o += "\\n"; break;
            case '\t': o += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) o += fmt("\\u%04x", c);
                else o += c;
        }
    }
    o += '"';
}
static void jnum(std::string& o, double v) {
    if (!std::isfinite(v)) v = 0;
    o += fmt("%.17g", v);
}
static void jfaults(std::string& o, const std::vector<FaultRec>& fs) {
    o += '[';
    for (size_t i = 0; i < fs.size(); ++i) {
        if (i) o += ',';
        o += "{\"error_class\":";
        jstr(o, fs[i].cls);
        o += ",\"message\":";
        jstr(o, fs[i].msg);
        o += ",\"file\":";
        jstr(o, fs[i].file);
        o += fmt(",\"line\":%u,\"block\":%lld}", fs[i].line, (long long)fs[i].block);
    }
    o += ']';
}
static std::string report_json() {
    std::string o = "{\"launches\":[";
    for (size_t i = 0; i < rt.launches.size(); ++i) {
        const LaunchRec& L = rt.launches[i];
        if (i) o += ',';
        o += "{\"kernel\":";
        jstr(o, L.kernel);
        o += ",\"file\":";
        jstr(o, L.file);
        o += fmt(",\"line\":%d,\"num_blocks\":%lld,\"blocks_run\":%lld,\"cores_used\":%lld,\"waves\":%lld", L.line,
                 (long long)L.num_blocks, (long long)L.blocks_run, (long long)L.cores_used, (long long)L.waves);
        o += fmt(",\"gm_read\":%llu,\"gm_write\":%llu", (unsigned long long)L.gm_read, (unsigned long long)L.gm_write);
        o += ",\"latency_s\":"; jnum(o, L.latency_s);
        o += ",\"latency_cycles\":"; jnum(o, L.cycles);
        o += ",\"compute_s\":"; jnum(o, L.compute_s);
        o += ",\"hbm_s\":"; jnum(o, L.hbm_s);
        o += ",\"gm_port_s\":"; jnum(o, L.gm_port_s);
        o += ",\"launch_s\":"; jnum(o, L.launch_s);
        o += ",\"bound\":"; jstr(o, L.bound);
        o += fmt(",\"blocks_skipped\":%lld", (long long)L.blocks_skipped);
        o += ",\"latency_lo_s\":"; jnum(o, L.latency_lo_s);
        o += ",\"latency_hi_s\":"; jnum(o, L.latency_hi_s);
        o += fmt(",\"loop_sampled_blocks\":%lld,\"loop_periods_skipped\":%llu", (long long)L.loop_sampled_blocks,
                 (unsigned long long)L.loop_periods_skipped);
        o += fmt(",\"loop_jumps\":%llu", (unsigned long long)L.loop_jumps);
        o += fmt(",\"scalar_ff_accesses\":%llu", (unsigned long long)L.scalar_ff_accesses);
        o += ",\"loop_fallback\":"; jstr(o, L.loop_fallback);
        o += ",\"per_pipe_busy\":{";
        for (int p = 0; p < P_COUNT; ++p) {
            if (p) o += ',';
            jstr(o, pipe_name(p));
            o += ':';
            jnum(o, L.critical_busy[p]);
        }
        o += "},\"block_cycles\":[";
        for (size_t b = 0; b < L.block_cycles.size(); ++b) {
            if (b) o += ',';
            jnum(o, L.block_cycles[b]);
        }
        o += "],\"faults\":";
        jfaults(o, L.faults);
        o += ",\"warnings\":";
        jfaults(o, L.warnings);
        o += '}';
    }
    o += "],\"host_faults\":";
    jfaults(o, rt.host_faults);
    o += fmt(",\"scalar_blocks\":%llu,\"host_scalar_blocks\":%llu,\"gm_scalar_accesses\":%llu",
             (unsigned long long)scalar.blocks, (unsigned long long)scalar.host_blocks,
             (unsigned long long)scalar.gm_accesses);
    o += fmt(",\"ub_store_loads\":%llu", (unsigned long long)hot.ub_store_loads);
    o += fmt(",\"host_eager_ops\":%llu,\"host_eager_bytes\":%llu", (unsigned long long)scalar.eager_ops,
             (unsigned long long)scalar.eager_bytes);
    o += '}';
    return o;
}

}  // namespace kgsim

// `hot` under a C name for the basic-block counter that toolchain/as writes inline into kernel code
// (its field offsets are checked in rt_scalar.cpp)
extern "C" kgsim::Hot kgsim_asm_hot __attribute__((alias("_ZN5kgsim3hotE")));

// ---- C entry points (Python) -----------------------------------------------------------------
extern "C" {
const char* kgsim_config_names() {
    static std::string names = [] {
        std::string s;
#define KGSIM_X(n) s += (s.empty() ? "" : ","), s += #n;
        KGSIM_CONFIG_FIELDS(KGSIM_X)
#undef KGSIM_X
        return s;
    }();
    return names.c_str();
}

void kgsim_set_config(const double* values, int n) {
    double* dst = reinterpret_cast<double*>(&kgsim::cfg);
    int total = int(sizeof(kgsim::Config) / sizeof(double));
    for (int i = 0; i < n && i < total; ++i) dst[i] = values[i];
    kgsim::hot.scalar_ub_cycles = kgsim::cfg.scalar_ub_access_cycles;
    kgsim::hot.scalar_ub_store_load_cycles = kgsim::cfg.scalar_ub_store_load_cycles;
    kgsim::hot.scalar_gm_cycles = kgsim::cfg.scalar_gm_access_cycles;
    kgsim::hot.check_uninit = kgsim::cfg.check_uninit != 0;
    kgsim::scalar.block_cycles = kgsim::cfg.scalar_block_cycles;
}

void kgsim_call_begin() {
    using namespace kgsim;
    rt.gm.clear();
    ++g_gm_gen;
    rt.launches.clear();
    rt.errors_taken = 0;
    rt.host_faults.clear();
    rt.clear_intervals();
    rt.faulted = false;
    rt.cur = nullptr;
    hot.in_launch = 0;
    scalar.blocks = scalar.host_blocks = scalar.gm_accesses = 0;
    scalar.next_check = kScalarWatchdogBlocks;
    scalar.eager_ops = scalar.eager_bytes = 0;
    scalar.skip_once = 0;
    hot.ub_store_loads = 0;
}

void kgsim_register_gm(const char* name, const void* base, unsigned long long size) {
    kgsim::GmBuf b;
    b.name = name ? name : "?";
    b.base = reinterpret_cast<uintptr_t>(base);
    b.size = size;
    b.guarded = kgsim::gm_is_isolated(b.base, b.size);
    kgsim::rt.gm.push_back(std::move(b));
    ++kgsim::g_gm_gen;
}

void* kgsim_gm_alloc(unsigned long long bytes) { return kgsim::gm_alloc(bytes); }

// glibc's assert in kernel code (kernel sources are compiled with
// -D__assert_fail=kgsim_assert_fail): on the NPU a failed assert traps the core, the launch
// ends, and the stream reports an AI Core exception at the next synchronisation (the sample
// goes on). Outside a launch it is the host program's own assert.
[[noreturn]] void kgsim_assert_fail(const char* expr, const char* file, unsigned int line, const char* func) noexcept {
    if (kgsim::hot.in_launch) {
        if (!kgsim::rt.faulted)
            kgsim::record_fault("kernel_assert", file, line, kgsim::fmt("assertion failed in the kernel: %s", expr));
        kgsim::trap_block();
    }
    std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file ? file : "?", line, func ? func : "?",
                 expr ? expr : "?");
    std::abort();
}

// For aclrtSynchronizeStream/Device: 1 and the first fault's message when a launch since the
// last call faulted, else 0.
int kgsim_stream_error(const char** msg) {
    static std::string last;
    int found = 0;
    for (size_t i = kgsim::rt.errors_taken; i < kgsim::rt.launches.size() && !found; ++i)
        if (!kgsim::rt.launches[i].faults.empty()) {
            const kgsim::FaultRec& f = kgsim::rt.launches[i].faults.front();
            last = f.cls + ": " + f.msg;
            found = 1;
        }
    kgsim::rt.errors_taken = kgsim::rt.launches.size();
    if (found && msg) *msg = last.c_str();
    return found;
}
int kgsim_gm_free(void* p) { return kgsim::gm_free(p) ? 0 : -1; }

const char* kgsim_call_end() {
    static std::string out;
    kgsim::hot.in_launch = 0;
    out = kgsim::report_json();
    return out.c_str();
}

int kgsim_abi_version() { return 1; }
}
