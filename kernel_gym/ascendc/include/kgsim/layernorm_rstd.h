// kgsim: the [A, R] forms of the layer normalization APIs - LayerNorm with LayerNormPara and
// LayerNormSeparateTiling (outputs y, the mean and the reciprocal standard deviation, or the variance when
// config.isOutputRstd is false), and Normalize (y and rstd from a given mean and variance). Both follow
// the documented formulas: rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd * gamma + beta, with the
// statistics over the first rLength of the rLengthWithPadding elements of each row, computed in float.
// The element work lives in src/rt_layernorm_rstd.cpp; the host helpers in kgsim/layernorm_rstd_tiling.h.
#pragma once
#include <type_traits>
#include "kgsim/math.h"  // adv_api.h (LayerNormConfig, LayerNormPara) with the vector APIs it uses

#define KGSIM_LAYERNORM_SEPARATE_TILING_FIELDS(X)                                                                   \
    X(uint32_t, aLength) X(uint32_t, rLength) X(uint32_t, halfAddRepeatTimes) X(uint32_t, rHeadLength)               \
    X(float, k2Rec) X(float, k2RRec) X(uint32_t, inputXSize) X(uint32_t, meanVarSize) X(uint32_t, numberOfTmpBuf)    \
    X(uint32_t, varianceTmpTensorPos) X(uint32_t, varianceTmpTensorSize) X(uint32_t, tmpBufSize)                    \
    X(uint32_t, oneTmpSize) X(uint32_t, firstTmpStartPos) X(uint32_t, secondTmpStartPos) X(uint32_t, thirdTmpStartPos) \
    X(uint32_t, loopRound) X(uint32_t, inputRoundSize) X(uint32_t, inputTailSize) X(uint32_t, inputTailPos)          \
    X(uint32_t, meanVarRoundSize) X(uint32_t, meanVarTailSize) X(uint32_t, meanVarTailPos) X(uint32_t, arCurLength)  \
    X(uint32_t, aCurLength) X(float, rValueBack)
KGSIM_TILING_STRUCT(LayerNormSeparateTiling, KGSIM_LAYERNORM_SEPARATE_TILING_FIELDS)
namespace optiling {
using ::LayerNormSeparateTiling;
}  // namespace optiling

namespace kgsim {
struct LnRstdArgs {
    TRef dst, mean, rstd, var, src, gamma, beta, tmp;
    DT dt = DT::F32, gdt = DT::F32;
    uint8_t normalize = 0;  // 0: LayerNorm (computes the statistics), 1: Normalize (reads mean and variance)
    uint8_t has_tmp = 0, has_beta = 1, has_gamma = 1, out_rstd = 1, only_output = 0;
    uint32_t tmp_bytes = 0, a = 0, r = 0, r_pad = 0;
    float eps = 0;
};
void adv_layernorm_rstd(const LnRstdArgs& a, const Loc& loc);
// GetLayerNormMaxMinTmpSize (rstd form) and GetNormalizeMaxMinTmpSize: the simulator's own sizes
uint32_t layernorm_rstd_tmp_bytes(uint32_t a, uint32_t r, uint32_t type_size, int want_max);
uint32_t normalize_tmp_bytes(uint32_t a, uint32_t r, uint32_t type_size_u, uint32_t type_size_t, int want_max);
}  // namespace kgsim

