// kgsim: host-side sizing helpers of the advanced math APIs (Get<Api>MaxMinTmpSize,
// Get<Api>TmpBufferFactorSize, GetSumMaxMinTmpSize) and the tiling functions of SoftMax, LogSoftMax,
// LayerNorm, RmsNorm, CumSum, Mean and Pad. The sizes come from the same functions the runtime
// checks sharedTmpBuffer against (src/rt_math.cpp, src/rt_adv.cpp).
#pragma once
#include <algorithm>
#include "graph/tensor.h"
#include "graph/types.h"
#include "kgsim/math.h"
#include "kgsim/layernorm_rstd.h"  // ReducePattern, shared with the kernel side

namespace AscendC {
using TensorShape = ge::Shape;
namespace kgsim_detail {
inline void math_tmp_range(kgsim::MathFn fn, int64_t n, uint32_t type_size, uint32_t& maxValue, uint32_t& minValue) {
    uint64_t count = n > 0 ? uint64_t(n) : 0;
    maxValue = kgsim::math_tmp_bytes(fn, type_size, count, 1);
    minValue = kgsim::math_tmp_bytes(fn, type_size, count, 0);
}
}  // namespace kgsim_detail

#define KGSIM_TMP_HELPERS(NAME, FN)                                                                               \
    inline void Get##NAME##MaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,                      \
                                         const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {      \
        (void)isReuseSource;                                                                                      \
        kgsim_detail::math_tmp_range(kgsim::FN, srcShape.GetShapeSize(), typeSize, maxValue, minValue);           \
    }                                                                                                             \
    inline void Get##NAME##TmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount,               \
                                               uint32_t& extraBuf) {                                              \
        maxLiveNodeCount = kgsim::math_tmp_bytes(kgsim::FN, typeSize, 0, 0) / 256;                                \
        extraBuf = 0;                                                                                             \
    }
KGSIM_TMP_HELPERS(Tanh, M_TANH)
KGSIM_TMP_HELPERS(Sigmoid, M_SIGMOID)
KGSIM_TMP_HELPERS(Log, M_LOG)
KGSIM_TMP_HELPERS(Log2, M_LOG2)
KGSIM_TMP_HELPERS(Log10, M_LOG10)
KGSIM_TMP_HELPERS(Exp, M_EXP)
KGSIM_TMP_HELPERS(Erf, M_ERF)
KGSIM_TMP_HELPERS(Erfc, M_ERFC)
KGSIM_TMP_HELPERS(Sin, M_SIN)
KGSIM_TMP_HELPERS(Cos, M_COS)
KGSIM_TMP_HELPERS(Tan, M_TAN)
KGSIM_TMP_HELPERS(Asin, M_ASIN)
KGSIM_TMP_HELPERS(Acos, M_ACOS)
KGSIM_TMP_HELPERS(Atan, M_ATAN)
KGSIM_TMP_HELPERS(Sinh, M_SINH)
KGSIM_TMP_HELPERS(Cosh, M_COSH)
KGSIM_TMP_HELPERS(Floor, M_FLOOR)
KGSIM_TMP_HELPERS(Ceil, M_CEIL)
KGSIM_TMP_HELPERS(Round, M_ROUND)
KGSIM_TMP_HELPERS(Trunc, M_TRUNC)
KGSIM_TMP_HELPERS(Frac, M_FRAC)
KGSIM_TMP_HELPERS(Sign, M_SIGN)
KGSIM_TMP_HELPERS(Axpy, M_AXPY)
KGSIM_TMP_HELPERS(Softplus, M_SOFTPLUS)
KGSIM_TMP_HELPERS(ClampMax, M_CLAMP_MAX)
KGSIM_TMP_HELPERS(ClampMin, M_CLAMP_MIN)
KGSIM_TMP_HELPERS(Clamp, M_CLAMP_MAX)
KGSIM_TMP_HELPERS(Asinh, M_ASINH)
KGSIM_TMP_HELPERS(Acosh, M_ACOSH)
KGSIM_TMP_HELPERS(Atanh, M_ATANH)
KGSIM_TMP_HELPERS(Lgamma, M_LGAMMA)
KGSIM_TMP_HELPERS(Digamma, M_DIGAMMA)
KGSIM_TMP_HELPERS(GeGLU, M_GEGLU)
KGSIM_TMP_HELPERS(Fmod, M_FMOD)
KGSIM_TMP_HELPERS(Xor, M_XOR)
#undef KGSIM_TMP_HELPERS

