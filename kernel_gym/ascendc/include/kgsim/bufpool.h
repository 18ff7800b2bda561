// kgsim: TBufPool - a block of UB (or L1) taken from TPipe and divided by hand into queues, TBufs
// and smaller pools (TPipe::InitBufPool, TBufPool::InitBufPool / InitBuffer / Reset), two pools
// possibly sharing one block; and the EXTERN_IMPL_BUFPOOL macro with which a kernel writes its own
// pool class (Init, Reset, GetBufHandle, Get/SetCurAddr, Get/SetCurBufSize). Addresses are byte
// offsets in the position's memory. Runtime side: src/rt_bufpool.cpp.
#pragma once
#include "kgsim/tensor.h"

namespace kgsim {
BufInfo bufpool_alloc(uint8_t pos, uint32_t len, const Loc& loc);
int32_t bufpool_que_init(uint8_t src_pos, uint8_t dst_pos, int32_t depth, uint32_t num, uint32_t len, uint32_t addr,
                         uint32_t hi, const Loc& loc);
BufInfo bufpool_tbuf_init(uint8_t pos, uint32_t len, uint32_t addr, uint32_t hi, const Loc& loc);
void bufpool_set_slot(int32_t h, uint32_t index, uint32_t addr, uint32_t len, uint32_t hi, const Loc& loc);
void bufpool_reset(const Loc& loc);
// what GetBufHandle returns: where the pool's cursor is, so InitStartBufHandle knows the next address
struct BufHandle {
    uint32_t* cur = nullptr;
    uint32_t end = 0;
};
}  // namespace kgsim

namespace AscendC {
using TBufHandle = ::kgsim::BufHandle*;
constexpr uint32_t defaultBufIDSize = 4;

// a queue or TBuf placed inside a pool, at [addr, hi)
template <TPosition s, TPosition d, int32_t depth, auto mask>
void kgsim_pool_que(TQueBind<s, d, depth, mask>& q, uint32_t num, uint32_t len, uint32_t addr, uint32_t hi,
                    const ::kgsim::Loc& loc) {
    if (q.h_ >= 0) ::kgsim::que_release(q.h_, q.gen_);
    q.h_ = ::kgsim::bufpool_que_init(uint8_t(s), uint8_t(d), depth, num, len, addr, hi, loc);
    q.gen_ = ::kgsim::hot.gen;
}
template <TPosition pos>
void kgsim_pool_tbuf(TBuf<pos>& b, uint32_t len, uint32_t addr, uint32_t hi, const ::kgsim::Loc& loc) {
    b.b_ = ::kgsim::bufpool_tbuf_init(uint8_t(pos), len, addr, hi, loc);
    b.init_ = true;
}
// the hooks TQueBind/TBuf::InitStartBufHandle and InitBufHandle call (custom pools)
template <TPosition s, TPosition d, int32_t depth, auto mask>
void kgsim_pool_que_start(TQueBind<s, d, depth, mask>& q, TBufHandle h, uint8_t num, uint32_t len,
                          const ::kgsim::Loc& loc) {
    if (!h || !h->cur) ::kgsim::fault("queue_misuse", loc, "InitStartBufHandle: the handle is not a TBufPool's");
    kgsim_pool_que(q, num, len, *h->cur, h->end, loc);
}
template <TPosition s, TPosition d, int32_t depth, auto mask>
void kgsim_pool_que_slot(TQueBind<s, d, depth, mask>& q, TBufHandle h, uint32_t index, uint32_t addr, uint32_t len,
                         const ::kgsim::Loc& loc) {
    ::kgsim::bufpool_set_slot(q.h_, index, addr, len, h ? h->end : 0, loc);
}
template <TPosition pos>
void kgsim_pool_que_start(TBuf<pos>& b, TBufHandle h, uint8_t num, uint32_t len, const ::kgsim::Loc& loc) {
    (void)num;
    if (!h || !h->cur) ::kgsim::fault("queue_misuse", loc, "InitStartBufHandle: the handle is not a TBufPool's");
    kgsim_pool_tbuf(b, len, *h->cur, h->end, loc);
}
template <TPosition pos>
void kgsim_pool_que_slot(TBuf<pos>& b, TBufHandle h, uint32_t index, uint32_t addr, uint32_t len,
                         const ::kgsim::Loc& loc) {
    (void)index;
    kgsim_pool_tbuf(b, len, addr, h ? h->end : 0, loc);
}

template <TPosition pos, uint32_t bufIDSize = defaultBufIDSize>
class TBufPool {
public:
    uint32_t kgsim_start_ = 0, kgsim_len_ = 0, kgsim_cur_ = 0;
    bool kgsim_init_ = false;

