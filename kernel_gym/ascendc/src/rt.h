// kgsim runtime internals (not included by kernels).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "kgsim/base.h"

namespace kgsim {

// Host backing store of each local memory (UB, L1, L0A/B/C, BT): at least any profile's size.
constexpr uint32_t kLocalMemBytes = 1u << 20;

// SoC profile and options, set from Python before every call (see soc.py / loader.py).
#define KGSIM_CONFIG_FIELDS(X)                                                                                \
    X(aiv_cores) X(aic_cores) X(clock_hz) X(ub_bytes) X(usable_ub_bytes) X(l1_bytes) X(l0a_bytes) X(l0b_bytes) \
    X(l0c_bytes) X(l2_bytes) X(hbm_bytes) X(ub_align) X(max_buffers) X(max_tensors_per_position) X(max_repeat) \
    X(hbm_bytes_per_s) X(vec_simple_bytes_per_cycle) X(vec_transcendental_elems_per_cycle)                    \
    X(vec_cast_elems_per_cycle) X(vec_reduce_cycles_per_repeat) X(vec_issue_cycles) X(ub_copy_bytes_per_cycle) \
    X(scalar_issue_cycles) X(scalar_ub_access_cycles) X(scalar_gm_access_cycles) X(mte2_bytes_per_cycle)      \
    X(mte2_startup_cycles) X(mte3_bytes_per_cycle) X(mte3_startup_cycles) X(dma_issue_cycles)                 \
    X(dma_burst_cycles) X(launch_base_s) X(launch_per_core_s) X(align_strict) X(bounds_strict) X(check_uninit) X(sync_check)   \
    X(watchdog_calls) X(watchdog_s) X(watchdog_cycles) X(race_check) X(scalar_block_cycles) X(sync_all_cycles)  \
    X(bt_bytes) X(fb_bytes) X(cube_fp16_macs_per_cycle) X(cube_issue_cycles) X(l1_to_l0a_bytes_per_cycle)       \
    X(l1_to_l0b_bytes_per_cycle) X(mte1_latency_cycles) X(fix_bytes_per_cycle) X(fix_startup_cycles) X(mte1_issue_cycles) \
    X(scalar_dcache_bytes) X(scalar_dcache_line_bytes) X(scalar_dcache_ways) X(scalar_dcache_hit_cycles) \
    X(mte2_unaligned_efficiency) X(gm_port_bytes_per_cycle) X(scalar_ub_store_load_cycles) X(overlap_norm) \
    X(scalar_gm_outstanding_misses)

struct Config {
#define KGSIM_X(n) double n = 0;
    KGSIM_CONFIG_FIELDS(KGSIM_X)
#undef KGSIM_X
};
extern Config cfg;

enum SlotState : uint8_t { S_FREE = 0, S_ALLOC, S_QUEUED, S_DEQUEUED };

struct Slot {
    uint32_t addr = 0, len = 0;
    uint8_t state = S_FREE;
    double ready = 0;  // producer completion at EnQue
    double freed = 0;  // consumer completion at FreeTensor
    Loc alloc_loc{};
};

struct Queue {
    bool live = false;
    uint8_t src_pos = 0, dst_pos = 0, mem = MEM_UB;
    Pipe prod = P_V, cons = P_V;
    int32_t depth = 1;
    uint32_t len = 0;
    std::vector<Slot> slots;
    std::vector<int> fifo;  // slot indices, front = oldest
    uint32_t next = 0;      // round-robin allocation cursor
    Loc init_loc{};
    bool handle_free = false;  // its TQue let go of the handle (que_release): InitBuffer may reuse it
};

struct GmBuf {
    std::string name;
    uintptr_t base = 0;
    uint64_t size = 0;
    // The bytes just outside it belong to no other object (kgsim_register_gm decides), so a
    // scalar access there is an out-of-bounds access, not a read of a neighbour.
    bool guarded = false;
};

// AK_SAME: a plain write whose bytes, as the writing block left them at its end, equal what earlier
// blocks of the launch had left there (preimage_settle): it races with reads and atomics, not with writes.
enum AccessKind : uint8_t { AK_READ = 0, AK_WRITE = 1, AK_ATOMIC = 2, AK_SAME = 3 };

// What the running block's plain GM stores overwrote, byte range by range, the first time the block
// wrote there: the bytes (`valid`) where another block of the launch had written them before, else
// nothing. Kept for one block from its start; a block that waits for another gives it up (owner -1).
struct PreSeg {
    uintptr_t hi;
    bool valid;
    std::vector<uint8_t> bytes;
};
struct PreImage {
    int64_t owner = -1;
    size_t first_interval = 0;  // the block's first entry in Runtime::intervals
    std::map<uintptr_t, PreSeg> segs;
};

struct Interval {
    uintptr_t lo, hi;
    int64_t block;
    uint8_t kind;
    Loc loc;
};

struct FaultRec {
    std::string cls, msg, file;
    uint32_t line = 0;
    int64_t block = -1;
};

struct LaunchRec {
    std::string kernel, file;
    int line = 0;
    int64_t num_blocks = 0;
    int64_t aic_blocks = 0;  // AIC cores of a mixed or AIC-only launch: block_cycles holds AIV cores first
    int64_t aiv_blocks = -1;  // AIV cores of the launch's layout (-1: not laid out by the scheduler)
    int64_t blocks_run = 0;
    std::vector<double> block_cycles;
    std::vector<std::array<double, P_COUNT>> block_busy;
    uint64_t gm_read = 0, gm_write = 0;
    std::vector<FaultRec> faults, warnings;
    // warnings warn_new found recorded, by their class's and file's addresses and line, direct-mapped
    // by line: a kernel that reads past a LocalTensor's end in its inner loop asks at every access
    struct Warned {
        const char* cls = nullptr;
        const char* file = nullptr;
        uint32_t line = 0;
    };
    std::array<Warned, 16> warned{};
    double cycles = 0, latency_s = 0, compute_s = 0, hbm_s = 0, gm_port_s = 0, launch_s = 0;
    int64_t cores_used = 0, waves = 0;
    std::array<double, P_COUNT> critical_busy{};
    std::string bound;
    // Sampled simulation (rt_sampling.cpp): which blocks ran (by core uid), the GM bytes each moved,
    // and the latency with every skipped block at the cheapest and at the dearest sampled block.
    std::vector<uint8_t> block_ran;
    std::vector<uint64_t> block_gm;
    uint64_t gm_mark = 0;  // gm_read + gm_write when the running block began
    int64_t blocks_skipped = 0;
    double latency_lo_s = 0, latency_hi_s = 0;
    // Loop sampling (rt_sampling.cpp): per core, the half-width in cycles of its extrapolated
    // time's bracket; blocks whose loops were extrapolated, loop periods skipped, and the first
    // reason a block that could have been loop-sampled ran in full.
    std::vector<double> block_spread;
    uint64_t scalar_ff_accesses = 0;  // scalar GM accesses a fast stretch charged at the mean (rt_scalar.cpp)
    int64_t loop_sampled_blocks = 0;
    uint64_t loop_periods_skipped = 0;
    uint64_t loop_jumps = 0;  // native jumps of a kernel's own loops (loop_iter, rt_sampling.cpp)
    std::string loop_fallback;
};

struct EventQ {
    std::vector<double> times;
};

// One recent access of a cube-side memory (L1, L0A/B/C, BT, FB) by a pipe, for the synchronisation
// check of the cube instructions (rt_cube.cpp); the UB has its own per-block shadow in Runtime.
struct CubeAccess {
    uint8_t mem, pipe, write;
    uint32_t lo, hi;
    double done;
    Loc loc;
};

struct BlockState {
    double free_[P_COUNT];  // when the next instruction of the pipe may start
    double done_[P_COUNT];  // when every issued instruction of the pipe has completed
    double busy[P_COUNT];
    uint32_t top[MEM_COUNT];
    uint32_t high[MEM_COUNT];  // highest byte allocated in each local memory (saved across SyncAll)
    uint32_t buffers = 0;
    std::vector<Queue> queues;
    // handles whose TQue let go of them, reused by the next InitBuffer: a helper that builds a TPipe
    // and its queues per call (EvoKernel's ExpScalar_, 8192 calls a row) would otherwise take a new
    // handle each time, past the 32767 a LocalTensor's int16 queue field holds
    std::vector<int32_t> free_queues;
    int live_per_pos[32];
    bool counter_mode = false;
    uint64_t mask_lo = ~0ull, mask_hi = ~0ull;
    int64_t mask_count = 0;
    double reduce_spr[4] = {0, 0, 0, 0};  // last Reduce* results: sum, max/min value, max/min index; [3]: the sum's DT
    DT reduce_spr_dt = DT::F32;        // the type of the max/min value (get_max_min_cnt returns its bits)
    int atomic = 0;  // 0 none 1 add 2 max 3 min
    DT atomic_dt = DT::F32;
    double deq_scale = 1.0;
    std::vector<std::array<EventQ, 8>> events;  // by event code
    uint32_t next_event[256];
    void* tpipe = nullptr;
    std::vector<CubeAccess> cube_acc;  // cleared lazily when cube_gen != hot.gen
    uint32_t cube_gen = 0;
    // Load3D registers: the feature map (l1H, l1W, padList) left [0] / right [1] (SetFmatrix) and the
    // pad value's bits (SetLoadDataPaddingValue)
    uint16_t fm_h[2] = {0, 0}, fm_w[2] = {0, 0};
    uint8_t fm_pad[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    uint64_t load3d_pad = 0;
    // the core's scalar data cache (rt_scalar.cpp, scalar_gm_cycles), sets x ways slots: line number
    // + 1 per slot (0: empty); each set's slots in a circular list from most to least recently used
    // (dc_mru: a set's most recent slot); dc_index finds a line's slot (slot + 1 by a hash of the
    // line, linear probing). Cold at every block's start.
    static constexpr int kDcacheSlots = 512;  // up to 32 KB of 64-byte lines
    static constexpr uint32_t kDcacheIndex = 4 * kDcacheSlots;  // a power of two, at most 1/4 full
    uint64_t dc_line[kDcacheSlots];
    uint16_t dc_prev[kDcacheSlots], dc_next[kDcacheSlots];
    uint16_t dc_mru[kDcacheSlots];
    uint16_t dc_index[kDcacheIndex];
    // scalar fast-forward's warm-up (rt_scalar.cpp): slots touched since it began (dc_stamp ==
    // dc_epoch), counted while dc_counting
    uint32_t dc_stamp[kDcacheSlots];
    uint32_t dc_epoch = 0, dc_fresh = 0;
    bool dc_counting = false;
    // line fills in flight together (scalar_gm_cycles): the basic block (scalar.blocks) of the
    // current group's first fill and the fills the group may still take
    uint64_t miss_group_bb = ~uint64_t(0);
    int miss_group_left = 0;
    // hot.api_calls when this block started (watchdog_calls is per block); kept with the block, as
    // hot.api_calls is, when it waits at SyncAll and another block runs
    uint64_t calls_base = 0;
    // scalar fast-forward's windows (rt_scalar.cpp); [2]: reads and writes together
    struct ScalarFf {
        uint8_t phase = 0;
        uint64_t pos = 0;                  // accesses into the running window
        uint64_t window_len = 0;           // the last window's accesses (warm-up + measured)
        uint64_t warm_plan = 0;            // the next warm-up's accesses
        uint64_t refresh_pos = 0, refresh_max = 0;  // accesses to touch every cache slot: now, the most
        double win_sum[2] = {0, 0};        // the running detailed window's cycles and accesses
        uint64_t win_n[2] = {0, 0};
        double sub_sum[2] = {0, 0};        // the running sub-window's (kSubWindow accesses of it)
        uint64_t sub_n[2] = {0, 0};
        double sum[3] = {0, 0, 0};         // all measured windows
        uint64_t n[3] = {0, 0, 0};
        uint64_t windows = 0;              // measured windows closed
        uint64_t subs[3] = {0, 0, 0};      // sub-window means: how many, their sum and sum of squares
        double sub_m1[3] = {0, 0, 0}, sub_m2[3] = {0, 0, 0};
        double warm_charged[2] = {0, 0};   // warm-up accesses: charged the mean, cache model updated
        uint64_t warm_n[2] = {0, 0};
        double fast_charged[2] = {0, 0};   // fast accesses of the stretches that ended (the mean of each)
        uint64_t stretch_fast[2] = {0, 0}; // ScalarFastForward::fast when the running stretch began
        double first_sum[3] = {0, 0, 0};   // the first window's measured part (ff_mean leaves it out later)
        uint64_t first_n[3] = {0, 0, 0};
        double jumped_charged[2] = {0, 0}; // accesses of iterations a native loop jump passed (ff_jumped)
        uint64_t jumped_n[2] = {0, 0};
        uint64_t rng = 0;
    } ffb;
};

struct Runtime {
    std::vector<GmBuf> gm;
    std::vector<LaunchRec> launches;
    std::vector<FaultRec> host_faults;
    std::vector<Interval> intervals;
    // Who wrote each GM byte last (disjoint [lo, hi) -> (hi, block)), painted from `intervals`' plain
    // writes on demand (written_by_another_block); painted_upto: intervals painted so far.
    std::map<uintptr_t, std::pair<uintptr_t, int64_t>> last_writer;
    size_t painted_upto = 0;
    PreImage pre;
    void clear_intervals() {
        intervals.clear();
        last_writer.clear();
        painted_upto = 0;
        pre.owner = -1;
        pre.segs.clear();
    }
    bool race_overflow = false;
    bool faulted = false;  // a fault ended a launch of this call: later launches are skipped
    size_t errors_taken = 0;  // launches whose fault aclrtSynchronize* has reported (kgsim_stream_error)
    LaunchRec* cur = nullptr;
    BlockState blk;
    double launch_wall_start = 0;
    std::string printf_buf;
    // UB shadow state (per 32-byte block) for the synchronisation check
    std::vector<double> w_end;
    std::vector<uint8_t> w_pipe;
    std::vector<double> r_end_v, r_end_mte3;
    std::vector<uint8_t> init;  // per UB byte: written since allocation
    bool sync_warned = false;
};
extern Runtime rt;

// Scalar work seen through compiler instrumentation of kernel code (rt_scalar.cpp).
struct ScalarCounters {
    double block_cycles = 0;     // scalar-unit cycles per basic block run inside a launch
    uint64_t blocks = 0;         // basic blocks run inside launches in this call
    uint64_t host_blocks = 0;    // basic blocks of the kernel file's host code in this call
    uint64_t gm_accesses = 0;    // raw-pointer GM accesses inside launches in this call
    uint64_t next_check = 0;     // `blocks` at which scalar_watchdog looks next
    // the running block's stack (rt_blocks.cpp): a kernel's local arrays and spills live there, so an
    // access inside it is neither GM nor local memory (0 bytes: no block running)
    uintptr_t stack_lo = 0;
    uint64_t stack_bytes = 0;
    uintptr_t skip_once = 0;     // a GM address already charged by GlobalTensor::operator()
    uint64_t eager_ops = 0;      // aten ops a binding ran between launches (kgsim_eager_op) in this call
    uint64_t eager_bytes = 0;    // bytes those ops read and wrote
};
extern ScalarCounters scalar;

// basic blocks between two watchdog checks of plain scalar code (a few ms of host time)
constexpr uint64_t kScalarWatchdogBlocks = uint64_t(1) << 20;
std::string watchdog_expired();
void scalar_watchdog();

// scalar-unit cycles of a scalar GM access of n bytes at a through the core's data cache
double scalar_gm_cycles(uintptr_t a, size_t n);
void dcache_reset();

// Scalar fast-forward (rt_scalar.cpp; the stretch's inline part is in kgsim/base.h). On only under
// sampled simulation (block sampling on) and while g_scalar_ff is set (the knob).
extern bool g_scalar_ff;
void ff_block_begin();
void ff_refresh_bufs();  // the launch buffers ff_gm checks bounds against (rt.gm's first kBufs)
double ff_block_end();  // ends the block's fast-forward: the half-width (cycles) it adds to its bracket
// A scalar GM access inside a buffer that is about to go through the data-cache model: true when a
// fast stretch takes it instead (charged by ff_charge), so the caller skips the model and the race record
bool ff_take(uintptr_t a, uint32_t n, int write);
// the cycles to charge for a detailed access the cache model priced at `cyc` (a warm-up access: the mean)
double ff_detailed(double cyc, int write);

// helpers shared by the runtime files
const char* dt_name(DT dt);
uint32_t dt_size(DT dt);
const char* pipe_name(int p);
std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
void warn(const char* cls, const Loc& loc, const std::string& msg);
// Would warn() record this warning (not yet recorded at this line, room left)? Checked before formatting
// a message an access may repeat: a kernel that reads past a tensor on every GetValue formatted one per
// access, 70 % of ConvPointwise2d's host time.
bool warn_new(const char* cls, const Loc& loc);
void check_in_launch(const Loc& loc, const char* api);

// timing
struct Span {
    uint32_t addr, len;
};
// Issue one instruction on `pipe`: starts when the scalar unit has issued it and the pipe is
// free; occupies the pipe for `occupancy` cycles, completes `latency` cycles later. Checks the
// UB spans it reads and writes against the other pipes (synchronisation check).
double issue(Pipe pipe, double occupancy, double latency, const Span* reads, int nr, const Span* writes, int nw,
             const char* api, const Loc& loc);

// memory checks
uint8_t* mem_ptr(uint8_t mem, uint32_t addr);
void check_local(const TRef& t, uint64_t first_byte_rel, uint64_t nbytes, uint32_t align, const char* api,
                 const char* operand, const Loc& loc);
void check_init_range(const TRef& t, uint32_t addr, uint32_t nbytes, const char* api, const Loc& loc);
void mark_init_range(uint8_t mem, uint32_t addr, uint32_t nbytes);
void mark_uninit_range(uint8_t mem, uint32_t addr, uint32_t nbytes);
int32_t gm_check(int32_t buf, uintptr_t p, uint64_t nbytes, uint32_t es, const char* api, const char* dir,
                 const Loc& loc);
// A DataCopy's GM range [p, p + nbytes) against its buffer. In bounds: {p, p + nbytes, false}.
// Past the buffer but within the NPU's 2 MiB allocation granule of it (bounds_mode="npu"): the
// in-bounds part [lo, hi), clipped = true and a warning. Where the range stays inside the pages
// the simulator mapped for the buffer (gm_pages), own_pages = true: the caller reads and writes
// the bytes past the buffer there, as the NPU keeps what is written in the buffer's device page
// (a later read, the host's aclrtMemcpy included, finds it); otherwise it reads poison and drops
// writes for the rest, as no other buffer of the launch lies there. Only [lo, hi) is recorded for
// the race check either way. Beyond the granule: a gm_out_of_bounds fault.
struct GmClip {
    uintptr_t lo, hi;
    bool clipped;
    bool own_pages = false;
};
GmClip gm_clip(int32_t buf, uintptr_t p, uint64_t nbytes, uint32_t es, const char* api, const char* dir,
               const Loc& loc);
// GM the simulator allocates itself (rt_gm_alloc.cpp): binding outputs, tiling and workspace
// buffers, aclrtMalloc. Each is pages of its own between two padding pages.
void* gm_alloc(uint64_t bytes);
bool gm_free(void* p);                             // false: not from gm_alloc
bool gm_is_isolated(uintptr_t base, uint64_t size);  // see GmBuf::guarded
// Bytes of the pages gm_alloc mapped for the buffer at base (its size rounded up to whole pages,
// the slack past the size poison until written); 0 for memory gm_alloc did not map.
uint64_t gm_pages(uintptr_t base);
void record_access(uintptr_t lo, uint64_t n, uint8_t kind, const Loc& loc);
double vector_row_sum(double* v, uint32_t n, uint32_t per_repeat, bool is_half);  // rt_vector.cpp
// Whether another block of this launch already wrote all of [lo, lo + n) (its last 4096 recorded
// ranges are searched; beyond them the answer is no, which keeps the race check conservative).
bool written_by_another_block(uintptr_t lo, uint64_t n);
// A plain (non-atomic) GM store of n bytes at lo whose previous contents were `before`: recorded
// for the race detector unless it stored exactly the bytes another block of the launch had stored
// there (then either order gives the same result: kernels whose blocks all write the same output).
void record_store(uintptr_t lo, uint64_t n, const uint8_t* before, const Loc& loc);
// The pre-image of the running block (PreImage): start it for the block now running, give it up
// (the block waits, so other blocks' writes interleave with its own), note a store's old bytes before
// it is done (nullptr: not known, so never judged equal), and at the block's end turn its plain
// writes whose final bytes equal the earlier blocks' into AK_SAME: whichever block stores last, the
// memory ends the same, so blocks that all leave the same bytes do not race (the NPU has no fault here).
void preimage_begin();
void preimage_drop();
void preimage_note(uintptr_t lo, uint64_t n, const uint8_t* before);
void preimage_settle(int64_t uid);
void record_fault(const char* cls, const char* file, uint32_t line, const std::string& msg);
void race_sweep();
// Cube side (rt_cube.cpp): record an access of a cube memory by a pipe and check it against the
// other pipes' unfinished accesses; GM bytes a cube copy reads from HBM (first touch in the launch,
// later reads hit L2); copies between local memories that involve a cube memory.
void cube_track(uint8_t mem, uint32_t addr, uint32_t len, Pipe p, bool write, double start, double done,
                const char* api, const Loc& loc);
uint64_t cube_gm_first_touch(uintptr_t lo, uint64_t n);
void cube_launch_reset();  // at launch_begin: the L2 starts cold for the cube copies
void cube_local_copy(const TRef& dst, const TRef& src, const CopyParams& p, const char* api, const Loc& loc);
// Cube instructions need an AIC core (rt_blocks.cpp): an undeclared AIV-only launch restarts as
// AIC-only; an AIV core of a mixed launch faults.
void require_aic(const char* api, const Loc& loc);
// SyncAll across the blocks of a launch (rt_blocks.cpp): suspends this block until all have arrived.
void block_barrier(const Loc& loc, bool aiv_only);
// Stop the current block at once, without unwinding its stack (rt_blocks.cpp): for faults raised
// where no C++ exception may pass. False when no block is running.
bool trap_block();
// Sampled simulation (rt_sampling.cpp): how many AI Core groups (blocks of an AIV- or AIC-only
// launch) to run, 0 for all; whether group `g` of `n` runs; the launch's timing from its sampled
// blocks, the skipped ones estimated (called by launch_end).
extern int64_t g_sample_groups;
extern bool g_track_writes;
void track_write(uintptr_t lo, uint64_t n);  // a GM store by the current core (record_access)
extern uint64_t g_gm_gen;  // changes whenever rt.gm does (a cache of one of its entries checks it)
bool group_sampled(int64_t g, int64_t n);    // the first stage: first, middle and last group
bool group_in_sample(int64_t g, int64_t n);  // the k evenly spaced groups
// Whether the groups that ran cost the same (cycles beyond their own brackets, GM bytes), so the
// rest of the k need not run. cost / spread / gm / ran by group, as refine_group's.
bool stage_agrees(const std::vector<double>& cost, const std::vector<double>& spread, const std::vector<double>& gm,
                  const std::vector<uint8_t>& ran);
// Where two neighbouring sampled groups cost differently enough that the skipped groups between
// them may be misjudged, the group to run next (their middle); -1 when none. cost[g] / gm[g]: the
// group's cycles and GM bytes, ran[g]: whether it ran.
int64_t refine_group(const std::vector<double>& cost, const std::vector<double>& gm, const std::vector<uint8_t>& ran);
void time_launch(LaunchRec& L);

// Loop sampling (rt_sampling.cpp). The heavy APIs call loop_skip with a key of their arguments
// (GM addresses left out) right after tick(): once a block's stream of such calls has repeated
// with the same costs for several periods, loop_skip returns true (the caller returns at once,
// no functional work, no timing) for as long as the calls keep repeating the period, and the
// block's pipe times, busy time and GM bytes are extrapolated when the stream deviates or the
// block ends. `flags`: bit 0, a GM store under an atomic mode (such a loop is not skipped).
extern bool g_loop_on;
// The running block is skipping (its calls repeat the loop's period): its GM scalar accessors take a
// fast path (bounds only: no race tracking, data-cache model or GM byte counts, so their stores are
// not tracked for the check either), as the periods' prediction replaces their timing.
extern bool g_loop_skipping;
inline bool loop_skipping() { return g_loop_skipping; }
// Skipping periods with scalar reads of local memory: the skipped calls do their functional work
// (the kernel reads real data) but no timing (issue() returns at once).
extern bool g_loop_timing_only;
// Scalar GM accesses inside launches (GlobalTensor GetValue/SetValue/operator(), raw pointers):
// loop sampling compares their count per period.
extern uint64_t g_scalar_gm_ops;
// with the running block's fast-forwarded ones (counted apart: one increment less on the fast path)
inline uint64_t scalar_gm_ops() { return g_scalar_gm_ops + ff.fast[0] + ff.fast[1] + ff.skip_ops; }
bool loop_skip_slow(const Loc& loc, uint64_t key, uint8_t flags);
inline bool loop_skip(const Loc& loc, uint64_t key, uint8_t flags = 0) {
    return g_loop_on && loop_skip_slow(loc, key, flags);
}
inline uint64_t key_mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}
template <class... A> inline uint64_t loop_key(A... a) {
    uint64_t h = 0x84222325CBF29CE4ull;
    ((h = key_mix(h, uint64_t(a))), ...);
    return h;
}
inline uint64_t tref_key(const TRef& t) { return uint64_t(t.addr) | uint64_t(t.end) << 32 ^ uint64_t(t.mem) << 60; }
inline uint64_t mask_key(const MaskArg& m) { return loop_key(m.kind, m.lo, m.hi, m.count); }
inline uint64_t rep_key(const RepArg& r) {
    return loop_key(r.repeat, r.dst_blk, r.src0_blk, r.src1_blk, r.dst_rep, r.src0_rep, r.src1_rep);
}
inline uint64_t copy_key(const CopyParams& p) {
    return loop_key(p.block_count, p.block_len, p.src_gap, p.dst_gap, p.pad, p.is_pad, p.left_pad, p.right_pad,
                    p.pad_bits, p.count_form);
}
// An instruction issued by an API without a loop_skip key of its own (issue() calls it): the same
// machinery, keyed by the API, the pipe and the instruction's cost; true: skipped, no timing.
bool loop_issue(Pipe p, double occ, double lat, const char* api, const Loc& loc);
void loop_launch_begin();
void loop_block_begin();
double loop_block_end();  // ends a skip still running; the half-width of the block's cycle bracket
// A block is about to wait for or signal another (SyncAll, cross-core flags, IBSet/IBWait,
// GroupBarrier): loop sampling stops for the launch; a fault if this block has skipped already.
void loop_blocks_interact(const Loc& loc);
// A native loop jump (loop_iter) passed iterations inside a fast stretch that would have made
// `reads` and `writes` scalar GM accesses: they are charged the stretch's means (returned, cycles)
// and join the fast accesses in the block's fast-forward bracket.
double ff_jumped(uint64_t reads, uint64_t writes);
bool ff_window_open();  // a measured window of scalar fast-forward runs or is due (loop sampling waits)
bool loop_block_skipped();  // the running block has skipped iterations: its later stores are not checked

}  // namespace kgsim
