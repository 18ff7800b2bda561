// kgsim: ConfusionTranspose (also named Transpose with a TransposeType and a ConfusionTransposeTiling): the
// 0213 transpose of a [B, N, S, H/N] tensor held in NZ (per (b, n): H/N / c0 column blocks of S rows of c0
// elements, c0 = 32 B / sizeof(T)) into ND [B, S, N, H/N]. The kernel reads B, N, S and H/N from the tiling
// that GetTransposeTilingInfo / GetConfusionTransposeTilingInfo (kgsim/confusion_transpose_tiling.h) fill; its
// fields carry the simulator's own meaning. Element work: src/rt_confusion_transpose.cpp.
#pragma once
#include "kgsim/math.h"    // the tiling-struct generator (kgsim/adv_api.h)
#include "kgsim/vector.h"  // TransposeType (kgsim/sort.h)

#define KGSIM_CONFUSION_TRANSPOSE_TILING_FIELDS(X)                                                                 \
    X(uint32_t, param0) X(uint32_t, param1) X(uint32_t, param2) X(uint32_t, param3) X(uint32_t, param4)           \
    X(uint32_t, param5) X(uint32_t, param6) X(uint32_t, param7) X(uint32_t, param8) X(uint32_t, param9)           \
    X(uint32_t, param10) X(uint32_t, param11) X(uint32_t, param12) X(uint32_t, param13) X(uint32_t, param14)      \
    X(uint32_t, param15) X(uint32_t, param16) X(uint32_t, param17)
KGSIM_TILING_STRUCT(ConfusionTransposeTiling, KGSIM_CONFUSION_TRANSPOSE_TILING_FIELDS)
namespace optiling {
using ::ConfusionTransposeTiling;
}  // namespace optiling

namespace kgsim {
// tiling: param0..3 = B, N, S, H/N, param4 = the TransposeType the host asked for
void adv_confusion_transpose(DT dt, const TRef& dst, const TRef& src, const TRef* tmp, int type, uint32_t b,
                             uint32_t n, uint32_t s, uint32_t hn, uint32_t tiled_type, const Loc& loc);
}  // namespace kgsim

namespace AscendC {
using ::ConfusionTransposeTiling;
namespace tiling {
using ::ConfusionTransposeTiling;
}  // namespace tiling
namespace kgsim_detail {
template <class T>
inline void confusion_call(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                           TransposeType type, const ConfusionTransposeTiling& t, const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("ConfusionTranspose", T, half, float, int16_t, uint16_t, int32_t, uint32_t);
    ::kgsim::adv_confusion_transpose(::kgsim::dt_of<T>::v, dst.r_, src.r_, tmp ? &tmp->r_ : nullptr, int(type),
                                     t.param0, t.param1, t.param2, t.param3, t.param4, loc);
}
}  // namespace kgsim_detail
// kgsim:partial ConfusionTranspose: TRANSPOSE_NZ2ND_0213 only; the other TransposeType values are a fault
template <typename T>
void ConfusionTranspose(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
                        const LocalTensor<uint8_t>& sharedTmpBuffer, TransposeType transposeType,
                        ConfusionTransposeTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::confusion_call<T>(dstTensor, srcTensor, &sharedTmpBuffer, transposeType, tiling, loc);
}
template <typename T>
void ConfusionTranspose(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, TransposeType transposeType,
                        ConfusionTransposeTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::confusion_call<T>(dstTensor, srcTensor, nullptr, transposeType, tiling, loc);
}
// the newer name of the same API
template <typename T>
void Transpose(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
               const LocalTensor<uint8_t>& sharedTmpBuffer, TransposeType transposeType,
               ConfusionTransposeTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::confusion_call<T>(dstTensor, srcTensor, &sharedTmpBuffer, transposeType, tiling, loc);
}
template <typename T>
void Transpose(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, TransposeType transposeType,
               ConfusionTransposeTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::confusion_call<T>(dstTensor, srcTensor, nullptr, transposeType, tiling, loc);
}
}  // namespace AscendC
