// kgsim runtime: TBufPool (kgsim/bufpool.h). A pool is a TPipe allocation; the queues and TBufs a
// pool hands out are placed inside it (TPipe's allocation cursor is moved to the pool's cursor for
// the one allocation, then put back), so they get the checks and bookkeeping of TPipe's own.
#include "kgsim/bufpool.h"
#include "rt.h"

namespace kgsim {
namespace {
void check_room(uint32_t addr, uint64_t need, uint32_t hi, const char* what, const Loc& loc) {
    if (uint64_t(addr) + need > hi)
        fault("ub_overflow", loc, "TBufPool over-allocation: %s needs %llu B at byte %u, past the pool's end at byte %u",
              what, (unsigned long long)need, addr, hi);
}
template <class F>
auto at_cursor(uint8_t mem, uint32_t addr, F&& alloc) {
    uint32_t saved = rt.blk.top[mem];
    rt.blk.top[mem] = addr;
    try {
        auto r = alloc();
        rt.blk.top[mem] = saved;
        return r;
    } catch (...) {
        rt.blk.top[mem] = saved;
        throw;
    }
}
uint8_t mem_of(uint8_t pos) { return (pos == 1 || pos == 3 || pos == 5 || pos == 13) ? MEM_L1 : MEM_UB; }
}  // namespace

BufInfo bufpool_alloc(uint8_t pos, uint32_t len, const Loc& loc) { return tbuf_init(pos, len, loc); }

int32_t bufpool_que_init(uint8_t src_pos, uint8_t dst_pos, int32_t depth, uint32_t num, uint32_t len, uint32_t addr,
                         uint32_t hi, const Loc& loc) {
    check_in_launch(loc, "TBufPool::InitBuffer");
    check_room(addr, uint64_t(num) * ((uint64_t(len) + 31) / 32 * 32), hi, "InitBuffer(queue)", loc);
    return at_cursor(mem_of(src_pos), addr,
                     [&] { return que_init(src_pos, dst_pos, depth, num, len, loc); });
}

BufInfo bufpool_tbuf_init(uint8_t pos, uint32_t len, uint32_t addr, uint32_t hi, const Loc& loc) {
    check_in_launch(loc, "TBufPool::InitBuffer");
    check_room(addr, (uint64_t(len) + 31) / 32 * 32, hi, "InitBuffer(TBuf)", loc);
    return at_cursor(mem_of(pos), addr, [&] { return tbuf_init(pos, len, loc); });
}

void bufpool_set_slot(int32_t h, uint32_t index, uint32_t addr, uint32_t len, uint32_t hi, const Loc& loc) {
    check_in_launch(loc, "InitBufHandle");
    if (h < 0 || size_t(h) >= rt.blk.queues.size())
        fault("queue_misuse", loc, "InitBufHandle on a queue that InitStartBufHandle did not set up");
    Queue& q = rt.blk.queues[h];
    if (index >= q.slots.size())
        fault("queue_misuse", loc, "InitBufHandle: buffer %u of a queue of %zu buffers", index, q.slots.size());
    if (addr % 32) fault("unaligned_local_tensor", loc, "InitBufHandle: buffer address %u is not 32-byte aligned", addr);
    check_room(addr, len, hi, "InitBufHandle", loc);
    q.slots[index].addr = addr;
    q.slots[index].len = (len + 31) / 32 * 32;
}

// Reset ends the pool's pending work before its memory is handed to another pool
void bufpool_reset(const Loc& loc) { pipe_barrier(6 /* PIPE_ALL */, loc); }
}  // namespace kgsim