// The pattern reductions (ReduceSum/Max/Min/Prod/Mean with AR or RA). The simulator needs no
// temporary space for them: minValue is one 256-byte repeat, maxValue a float copy of the input.
// kgsim:partial GetReduceSumMaxMinTmpSize: the simulator's own sizes, not CANN's
// kgsim:partial GetReduceMaxMaxMinTmpSize: the simulator's own sizes, not CANN's
// kgsim:partial GetReduceMinMaxMinTmpSize: the simulator's own sizes, not CANN's
// kgsim:partial GetReduceProdMaxMinTmpSize: the simulator's own sizes, not CANN's
// kgsim:partial GetReduceMeanMaxMinTmpSize: the simulator's own sizes, not CANN's
using TensorDataType = ge::DataType;
#define KGSIM_REDUCE_TMP_HELPER(NAME)                                                                             \
    inline void Get##NAME##MaxMinTmpSize(const ge::Shape& srcShape, const TensorDataType dataType,                 \
                                         ReducePattern pattern, bool isSrcInnerPad, bool isReuseSource,            \
                                         uint32_t& maxValue, uint32_t& minValue) {                                 \
        (void)dataType, (void)pattern, (void)isSrcInnerPad, (void)isReuseSource;                                  \
        uint64_t n = srcShape.GetShapeSize() > 0 ? uint64_t(srcShape.GetShapeSize()) : 0;                         \
        minValue = 256;                                                                                           \
        maxValue = uint32_t(std::max<uint64_t>(256, (n * 4 + 31) / 32 * 32));                                     \
    }
KGSIM_REDUCE_TMP_HELPER(ReduceSum)
KGSIM_REDUCE_TMP_HELPER(ReduceMax)
KGSIM_REDUCE_TMP_HELPER(ReduceMin)
KGSIM_REDUCE_TMP_HELPER(ReduceProd)
KGSIM_REDUCE_TMP_HELPER(ReduceMean)
#undef KGSIM_REDUCE_TMP_HELPER

// SwiGLU's helpers take isReuseSource last
inline void GetSwiGLUMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                   uint32_t& minValue, const bool isReuseSource = false) {
    (void)isReuseSource;
    kgsim_detail::math_tmp_range(kgsim::M_SWIGLU, srcShape.GetShapeSize(), typeSize, maxValue, minValue);
}
inline void GetSwiGLUTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuf,
                                         const bool isReuseSource = false) {
    (void)isReuseSource;
    maxLiveNodeCount = kgsim::math_tmp_bytes(kgsim::M_SWIGLU, typeSize, 0, 0) / 256;
    extraBuf = 0;
}
inline void GetGeluMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                 uint32_t& minValue) {
    kgsim_detail::math_tmp_range(kgsim::M_GELU, srcShape.GetShapeSize(), typeSize, maxValue, minValue);
}
inline uint32_t GetGeluMaxTmpSize(const ge::Shape& srcShape, const uint32_t typeSize) {
    return kgsim::math_tmp_bytes(kgsim::M_GELU, typeSize, uint64_t(srcShape.GetShapeSize()), 1);
}
inline uint32_t GetGeluMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize) {
    return kgsim::math_tmp_bytes(kgsim::M_GELU, typeSize, uint64_t(srcShape.GetShapeSize()), 0);
}
// Power: the tensor^tensor and tensor^scalar forms need different space
// kgsim:partial GetPowerMaxMinTmpSize: int32 (typeIsInt) is sized like float
inline void GetPowerMaxMinTmpSize(const ge::Shape& srcShape1, const ge::Shape& srcShape2, const bool typeIsInt,
                                  const uint32_t typeSize, const bool isReuseSource, uint32_t& maxValue,
                                  uint32_t& minValue) {
    (void)typeIsInt;
    (void)isReuseSource;
    bool both_tensors = srcShape1.GetShapeSize() > 1 && srcShape2.GetShapeSize() > 1;
    int64_t n = std::max(srcShape1.GetShapeSize(), srcShape2.GetShapeSize());
    kgsim_detail::math_tmp_range(both_tensors ? kgsim::M_POWER_TT : kgsim::M_POWER_TS, n, typeSize, maxValue,
                                 minValue);
}
inline void GetSumMaxMinTmpSize(const uint32_t n, const uint32_t typeSize, const bool isReuseSource,
                                uint32_t& maxSize, uint32_t& minSize) {
    (void)isReuseSource;
    uint32_t epb = 32 / typeSize, epr = 256 / typeSize;
    uint32_t repeats = (n + epr - 1) / epr;
    maxSize = minSize = (repeats + epb - 1) / epb * epb * typeSize;
}

