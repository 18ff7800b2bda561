// kgsim: the normalization APIs beyond LayerNorm/RmsNorm (kgsim/adv_api.h): WelfordUpdate and
// WelfordFinalize (the online mean / variance of a split reduce axis), LayerNormGrad and LayerNormGradBeta
// (the backward pass of LayerNorm, as their documented formulas), and DeepNorm, i.e. LayerNorm of
// alpha * x + gx with the mean and the variance as outputs (see src/rt_normalization.cpp). DeepNormTiling has
// the fields of LayerNormTiling (its documented definition), so it is the same type.
// The element work lives in src/rt_normalization.cpp; the host helpers in kgsim/normalization_tiling.h.
#pragma once
#include "kgsim/adv_api.h"

using DeepNormTiling = ::LayerNormTiling;
#define KGSIM_LAYERNORMGRAD_TILING_FIELDS(X)                                                                        \
    X(uint32_t, stackBufferSize) X(uint32_t, bLength) X(uint32_t, sLength) X(uint32_t, hLength)                     \
    X(uint32_t, originalHLength) X(uint32_t, oneCalSize) X(uint32_t, nohCalSize) X(uint32_t, loopNum)               \
    X(uint32_t, tailSize) X(uint32_t, nohTailSize) X(uint32_t, tmpTensorBSHPos) X(uint32_t, tmpTensorBSHSize)        \
    X(uint32_t, pdVarTensorPos) X(uint32_t, pdVarTensorSize) X(uint32_t, pdMeanTensorPos) X(uint32_t, pdMeanTensorSize) \
    X(uint32_t, x1TensorPos) X(uint32_t, x1TensorSize) X(uint32_t, x2TensorPos) X(uint32_t, x2TensorSize)           \
    X(uint32_t, x3TensorPos) X(uint32_t, x3TensorSize) X(uint32_t, tmpTensorPos) X(uint32_t, tmpTensorSize)         \
    X(uint32_t, tmpTensor1Pos) X(uint32_t, tmpTensor1Size) X(uint32_t, tmpTensor2Pos) X(uint32_t, tmpTensor2Size)   \
    X(uint32_t, lastDimValueBack) X(uint32_t, lastDimValueBackMulTwo)
#define KGSIM_LAYERNORMGRADBETA_TILING_FIELDS(X)                                                                    \
    X(uint32_t, stackBufferSize) X(uint32_t, bLength) X(uint32_t, sLength) X(uint32_t, hLength)                     \
    X(uint32_t, originalHLength) X(uint32_t, bshLength) X(uint32_t, bsLength) X(uint32_t, oneCalSize)               \
    X(uint32_t, numberOfTmpBuf) X(uint32_t, loopRound) X(uint32_t, inputTailSize) X(uint32_t, inputTailPos)          \
    X(uint32_t, bsTailSize) X(uint32_t, bshCurLength) X(uint32_t, bsCurLength) X(uint32_t, gammaTempTensorPos)      \
    X(uint32_t, betaTempTensorPos) X(uint32_t, inputDyTmpTensorPos) X(uint32_t, resForGammaTmpTensorPos)            \
    X(uint32_t, reserved)
KGSIM_TILING_STRUCT(LayerNormGradTiling, KGSIM_LAYERNORMGRAD_TILING_FIELDS)
KGSIM_TILING_STRUCT(LayerNormGradBetaTiling, KGSIM_LAYERNORMGRADBETA_TILING_FIELDS)
namespace optiling {
using ::DeepNormTiling;
using ::LayerNormGradTiling;
using ::LayerNormGradBetaTiling;
}  // namespace optiling

