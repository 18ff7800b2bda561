// The cores of a launch and the synchronisation between them: SyncAll, cross-core flags
// (CrossCoreSetFlag/CrossCoreWaitFlag), IBSet/IBWait, GroupBarrier, and the core layout of the
// kernel type.
//
// Each block (one AIV or AIC core) runs on a stack of its own (ucontext). A block runs until it
// ends or must wait: at SyncAll, at a CrossCoreWaitFlag whose counter is 0, at an IBWait whose
// flag is not set, at a GroupBarrier::Wait whose Arrive group is not complete. A waiting block is suspended with its core state (the `hot` registers, its
// BlockState, the used part of its local memories and their shadow state) saved, and the next
// runnable block runs, in core order: the schedule is deterministic. Without waits a block runs
// from start to end before the next one starts, as before. When no block can run: if every
// participant of a SyncAll has arrived, all resume at the simulated time the last one arrived
// (plus the barrier's cost); otherwise the NPU would hang, which is a syncall_deadlock (a block
// ended without reaching SyncAll) or crosscore_deadlock (a flag nobody sets, a GroupBarrier
// nobody completes) fault. Waiting in a
// launch with more blocks than cores is a deadlock, too (not all blocks are resident at once).
//
// Kernel types (KERNEL_TASK_TYPE_DEFAULT): AIV-only launches start numBlocks AIV cores, AIC-only
// ones numBlocks AIC cores, MIX_AIC_1_1 / MIX_AIC_1_2 start numBlocks groups of one AIC and one /
// two AIVs. Cores are numbered AIV first, then AIC (core_uid); GetBlockIdx is the index among
// the cores of the same type. A declaration that differs from the layout the launch started with
// restarts it (KernelTypeRestart); the declared type is remembered for the kernel's next launches.
#include <sys/mman.h>
#include <ucontext.h>

#include <deque>
#include <map>
#include <unordered_map>

#include "kgsim/matmul_rt.h"
#include "rt.h"