// ---- SoftMax / SimpleSoftMax / LogSoftMax: the shape is [m, k], k the last axis ----------------
namespace kgsim_detail {
inline void last_axis_mk(const ge::Shape& shape, uint32_t& m, uint32_t& k) {
    int64_t total = shape.GetShapeSize();
    k = shape.GetDimNum() ? uint32_t(shape.GetDim(shape.GetDimNum() - 1)) : 0;
    m = k ? uint32_t(total / k) : 0;
}
// the documented split (kgsim/adv_api.h: the kernel-side tiling functions share it)
inline void softmax_tiling(const ge::Shape& shape, uint32_t typeSize, uint32_t workBytes, SoftMaxTiling& t) {
    uint32_t m, k;
    last_axis_mk(shape, m, k);
    softmax_tiling_mk(m, k, typeSize, workBytes, t);
}
}  // namespace kgsim_detail
inline uint32_t GetSoftMaxMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    kgsim_detail::last_axis_mk(srcShape, m, k);
    return kgsim::softmax_tmp_bytes(m, k, dataTypeSize, 1);
}
inline uint32_t GetSoftMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    kgsim_detail::last_axis_mk(srcShape, m, k);
    return kgsim::softmax_tmp_bytes(m, k, dataTypeSize, 0);
}
inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize, const uint32_t localWorkSpaceSize,
                              SoftMaxTiling& softmaxTiling) {
    kgsim_detail::softmax_tiling(srcShape, dataTypeSize, localWorkSpaceSize, softmaxTiling);
}
inline bool IsBasicBlockInSoftMax(SoftMaxTiling& tiling, const uint32_t dataTypeSize = 2) {
    (void)dataTypeSize;
    return tiling.splitM % 8 == 0 && tiling.splitK % 64 == 0 && tiling.splitM * tiling.splitK < 64 * 256;
}
// SoftmaxFlashV2 sizing and tiling: SoftMax's (dataTypeSize2 is the max/sum type)
inline uint32_t GetSoftMaxFlashV2MaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize1,
                                            const uint32_t dataTypeSize2, const bool isUpdate,
                                            const bool isBasicBlock = false, const bool isFlashOutputBrc = false) {
    (void)dataTypeSize1, (void)isUpdate, (void)isBasicBlock, (void)isFlashOutputBrc;
    uint32_t m, k;
    kgsim_detail::last_axis_mk(srcShape, m, k);
    return kgsim::softmax_tmp_bytes(m, k, dataTypeSize2, 1);
}
inline uint32_t GetSoftMaxFlashV2MinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize1,
                                            const uint32_t dataTypeSize2, const bool isUpdate,
                                            const bool isBasicBlock = false, const bool isFlashOutputBrc = false) {
    (void)dataTypeSize1, (void)isUpdate, (void)isBasicBlock, (void)isFlashOutputBrc;
    uint32_t m, k;
    kgsim_detail::last_axis_mk(srcShape, m, k);
    return kgsim::softmax_tmp_bytes(m, k, 4, 0);
}
inline void SoftMaxFlashV2TilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize1,
                                     const uint32_t dataTypeSize2, const uint32_t localWorkSpaceSize,
                                     SoftMaxTiling& softmaxFlashTiling, const bool isUpdate,
                                     const bool isBasicBlock = false, const bool isFlashOutputBrc = false) {
    (void)dataTypeSize2, (void)isUpdate, (void)isBasicBlock, (void)isFlashOutputBrc;
    kgsim_detail::softmax_tiling(srcShape, dataTypeSize1, localWorkSpaceSize, softmaxFlashTiling);
}
// SoftmaxGrad / SoftmaxGradFront sizing and tiling (the tiling is SoftMax's, over the same [m, k])
inline uint32_t GetSoftMaxGradMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isFront,
                                         const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    kgsim_detail::last_axis_mk(srcShape, m, k);
    return kgsim::softmax_grad_tmp_bytes(m, k, dataTypeSize, isFront ? 1 : 0, 1);
}
inline uint32_t GetSoftMaxGradMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isFront,
                                         const bool isReuseSource) {
    (void)isReuseSource;
    uint32_t m, k;
    kgsim_detail::last_axis_mk(srcShape, m, k);
    return kgsim::softmax_grad_tmp_bytes(m, k, dataTypeSize, isFront ? 1 : 0, 0);
}
inline void SoftMaxGradTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                                  const uint32_t localWorkSpaceSize, SoftMaxTiling& softmaxGradTiling,
                                  const bool isFront = false) {
    (void)isFront;
    kgsim_detail::softmax_tiling(srcShape, dataTypeSize, localWorkSpaceSize, softmaxGradTiling);
}
inline uint32_t GetLogSoftMaxMaxTmpSize(const ge::Shape srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
    return GetSoftMaxMaxTmpSize(srcShape, dataTypeSize, isReuseSource);
}
inline uint32_t GetLogSoftMaxMinTmpSize(const ge::Shape srcShape, const uint32_t dataTypeSize, const bool isReuseSource) {
    return GetSoftMaxMinTmpSize(srcShape, dataTypeSize, isReuseSource);
}
inline void LogSoftMaxTilingFunc(const ge::Shape srcShape, const uint32_t dataTypeSize,
                                 const uint32_t localWorkSpaceSize, LogSoftMaxTiling& softmaxTiling) {
    kgsim_detail::softmax_tiling(srcShape, dataTypeSize, localWorkSpaceSize, softmaxTiling);
}

