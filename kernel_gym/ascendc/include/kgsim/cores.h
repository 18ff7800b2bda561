// kgsim: AIC and AIV cores. Kernel types (KERNEL_TASK_TYPE_DEFAULT in base.h), ASCEND_IS_AIC /
// ASCEND_IS_AIV, the cross-core flags (CrossCoreSetFlag / CrossCoreWaitFlag and the older ffts
// calls), IBSet / IBWait and GroupBarrier. The runtime (src/rt_blocks.cpp) runs every core of a launch on a
// stack of its own and suspends a core that waits until what it waits for has happened.
#pragma once
#include "kgsim/base.h"
#include "kgsim/tensor.h"

// Kernel-type qualifiers of the asc-devkit (.asc) style: `__global__ __mix__(1, 2) void k(...)`.
// The loader turns them into KERNEL_TASK_TYPE_DEFAULT at the top of the kernel's body
// (loader.rewrite_kernel_qualifiers); here they only have to vanish. __kfc_workspace__ marks the
// workspace parameter of a Matmul kernel.
#define __mix__(aic, aiv)
#define __kfc_workspace__

// TIK2: the pre-release name of Ascend C (2022-2023 samples write `using namespace tik2;`).
namespace AscendC {}
namespace tik2 = AscendC;

namespace AscendC {
// Core types as g_coreType reports them.
constexpr int32_t AIC = 1;
constexpr int32_t AIV = 2;

namespace kgsim_detail {
constexpr int cross_core_pipe(pipe_t p) {
    switch (p) {
        case PIPE_V: return kgsim::P_V;
        case PIPE_M: return kgsim::P_M;
        case PIPE_MTE1: return kgsim::P_MTE1;
        case PIPE_MTE2: return kgsim::P_MTE2;
        case PIPE_MTE3: return kgsim::P_MTE3;
        case PIPE_FIX: return kgsim::P_FIX;
        default: return -1;  // PIPE_S / PIPE_ALL: refused at run time
    }
}
}  // namespace kgsim_detail

// modeId 0: all cores of the caller's type; 1: the AIVs of one AI Core; 2: an AIC and its AIVs.
template <uint8_t modeId, pipe_t pipe>
void CrossCoreSetFlag(uint16_t flagId, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::cross_core_set(modeId, kgsim_detail::cross_core_pipe(pipe), flagId, loc);
}
// Both documented forms: CrossCoreWaitFlag(flagId) and CrossCoreWaitFlag<modeId, pipe>(flagId).
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
void CrossCoreWaitFlag(uint16_t flagId, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::cross_core_wait(flagId, loc);
}

// Soft synchronisation through a GM workspace: IBSet marks (blockIdx, eventID) done, IBWait
// waits until it is. The workspaces are not needed by the simulator.
template <bool isAIVOnly = true>
void IBSet(const GlobalTensor<int32_t>& /*gmWorkspace*/, const LocalTensor<int32_t>& /*ubWorkspace*/,
           int32_t blockIdx, int32_t eventID, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::ib_set(blockIdx, eventID, loc);
}
template <bool isAIVOnly = true>
void IBWait(const GlobalTensor<int32_t>& /*gmWorkspace*/, const LocalTensor<int32_t>& /*ubWorkspace*/,
            int32_t blockIdx, int32_t eventID, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::ib_wait(blockIdx, eventID, loc);
}

// GroupBarrier: the blocks of the Arrive group each call Arrive(index) when their work is done;
// those of the Wait group each block in Wait(index) until the whole Arrive group has arrived (the
// k-th Wait of an index needs the k-th Arrive of every arrive index, so it works in loops). The
// NPU keeps one 512-byte message slot per index in `groupWorkspace`, which the user zeroes; the
// simulator keeps the state itself and only checks that the workspace is GM of the launch.
// kgsim:partial GroupBarrier: the 1600 B at the end of the UB that the NPU takes for it are not reserved
enum class PipeMode : uint8_t { SCALAR_MODE = 0, MTE3_MODE = 1, MAX };

template <PipeMode pipeMode>
class GroupBarrier {
    static_assert(pipeMode == PipeMode::MTE3_MODE, "GroupBarrier supports only PipeMode::MTE3_MODE");

public:
    GroupBarrier(GM_ADDR groupWorkspace, uint32_t arriveSizeIn, uint32_t waitSizeIn,
                 kgsim::Loc loc = kgsim::Loc::current())
        : ws_(reinterpret_cast<uintptr_t>(groupWorkspace)), arriveSize_(arriveSizeIn), waitSize_(waitSizeIn) {
        kgsim::group_barrier_init(ws_, arriveSize_, waitSize_, loc);
    }
    void Arrive(uint32_t arriveIndex, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::group_barrier_arrive(ws_, arriveSize_, waitSize_, arriveIndex, loc);
    }
    void Wait(uint32_t waitIndex, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::group_barrier_wait(ws_, arriveSize_, waitSize_, waitIndex, loc);
    }
    // One 512-byte slot for each index of the larger group.
    uint64_t GetWorkspaceLen() const { return uint64_t(arriveSize_ > waitSize_ ? arriveSize_ : waitSize_) * 512; }

private:
    uintptr_t ws_;
    uint32_t arriveSize_, waitSize_;
};
}  // namespace AscendC

// The core type of the running block (a compile-time constant per core binary on the NPU).
#define g_coreType (::kgsim::hot.core_type == ::kgsim::CORE_AIC ? ::AscendC::AIC : ::AscendC::AIV)
#define ASCEND_IS_AIV (::kgsim::hot.core_type == ::kgsim::CORE_AIV)
#define ASCEND_IS_AIC (::kgsim::hot.core_type == ::kgsim::CORE_AIC)
#define ASCEND_IS_NOT_AIV (!ASCEND_IS_AIV)
#define ASCEND_IS_NOT_AIC (!ASCEND_IS_AIC)

// Older intrinsics: config = 1 | mode << 4 | flagId << 8.
inline void ffts_cross_core_sync(pipe_t pipe, uint64_t config, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::cross_core_set(int((config >> 4) & 0x3), AscendC::kgsim_detail::cross_core_pipe(pipe),
                          int((config >> 8) & 0xF), loc);
}
inline void wait_flag_dev(int64_t flagId, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::cross_core_wait(int(flagId), loc);
}