namespace kgsim {
namespace {

constexpr size_t kStackBytes = size_t(4) << 20;  // per block, lazily backed
constexpr size_t kGuardBytes = 4096;              // PROT_NONE at both ends of every stack
constexpr int kFlagIds = 16;                      // cross-core flag ids 0..15

struct SavedCore {
    Hot hot{};
    BlockState blk{};
    ScalarFastForward ff{};  // the block's running fast stretch (rt.blk.ffb holds its windows)
    std::array<std::vector<uint8_t>, MEM_COUNT> mem;
    std::vector<double> w_end, r_end_v, r_end_mte3;
    std::vector<uint8_t> w_pipe, init;
};

struct Fiber {
    enum State { NEW, READY, RUNNING, AT_BARRIER, AT_FLAG, AT_IB, AT_GROUP, DONE, TRAPPED };
    ucontext_t ctx{};
    void* stack = nullptr;
    int64_t uid = 0;     // core index in the launch: AIV cores first, then AIC cores
    int64_t block = 0;   // GetBlockIdx
    int64_t group = 0;   // AI Core group (its AIC's index)
    uint8_t core = CORE_AIV, sub_idx = 0, sub_num = 1, ratio = 1;
    State state = NEW;
    Loc wait_loc{};
    bool barrier_aiv_only = true;
    int wait_flag = 0;
    std::pair<int64_t, int32_t> wait_ib{};
    uintptr_t wait_group = 0;   // GroupBarrier::Wait: the barrier's workspace,
    uint32_t wait_index = 0;    // the waiter's index in its Wait group,
    size_t wait_round = 0;      // and how many Arrives of each Arrive index it needs
    std::vector<std::deque<double>> flags;  // cross-core flag counters (release times), sized on first use
    SavedCore saved;
};

// "Every participant has set the flag": the k-th release happens when each participant has set
// it k times, at the latest of those set times.
struct Gather {
    std::map<int64_t, std::vector<double>> sets;  // by participant uid
    size_t released = 0;
};

// One GroupBarrier, identified by its GM workspace (every block constructs its own object on the
// same workspace). The k-th Wait of a wait index completes once every arrive index has arrived k
// times, at the latest of those k-th arrivals: the barrier may be used in a loop.
struct GroupBar {
    uint32_t arrive_size = 0, wait_size = 0;
    std::vector<std::vector<double>> arrivals;  // per arrive index: the time of each Arrive
    std::vector<size_t> waits;                  // per wait index: Waits begun
    std::vector<int64_t> arrive_owner, wait_owner;  // core uid using each index (-1: none yet)
};

struct Scheduler {
    ucontext_t main{};
    std::vector<Fiber> fibers;
    Fiber* cur = nullptr;
    void (*body)(void*) = nullptr;
    void* ctx = nullptr;
    int kernel_type = KERNEL_TYPE_AIV_ONLY;
    int64_t n_aiv = 0, n_aic = 0;
    int restart_type = -1;
    std::map<std::tuple<int, int64_t, int>, Gather> gathers;  // (mode, scope, flag)
    std::map<std::pair<int64_t, int32_t>, double> ib_flags;   // (AIV block, event) -> set time
    std::map<uintptr_t, GroupBar> group_bars;                 // by GM workspace address
    int64_t groups = 0;    // AI Core groups of the launch (numBlocks)
    bool sampled = false;  // sampled simulation skipped some of them
    bool staged = false;   // the first stage's groups have ended and been compared (refine_sample)
};

Scheduler* g_sched = nullptr;
std::unordered_map<const void*, int> g_declared_type;  // kernel function -> KERNEL_TASK_TYPE_DEFAULT

bool is_mixed(int t) { return t == KERNEL_TYPE_MIX_AIC_1_1 || t == KERNEL_TYPE_MIX_AIC_1_2; }
bool is_aic_only(int t) { return t == KERNEL_TYPE_AIC_ONLY || t == KERNEL_TYPE_MIX_AIC_1_0; }

const char* type_name(int t) {
    static const char* names[] = {"KERNEL_TYPE_AIV_ONLY", "KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_MIX_AIV_1_0",
                                  "KERNEL_TYPE_MIX_AIC_1_0", "KERNEL_TYPE_MIX_AIC_1_1", "KERNEL_TYPE_MIX_AIC_1_2",
                                  "KERNEL_TYPE_AICORE", "KERNEL_TYPE_VECTORCORE", "KERNEL_TYPE_MIX_AICORE",
                                  "KERNEL_TYPE_MIX_VECTOR_CORE"};
    return t >= 0 && t < int(sizeof names / sizeof *names) ? names[t] : "?";
}

// The layout of one launch: which cores start, and what each one's GetBlockIdx & co. return.
void lay_out(Scheduler& s, int64_t num_blocks, int type) {
    s.kernel_type = type;
    int64_t per_group = type == KERNEL_TYPE_MIX_AIC_1_2 ? 2 : 1;
    s.n_aiv = is_aic_only(type) ? 0 : num_blocks * (is_mixed(type) ? per_group : 1);
    s.n_aic = is_aic_only(type) || is_mixed(type) ? num_blocks : 0;
    s.fibers.resize(size_t(s.n_aiv + s.n_aic));
    for (int64_t i = 0; i < s.n_aiv; ++i) {
        Fiber& f = s.fibers[size_t(i)];
        f.uid = i;
        f.block = i;
        f.core = CORE_AIV;
        f.group = is_mixed(type) ? i / per_group : i;
        f.sub_num = uint8_t(is_mixed(type) ? per_group : 1);
        f.sub_idx = uint8_t(is_mixed(type) ? i % per_group : 0);
        f.ratio = f.sub_num;
    }
    for (int64_t g = 0; g < s.n_aic; ++g) {
        Fiber& f = s.fibers[size_t(s.n_aiv + g)];
        f.uid = s.n_aiv + g;
        f.block = g;
        f.group = g;
        f.core = CORE_AIC;
    }
}

// The low guard turns a stack overflow into a crash instead of corrupting memory; the high one
// keeps every stack address more than a page away from any other mapping, such as a GM buffer,
// so the raw-GM bounds check (rt_scalar.cpp) never mistakes a stack access for a GM overrun.
void* new_stack() {
    void* p = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                   -1, 0);
    if (p == MAP_FAILED) return nullptr;
    mprotect(p, kGuardBytes, PROT_NONE);
    mprotect(static_cast<uint8_t*>(p) + kStackBytes - kGuardBytes, kGuardBytes, PROT_NONE);
    return p;
}

void release(Fiber& f) {
    if (f.stack) munmap(f.stack, kStackBytes);
    f.stack = nullptr;
}

void fiber_entry() {
    Scheduler& s = *g_sched;
    Fiber& f = *s.cur;
    // the core first: block_begin's per-block state is keyed by it (the scalar fast-forward's
    // generator is seeded with it; it used to get the previous block's, so a launch's first block
    // depended on what ran before it in the process)
    hot.core_uid = f.uid;
    hot.core_type = f.core;
    hot.sub_block_idx = f.sub_idx;
    hot.sub_block_num = f.sub_num;
    hot.task_ratio = f.ratio;
    block_begin(f.block);
    preimage_begin();
    s.body(s.ctx);
    s.cur->state = Fiber::DONE;  // returning resumes the scheduler (uc_link)
}

template <class T>
void save_prefix(std::vector<T>& to, const std::vector<T>& from, size_t n) {
    to.assign(from.begin(), from.begin() + std::ptrdiff_t(std::min(n, from.size())));
}
template <class T>
void restore_prefix(std::vector<T>& to, const std::vector<T>& from) {
    std::copy(from.begin(), from.end(), to.begin());
}

void save_core(SavedCore& c) {
    c.hot = hot;
    c.blk = rt.blk;
    c.ff = ff;
    for (int m = 0; m < MEM_COUNT; ++m) c.mem[m].assign(hot.mem[m], hot.mem[m] + rt.blk.high[m]);
    size_t ub = rt.blk.high[MEM_UB];
    save_prefix(c.w_end, rt.w_end, ub / 32 + 1);
    save_prefix(c.r_end_v, rt.r_end_v, ub / 32 + 1);
    save_prefix(c.r_end_mte3, rt.r_end_mte3, ub / 32 + 1);
    save_prefix(c.w_pipe, rt.w_pipe, ub / 32 + 1);
    save_prefix(c.init, rt.init, ub);
}

void restore_core(const SavedCore& c) {
    hot = c.hot;
    rt.blk = c.blk;
    ff = c.ff;
    for (int m = 0; m < MEM_COUNT; ++m) std::copy(c.mem[m].begin(), c.mem[m].end(), hot.mem[m]);
    restore_prefix(rt.w_end, c.w_end);
    restore_prefix(rt.r_end_v, c.r_end_v);
    restore_prefix(rt.r_end_mte3, c.r_end_mte3);
    restore_prefix(rt.w_pipe, c.w_pipe);
    restore_prefix(rt.init, c.init);
}

double core_time(const SavedCore& c) {
    double t = c.hot.s_time;
    for (int p = 0; p < P_COUNT; ++p) t = std::max(t, c.blk.done_[p]);
    return t;
}

double now_core_time() {
    double t = hot.s_time;
    for (int p = 0; p < P_COUNT; ++p) t = std::max(t, rt.blk.done_[p]);
    return t;
}

std::deque<double>& flag_counter(Fiber& f, int flag) {
    if (f.flags.empty()) f.flags.resize(kFlagIds);
    return f.flags[size_t(flag)];
}

// Whether every arrive index of `g` has arrived `round` times; `when` gets the latest of those arrivals.
bool group_round_complete(const GroupBar& g, size_t round, double* when = nullptr) {
    double t = 0;
    for (const std::vector<double>& a : g.arrivals) {
        if (a.size() < round) return false;
        t = std::max(t, a[round - 1]);
    }
    if (when) *when = t;
    return true;
}

bool runnable(const Scheduler& s, const Fiber& f) {
    switch (f.state) {
        case Fiber::NEW: case Fiber::READY: return true;
        case Fiber::AT_FLAG: return !f.flags.empty() && !f.flags[size_t(f.wait_flag)].empty();
        case Fiber::AT_IB: return s.ib_flags.count(f.wait_ib) > 0;
        case Fiber::AT_GROUP: return group_round_complete(s.group_bars.at(f.wait_group), f.wait_round);
        default: return false;
    }
}

// Run fiber `f` until it ends or waits; false when the launch must stop.
bool step(Scheduler& s, Fiber& f) {
    s.cur = &f;
    if (f.state == Fiber::NEW) {
        f.stack = new_stack();
        if (!f.stack) {
            record_fault("host_exception", "", 0, "cannot allocate a stack for a block (out of memory)");
            return false;
        }
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack;
        f.ctx.uc_stack.ss_size = kStackBytes - kGuardBytes;
        f.ctx.uc_link = &s.main;
        makecontext(&f.ctx, fiber_entry, 0);
    } else {
        restore_core(f.saved);
    }
    f.state = Fiber::RUNNING;
    scalar.stack_lo = reinterpret_cast<uintptr_t>(f.stack), scalar.stack_bytes = kStackBytes;
    swapcontext(&s.main, &f.ctx);
    scalar.stack_lo = 0, scalar.stack_bytes = 0;
    s.cur = nullptr;
    if (f.state == Fiber::TRAPPED) {  // stopped by trap_block: the fault is recorded
        release(f);
        return false;
    }
    if (f.state != Fiber::DONE) {
        save_core(f.saved);
        return !rt.faulted;
    }
    release(f);
    if (s.restart_type >= 0) return false;
    return block_end(f.uid);
}

// Suspend the current block until the scheduler resumes it (its state says what it waits for).
void suspend(Scheduler& s, Fiber::State why, const Loc& loc) {
    if (double(s.n_aiv) > std::max(1.0, cfg.aiv_cores) || double(s.n_aic) > std::max(1.0, cfg.aic_cores))
        fault("syncall_deadlock", loc, "a block waits for another (SyncAll, CrossCoreWaitFlag, IBWait or GroupBarrier) "
              "in a launch of "
              "%lld AIV and %lld AIC blocks on %.0f AIV and %.0f AIC cores: the blocks are not all resident at once, "
              "so the wait never completes on the NPU; launch at most one block per core", (long long)s.n_aiv,
              (long long)s.n_aic, cfg.aiv_cores, cfg.aic_cores);
    Fiber& f = *s.cur;
    f.state = why;
    f.wait_loc = loc;
    preimage_drop();  // other blocks run before this one ends: its end state is not its own alone
    swapcontext(&f.ctx, &s.main);
    // resumed by run_blocks; the core state is this block's again
}

Scheduler& sched(const Loc& loc, const char* api) {
    check_in_launch(loc, api);
    if (!g_sched || !g_sched->cur) fault("unsupported_api", loc, "%s outside a kernel launch", api);
    loop_blocks_interact(loc);
    return *g_sched;
}

// Accesses on either side of a synchronisation are ordered: check what came before, then forget it.
void sweep_races() {
    if (cfg.race_check && !rt.faulted) race_sweep();
    rt.clear_intervals();
}

void gather_set(Scheduler& s, std::tuple<int, int64_t, int> key, const std::vector<Fiber*>& parts,
                const std::vector<Fiber*>& targets, int flag, int64_t setter, double t) {
    Gather& g = s.gathers[key];
    g.sets[setter].push_back(t);
    for (;;) {
        double when = 0;
        for (Fiber* p : parts) {
            auto it = g.sets.find(p->uid);
            if (it == g.sets.end() || it->second.size() <= g.released) return;
            when = std::max(when, it->second[g.released]);
        }
        for (Fiber* q : targets) flag_counter(*q, flag).push_back(when);
        ++g.released;
    }
}

std::string sampled_refusal(const Scheduler& s, const char* core, int64_t block) {
    return fmt("%s block %lld waits for other blocks (SyncAll, CrossCoreWaitFlag, IBWait or GroupBarrier), but "
               "sampled simulation runs %lld of the %lld block groups: a kernel whose blocks wait for each other "
               "cannot be sampled; simulate it in full (sampled_simulation(blocks=0))", core, (long long)block,
               (long long)g_sample_groups, (long long)s.groups);
}

void report_deadlock(Scheduler& s) {
    Fiber* w = nullptr;
    int64_t done = 0;
    for (Fiber& f : s.fibers) {
        if (f.state == Fiber::DONE) ++done;
        else if (!w) w = &f;
    }
    if (!w) return;
    const char* core = w->core == CORE_AIC ? "AIC" : "AIV";
    if (s.sampled) {  // the blocks it waits for may be among those sampling skipped
        record_fault("unsupported_api", w->wait_loc.file_name(), w->wait_loc.line(), sampled_refusal(s, core, w->block));
        return;
    }
    if (w->state == Fiber::AT_BARRIER) {
        record_fault("syncall_deadlock", w->wait_loc.file_name(), w->wait_loc.line(),
                     fmt("%s block %lld waits at SyncAll but %lld of the %zu blocks ended without reaching it: the NPU "
                         "would hang; every block must call SyncAll the same number of times", core,
                         (long long)w->block, (long long)done, s.fibers.size()));
    } else if (w->state == Fiber::AT_FLAG) {
        record_fault("crosscore_deadlock", w->wait_loc.file_name(), w->wait_loc.line(),
                     fmt("%s block %lld waits in CrossCoreWaitFlag(%d) but no core will set that flag (every other "
                         "block has ended or waits too): the NPU would hang", core, (long long)w->block, w->wait_flag));
    } else if (w->state == Fiber::AT_GROUP) {
        const GroupBar& g = s.group_bars.at(w->wait_group);
        std::string missing;
        for (uint32_t i = 0; i < g.arrive_size; ++i)
            if (g.arrivals[i].size() < w->wait_round) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
        record_fault("crosscore_deadlock", w->wait_loc.file_name(), w->wait_loc.line(),
                     fmt("%s block %lld waits in GroupBarrier::Wait(%u) for Arrive #%zu of all %u Arrive-group "
                         "blocks, but arriveIndex %s never arrived that often (every other block has ended or waits "
                         "too): the NPU would hang", core, (long long)w->block, w->wait_index, w->wait_round,
                         g.arrive_size, missing.c_str()));
    } else {
        record_fault("crosscore_deadlock", w->wait_loc.file_name(), w->wait_loc.line(),
                     fmt("%s block %lld waits in IBWait for block %lld, event %d, which no core will IBSet: the NPU "
                         "would hang", core, (long long)w->block, (long long)w->wait_ib.first, w->wait_ib.second));
    }
}

// All blocks that take part in the SyncAll some block waits at have arrived: release them.
bool release_barrier(Scheduler& s) {
    Fiber* first = nullptr;
    for (Fiber& f : s.fibers)
        if (f.state == Fiber::AT_BARRIER) { first = &f; break; }
    if (!first) return false;
    bool aiv_only = first->barrier_aiv_only;
    std::vector<Fiber*> parts;
    for (Fiber& f : s.fibers) {
        if (aiv_only && f.core != CORE_AIV) continue;
        if (f.state != Fiber::AT_BARRIER || f.barrier_aiv_only != aiv_only) return false;
        parts.push_back(&f);
    }
    double t = 0;
    for (Fiber* f : parts) t = std::max(t, core_time(f->saved));
    t += cfg.sync_all_cycles;
    for (Fiber* f : parts) {
        f->saved.hot.s_time = t;
        for (int p = 0; p < P_COUNT; ++p) {
            f->saved.blk.free_[p] = std::max(f->saved.blk.free_[p], t);
            f->saved.blk.done_[p] = std::max(f->saved.blk.done_[p], t);
        }
        f->state = Fiber::READY;
    }
    sweep_races();
    return true;
}

void reset_launch_record() {
    if (!rt.cur) return;
    rt.cur->block_cycles.clear();
    rt.cur->block_busy.clear();
    rt.cur->block_ran.clear();
    rt.cur->block_gm.clear();
    rt.cur->blocks_run = 0;
    rt.cur->gm_read = rt.cur->gm_write = 0;
    rt.clear_intervals();
}

}  // namespace