// ---- LayerNorm: srcShape [B, S, H] or [B, S, H, originalH] ------------------------------------
namespace kgsim_detail {
inline void bsh(const ge::Shape& s, uint32_t& b, uint32_t& sl, uint32_t& h, uint32_t& oh) {
    b = uint32_t(s.GetDim(0));
    sl = uint32_t(s.GetDim(1));
    h = uint32_t(s.GetDim(2));
    oh = s.GetDimNum() > 3 ? uint32_t(s.GetDim(3)) : h;
}
}  // namespace kgsim_detail
inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      uint32_t& maxValue, uint32_t& minValue) {
    uint32_t b, s, h, oh;
    kgsim_detail::bsh(srcShape, b, s, h, oh);
    maxValue = kgsim::layernorm_tmp_bytes(b * s, h, typeSize, isReuseSource, 1);
    minValue = kgsim::layernorm_tmp_bytes(b * s, h, typeSize, isReuseSource, 0);
}
inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource, LayerNormTiling& t) {
    uint32_t b, s, h, oh;
    kgsim_detail::bsh(srcShape, b, s, h, oh);
    if (h == 0) return;
    const uint32_t x = b * s * h, mv = b * s;
    const uint32_t nbuf = (isReuseSource && typeSize == 4) ? 2 : 3;
    const uint32_t mvAligned = (mv + 7) / 8 * 8;
    const uint32_t mvTotal = typeSize == 4 ? 0 : 2 * mvAligned;
    const uint32_t bufElems = stackBufferSize / 4;
    uint32_t one = bufElems > mvTotal ? (bufElems - mvTotal) / nbuf / h * h : 0;
    if (one > x) one = x;
    if (one == 0) return;
    t = LayerNormTiling{};
    t.bLength = b; t.sLength = s; t.hLength = h; t.originalHLength = oh;
    t.inputXSize = x; t.meanVarSize = mv; t.numberOfTmpBuf = nbuf;
    t.meanTmpTensorPos = 0; t.meanTmpTensorSize = mvAligned;
    t.varianceTmpTensorPos = mvAligned; t.varianceTmpTensorSize = mvAligned;
    t.tmpBufSize = bufElems; t.oneTmpSize = one;
    t.firstTmpStartPos = mvTotal; t.secondTmpStartPos = mvTotal + one; t.thirdTmpStartPos = mvTotal + 2 * one;
    t.loopRound = x / one; t.inputRoundSize = one; t.inputTailSize = x % one; t.inputTailPos = x - x % one;
    t.meanVarRoundSize = one / h; t.meanVarTailSize = (x % one) / h; t.meanVarTailPos = mv - (x % one) / h;
    t.bshCurLength = one; t.bsCurLength = one / h;
    t.lastDimValueBack = 1.0f / float(oh);
}
inline void GetLayerNormNDTillingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                      const uint32_t typeSize, const bool isReuseSource, LayerNormTiling& t) {
    GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, t);
}