namespace kgsim {
struct DeepNormArgs {
    TRef dst, mean, rstd, src, gx, beta, gamma, tmp;
    DT dt = DT::F32;
    uint8_t has_tmp = 0, reuse = 0;
    uint32_t tmp_bytes = 0, rows = 0, h = 0, ori_h = 0;
    float alpha = 1, eps = 0;
};
void adv_deepnorm(const DeepNormArgs& a, const Loc& loc);
struct WelfordArgs {
    TRef out_mean, out_var, in_mean, in_var, x, counts, tmp;
    DT dt = DT::F32;
    uint8_t has_tmp = 0, inplace = 0, has_counts = 0, reuse = 0;
    uint32_t tmp_bytes = 0;
    uint32_t rn = 0, ab = 0, ab_compute = 0;  // WelfordUpdateParam; WelfordFinalizePara's rnLength, abLength
    uint32_t head_count = 0, head_len = 0, tail_count = 0, tail_len = 0;
    float n_rec = 0, ab_rec = 0, r_rec = 0;
};
// WelfordUpdate: one step of the running mean and M2 over abComputeLength elements
void adv_welford_update(const WelfordArgs& a, const Loc& loc);
// WelfordFinalize: the mean and variance of abLength partial (mean, M2) pairs
void adv_welford_finalize(const WelfordArgs& a, const Loc& loc);
struct NormGradArgs {
    TRef pd_x, res_gamma, dy, x, var, mean, gamma, pd_gamma, pd_beta, tmp;
    DT dt = DT::F32;
    uint8_t has_tmp = 0, reuse = 0;
    uint32_t tmp_bytes = 0, rows = 0, h = 0, ori_h = 0;
    float eps = 0;
};
// LayerNormGrad: pd_x and resForGamma = (x - mean) * rstd; LayerNormGradBeta: pd_gamma, pd_beta over the rows
void adv_layernorm_grad(const NormGradArgs& a, const Loc& loc);
void adv_layernorm_grad_beta(const NormGradArgs& a, const Loc& loc);
uint32_t layernorm_grad_tmp_bytes(uint32_t rows, uint32_t h, uint32_t type_size, int reuse, int want_max);
uint32_t layernorm_grad_beta_tmp_bytes(uint32_t rows, uint32_t h, uint32_t type_size, int want_max);
}  // namespace kgsim