// The scalar instrumentation's callbacks are declared nothrow by the compiler, so a fault found
// in one cannot be thrown (the unwinder would call std::terminate, taking the process down).
// The block stops where it is instead, as a core that traps would: its stack is dropped
// without running destructors (what they own leaks; the launch has faulted anyway).
bool trap_block() {
    if (!g_sched || !g_sched->cur) return false;
    Fiber& f = *g_sched->cur;
    f.state = Fiber::TRAPPED;
    swapcontext(&f.ctx, &g_sched->main);
    __builtin_unreachable();  // a trapped block is never resumed
}

bool matmul_server_core() {
    return g_sched && g_sched->cur && g_sched->cur->core == CORE_AIC && is_mixed(g_sched->kernel_type);
}

int launch_kernel_type(const void* fn, int module_default) {
    auto it = g_declared_type.find(fn);
    return it != g_declared_type.end() ? it->second : module_default;
}

void declare_kernel_type(int type, const Loc& loc) {
    Scheduler& s = sched(loc, "KERNEL_TASK_TYPE_DEFAULT");
    if (type < 0 || type >= KERNEL_TYPE_MAX)
        fault("invalid_argument", loc, "KERNEL_TASK_TYPE_DEFAULT(%d): not a KernelMetaType", type);
    int have = s.kernel_type;
    bool same = (is_mixed(type) && type == have) || (is_aic_only(type) && is_aic_only(have)) ||
                (!is_mixed(type) && !is_aic_only(type) && !is_mixed(have) && !is_aic_only(have));
    if (same) return;
    s.restart_type = type;
    throw KernelTypeRestart{};
}

