// kgsim: host-side helpers of ConfusionTranspose (kgsim/confusion_transpose.h). srcShape is [B, N, S, H/N]; the
// 0213 transpose moves elements directly, so it needs no temporary space (the simulator's own sizes).
#pragma once
#include "kgsim/math_tiling.h"
#include "kgsim/confusion_transpose.h"

namespace AscendC {
// kgsim:partial GetTransposeMaxMinTmpSize: the simulator's own sizes (none), not CANN's
inline void GetTransposeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                      const uint32_t transposeTypeIn, uint32_t& maxValue, uint32_t& minValue) {
    (void)srcShape, (void)typeSize, (void)transposeTypeIn;
    maxValue = minValue = 0;
}
inline void GetTransposeTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                                   const uint32_t transposeTypeIn, ConfusionTransposeTiling& tiling) {
    (void)stackBufferSize, (void)typeSize;
    std::vector<int64_t> d = srcShape.GetDims();
    tiling = ConfusionTransposeTiling{};
    if (d.size() != 4) return;
    tiling.param0 = uint32_t(d[0]);
    tiling.param1 = uint32_t(d[1]);
    tiling.param2 = uint32_t(d[2]);
    tiling.param3 = uint32_t(d[3]);
    tiling.param4 = transposeTypeIn;
}
inline void GetConfusionTransposeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                               const uint32_t transposeTypeIn, uint32_t& maxValue,
                                               uint32_t& minValue) {
    GetTransposeMaxMinTmpSize(srcShape, typeSize, transposeTypeIn, maxValue, minValue);
}
inline void GetConfusionTransposeTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                            const uint32_t typeSize, const uint32_t transposeTypeIn,
                                            ConfusionTransposeTiling& tiling) {
    GetTransposeTilingInfo(srcShape, stackBufferSize, typeSize, transposeTypeIn, tiling);
}
}  // namespace AscendC