namespace AscendC {
using ::DeepNormTiling;
using ::LayerNormGradTiling;
using ::LayerNormGradBetaTiling;
namespace tiling {
using ::DeepNormTiling;
using ::LayerNormGradTiling;
using ::LayerNormGradBetaTiling;
}  // namespace tiling
// ---- LayerNormGrad / LayerNormGradBeta --------------------------------------------------------------
struct LayerNormGradShapeInfo {
    DataFormat dataFormat = DataFormat::ND;
};
namespace kgsim_detail {
template <class T>
::kgsim::NormGradArgs normgrad_args(const LocalTensor<uint8_t>* tmp, uint32_t b, uint32_t s, uint32_t h,
                                    uint32_t oh, bool reuse) {
    ::kgsim::NormGradArgs a;
    if (tmp) a.tmp = tmp->r_, a.has_tmp = 1, a.tmp_bytes = tmp->GetSize();
    a.dt = ::kgsim::dt_of<T>::v;
    a.reuse = reuse;
    a.rows = b * s, a.h = h, a.ori_h = oh ? oh : h;
    return a;
}
}  // namespace kgsim_detail
template <typename T, bool isReuseSource = false>
void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                   const LocalTensor<T>& inputX, const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                   const LocalTensor<T>& inputGamma, LocalTensor<uint8_t>& sharedTmpBuffer, T epsilon,
                   LayerNormGradTiling& tiling, const LayerNormGradShapeInfo& shapeInfo = LayerNormGradShapeInfo(),
                   ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("LayerNormGrad", T, half, float);
    (void)shapeInfo;
    auto a = kgsim_detail::normgrad_args<T>(&sharedTmpBuffer, tiling.bLength, tiling.sLength, tiling.hLength,
                                            tiling.originalHLength, isReuseSource);
    a.pd_x = outputPdX.r_, a.res_gamma = resForGamma.r_, a.dy = inputDy.r_, a.x = inputX.r_;
    a.var = inputVariance.r_, a.mean = inputMean.r_, a.gamma = inputGamma.r_, a.eps = float(epsilon);
    ::kgsim::adv_layernorm_grad(a, loc);
}
template <typename T, bool isReuseSource = false>
void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                   const LocalTensor<T>& inputX, const LocalTensor<T>& inputVariance, const LocalTensor<T>& inputMean,
                   const LocalTensor<T>& inputGamma, T epsilon, LayerNormGradTiling& tiling,
                   const LayerNormGradShapeInfo& shapeInfo = LayerNormGradShapeInfo(),
                   ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("LayerNormGrad", T, half, float);
    (void)shapeInfo;
    auto a = kgsim_detail::normgrad_args<T>(nullptr, tiling.bLength, tiling.sLength, tiling.hLength,
                                            tiling.originalHLength, isReuseSource);
    a.pd_x = outputPdX.r_, a.res_gamma = resForGamma.r_, a.dy = inputDy.r_, a.x = inputX.r_;
    a.var = inputVariance.r_, a.mean = inputMean.r_, a.gamma = inputGamma.r_, a.eps = float(epsilon);
    ::kgsim::adv_layernorm_grad(a, loc);
}
template <typename T, bool isReuseSource = false>
void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                       const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                       const LocalTensor<uint8_t>& sharedTmpBuffer, const LayerNormGradBetaTiling& tiling,
                       ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("LayerNormGradBeta", T, half, float);
    auto a = kgsim_detail::normgrad_args<T>(&sharedTmpBuffer, tiling.bLength, tiling.sLength, tiling.hLength,
                                            tiling.originalHLength, isReuseSource);
    a.pd_gamma = outputPdGamma.r_, a.pd_beta = outputPdBeta.r_, a.res_gamma = resForGamma.r_, a.dy = inputDy.r_;
    ::kgsim::adv_layernorm_grad_beta(a, loc);
}
template <typename T, bool isReuseSource = false>
void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                       const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                       const LayerNormGradBetaTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("LayerNormGradBeta", T, half, float);
    auto a = kgsim_detail::normgrad_args<T>(nullptr, tiling.bLength, tiling.sLength, tiling.hLength,
                                            tiling.originalHLength, isReuseSource);
    a.pd_gamma = outputPdGamma.r_, a.pd_beta = outputPdBeta.r_, a.res_gamma = resForGamma.r_, a.dy = inputDy.r_;
    ::kgsim::adv_layernorm_grad_beta(a, loc);
}
namespace kgsim_detail {
template <class T>
void deepnorm_call(const LocalTensor<T>& dst, const LocalTensor<T>& mean, const LocalTensor<T>& rstd,
                   const LocalTensor<T>& src, const LocalTensor<T>& gx, const LocalTensor<T>& beta,
                   const LocalTensor<T>& gamma, const LocalTensor<uint8_t>* tmp, T alpha, T eps, bool reuse,
                   const DeepNormTiling& t, const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("DeepNorm", T, half, float);
    ::kgsim::DeepNormArgs a;
    a.dst = dst.r_, a.mean = mean.r_, a.rstd = rstd.r_, a.src = src.r_, a.gx = gx.r_, a.beta = beta.r_;
    a.gamma = gamma.r_;
    if (tmp) a.tmp = tmp->r_, a.has_tmp = 1, a.tmp_bytes = tmp->GetSize();
    a.dt = ::kgsim::dt_of<T>::v;
    a.reuse = reuse;
    a.rows = t.bLength * t.sLength;
    a.h = t.hLength;
    a.ori_h = t.originalHLength ? t.originalHLength : t.hLength;
    a.alpha = float(alpha);
    a.eps = float(eps);
    ::kgsim::adv_deepnorm(a, loc);
}
}  // namespace kgsim_detail
// ---- WelfordUpdate / WelfordFinalize --------------------------------------------------------------
struct WelfordUpdateConfig {
    constexpr WelfordUpdateConfig(const bool isInplaceIn = false) : isInplace(isInplaceIn) {}
    bool isInplace = false;
};
constexpr WelfordUpdateConfig WFUPDATE_DEFAULT_CFG = {false};
struct WelfordUpdateParam {
    uint32_t rnLength;
    uint32_t abLength;
    uint32_t abComputeLength;
    float nRec;
};
struct WelfordFinalizePara {
    uint32_t rnLength;
    uint32_t abLength;
    uint32_t headCount;
    uint32_t headCountLength;
    uint32_t tailCount;
    uint32_t tailCountLength;
    float abRec;
    float rRec;
};
namespace kgsim_detail {
template <class T, class U, bool reuse, bool inplace>
void welford_update_call(const LocalTensor<U>& outMean, const LocalTensor<U>& outVar, const LocalTensor<U>& inMean,
                         const LocalTensor<U>& inVar, const LocalTensor<T>& x, const LocalTensor<uint8_t>* tmp,
                         const WelfordUpdateParam& p, const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("WelfordUpdate", T, half, float);
    KGSIM_DTYPES("WelfordUpdate", U, float);
    ::kgsim::WelfordArgs a;
    a.out_mean = outMean.r_, a.out_var = outVar.r_, a.in_mean = inMean.r_, a.in_var = inVar.r_, a.x = x.r_;
    if (tmp) a.tmp = tmp->r_, a.has_tmp = 1, a.tmp_bytes = tmp->GetSize();
    a.dt = ::kgsim::dt_of<T>::v;
    a.inplace = inplace;
    a.reuse = reuse;
    a.rn = p.rnLength, a.ab = p.abLength, a.ab_compute = p.abComputeLength, a.n_rec = p.nRec;
    ::kgsim::adv_welford_update(a, loc);
}
inline void welford_finalize_call(const LocalTensor<float>& outMean, const LocalTensor<float>& outVar,
                                  const LocalTensor<float>& inMean, const LocalTensor<float>& inVar,
                                  const LocalTensor<int32_t>* counts, const LocalTensor<uint8_t>* tmp,
                                  const WelfordFinalizePara& p, const ::kgsim::Loc& loc) {
    ::kgsim::WelfordArgs a;
    a.out_mean = outMean.r_, a.out_var = outVar.r_, a.in_mean = inMean.r_, a.in_var = inVar.r_;
    if (counts) a.counts = counts->r_, a.has_counts = 1;
    if (tmp) a.tmp = tmp->r_, a.has_tmp = 1, a.tmp_bytes = tmp->GetSize();
    a.rn = p.rnLength, a.ab = p.abLength, a.head_count = p.headCount, a.head_len = p.headCountLength;
    a.tail_count = p.tailCount, a.tail_len = p.tailCountLength, a.ab_rec = p.abRec, a.r_rec = p.rRec;
    ::kgsim::adv_welford_finalize(a, loc);
}
}  // namespace kgsim_detail
template <typename T, typename U, bool isReuseSource = false, const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance,
                   const LocalTensor<U>& inputMean, const LocalTensor<U>& inputVariance, const LocalTensor<T>& inputX,
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const WelfordUpdateParam& para,
                   ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::welford_update_call<T, U, isReuseSource, config.isInplace>(
        outputMean, outputVariance, inputMean, inputVariance, inputX, &sharedTmpBuffer, para, loc);
}
template <typename T, typename U, bool isReuseSource = false, const WelfordUpdateConfig& config = WFUPDATE_DEFAULT_CFG>
void WelfordUpdate(const LocalTensor<U>& outputMean, const LocalTensor<U>& outputVariance,
                   const LocalTensor<U>& inputMean, const LocalTensor<U>& inputVariance, const LocalTensor<T>& inputX,
                   const WelfordUpdateParam& para, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::welford_update_call<T, U, isReuseSource, config.isInplace>(
        outputMean, outputVariance, inputMean, inputVariance, inputX, nullptr, para, loc);
}
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<uint8_t>& sharedTmpBuffer, WelfordFinalizePara& para,
                     ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::welford_finalize_call(outputMean, outputVariance, inputMean, inputVariance, nullptr,
                                        &sharedTmpBuffer, para, loc);
}
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<int32_t>& counts, const LocalTensor<uint8_t>& sharedTmpBuffer,
                     WelfordFinalizePara& para, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::welford_finalize_call(outputMean, outputVariance, inputMean, inputVariance, &counts,
                                        &sharedTmpBuffer, para, loc);
}
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     WelfordFinalizePara& para, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::welford_finalize_call(outputMean, outputVariance, inputMean, inputVariance, nullptr, nullptr, para,
                                        loc);
}
template <bool isReuseSource = false>
void WelfordFinalize(const LocalTensor<float>& outputMean, const LocalTensor<float>& outputVariance,
                     const LocalTensor<float>& inputMean, const LocalTensor<float>& inputVariance,
                     const LocalTensor<int32_t>& counts, WelfordFinalizePara& para,
                     ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::welford_finalize_call(outputMean, outputVariance, inputMean, inputVariance, &counts, nullptr, para,
                                        loc);
}