// A `__cube__` kernel (the keyword means nothing on the CPU) starts as AIV-only: its first cube
// instruction restarts the launch on AIC cores, as if it had declared KERNEL_TYPE_AIC_ONLY. In a
// mixed launch the AIV cores have no cube unit.
void require_aic(const char* api, const Loc& loc) {
    if (hot.core_type == CORE_AIC) return;
    Scheduler& s = sched(loc, api);
    if (!is_mixed(s.kernel_type) && !is_aic_only(s.kernel_type)) {
        s.restart_type = KERNEL_TYPE_AIC_ONLY;
        throw KernelTypeRestart{};
    }
    fault("wrong_position", loc, "%s on an AIV core of a %s launch: the cube unit and its memories (L1, L0A/L0B/L0C, "
          "BT) belong to the AIC; guard cube code with ASCEND_IS_AIC", api, type_name(s.kernel_type));
}

void block_barrier(const Loc& loc, bool aiv_only) {
    Scheduler& s = sched(loc, "SyncAll");
    Fiber& f = *s.cur;
    if (aiv_only && f.core != CORE_AIV)
        fault("invalid_argument", loc, "SyncAll<true> (AIV only) called on an AIC core: use SyncAll<false>() to "
              "synchronise AIC and AIV cores");
    int64_t parts = aiv_only ? s.n_aiv : s.n_aiv + s.n_aic;
    if (parts <= 1) return;
    f.barrier_aiv_only = aiv_only;
    suspend(s, Fiber::AT_BARRIER, loc);
}

