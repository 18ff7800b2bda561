// kgsim: host-side sizing helpers of the advanced math APIs (Get<Api>MaxMinTmpSize,
// Get<Api>TmpBufferFactorSize, GetSumMaxMinTmpSize). The sizes come from the same table the
// runtime checks sharedTmpBuffer against (src/rt_math.cpp).
#pragma once
#include "graph/tensor.h"
#include "kgsim/math.h"

namespace AscendC {
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
#undef KGSIM_TMP_HELPERS

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
}  // namespace AscendC