namespace AscendC {
using ::LayerNormSeparateTiling;
namespace tiling {
using ::LayerNormSeparateTiling;
}  // namespace tiling

// the tiling helpers (kgsim/math_tiling.h) name more patterns; Normalize takes AR only
enum class ReducePattern : uint32_t { AR = 0, RA = 1, R, ARA, ARAR, ARARA, ARARAR, ARARARA, ARARARAR, ARARARARA, RAR,
                                      RARA, RARAR, RARARA, RARARAR, RARARARA };
struct NormalizeConfig {
    ReducePattern reducePattern = ReducePattern::AR;
    int32_t aLength = -1;
    bool isNoBeta = false;
    bool isNoGamma = false;
    bool isOnlyOutput = false;
};
constexpr NormalizeConfig GetNormalizeConfig(bool isNoBeta, bool isNoGamma) {
    return NormalizeConfig{ReducePattern::AR, -1, isNoBeta, isNoGamma, false};
}
constexpr NormalizeConfig NLCFG_NORM = GetNormalizeConfig(false, false);
constexpr NormalizeConfig NLCFG_NOBETA = GetNormalizeConfig(true, false);
constexpr NormalizeConfig NLCFG_NOGAMMA = GetNormalizeConfig(false, true);
constexpr NormalizeConfig NLCFG_NOOPT = GetNormalizeConfig(true, true);
struct NormalizePara {
    uint32_t aLength;
    uint32_t rLength;
    uint32_t rLengthWithPadding;
};

namespace kgsim_detail {
template <class U, class T>
inline ::kgsim::LnRstdArgs lnrstd_args(const LocalTensor<T>& out, const LocalTensor<T>& x, const LocalTensor<U>& gamma,
                                       const LocalTensor<U>& beta, const LocalTensor<uint8_t>* tmp, float eps,
                                       uint32_t a, uint32_t r, uint32_t rpad) {
    ::kgsim::LnRstdArgs g;
    g.dst = out.r_;
    g.src = x.r_;
    g.gamma = gamma.r_;
    g.beta = beta.r_;
    if (tmp) {
        g.tmp = tmp->r_;
        g.tmp_bytes = tmp->GetSize();
        g.has_tmp = 1;
    }
    g.dt = ::kgsim::dt_of<T>::v;
    g.gdt = ::kgsim::dt_of<U>::v;
    g.eps = eps;
    g.a = a, g.r = r, g.r_pad = rpad;
    return g;
}
template <class U, class T, const LayerNormConfig& config>
inline void layernorm_rstd_call(const LocalTensor<T>& out, const LocalTensor<float>& mean,
                                const LocalTensor<float>& rstd, const LocalTensor<T>& x, const LocalTensor<U>& gamma,
                                const LocalTensor<U>& beta, float eps, const LocalTensor<uint8_t>* tmp,
                                const LayerNormPara& para, const LayerNormSeparateTiling& tiling,
                                const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("LayerNorm", T, half, float);
    static_assert(std::is_same<U, T>::value || std::is_same<U, float>::value,
                  "[kgsim:unsupported_dtype] LayerNorm: gamma / beta are T or float");
    static_assert(!config.isOnlyOutput, "[kgsim:unsupported] LayerNorm: isOnlyOutput must be false");
    // the tiling's rLength is the unpadded length the statistics run over
    const uint32_t r = tiling.rLength ? tiling.rLength : para.rLength;
    ::kgsim::LnRstdArgs g = lnrstd_args<U, T>(out, x, gamma, beta, tmp, eps, para.aLength, r, para.rLengthWithPadding);
    g.mean = mean.r_;
    g.rstd = rstd.r_;
    g.has_beta = !config.isNoBeta;
    g.has_gamma = !config.isNoGamma;
    g.out_rstd = config.isOutputRstd;
    ::kgsim::adv_layernorm_rstd(g, loc);
}
}  // namespace kgsim_detail

// LayerNorm(output, outputMean, outputRstd, inputX, gamma, beta, epsilon, [sharedTmpBuffer,] para, tiling):
// x is [A, R] (rows of rLengthWithPadding), mean / rstd are float [A]
template <typename U, typename T, bool isReuseSource = false, const LayerNormConfig& config = LNCFG_NORM>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<float>& outputMean, const LocalTensor<float>& outputRstd,
               const LocalTensor<T>& inputX, const LocalTensor<U>& gamma, const LocalTensor<U>& beta,
               const float epsilon, const LocalTensor<uint8_t>& sharedTmpBuffer, const LayerNormPara& para,
               const LayerNormSeparateTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::layernorm_rstd_call<U, T, config>(output, outputMean, outputRstd, inputX, gamma, beta, epsilon,
                                                    &sharedTmpBuffer, para, tiling, loc);
}
template <typename U, typename T, bool isReuseSource = false, const LayerNormConfig& config = LNCFG_NORM>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<float>& outputMean, const LocalTensor<float>& outputRstd,
               const LocalTensor<T>& inputX, const LocalTensor<U>& gamma, const LocalTensor<U>& beta,
               const float epsilon, const LayerNormPara& para, const LayerNormSeparateTiling& tiling,
               ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::layernorm_rstd_call<U, T, config>(output, outputMean, outputRstd, inputX, gamma, beta, epsilon,
                                                    nullptr, para, tiling, loc);
}

namespace kgsim_detail {
template <class U, class T, const NormalizeConfig& config>
inline void normalize_call(const LocalTensor<T>& out, const LocalTensor<float>& rstd, const LocalTensor<float>& mean,
                           const LocalTensor<float>& var, const LocalTensor<T>& x, const LocalTensor<U>& gamma,
                           const LocalTensor<U>& beta, const LocalTensor<uint8_t>* tmp, float eps,
                           const NormalizePara& para, const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("Normalize", T, half, float);
    static_assert(std::is_same<U, T>::value || std::is_same<U, float>::value,
                  "[kgsim:unsupported_dtype] Normalize: gamma / beta are T or float");
    static_assert(config.reducePattern == ReducePattern::AR,
                  "[kgsim:unsupported] Normalize: only ReducePattern::AR is supported");
    static_assert(!config.isOnlyOutput, "[kgsim:unsupported] Normalize: isOnlyOutput must be false");
    ::kgsim::LnRstdArgs g = lnrstd_args<U, T>(out, x, gamma, beta, tmp, eps, para.aLength, para.rLength,
                                              para.rLengthWithPadding);
    g.normalize = 1;
    g.mean = mean.r_;
    g.var = var.r_;
    g.rstd = rstd.r_;
    g.has_beta = !config.isNoBeta;
    g.has_gamma = !config.isNoGamma;
    ::kgsim::adv_layernorm_rstd(g, loc);
}
}  // namespace kgsim_detail

// Normalize(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta, [sharedTmpBuffer,] epsilon,
// para): y and rstd of [A, R] x from the given float mean / variance
template <typename U, typename T, bool isReuseSource = false, const NormalizeConfig& config = NLCFG_NORM>
void Normalize(const LocalTensor<T>& output, const LocalTensor<float>& outputRstd, const LocalTensor<float>& inputMean,
               const LocalTensor<float>& inputVariance, const LocalTensor<T>& inputX, const LocalTensor<U>& gamma,
               const LocalTensor<U>& beta, const LocalTensor<uint8_t>& sharedTmpBuffer, const float epsilon,
               const NormalizePara& para, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::normalize_call<U, T, config>(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta,
                                               &sharedTmpBuffer, epsilon, para, loc);
}
template <typename U, typename T, bool isReuseSource = false, const NormalizeConfig& config = NLCFG_NORM>
void Normalize(const LocalTensor<T>& output, const LocalTensor<float>& outputRstd, const LocalTensor<float>& inputMean,
               const LocalTensor<float>& inputVariance, const LocalTensor<T>& inputX, const LocalTensor<U>& gamma,
               const LocalTensor<U>& beta, const float epsilon, const NormalizePara& para,
               ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::normalize_call<U, T, config>(output, outputRstd, inputMean, inputVariance, inputX, gamma, beta,
                                               nullptr, epsilon, para, loc);
}
}  // namespace AscendC