void cross_core_set(int mode, int pipe, int flag, const Loc& loc) {
    Scheduler& s = sched(loc, "CrossCoreSetFlag");
    tick(loc);
    if (flag < 0 || flag >= kFlagIds)
        fault("invalid_argument", loc, "CrossCoreSetFlag flagId %d out of range [0, %d]", flag, kFlagIds - 1);
    if (mode < 0 || mode > 2) fault("invalid_argument", loc, "CrossCoreSetFlag modeId %d out of range [0, 2]", mode);
    if (pipe == P_S || pipe < 0 || pipe >= P_COUNT)
        fault("invalid_argument", loc, "CrossCoreSetFlag: the pipe must be a hardware pipe (not PIPE_S or PIPE_ALL)");
    Fiber& f = *s.cur;
    double t = std::max(hot.s_time, rt.blk.done_[pipe]);
    hot.s_time += cfg.scalar_issue_cycles;
    std::vector<Fiber*> parts, targets;
    if (mode == 0) {  // all cores of the setter's type
        for (Fiber& g : s.fibers)
            if (g.core == f.core) parts.push_back(&g);
        gather_set(s, {0, f.core, flag}, parts, parts, flag, f.uid, t);
        return;
    }
    if (mode == 1) {  // the AIVs of one AI Core
        if (f.core != CORE_AIV) fault("invalid_argument", loc, "CrossCoreSetFlag mode 1 synchronises the AIVs of an AI "
                                      "Core; it was called on an AIC");
        for (Fiber& g : s.fibers)
            if (g.core == CORE_AIV && g.group == f.group) parts.push_back(&g);
        gather_set(s, {1, f.group, flag}, parts, parts, flag, f.uid, t);
        return;
    }
    if (!is_mixed(s.kernel_type))
        fault("invalid_argument", loc, "CrossCoreSetFlag mode 2 synchronises the AIC and AIVs of an AI Core, but this "
              "launch is %s: declare KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2) (or 1_1)",
              type_name(s.kernel_type));
    for (Fiber& g : s.fibers)
        if (g.core == CORE_AIV && g.group == f.group) parts.push_back(&g);
    if (f.core == CORE_AIC) {  // the AIC's set reaches each AIV of its group
        for (Fiber* q : parts) flag_counter(*q, flag).push_back(t);
        return;
    }
    targets.push_back(&s.fibers[size_t(s.n_aiv + f.group)]);  // every AIV of the group sets: the AIC's counter
    gather_set(s, {2, f.group, flag}, parts, targets, flag, f.uid, t);
}

