// kgsim: SoftmaxFlashV3 (the Softmax PASA variant of SoftmaxFlash) and its SoftMaxParams, following the
// documented pseudo-code: each row's mean is taken in splitMeanCnt pieces with the block-reduce grouping
// that pseudo-code describes, the input is shifted by (global mean - piece mean) * alpha / (1 - alpha), then
// exp / max / sum as SoftmaxFlashV2 with the running mean folded into the max (isUpdate). The statistics
// tensors hold one 32-byte block per row. Element work: src/rt_softmax_flashv3.cpp.
#pragma once
#include <type_traits>
#include "kgsim/math.h"  // adv_api.h (SoftMaxTiling, SoftmaxConfig)

namespace kgsim {
struct FlashV3Args {
    TRef dst, mean, sum, max, src, exp_max, in_mean, in_sum, in_max, tmp;
    DT dt = DT::F16;
    uint8_t update = 0, has_tmp = 0;
    uint32_t tmp_bytes = 0, m = 0, k = 0, loop_cnt = 1, split = 8;
    float alpha = 0;
};
void adv_softmax_flashv3(const FlashV3Args& a, const Loc& loc);
}  // namespace kgsim

// the device compiler's scalar min, which kernels (the asc-devkit SoftmaxFlashV3 sample) call unqualified;
// plain overloads, so that std::min stays usable next to them
inline int32_t min(int32_t a, int32_t b) { return b < a ? b : a; }
inline uint32_t min(uint32_t a, uint32_t b) { return b < a ? b : a; }
inline int64_t min(int64_t a, int64_t b) { return b < a ? b : a; }
inline uint64_t min(uint64_t a, uint64_t b) { return b < a ? b : a; }
inline float min(float a, float b) { return b < a ? b : a; }

namespace AscendC {
struct SoftMaxParams {
    uint32_t srcM;          // product of the non-last axes
    uint32_t srcK;          // last axis, 32-byte aligned
    uint32_t oriSrcM;
    uint32_t oriSrcK;
    uint32_t loopCnt;       // the running-mean step count (isUpdate), at least 1
    uint32_t splitMeanCnt;  // pieces of a row's mean; 8 only
    float alpha;
};
namespace kgsim_detail {
template <class T, class U, bool isUpdate>
inline void flashv3_call(const LocalTensor<T>& dst, const LocalTensor<U>& mean, const LocalTensor<U>& sum,
                         const LocalTensor<U>& max, const LocalTensor<T>& src, const LocalTensor<T>& expMax,
                         const LocalTensor<U>& inMean, const LocalTensor<U>& inSum, const LocalTensor<U>& inMax,
                         const LocalTensor<uint8_t>* tmp, const SoftMaxParams& p, const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("SoftmaxFlashV3", T, half);
    KGSIM_DTYPES("SoftmaxFlashV3", U, float);
    ::kgsim::FlashV3Args a;
    a.dst = dst.r_, a.mean = mean.r_, a.sum = sum.r_, a.max = max.r_, a.src = src.r_, a.exp_max = expMax.r_;
    a.in_mean = inMean.r_, a.in_sum = inSum.r_, a.in_max = inMax.r_;
    if (tmp) {
        a.tmp = tmp->r_;
        a.tmp_bytes = tmp->GetSize();
        a.has_tmp = 1;
    }
    a.dt = ::kgsim::dt_of<T>::v;
    a.update = isUpdate;
    a.m = p.srcM, a.k = p.srcK, a.loop_cnt = p.loopCnt, a.split = p.splitMeanCnt, a.alpha = p.alpha;
    ::kgsim::adv_softmax_flashv3(a, loc);
}
}  // namespace kgsim_detail
template <typename T, typename U, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor,
                    const LocalTensor<U>& expSumTensor, const LocalTensor<U>& maxTensor, const LocalTensor<T>& srcTensor,
                    const LocalTensor<T>& expMaxTensor, const LocalTensor<U>& inMeanTensor,
                    const LocalTensor<U>& inExpSumTensor, const LocalTensor<U>& inMaxTensor,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                    const SoftMaxParams& params, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    (void)tiling;
    kgsim_detail::flashv3_call<T, U, isUpdate>(dstTensor, meanTensor, expSumTensor, maxTensor, srcTensor,
                                               expMaxTensor, inMeanTensor, inExpSumTensor, inMaxTensor,
                                               &sharedTmpBuffer, params, loc);
}
template <typename T, typename U, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftmaxFlashV3(const LocalTensor<T>& dstTensor, const LocalTensor<U>& meanTensor,
                    const LocalTensor<U>& expSumTensor, const LocalTensor<U>& maxTensor, const LocalTensor<T>& srcTensor,
                    const LocalTensor<T>& expMaxTensor, const LocalTensor<U>& inMeanTensor,
                    const LocalTensor<U>& inExpSumTensor, const LocalTensor<U>& inMaxTensor,
                    const SoftMaxTiling& tiling, const SoftMaxParams& params,
                    ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    (void)tiling;
    kgsim_detail::flashv3_call<T, U, isUpdate>(dstTensor, meanTensor, expSumTensor, maxTensor, srcTensor,
                                               expMaxTensor, inMeanTensor, inExpSumTensor, inMaxTensor, nullptr,
                                               params, loc);
}
}  // namespace AscendC
