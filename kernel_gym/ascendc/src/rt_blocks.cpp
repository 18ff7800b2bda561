// The blocks of a launch, and SyncAll across them.
//
// Each block runs on a stack of its own (ucontext). Without SyncAll a block runs from start to
// end before the next one starts, as before. SyncAll suspends the block: its core state (the
// `hot` registers, its BlockState, the used part of its local memories and their shadow state)
// is saved, and the next block runs. When every block is waiting at the barrier, each resumes in
// block order at the simulated time the last one arrived (plus the barrier's cost). If some
// blocks end while others wait, the NPU would hang: that is a syncall_deadlock fault here, as
// is a SyncAll in a launch with more blocks than cores (not all resident at once).
#include <sys/mman.h>
#include <ucontext.h>

#include "rt.h"

namespace kgsim {
namespace {

constexpr size_t kStackBytes = size_t(4) << 20;  // per block, lazily backed
constexpr size_t kGuardBytes = 4096;              // PROT_NONE at both ends of every stack

struct SavedCore {
    Hot hot{};
    BlockState blk{};
    std::array<std::vector<uint8_t>, MEM_COUNT> mem;
    std::vector<double> w_end, r_end_v, r_end_mte3;
    std::vector<uint8_t> w_pipe, init;
};

struct Fiber {
    enum State { NEW, RUNNING, WAITING, DONE };
    ucontext_t ctx{};
    void* stack = nullptr;
    int64_t block = 0;
    State state = NEW;
    Loc wait_loc{};
    SavedCore saved;
};

struct Scheduler {
    ucontext_t main{};
    std::vector<Fiber> fibers;
    Fiber* cur = nullptr;
    void (*body)(void*) = nullptr;
    void* ctx = nullptr;
};

Scheduler* g_sched = nullptr;

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
    block_begin(s.cur->block);
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

// Run fiber `f` until it ends or waits at a barrier; false when the launch must stop.
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
    swapcontext(&s.main, &f.ctx);
    s.cur = nullptr;
    if (f.state == Fiber::WAITING) {
        save_core(f.saved);
        return !rt.faulted;
    }
    release(f);
    return block_end(f.block);
}

}  // namespace

void block_barrier(const Loc& loc) {
    Scheduler* s = g_sched;
    if (!s || !s->cur) fault("unsupported_api", loc, "SyncAll outside a kernel launch");
    if (double(hot.block_num) > std::max(1.0, cfg.aiv_cores))
        fault("syncall_deadlock", loc, "SyncAll in a launch of %lld blocks on %.0f vector cores: the blocks are not all "
              "resident at once, so the barrier never completes on the NPU; launch at most %.0f blocks",
              (long long)hot.block_num, cfg.aiv_cores, cfg.aiv_cores);
    Fiber& f = *s->cur;
    f.state = Fiber::WAITING;
    f.wait_loc = loc;
    swapcontext(&f.ctx, &s->main);
    // resumed by run_blocks once every block has arrived; the core state is this block's again
}

void run_blocks(int64_t num_blocks, void (*body)(void*), void* ctx) {
    Scheduler s;
    s.body = body;
    s.ctx = ctx;
    s.fibers.resize(size_t(num_blocks));
    for (int64_t b = 0; b < num_blocks; ++b) s.fibers[size_t(b)].block = b;
    Scheduler* outer = g_sched;
    g_sched = &s;
    bool go = true;
    for (Fiber& f : s.fibers) {
        if (!(go = step(s, f))) break;
    }
    while (go) {
        std::vector<Fiber*> waiting;
        int64_t done = 0;
        for (Fiber& f : s.fibers) {
            if (f.state == Fiber::WAITING) waiting.push_back(&f);
            if (f.state == Fiber::DONE) ++done;
        }
        if (waiting.empty()) break;
        if (done > 0) {
            Fiber& w = *waiting.front();
            record_fault("syncall_deadlock", w.wait_loc.file_name(), w.wait_loc.line(),
                         fmt("block %lld waits at SyncAll but %lld of the %lld blocks ended without reaching it: the "
                             "NPU would hang; every block must call SyncAll the same number of times",
                             (long long)w.block, (long long)done, (long long)num_blocks));
            break;
        }
        // Every block is at the barrier: all resume when the last arrived, plus the barrier's cost.
        double t = 0;
        for (Fiber* f : waiting) t = std::max(t, core_time(f->saved));
        t += cfg.sync_all_cycles;
        for (Fiber* f : waiting) {
            f->saved.hot.s_time = t;
            for (int p = 0; p < P_COUNT; ++p) {
                f->saved.blk.free_[p] = std::max(f->saved.blk.free_[p], t);
                f->saved.blk.done_[p] = std::max(f->saved.blk.done_[p], t);
            }
        }
        if (cfg.race_check && !rt.faulted) race_sweep();  // accesses on either side of the barrier are ordered
        rt.intervals.clear();
        for (Fiber* f : waiting) {
            if (!(go = step(s, *f))) break;
        }
    }
    for (Fiber& f : s.fibers) release(f);  // blocks abandoned after a fault or a deadlock
    g_sched = outer;
}

}  // namespace kgsim
