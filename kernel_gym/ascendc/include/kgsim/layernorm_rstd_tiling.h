// kgsim: host-side helpers of the [A, R] LayerNorm (rstd form) and Normalize (kgsim/layernorm_rstd.h):
// srcShape is {A, R}. The temporary sizes are the simulator's own (src/rt_layernorm_rstd.cpp); the kernel
// reads aLength / rLength from the tiling, the rest of LayerNormSeparateTiling is filled for the record.
#pragma once
#include "kgsim/layernorm_rstd.h"
#include "kgsim/math_tiling.h"

namespace AscendC {
namespace kgsim_detail {
inline bool ar_dims(const ge::Shape& s, uint32_t& a, uint32_t& r) {
    std::vector<int64_t> d = s.GetDims();
    if (d.size() < 2 || d[0] <= 0 || d[1] <= 0) return false;
    a = uint32_t(d[0]);
    r = uint32_t(d[1]);
    return true;
}
}  // namespace kgsim_detail
// kgsim:partial GetNormalizeMaxMinTmpSize: the simulator's own sizes, not CANN's
inline void GetNormalizeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSizeU, const uint32_t typeSizeT,
                                      const bool isReuseSource, const bool isComputeRstd, const bool isOnlyOutput,
                                      uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource, (void)isComputeRstd, (void)isOnlyOutput;
    uint32_t a, r;
    maxValue = minValue = 0;
    if (!kgsim_detail::ar_dims(srcShape, a, r)) return;
    maxValue = kgsim::normalize_tmp_bytes(a, r, typeSizeU, typeSizeT, 1);
    minValue = kgsim::normalize_tmp_bytes(a, r, typeSizeU, typeSizeT, 0);
}
// the rstd form of GetLayerNormMaxMinTmpSize ([B, S, H] form: kgsim/math_tiling.h)
inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      const bool isComputeRstd, const bool isOnlyOutput, uint32_t& maxValue,
                                      uint32_t& minValue) {
    (void)isReuseSource, (void)isComputeRstd, (void)isOnlyOutput;
    uint32_t a, r;
    maxValue = minValue = 0;
    if (!kgsim_detail::ar_dims(srcShape, a, r)) return;
    maxValue = kgsim::layernorm_rstd_tmp_bytes(a, r, typeSize, 1);
    minValue = kgsim::layernorm_rstd_tmp_bytes(a, r, typeSize, 0);
}
inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource, const bool isComputeRstd,
                                     LayerNormSeparateTiling& tiling) {
    (void)isReuseSource, (void)isComputeRstd, (void)typeSize;
    uint32_t a, r;
    if (!kgsim_detail::ar_dims(srcShape, a, r)) return;
    tiling = LayerNormSeparateTiling{};
    tiling.aLength = a;
    tiling.rLength = r;
    tiling.k2Rec = 1.0f / float(r);
    tiling.k2RRec = 1.0f / float(r);
    tiling.rValueBack = 1.0f / float(r);
    tiling.inputXSize = a * r;
    tiling.meanVarSize = a;
    tiling.numberOfTmpBuf = 2;
    tiling.tmpBufSize = stackBufferSize / 4;
    const uint32_t rowf = (r + 7) / 8 * 8;  // one float row, 32-byte aligned
    uint32_t one = tiling.tmpBufSize / 2 / rowf * rowf;
    if (one > a * rowf) one = a * rowf;
    tiling.oneTmpSize = one;
    tiling.firstTmpStartPos = 0;
    tiling.secondTmpStartPos = one;
    tiling.thirdTmpStartPos = 2 * one;
    const uint32_t rowsPer = one / rowf;
    tiling.aCurLength = rowsPer;
    tiling.arCurLength = rowsPer * r;
    tiling.loopRound = rowsPer ? a / rowsPer : 0;
    tiling.meanVarRoundSize = rowsPer;
    tiling.meanVarTailSize = rowsPer ? a % rowsPer : a;
    tiling.meanVarTailPos = a - tiling.meanVarTailSize;
    tiling.inputRoundSize = rowsPer * r;
    tiling.inputTailSize = tiling.meanVarTailSize * r;
    tiling.inputTailPos = tiling.meanVarTailPos * r;
}
}  // namespace AscendC
