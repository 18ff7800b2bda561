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