    TBufPool() = default;
    TBufPool(const TBufPool&) = delete;
    TBufPool& operator=(const TBufPool&) = delete;
    // the pool's block: from TPipe, from a parent pool, or another pool's (shared)
    bool kgsim_pool_from_pipe(uint32_t len, const ::kgsim::Loc& loc) {
        ::kgsim::BufInfo b = ::kgsim::bufpool_alloc(uint8_t(pos), len, loc);
        return kgsim_place(b.addr, b.len);
    }
    bool kgsim_place(uint32_t addr, uint32_t len) {
        kgsim_start_ = kgsim_cur_ = addr;
        kgsim_len_ = len;
        kgsim_init_ = true;
        return true;
    }
    uint32_t kgsim_pool_start() const { return kgsim_start_; }
    uint32_t kgsim_pool_len() const { return kgsim_len_; }
    template <class T>
    bool InitBufPool(T& bufPool, uint32_t len, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
        uint32_t need = (len + 31) / 32 * 32;
        kgsim_check(need, "InitBufPool", loc);
        bufPool.kgsim_place(kgsim_cur_, need);
        kgsim_cur_ += need;
        return true;
    }
    template <class T, class U>
    bool InitBufPool(T& bufPool, uint32_t len, U& shareBuf, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
        kgsim_check(0, "InitBufPool", loc);
        if (len > shareBuf.kgsim_pool_len())
            ::kgsim::fault("invalid_argument", loc, "TBufPool::InitBufPool: %u B is more than the %u B of the shared "
                           "pool", len, shareBuf.kgsim_pool_len());
        return bufPool.kgsim_place(shareBuf.kgsim_pool_start(), len);
    }
    template <class T>
    bool InitBuffer(T& que, uint8_t num, uint32_t len, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
        kgsim_check(0, "InitBuffer", loc);
        kgsim_pool_que(que, num, len, kgsim_cur_, kgsim_start_ + kgsim_len_, loc);
        kgsim_cur_ += uint32_t(num) * ((len + 31) / 32 * 32);
        return true;
    }
    template <TPosition bufPos>
    bool InitBuffer(TBuf<bufPos>& buf, uint32_t len, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
        kgsim_check(0, "InitBuffer", loc);
        kgsim_pool_tbuf(buf, len, kgsim_cur_, kgsim_start_ + kgsim_len_, loc);
        kgsim_cur_ += (len + 31) / 32 * 32;
        return true;
    }
    // the buffers stay where they are (their contents may be overwritten by a pool sharing the block)
    void Reset(::kgsim::Loc loc = ::kgsim::Loc::current()) { ::kgsim::bufpool_reset(loc); }

private:
    void kgsim_check(uint32_t need, const char* api, const ::kgsim::Loc& loc) const {
        if (!kgsim_init_)
            ::kgsim::fault("queue_misuse", loc, "TBufPool::%s on a pool that neither TPipe::InitBufPool nor "
                           "TBufPool::InitBufPool set up", api);
        if (uint64_t(kgsim_cur_) + need > uint64_t(kgsim_start_) + kgsim_len_)
            ::kgsim::fault("ub_overflow", loc, "TBufPool::%s: %u B more do not fit the pool's %u B (%u B used)", api,
                           need, kgsim_len_, kgsim_cur_ - kgsim_start_);
    }
};
}  // namespace AscendC

// The members a custom pool class gets from EXTERN_IMPL_BUFPOOL(EXT_BUFPOOL, POSITION, BUFID_SIZE).
#define EXTERN_IMPL_BUFPOOL(EXT_BUFPOOL, POSITION, BUFID_SIZE)                                              \
public:                                                                                                    \
    uint32_t kgsim_start_ = 0, kgsim_len_ = 0, kgsim_cur_ = 0;                                             \
    uint8_t kgsim_nbuf_ = 0;                                                                               \
    ::kgsim::BufHandle kgsim_handles_[(BUFID_SIZE) > 0 ? (BUFID_SIZE) : 1];                                \
    bool kgsim_place(uint32_t addr, uint32_t len) {                                                        \
        kgsim_start_ = kgsim_cur_ = addr;                                                                  \
        kgsim_len_ = len;                                                                                  \
        return true;                                                                                       \
    }                                                                                                      \
    bool kgsim_pool_from_pipe(uint32_t len, const ::kgsim::Loc& loc) {                                     \
        ::kgsim::BufInfo b = ::kgsim::bufpool_alloc(uint8_t(POSITION), len, loc);                          \
        return kgsim_place(b.addr, b.len);                                                                 \
    }                                                                                                      \
    uint32_t kgsim_pool_start() const { return kgsim_start_; }                                             \
    uint32_t kgsim_pool_len() const { return kgsim_len_; }                                                 \
    void Init() {                                                                                          \
        kgsim_cur_ = kgsim_start_;                                                                         \
        kgsim_nbuf_ = 0;                                                                                   \
    }                                                                                                      \
    void Reset(::kgsim::Loc loc = ::kgsim::Loc::current()) {                                               \
        ::kgsim::bufpool_reset(loc);                                                                       \
        Init();                                                                                            \
    }                                                                                                      \
    AscendC::TBufHandle GetBufHandle(uint8_t offset) {                                                     \
        ::kgsim::BufHandle& h = kgsim_handles_[offset < (BUFID_SIZE) ? offset : 0];                         \
        h.cur = &kgsim_cur_;                                                                               \
        h.end = kgsim_start_ + kgsim_len_;                                                                 \
        return &h;                                                                                         \
    }                                                                                                      \
    void SetCurAddr(uint32_t curAddr) { kgsim_cur_ = curAddr; }                                            \
    uint32_t GetCurAddr() { return kgsim_cur_; }                                                           \
    void SetCurBufSize(uint8_t curBufSize) { kgsim_nbuf_ = curBufSize; }                                   \
    uint8_t GetCurBufSize() { return kgsim_nbuf_; }
