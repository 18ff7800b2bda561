// kgsim: the deterministic-order APIs between the AIV blocks of a launch (InitDetermineComputeWorkspace,
// WaitPreBlock, NotifyNextBlock) and the SuperKernel task-order hints (WaitPreTaskEnd, SetNextTaskStart).
// WaitPreBlock/NotifyNextBlock pass a token round by round: in round k, block b runs after block b - 1's
// k-th NotifyNextBlock, and block 0 after the last block's (k - 1)-th. The round counter lives where the
// NPU keeps it, after the blocks' slots of ubWorkspace; the token travels as IBSet/IBWait flags
// (kgsim/cores.h) with event ids no kernel uses.
#pragma once
#include "kgsim/cores.h"

namespace AscendC {
namespace kgsim_detail {
constexpr int32_t kBlockOrderEvent = int32_t(1) << 30;
inline void block_order_check(const GlobalTensor<int32_t>& gm, const LocalTensor<int32_t>& ub, const char* api,
                              const ::kgsim::Loc& loc) {
    uint64_t n = uint64_t(GetBlockNum());
    if (ub.GetSize() < n * 8 + 8)
        ::kgsim::fault("invalid_argument", loc, "%s: ubWorkspace holds %u int32 but GetBlockNum() * 32 + 32 B (%llu "
                       "int32) are needed", api, ub.GetSize(), (unsigned long long)(n * 8 + 8));
    if (gm.GetSize() && gm.GetSize() < n * 8)
        ::kgsim::fault("invalid_argument", loc, "%s: gmWorkspace holds %llu int32 but GetBlockNum() * 32 B (%llu int32) "
                       "are needed", api, (unsigned long long)gm.GetSize(), (unsigned long long)(n * 8));
}
}  // namespace kgsim_detail

inline void InitDetermineComputeWorkspace(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace,
                                          ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::block_order_check(gmWorkspace, ubWorkspace, "InitDetermineComputeWorkspace", loc);
    ::kgsim::pipe_barrier(PIPE_ALL, loc);
    ubWorkspace.SetValue(uint32_t(GetBlockNum() * 8), 1, loc);  // round 1 next
}
inline void WaitPreBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace,
                         ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::block_order_check(gmWorkspace, ubWorkspace, "WaitPreBlock", loc);
    ::kgsim::pipe_barrier(PIPE_ALL, loc);
    int64_t n = GetBlockNum(), b = GetBlockIdx();
    int32_t round = ubWorkspace.GetValue(uint32_t(n * 8), loc);
    if (round < 1)
        ::kgsim::fault("queue_misuse", loc, "WaitPreBlock before InitDetermineComputeWorkspace (the NPU would wait "
                       "forever)");
    if (b > 0) ::kgsim::ib_wait(b - 1, kgsim_detail::kBlockOrderEvent + round, loc);
    else if (round > 1) ::kgsim::ib_wait(n - 1, kgsim_detail::kBlockOrderEvent + round - 1, loc);
}
inline void NotifyNextBlock(GlobalTensor<int32_t>& gmWorkspace, LocalTensor<int32_t>& ubWorkspace,
                            ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::block_order_check(gmWorkspace, ubWorkspace, "NotifyNextBlock", loc);
    int64_t n = GetBlockNum(), b = GetBlockIdx();
    int32_t round = ubWorkspace.GetValue(uint32_t(n * 8), loc);
    ::kgsim::ib_set(b, kgsim_detail::kBlockOrderEvent + round, loc);
    ubWorkspace.SetValue(uint32_t(n * 8), round + 1, loc);
}

// SuperKernel early start: a launch here is a task of its own, run after the previous one ends, so
// both only order the block's own pipes
template <pipe_t AIV_PIPE = PIPE_MTE3, pipe_t AIC_PIPE = PIPE_FIX, bool FORCE = false>
void SetNextTaskStart(::kgsim::Loc loc = ::kgsim::Loc::current()) {
    ::kgsim::pipe_barrier(PIPE_ALL, loc);
}
template <bool FORCE = false>
void WaitPreTaskEnd(::kgsim::Loc loc = ::kgsim::Loc::current()) {
    ::kgsim::pipe_barrier(PIPE_ALL, loc);
}
}  // namespace AscendC

// ---- workspace: the system part (SetSysWorkspace / GetSysWorkSpacePtr) and the user part -------
namespace kgsim {
inline uint8_t sys_workspace_dummy[32];
inline GM_ADDR sys_workspace = nullptr;
}  // namespace kgsim
namespace AscendC {
// The system workspace the library APIs (Matmul) may use: the simulator needs none, but kernels test it.
inline GM_ADDR GetSysWorkSpacePtr() { return kgsim::sys_workspace ? kgsim::sys_workspace : kgsim::sys_workspace_dummy; }
inline void SetSysWorkspace(GM_ADDR workspace) { kgsim::sys_workspace = workspace; }
// The user's part of the workspace follows the system part, whose size the host adds to its
// request (PlatformAscendC::GetLibApiWorkSpaceSize(): 16 MiB on A2).
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) { return workspace ? workspace + 16u * 1024u * 1024u : nullptr; }
}  // namespace AscendC
