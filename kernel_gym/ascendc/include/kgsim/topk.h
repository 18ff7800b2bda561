// kgsim: TopK - the k largest (or smallest) values of each row of an [outter, inner] tensor and their
// indices, in the Normal mode (rows of up to 4096, outputs padded to 32 bytes per row) and the Small
// mode (rows of 32, outputs k per row); a finish flag per row sets that row's indices to n. TopkTiling
// has the documented fields; the simulator reads none of them (the shape comes from TopKInfo).
// The element work lives in src/rt_topk.cpp; the host helpers in kgsim/topk_tiling.h.
#pragma once
#include "kgsim/adv_api.h"

#define KGSIM_TOPK_TILING_FIELDS(X)                                                                                 \
    X(int32_t, tmpLocalSize) X(int32_t, allDataSize) X(int32_t, innerDataSize) X(uint32_t, sortRepeat)             \
    X(int32_t, mrgSortRepeat) X(int32_t, kAlignFourBytes) X(int32_t, kAlignTwoBytes) X(int32_t, maskOffset)         \
    X(int32_t, maskVreducev2FourBytes) X(int32_t, maskVreducev2TwoBytes) X(int32_t, mrgSortSrc1offset)             \
    X(int32_t, mrgSortSrc2offset) X(int32_t, mrgSortSrc3offset) X(int32_t, mrgSortTwoQueueSrc1Offset)              \
    X(int32_t, mrgFourQueueTailPara1) X(int32_t, mrgFourQueueTailPara2) X(int32_t, srcIndexOffset)                 \
    X(uint32_t, copyUbToUbBlockCount) X(int32_t, topkMrgSrc1MaskSizeOffset) X(int32_t, topkNSmallSrcIndexOffset)   \
    X(uint32_t, vreduceValMask0) X(uint32_t, vreduceValMask1) X(uint32_t, vreduceIdxMask0)                         \
    X(uint32_t, vreduceIdxMask1) X(uint16_t, vreducehalfValMask0) X(uint16_t, vreducehalfValMask1)                 \
    X(uint16_t, vreducehalfValMask2) X(uint16_t, vreducehalfValMask3) X(uint16_t, vreducehalfValMask4)             \
    X(uint16_t, vreducehalfValMask5) X(uint16_t, vreducehalfValMask6) X(uint16_t, vreducehalfValMask7)
KGSIM_TILING_STRUCT(TopkTiling, KGSIM_TOPK_TILING_FIELDS)
namespace optiling {
using ::TopkTiling;
}  // namespace optiling

namespace kgsim {
struct TopKArgs {
    TRef dst_val, dst_idx, src, src_idx, finish, tmp;
    DT dt = DT::F32;
    uint8_t init_index = 0, has_finish = 0, small = 0, largest = 1, has_tmp = 0;
    uint32_t tmp_bytes = 0;
    int32_t k = 0, outter = 0, inner = 0, n = 0;
};
void adv_topk(const TopKArgs& a, const Loc& loc);
uint32_t topk_tmp_bytes(int32_t inner, int32_t outter, int init_index, int small, int largest);
}  // namespace kgsim

namespace AscendC {
using ::TopkTiling;
namespace tiling {
using ::TopkTiling;
}  // namespace tiling
enum class TopKMode { TOPK_NORMAL, TOPK_NSMALL };
enum class TopKAlgo { RADIX_SELECT, MERGE_SORT };
enum class TopKOrder { UNSET, LARGEST, SMALLEST };
struct TopKConfig {
    TopKAlgo algo = TopKAlgo::MERGE_SORT;
    TopKOrder order = TopKOrder::UNSET;
    bool sorted = true;
};
constexpr TopKConfig defaultTopKConfig = {TopKAlgo::MERGE_SORT, TopKOrder::UNSET, true};
struct TopKInfo {
    int32_t outter = 1;
    int32_t inner;
    int32_t n;
};
namespace kgsim_detail {
template <class T, bool isInitIndex, bool isHasfinish, TopKMode mode>
void topk_call(const LocalTensor<T>& dstV, const LocalTensor<int32_t>& dstI, const LocalTensor<T>& src,
               const LocalTensor<int32_t>& srcI, const LocalTensor<bool>& finish, const LocalTensor<uint8_t>* tmp,
               int32_t k, const TopKInfo& info, bool isLargest, const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("TopK", T, half, float);
    // a kernel may instantiate both modes and pick one at run time: checked when called
    if (isHasfinish && mode == TopKMode::TOPK_NSMALL)
        ::kgsim::fault("invalid_argument", loc, "TopK: isHasfinish must be false in the Small mode");
    ::kgsim::TopKArgs a;
    a.dst_val = dstV.r_, a.dst_idx = dstI.r_, a.src = src.r_, a.src_idx = srcI.r_, a.finish = finish.r_;
    if (tmp) a.tmp = tmp->r_, a.has_tmp = 1, a.tmp_bytes = tmp->GetSize();
    a.dt = ::kgsim::dt_of<T>::v;
    a.init_index = isInitIndex, a.has_finish = isHasfinish, a.small = mode == TopKMode::TOPK_NSMALL;
    a.largest = isLargest;
    a.k = k, a.outter = info.outter, a.inner = info.inner, a.n = info.n;
    ::kgsim::adv_topk(a, loc);
}
}  // namespace kgsim_detail
template <typename T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          enum TopKMode topkMode = TopKMode::TOPK_NORMAL, const TopKConfig& config = defaultTopKConfig>
void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal, const LocalTensor<T>& srcLocal,
          const LocalTensor<int32_t>& srcIndexLocal, const LocalTensor<bool>& finishLocal,
          const LocalTensor<uint8_t>& tmpLocal, const int32_t k, const TopkTiling& tilling, const TopKInfo& topKInfo,
          const bool isLargest = true, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    (void)tilling;
    kgsim_detail::topk_call<T, isInitIndex, isHasfinish, topkMode>(dstValueLocal, dstIndexLocal, srcLocal,
                                                                   srcIndexLocal, finishLocal, &tmpLocal, k, topKInfo,
                                                                   isLargest, loc);
}
template <typename T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          enum TopKMode topkMode = TopKMode::TOPK_NORMAL, const TopKConfig& config = defaultTopKConfig>
void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal, const LocalTensor<T>& srcLocal,
          const LocalTensor<int32_t>& srcIndexLocal, const LocalTensor<bool>& finishLocal, const int32_t k,
          const TopkTiling& tilling, const TopKInfo& topKInfo, const bool isLargest = true,
          ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    (void)tilling;
    kgsim_detail::topk_call<T, isInitIndex, isHasfinish, topkMode>(dstValueLocal, dstIndexLocal, srcLocal,
                                                                   srcIndexLocal, finishLocal, nullptr, k, topKInfo,
                                                                   isLargest, loc);
}
}  // namespace AscendC
