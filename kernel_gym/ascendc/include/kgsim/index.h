// kgsim: Arange (and its older name ArithProgression), and DisableDmaAtomic.
#pragma once
#include "kgsim/vector.h"

namespace AscendC {
// Arange: dst[i] = firstValue + i * diffValue for i < count. Checks, pipe and cost are those of a
// Duplicate over the count elements; the values follow the documented construction (the first 8 by
// scalar, then Adds of 8 * diffValue up to 64, then Adds of 64 * diffValue), in T.
template <typename T>
KGSIM_UNINSTRUMENTED void Arange(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count,
                                 kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Arange", T, int16_t, half, int32_t, float);
    if (count <= 0) kgsim::fault("invalid_argument", loc, "Arange: count (%d) must be positive", count);
    Duplicate(dst, firstValue, count, loc);
    T* out = reinterpret_cast<T*>(dst.GetPhyAddr());
    for (int32_t i = 0; i < count; ++i) {
        if (i < 8) out[i] = static_cast<T>(firstValue + static_cast<T>(diffValue * static_cast<T>(i)));
        else if (i < 64) out[i] = static_cast<T>(out[i - 8] + static_cast<T>(diffValue * static_cast<T>(8)));
        else out[i] = static_cast<T>(out[i - 64] + static_cast<T>(diffValue * static_cast<T>(64)));
    }
}
template <typename T>
void ArithProgression(const LocalTensor<T>& dst, const T firstValue, const T diffValue, const int32_t count,
                      kgsim::Loc loc = kgsim::Loc::current()) {
    Arange(dst, firstValue, diffValue, count, loc);
}
// DisableDmaAtomic: ends SetAtomicAdd/Max/Min, as SetAtomicNone does
inline void DisableDmaAtomic(kgsim::Loc loc = kgsim::Loc::current()) { SetAtomicNone(loc); }
}  // namespace AscendC