void cross_core_wait(int flag, const Loc& loc) {
    Scheduler& s = sched(loc, "CrossCoreWaitFlag");
    tick(loc);
    if (flag < 0 || flag >= kFlagIds)
        fault("invalid_argument", loc, "CrossCoreWaitFlag flagId %d out of range [0, %d]", flag, kFlagIds - 1);
    Fiber& f = *s.cur;
    if (flag_counter(f, flag).empty()) {
        f.wait_flag = flag;
        suspend(s, Fiber::AT_FLAG, loc);
    }
    double t = f.flags[size_t(flag)].front();
    f.flags[size_t(flag)].pop_front();
    hot.s_time = std::max(hot.s_time, t) + cfg.scalar_issue_cycles;
    sweep_races();
}

void ib_set(int64_t block, int32_t event, const Loc& loc) {
    Scheduler& s = sched(loc, "IBSet");
    tick(loc);
    if (block < 0 || block >= s.n_aiv)
        fault("invalid_argument", loc, "IBSet blockIdx %lld outside [0, %lld)", (long long)block, (long long)s.n_aiv);
    // IBSet writes the flag to GM after everything issued before it: a PIPE_ALL barrier plus a copy out.
    double t = now_core_time() + cfg.mte3_startup_cycles;
    hot.s_time = t;
    s.ib_flags.emplace(std::make_pair(block, event), t);
}

void ib_wait(int64_t block, int32_t event, const Loc& loc) {
    Scheduler& s = sched(loc, "IBWait");
    tick(loc);
    if (block < 0 || block >= s.n_aiv)
        fault("invalid_argument", loc, "IBWait blockIdx %lld outside [0, %lld)", (long long)block, (long long)s.n_aiv);
    auto key = std::make_pair(block, event);
    if (!s.ib_flags.count(key)) {
        s.cur->wait_ib = key;
        suspend(s, Fiber::AT_IB, loc);
    }
    // polling the flag in GM: at least one read after it was written
    hot.s_time = std::max(now_core_time(), s.ib_flags[key]) + cfg.mte2_startup_cycles;
    sweep_races();
}