// ---- RmsNorm: srcShape [B, S, H], originSrcShape [B, S, originalH] --------------------------------
inline bool GetRmsNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                    uint32_t& minValue, const bool isBasicBlock = false) {
    uint32_t b, s, h, oh;
    kgsim_detail::bsh(srcShape, b, s, h, oh);
    if (isBasicBlock && (h % 64 || (b * s) % 8 || h >= 2048)) return false;
    maxValue = kgsim::rmsnorm_tmp_bytes(b * s, h, typeSize, 1);
    minValue = kgsim::rmsnorm_tmp_bytes(b * s, h, typeSize, 0);
    return true;
}
inline bool GetRmsNormTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                 const uint32_t stackBufferByteSize, const uint32_t typeSize, RmsNormTiling& t,
                                 const bool isBasicBlock = false) {
    uint32_t b, s, h, oh, ob, os, ohh, unused;
    if (srcShape.GetDimNum() != 3 || originSrcShape.GetDimNum() != 3) return false;
    kgsim_detail::bsh(srcShape, b, s, h, oh);
    kgsim_detail::bsh(originSrcShape, ob, os, ohh, unused);
    if (b != ob || s != os || ohh > h || ohh == 0 || (h * typeSize) % 32) return false;
    if (isBasicBlock && (h % 64 || (b * s) % 8 || h >= 2048)) return false;
    if (stackBufferByteSize < kgsim::rmsnorm_tmp_bytes(b * s, h, typeSize, 0)) return false;
    const uint32_t total = stackBufferByteSize / 4, coeff = typeSize == 4 ? 1 : 2, x = b * s * h;
    uint32_t bs = 1;
    while (total >= (bs + 1) * h * coeff + (bs + 1 + 7) / 8 * 8) ++bs;
    uint32_t one = std::min(bs * h, x);
    bs = one / h;
    if (isBasicBlock) bs = bs < 8 ? bs : bs / 8 * 8;
    else if (bs > 255) bs = 255;
    one = bs * h;
    t = RmsNormTiling{};
    t.bLength = b; t.sLength = s; t.hLength = h; t.originalHLength = ohh;
    t.reciprocalOfHLength = 1.0f / float(ohh);
    t.mainBshLength = one; t.mainBsLength = bs; t.mainBsLengthAlign = (bs + 7) / 8 * 8;
    t.loopRound = x / one; t.inputTailPos = x / one * one;
    t.tailBshLength = x % one; t.tailBsLength = (x % one) / h;
    return true;
}

