// kgsim: what CANN's matmul template library (catlass) needs beyond the rest of the headers:
// the CCE compiler keywords it spells out, and the cube-side APIs it calls. Each is written from
// the public Ascend C documentation; tests/ascendc/test_catlass_support.py checks them.
#pragma once
#include "kgsim/base.h"

// CCE keyword (clang's always_inline spelling): no meaning on the CPU.
#ifndef __forceinline__
#define __forceinline__ inline
#endif

namespace AscendC {
// SetHF32Mode: fp32 Mmad operands rounded to HF32 when on (a precision mode of the cube unit).
// kgsim:partial SetHF32Mode: accepted; Mmad keeps full fp32 operands (results at least as accurate)
inline void SetHF32Mode(bool /*hf32Mode*/) {}
// SetMMLayoutTransform: the order in which the cube unit walks the output fractals (unit-flag
// pipelining with the fixpipe); no effect on the values.
inline void SetMMLayoutTransform(bool /*mmLayoutMode*/) {}

// The APIs below are declared so that the library compiles; the simulator does not model them yet
// and a call is an unsupported_api fault naming the API.
// kgsim:partial SetFixPipeConfig: declared; a call is an unsupported_api fault (per-channel quant tensor in FB)
template <class T, bool setRelu = false>
void SetFixPipeConfig(const LocalTensor<T>&, bool = false, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::fault("unsupported_api", loc, "SetFixPipeConfig is not modelled by the simulator yet");
}
template <class T, bool setRelu = false>
void SetFixPipeConfig(const LocalTensor<T>&, const LocalTensor<T>&, bool = false,
                      kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::fault("unsupported_api", loc, "SetFixPipeConfig is not modelled by the simulator yet");
}
// kgsim:partial Load3DSetFMatrixCal: declared; a call is an unsupported_api fault
inline void Load3DSetFMatrixCal(uint16_t, uint16_t, const uint8_t[4], kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::fault("unsupported_api", loc, "Load3DSetFMatrixCal is not modelled by the simulator yet");
}
struct LoadData3DParamsV2Pro {
    uint16_t channelSize = 0;
    bool enTranspose = false;
    bool enSmallK = false;
    bool filterSizeW = false;
    bool filterSizeH = false;
    bool fMatrixCtrl = false;
    uint64_t extConfig = 0;
    uint64_t filterConfig = 0x10101010101ULL;
};
// kgsim:partial LoadData(LoadData3DParamsV2Pro): declared; a call is an unsupported_api fault
template <class T>
void LoadData(const LocalTensor<T>&, const LocalTensor<T>&, const LoadData3DParamsV2Pro&,
              kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::fault("unsupported_api", loc, "LoadData(LoadData3DParamsV2Pro) is not modelled by the simulator yet");
}
// kgsim:partial LoadDataWithSparse: declared; a call is an unsupported_api fault
template <class T, class U, class P>
void LoadDataWithSparse(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<U>&, const P&,
                        kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::fault("unsupported_api", loc, "LoadDataWithSparse is not modelled by the simulator yet");
}
}  // namespace AscendC

namespace kgsim {
// The value `f.operator()<core type>()` for the running block's core type: what a compile-time
// `g_coreType` selects on the NPU (kernel_gym/ascendc/core_type_dispatch.py writes the calls).
template <class F>
auto core_select(F f) {
    if (hot.core_type == CORE_AIC) return f.template operator()<::AscendC::AIC>();
    return f.template operator()<::AscendC::AIV>();
}

// A launch whose kernel name is an overload set (catlass' KernelAdapter<Op> has a one- and a
// two-argument form): the launch_at of launch.h cannot deduce the parameter types from an overload
// set, so this one takes them from the arguments and lets the compiler pick the matching kernel.
// Ranked below launch_at (the file name converts), so it is used only when that one cannot be.
struct LaunchFile {
    const char* file;
    LaunchFile(const char* f) : file(f) {}  // NOLINT: implicit on purpose (the ranking)
};
template <class... A>
KGSIM_UNINSTRUMENTED void launch_at(LaunchFile file, int line, const char* name, int64_t num_blocks,
                                    void (*fn)(std::decay_t<A>...), A&&... args) {
    launch_at(file.file, line, name, num_blocks, fn, std::forward<A>(args)...);
}
}  // namespace kgsim

namespace AscendC {
// SetSyncBaseAddr: the GM address of the hardware cross-core synchronisation area (FFTS); the
// simulator's cross-core flags need none.
inline void SetSyncBaseAddr(uint64_t /*config*/) {}
}  // namespace AscendC

// CCE builtins for branch hints.
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

namespace kgsim {
void require_aic(const char* api, const Loc& loc);  // src/rt_blocks.cpp: cube memories belong to the AIC
}  // namespace kgsim

namespace AscendC {
// DataCopy L1 (A1/B1/C1) -> bias table (C2) with the fp16 -> fp32 conversion of the hardware's
// L1-to-BT move (CCE copy_cbuf_to_bt: convControl, lenBurst in 64 B of the L1 source, the source
// gap in 32 B, the destination gap in 64 B; the bias table holds fp32).
// kgsim:partial DataCopy(C2 float <- L1 half): values exact; the MTE1 time of the move is not charged
template <class Dst, class Src,
          std::enable_if_t<std::is_same_v<Dst, float> && (std::is_same_v<Src, half> || std::is_same_v<Src, bfloat16_t>),
                           bool> = true>
void DataCopy(const LocalTensor<Dst>& dst, const LocalTensor<Src>& src, const DataCopyParams& p,
              kgsim::Loc loc = kgsim::Loc::current()) {
    if (dst.r_.mem != kgsim::MEM_BT || src.r_.mem != kgsim::MEM_L1)
        kgsim::fault("wrong_position", loc, "DataCopy with an fp16 -> fp32 conversion moves L1 to the bias table (C2)");
    kgsim::require_aic("DataCopy(L1 -> BT)", loc);
    kgsim::tick(loc);
    const uint64_t per_burst = uint64_t(p.blockLen) * 64 / sizeof(Src);
    uint64_t s = 0, d = 0;
    for (uint32_t b = 0; b < p.blockCount; ++b) {
        const uint64_t s_end = s + per_burst * sizeof(Src), d_end = d + per_burst * sizeof(float);
        if (src.r_.addr + s_end > src.r_.end) kgsim::local_oob(src.r_, s, s_end - s, "DataCopy(L1 -> BT)", loc);
        if (dst.r_.addr + d_end > dst.r_.end) kgsim::local_oob(dst.r_, d, d_end - d, "DataCopy(L1 -> BT)", loc);
        const uint8_t* in = kgsim::hot.mem[src.r_.mem] + src.r_.addr + s;
        uint8_t* out = kgsim::hot.mem[dst.r_.mem] + dst.r_.addr + d;
        for (uint64_t i = 0; i < per_burst; ++i) {
            Src v;
            std::memcpy(&v, in + i * sizeof(Src), sizeof(Src));
            const float f = static_cast<float>(v);
            std::memcpy(out + i * sizeof(float), &f, sizeof(float));
        }
        s = s_end + uint64_t(p.srcStride) * 32;
        d = d_end + uint64_t(p.dstStride) * 64;
    }
}
}  // namespace AscendC

namespace AscendC {
// ICachePreLoad: prefetch `preFetchLen` x 2 KB of the kernel's instructions into the instruction
// cache; the simulator has no instruction cache, so there is nothing to prefetch.
inline void ICachePreLoad(const int64_t /*preFetchLen*/) {}
}  // namespace AscendC