namespace {

// GroupBarrier: the state lives in the scheduler, keyed by the workspace; the workspace itself is
// only checked to be GM the launch owns (the NPU keeps one 512-byte message slot per index there).
GroupBar& group_bar(Scheduler& s, uintptr_t ws, uint32_t arrive_size, uint32_t wait_size, const Loc& loc) {
    auto it = s.group_bars.find(ws);
    if (it == s.group_bars.end()) {
        GroupBar g;
        g.arrive_size = arrive_size;
        g.wait_size = wait_size;
        g.arrivals.resize(arrive_size);
        g.waits.assign(wait_size, 0);
        g.arrive_owner.assign(arrive_size, -1);
        g.wait_owner.assign(wait_size, -1);
        it = s.group_bars.emplace(ws, std::move(g)).first;
    } else if (it->second.arrive_size != arrive_size || it->second.wait_size != wait_size) {
        fault("invalid_argument", loc, "GroupBarrier on GM workspace 0x%llx built with arriveSize %u and waitSize %u, "
              "but another block built it with %u and %u: every block must agree", (unsigned long long)ws,
              arrive_size, wait_size, it->second.arrive_size, it->second.wait_size);
    }
    return it->second;
}

// An index of a group belongs to one core: two blocks on one index overwrite each other's message.
void claim_index(std::vector<int64_t>& owner, uint32_t index, const char* what, const Loc& loc) {
    int64_t me = hot.core_uid;
    if (owner[index] >= 0 && owner[index] != me)
        fault("invalid_argument", loc, "GroupBarrier %s %u is used by block %lld and block %lld: each block of a "
              "group needs an index of its own", what, index, (long long)owner[index], (long long)me);
    owner[index] = me;
}

Scheduler& group_sched(const Loc& loc, const char* api, uint32_t arrive_size, uint32_t wait_size) {
    Scheduler& s = sched(loc, api);
    tick(loc);
    if (s.sampled) fault("unsupported_api", loc, "%s", sampled_refusal(s, "AIV", s.cur->block).c_str());
    if (s.cur->core != CORE_AIV)
        fault("invalid_argument", loc, "%s on an AIC core: GroupBarrier synchronises AIV cores", api);
    int64_t blocks = s.n_aiv;
    if (arrive_size == 0 || wait_size == 0 || arrive_size > blocks || wait_size > blocks)
        fault("invalid_argument", loc, "GroupBarrier arriveSize %u / waitSize %u: each must be in [1, %lld], the "
              "number of AIV blocks of the launch", arrive_size, wait_size, (long long)blocks);
    return s;
}

}  // namespace

void group_barrier_init(uintptr_t ws, uint32_t arrive_size, uint32_t wait_size, const Loc& loc) {
    // Mixed kernels construct it on every core before branching on the core type: on an AIC it is inert.
    if (hot.core_type == CORE_AIC) return;
    Scheduler& s = group_sched(loc, "GroupBarrier", arrive_size, wait_size);
    uint64_t len = uint64_t(std::max(arrive_size, wait_size)) * 512;
    gm_check(-1, ws, len, 1, "GroupBarrier", "needs a workspace of", loc);
    group_bar(s, ws, arrive_size, wait_size, loc);
}

void group_barrier_arrive(uintptr_t ws, uint32_t arrive_size, uint32_t wait_size, uint32_t index, const Loc& loc) {
    Scheduler& s = group_sched(loc, "GroupBarrier::Arrive", arrive_size, wait_size);
    GroupBar& g = group_bar(s, ws, arrive_size, wait_size, loc);
    if (index >= arrive_size)
        fault("invalid_argument", loc, "GroupBarrier::Arrive(%u): arriveIndex must be in [0, %u]", index,
              arrive_size - 1);
    claim_index(g.arrive_owner, index, "arriveIndex", loc);
    // The message says the work before it is done: it is written once every pipe has finished.
    pipe_barrier(-1, loc);
    g.arrivals[index].push_back(hot.s_time);
}