template <typename T, bool isReuseSrc = false, bool isBasicBlock = false>
void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal, const LocalTensor<T>& rstdLocal,
              const LocalTensor<T>& srcLocal, const LocalTensor<T>& gxLocal, const LocalTensor<T>& betaLocal,
              const LocalTensor<T>& gammaLocal, const LocalTensor<uint8_t>& sharedTmpBuffer, const T alpha,
              const T epsilon, DeepNormTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::deepnorm_call<T>(dstLocal, meanLocal, rstdLocal, srcLocal, gxLocal, betaLocal, gammaLocal,
                                   &sharedTmpBuffer, alpha, epsilon, isReuseSrc, tiling, loc);
}
template <typename T, bool isReuseSrc = false, bool isBasicBlock = false>
void DeepNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& meanLocal, const LocalTensor<T>& rstdLocal,
              const LocalTensor<T>& srcLocal, const LocalTensor<T>& gxLocal, const LocalTensor<T>& betaLocal,
              const LocalTensor<T>& gammaLocal, const T alpha, const T epsilon, DeepNormTiling& tiling,
              ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::deepnorm_call<T>(dstLocal, meanLocal, rstdLocal, srcLocal, gxLocal, betaLocal, gammaLocal, nullptr,
                                   alpha, epsilon, isReuseSrc, tiling, loc);
}
}  // namespace AscendC