// ---- CumSum, Mean, Pad ---------------------------------------------------------------------------
inline void GetCumSumMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isLastAxis,
                                   const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue) {
    (void)isReuseSource;
    kgsim::cumsum_tmp_bytes(uint32_t(srcShape.GetDim(0)), uint32_t(srcShape.GetDim(1)), typeSize, isLastAxis, maxValue,
                            minValue);
}
inline void GetMeanMaxMinTmpSize(const uint32_t n, const uint32_t srcTypeSize, const uint32_t accTypeSize,
                                 const bool isReuseSource, uint32_t& maxSize, uint32_t& minSize) {
    (void)isReuseSource;
    maxSize = minSize = kgsim::mean_tmp_bytes(n, srcTypeSize, accTypeSize);
}
inline void GetMeanTmpBufferFactorSize(const uint32_t typeSize, uint32_t& maxLiveNodeCount, uint32_t& extraBuffer) {
    (void)typeSize;
    maxLiveNodeCount = 1;
    extraBuffer = 0;
}
inline void GetPadMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                uint32_t& minValue) {
    maxValue = kgsim::pad_tmp_bytes(uint32_t(srcShape.GetDim(0)), uint32_t(srcShape.GetDim(1)), typeSize, 1);
    minValue = kgsim::pad_tmp_bytes(uint32_t(srcShape.GetDim(0)), uint32_t(srcShape.GetDim(1)), typeSize, 0);
}
// kgsim:partial PadTilingFunc: fills the shape fields the simulated Pad reads (srcHeight, srcWidth, srcOriWidth)
inline void PadTilingFunc(const ge::Shape srcShape, const ge::Shape oriSrcShape, const uint32_t stackBufferSize,
                          const uint32_t typeSize, PadTiling& tiling) {
    (void)stackBufferSize;
    tiling = PadTiling{};
    tiling.srcHeight = uint32_t(srcShape.GetDim(0));
    tiling.srcWidth = uint32_t(srcShape.GetDim(1));
    tiling.srcOriWidth = uint32_t(oriSrcShape.GetDim(1));
    const uint32_t epb = 32 / (typeSize ? typeSize : 4);
    tiling.blocksPerRow = (tiling.srcWidth + epb - 1) / epb;
    tiling.widthWithoutLastBlock = tiling.blocksPerRow ? (tiling.blocksPerRow - 1) * epb : 0;
    tiling.maxRepeatTimes = 255;
}
template <class Platform>  // platform_ascendc::PlatformAscendC, whose header this one does not need
void GetUnPadMaxMinTmpSize(const Platform&, const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                           uint32_t& minValue) {
    maxValue = kgsim::unpad_tmp_bytes(uint32_t(srcShape.GetDim(0)), uint32_t(srcShape.GetDim(1)), typeSize, 1);
    minValue = kgsim::unpad_tmp_bytes(uint32_t(srcShape.GetDim(0)), uint32_t(srcShape.GetDim(1)), typeSize, 0);
}
// kgsim:partial UnPadTilingFunc: fills the shape fields the simulated UnPad reads (srcHeight, srcWidth)
inline void UnPadTilingFunc(const ge::Shape srcShape, const uint32_t stackBufferSize, const uint32_t typeSize,
                            UnPadTiling& tiling) {
    tiling = UnPadTiling{};
    tiling.srcHeight = uint32_t(srcShape.GetDim(0));
    tiling.srcWidth = uint32_t(srcShape.GetDim(1));
    tiling.tmpBuffer1BlockNum = stackBufferSize / 32;
    tiling.widthTiling = 32 / (typeSize ? typeSize : 2);
}
// Swish and Silu run without a temporary buffer here (their kernel forms take none): 0 and 0.
inline void GetSwishTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
}
inline void GetSiluTmpSize(const ge::Shape&, const uint32_t, const bool, uint32_t& maxValue, uint32_t& minValue) {
    maxValue = minValue = 0;
}

// BroadCast's scratch: one 32-byte block per source element when a column is spread (each
// element is first broadcast to a block), none when rows are copied; int8 data is widened to
// half first, so it also needs both tensors in 16-bit form. The kernel side does not check the
// size it is given (kgsim:partial), so the range is min == max.
// kgsim:partial GetBroadCastMaxMinTmpSize: one size, not a performance range
template <class Platform>
void GetBroadCastMaxMinTmpSize(const Platform&, const ge::Shape& srcShape, const ge::Shape& dstShape,
                               uint32_t typeSize, const bool /*isReuseSource*/, uint32_t& maxValue,
                               uint32_t& minValue) {
    auto align = [](uint64_t v, uint64_t a) { return (v + a - 1) / a * a; };
    uint64_t src = uint64_t(std::max<int64_t>(srcShape.GetShapeSize(), 0));
    uint64_t dst = uint64_t(std::max<int64_t>(dstShape.GetShapeSize(), 0));
    size_t rank = srcShape.GetDimNum();
    bool spreads_column = rank > 0 && srcShape.GetDim(rank - 1) == 1 && dstShape.GetDim(rank - 1) != 1;
    uint64_t bytes = spreads_column ? align(src, 8) * 32 : 0;
    if (typeSize == 1) bytes += (align(src, 16) + align(dst, 16)) * 2;
    maxValue = minValue = uint32_t(bytes);
}
}  // namespace AscendC