void group_barrier_wait(uintptr_t ws, uint32_t arrive_size, uint32_t wait_size, uint32_t index, const Loc& loc) {
    Scheduler& s = group_sched(loc, "GroupBarrier::Wait", arrive_size, wait_size);
    GroupBar& g = group_bar(s, ws, arrive_size, wait_size, loc);
    if (index >= wait_size)
        fault("invalid_argument", loc, "GroupBarrier::Wait(%u): waitIndex must be in [0, %u]", index, wait_size - 1);
    claim_index(g.wait_owner, index, "waitIndex", loc);
    size_t round = ++g.waits[index];
    Fiber& f = *s.cur;
    if (!group_round_complete(g, round)) {
        f.wait_group = ws;
        f.wait_index = index;
        f.wait_round = round;
        suspend(s, Fiber::AT_GROUP, loc);
    }
    // Charged as SyncAll charges its participants: the waiter resumes, every pipe drained, at the
    // later of its own time and the last arrival, plus the barrier's cost.
    double last = 0;
    group_round_complete(s.group_bars.at(ws), round, &last);
    double t = std::max(now_core_time(), last) + cfg.sync_all_cycles;
    hot.s_time = t;
    for (int p = 0; p < P_COUNT; ++p) {
        rt.blk.free_[p] = std::max(rt.blk.free_[p], t);
        rt.blk.done_[p] = std::max(rt.blk.done_[p], t);
    }
    sweep_races();
}

// Every sampled group has ended: after the first stage (first, middle and last group), the rest of
// the evenly spaced sample where those differ (stage_agrees); then one more group where the
// sampled groups' costs leave the skipped ones between them uncertain (refine_group,
// rt_sampling.cpp). False when none is needed.
bool refine_sample(Scheduler& s) {
    std::vector<double> cost(size_t(s.groups), 0.0), gm(size_t(s.groups), 0.0), spread(size_t(s.groups), 0.0);
    std::vector<uint8_t> ran(size_t(s.groups), 0);
    const LaunchRec& L = *rt.cur;
    for (const Fiber& f : s.fibers) {
        size_t u = size_t(f.uid), g = size_t(f.group);
        if (g >= ran.size() || u >= L.block_ran.size() || !L.block_ran[u]) continue;
        ran[g] = 1, cost[g] += L.block_cycles[u], gm[g] += double(L.block_gm[u]);
        if (u < L.block_spread.size()) spread[g] += L.block_spread[u];
    }
    if (!s.staged) {
        s.staged = true;
        if (!stage_agrees(cost, spread, gm, ran)) {
            bool started = false;
            for (Fiber& f : s.fibers)
                if (f.state == Fiber::DONE && !ran[size_t(f.group)] && group_in_sample(f.group, s.groups))
                    f.state = Fiber::NEW, started = true;
            if (started) return true;
        }
    }
    int64_t next = refine_group(cost, gm, ran);
    if (next < 0) return false;
    bool started = false;
    for (Fiber& f : s.fibers)
        if (f.group == next && f.state == Fiber::DONE) f.state = Fiber::NEW, started = true;
    return started;
}

void run_blocks(int64_t num_blocks, void (*body)(void*), void* ctx, const void* fn, int kernel_type) {
    Scheduler* outer = g_sched;
    for (int attempt = 0; attempt < 2; ++attempt) {
        Scheduler s;
        s.body = body;
        s.ctx = ctx;
        lay_out(s, num_blocks, kernel_type);
        if (rt.cur) rt.cur->aic_blocks = s.n_aic, rt.cur->aiv_blocks = s.n_aiv;
        s.groups = num_blocks;
        for (Fiber& f : s.fibers)  // sampled simulation: the groups it skips count as done, unrun
            if (!group_sampled(f.group, num_blocks)) f.state = Fiber::DONE, s.sampled = true;
        g_sched = &s;
        bool go = true;
        while (go) {
            bool ran = false;
            for (Fiber& f : s.fibers) {
                if (!runnable(s, f)) continue;
                ran = true;
                if (!(go = step(s, f))) break;
            }
            if (!go || ran) continue;
            bool all_done = true;
            for (Fiber& f : s.fibers) all_done = all_done && f.state == Fiber::DONE;
            if (all_done && s.sampled && !rt.faulted && rt.cur && refine_sample(s)) continue;
            if (all_done) break;
            if (release_barrier(s)) continue;
            report_deadlock(s);
            break;
        }
        for (Fiber& f : s.fibers) release(f);  // blocks abandoned after a fault or a deadlock
        g_sched = outer;
        if (s.restart_type < 0 || rt.faulted) return;
        if (attempt > 0) {
            record_fault("invalid_argument", "", 0, fmt("the blocks of kernel %s declare different kernel types "
                         "(KERNEL_TASK_TYPE_DEFAULT): %s and %s", rt.cur ? rt.cur->kernel.c_str() : "?",
                         type_name(kernel_type), type_name(s.restart_type)));
            return;
        }
        kernel_type = s.restart_type;  // KERNEL_TASK_TYPE_DEFAULT differs from the assumed layout
        if (fn) g_declared_type[fn] = kernel_type;
        reset_launch_record();
    }
}

}  // namespace kgsim
