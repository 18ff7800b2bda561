// kgsim: host-side helpers of DeepNorm (kgsim/normalization.h): its temporary space and tiling are
// LayerNorm's for the same [B, S, H] shape.
#pragma once
#include "kgsim/math_tiling.h"
#include "kgsim/normalization.h"

namespace AscendC {
// WelfordUpdate: 256-byte buffers (two for float input, one when reusing it, three for half) at least,
// that many per 64 elements at most; WelfordFinalize: four 64-float buffers, or two plus two abLength
inline void GetWelfordUpdateMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSizeT, const uint32_t typeSizeU,
                                          const bool isReuseSource, const bool isInplace, uint32_t& maxValue,
                                          uint32_t& minValue) {
    (void)typeSizeU, (void)isInplace;
    std::vector<int64_t> d = srcShape.GetDims();
    uint64_t n = d.size() >= 2 ? uint64_t(d[0] * d[1]) : uint64_t(std::max<int64_t>(srcShape.GetShapeSize(), 0));
    minValue = typeSizeT == 2 ? 3 * 256 : (isReuseSource ? 256 : 2 * 256);
    maxValue = uint32_t((n + 63) / 64 * minValue);
}
inline void GetWelfordFinalizeMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                            const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    (void)typeSize, (void)isReuseSource;
    std::vector<int64_t> d = srcShape.GetDims();
    uint32_t ab = d.empty() ? 0 : uint32_t(d[0]);
    minValue = 64 * 4 * 4;
    maxValue = ab <= 64 ? minValue : (64 * 2 + ab * 2) * 4;
}
// LayerNormGrad / LayerNormGradBeta: srcShape is [B, S, H, originalH]
namespace kgsim_detail {
inline bool bsho(const ge::Shape& s, uint32_t& b, uint32_t& sl, uint32_t& h, uint32_t& oh) {
    std::vector<int64_t> d = s.GetDims();
    if (d.size() < 4) return false;
    b = uint32_t(d[0]), sl = uint32_t(d[1]), h = uint32_t(d[2]), oh = uint32_t(d[3]);
    return true;
}
}  // namespace kgsim_detail
inline void GetLayerNormGradMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                          uint32_t& maxValue, uint32_t& minValue) {
    uint32_t b, s, h, oh;
    if (!kgsim_detail::bsho(srcShape, b, s, h, oh)) return;
    maxValue = ::kgsim::layernorm_grad_tmp_bytes(b * s, h, typeSize, isReuseSource, 1);
    minValue = ::kgsim::layernorm_grad_tmp_bytes(b * s, h, typeSize, isReuseSource, 0);
}
inline void GetLayerNormGradNDTilingInfo(const ge::Shape srcShape, const uint32_t stackBufferSize,
                                         const uint32_t typeSize, const bool isReuseSource, LayerNormGradTiling& tiling) {
    (void)typeSize, (void)isReuseSource;
    uint32_t b, s, h, oh;
    if (!kgsim_detail::bsho(srcShape, b, s, h, oh)) return;
    tiling = LayerNormGradTiling{};
    tiling.stackBufferSize = stackBufferSize;
    tiling.bLength = b, tiling.sLength = s, tiling.hLength = h, tiling.originalHLength = oh;
    tiling.loopNum = 1;
    tiling.oneCalSize = b * s * h;
    tiling.nohCalSize = b * s;
}
inline void GetLayerNormGradBetaMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                              const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    uint32_t b, s, h, oh;
    if (!kgsim_detail::bsho(srcShape, b, s, h, oh)) return;
    maxValue = ::kgsim::layernorm_grad_beta_tmp_bytes(b * s, h, typeSize, 1);
    minValue = ::kgsim::layernorm_grad_beta_tmp_bytes(b * s, h, typeSize, 0);
}
inline void GetLayerNormGradBetaNDTilingInfo(const ge::Shape srcShape, const uint32_t stackBufferSize,
                                             const uint32_t typeSize, const bool isReuseSource,
                                             LayerNormGradBetaTiling& tiling) {
    (void)isReuseSource;
    uint32_t b, s, h, oh;
    if (!kgsim_detail::bsho(srcShape, b, s, h, oh)) return;
    tiling = LayerNormGradBetaTiling{};
    tiling.stackBufferSize = stackBufferSize;
    tiling.bLength = b, tiling.sLength = s, tiling.hLength = h, tiling.originalHLength = oh;
    tiling.bshLength = b * s * h, tiling.bsLength = b * s;
    tiling.numberOfTmpBuf = typeSize == 2 ? 4 : 2;
    tiling.loopRound = 1;
}
inline bool GetDeepNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                     const bool isBasicBlock, uint32_t& maxValue, uint32_t& minValue) {
    std::vector<int64_t> d = srcShape.GetDims();
    if (d.size() != 3) return false;
    if (isBasicBlock && (d[2] % 64 || d[2] > 2040 || (d[0] * d[1]) % 8)) return false;
    GetLayerNormMaxMinTmpSize(srcShape, typeSize, isReuseSource, maxValue, minValue);
    return true;
}
inline bool GetDeepNormTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                  const uint32_t stackBufferSize, const uint32_t typeSize, const bool isReuseSource,
                                  const bool isBasicBlock, DeepNormTiling& tiling) {
    std::vector<int64_t> d = srcShape.GetDims(), o = originSrcShape.GetDims();
    if (d.size() != 3 || o.size() != 3 || o[2] <= 0 || o[2] > d[2]) return false;
    if (isBasicBlock && o[2] != d[2]) return false;
    GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, tiling);
    tiling.bLength = uint32_t(d[0]);
    tiling.sLength = uint32_t(d[1]);
    tiling.hLength = uint32_t(d[2]);
    tiling.originalHLength = uint32_t(o[2]);
    tiling.lastDimValueBack = 1.0f / float(o[2]);
    return true;
}
}  // namespace AscendC
