// kgsim: the row-wise high-level APIs of Ascend C - SoftMax, SimpleSoftMax, LogSoftMax, LayerNorm,
// RmsNorm, CumSum, Mean, Pad, Clamp (a compile error on A2) - and their tiling structs. Each tiling struct is one type for the host
// (optiling::X, a field of a tiling-data class via TILING_DATA_FIELD_DEF_STRUCT), the kernel (X,
// AscendC::X) and AscendC::tiling::X, so both sides agree on its layout (as TCubeTiling does).
// The APIs' bodies live in the runtime library (src/rt_adv.cpp); these wrappers only marshal.
#pragma once
#include <algorithm>
#include <cstring>
#include "kgsim/tensor.h"

// X(type, field) lists of the documented tiling structs
#define KGSIM_SOFTMAX_TILING_FIELDS(X)                                                                         \
    X(uint32_t, srcM) X(uint32_t, srcK) X(uint32_t, srcSize) X(uint32_t, outMaxM) X(uint32_t, outMaxK)           \
    X(uint32_t, outMaxSize) X(uint32_t, splitM) X(uint32_t, splitK) X(uint32_t, splitSize) X(uint32_t, reduceM)  \
    X(uint32_t, reduceK) X(uint32_t, reduceSize) X(uint32_t, rangeM) X(uint32_t, tailM) X(uint32_t, tailSplitSize) \
    X(uint32_t, tailReduceSize)
#define KGSIM_LAYERNORM_TILING_FIELDS(X)                                                                           \
    X(uint32_t, bLength) X(uint32_t, sLength) X(uint32_t, hLength) X(uint32_t, originalHLength)                    \
    X(uint32_t, inputXSize) X(uint32_t, meanVarSize) X(uint32_t, numberOfTmpBuf) X(uint32_t, meanTmpTensorPos)     \
    X(uint32_t, meanTmpTensorSize) X(uint32_t, varianceTmpTensorPos) X(uint32_t, varianceTmpTensorSize)           \
    X(uint32_t, tmpBufSize) X(uint32_t, oneTmpSize) X(uint32_t, firstTmpStartPos) X(uint32_t, secondTmpStartPos)  \
    X(uint32_t, thirdTmpStartPos) X(uint32_t, loopRound) X(uint32_t, inputRoundSize) X(uint32_t, inputTailSize)    \
    X(uint32_t, inputTailPos) X(uint32_t, meanVarRoundSize) X(uint32_t, meanVarTailSize) X(uint32_t, meanVarTailPos) \
    X(uint32_t, bshCurLength) X(uint32_t, bsCurLength) X(float, lastDimValueBack)
#define KGSIM_RMSNORM_TILING_FIELDS(X)                                                                             \
    X(uint32_t, bLength) X(uint32_t, sLength) X(uint32_t, hLength) X(uint32_t, originalHLength)                    \
    X(float, reciprocalOfHLength) X(uint32_t, mainBshLength) X(uint32_t, mainBsLength) X(uint32_t, mainBsLengthAlign) \
    X(uint32_t, loopRound) X(uint32_t, inputTailPos) X(uint32_t, tailBshLength) X(uint32_t, tailBsLength)
#define KGSIM_PAD_TILING_FIELDS(X)                                                                                 \
    X(uint32_t, srcHeight) X(uint32_t, srcWidth) X(uint32_t, srcOriWidth) X(uint32_t, widthWithoutLastBlock)       \
    X(uint32_t, blocksPerRow) X(uint32_t, heightTiling) X(uint32_t, heightFractal) X(uint32_t, heightFractalTail)  \
    X(uint32_t, mainLoopOffset) X(uint32_t, tailBlockOffset) X(uint32_t, tmpBuffer1BlockNum)                      \
    X(uint32_t, tmpBuffer1RowNum) X(uint32_t, tmpBuffer2Offset) X(uint32_t, widthTiling) X(uint32_t, widthFractal) \
    X(uint32_t, widthFractalTail) X(uint32_t, widthFractalTailAlingned) X(uint32_t, brcbTiling)                  \
    X(uint32_t, brcbFractal) X(uint32_t, brcbFractalTail) X(uint32_t, maxRepeatTimes)                            \
    X(uint32_t, brcbTilingRepeatTimes)

#define KGSIM_TILING_MEMBER(type, f) type f = 0;
#define KGSIM_TILING_ACCESSORS(type, f) \
    void set_##f(type v) { f = v; }     \
    type get_##f() const { return f; }
#define KGSIM_TILING_STRUCT(NAME, FIELDS)                                                                  \
    struct NAME {                                                                                          \
        FIELDS(KGSIM_TILING_MEMBER)                                                                        \
        FIELDS(KGSIM_TILING_ACCESSORS)                                                                     \
        size_t GetDataSize() const { return sizeof(*this); }                                               \
        void SaveToBuffer(void* buf, size_t cap) const { std::memcpy(buf, this, cap < sizeof(*this) ? cap : sizeof(*this)); } \
    };
KGSIM_TILING_STRUCT(SoftMaxTiling, KGSIM_SOFTMAX_TILING_FIELDS)
KGSIM_TILING_STRUCT(LayerNormTiling, KGSIM_LAYERNORM_TILING_FIELDS)
KGSIM_TILING_STRUCT(RmsNormTiling, KGSIM_RMSNORM_TILING_FIELDS)
KGSIM_TILING_STRUCT(PadTiling, KGSIM_PAD_TILING_FIELDS)
// UnPadTiling: the shape UnPad reads and the documented split of its temporary buffer
#define KGSIM_UNPAD_TILING_FIELDS(X)                                                                               \
    X(uint32_t, srcHeight) X(uint32_t, srcWidth) X(uint32_t, tmpBuffer1BlockNum) X(uint32_t, tmpBuffer1RowNum)     \
    X(uint32_t, tmpBuffer2Offset) X(uint32_t, widthTiling) X(uint32_t, widthFractal) X(uint32_t, widthFractalTail)
KGSIM_TILING_STRUCT(UnPadTiling, KGSIM_UNPAD_TILING_FIELDS)
using LogSoftMaxTiling = SoftMaxTiling;  // the documented LogSoftMaxTiling has the same fields
namespace optiling {
using ::SoftMaxTiling;
using ::LogSoftMaxTiling;
using ::LayerNormTiling;
using ::RmsNormTiling;
using ::PadTiling;
using ::UnPadTiling;
}  // namespace optiling

namespace kgsim {
// Row-wise softmax family: kind 0 SoftMax, 1 SimpleSoftMax (sum/max are inputs), 2 LogSoftMax (log10 of softmax)
struct SoftmaxArgs {
    TRef dst, sum, max, src, tmp;
    uint8_t kind = 0, has_stats = 0, has_tmp = 0;
    uint32_t tmp_bytes = 0;
    uint32_t m = 0, k = 0, ori_k = 0;  // rows, row pitch (32-byte aligned), valid columns
};
void adv_softmax(DT dt, DT stat_dt, const SoftmaxArgs& a, const Loc& loc);
// SoftmaxGrad / SoftmaxGradFront: a.sum is the grad tensor
void adv_softmax_grad(DT dt, const SoftmaxArgs& a, int front, const Loc& loc);
// SoftmaxFlashV2: a.sum / a.max are the outputs
void adv_softmax_flash_v2(DT dt, DT sdt, const SoftmaxArgs& a, const TRef& exp_max, const TRef& in_sum,
                          const TRef& in_max, int update, const Loc& loc);
uint32_t softmax_grad_tmp_bytes(uint32_t m, uint32_t k, uint32_t type_size, int front, int want_max);
uint32_t softmax_tmp_bytes(uint32_t m, uint32_t k, uint32_t stat_type_size, int want_max);
struct NormArgs {
    TRef dst, mean, var, src, gamma, beta, tmp;
    uint8_t rms = 0, has_tmp = 0, has_beta = 1, has_gamma = 1, has_stats = 1, rstd = 0;
    uint32_t tmp_bytes = 0;
    uint32_t rows = 0, h = 0, ori_h = 0;
    float eps = 0;
};
// LayerNorm (rms = 0): dst = (x - mean) / sqrt(var + eps) * gamma + beta, mean/var per row; RmsNorm (rms = 1)
void adv_norm(DT dt, DT gamma_dt, const NormArgs& a, const Loc& loc);
uint32_t layernorm_tmp_bytes(uint32_t rows, uint32_t h, uint32_t type_size, int reuse, int want_max);
uint32_t rmsnorm_tmp_bytes(uint32_t rows, uint32_t h, uint32_t type_size, int want_max);
void adv_cumsum(DT dt, const TRef& dst, const TRef& last_row, const TRef& src, const TRef& tmp, int has_tmp,
                uint32_t tmp_bytes, int last_axis, int output_last_row, uint32_t outter, uint32_t inner,
                const Loc& loc);
void cumsum_tmp_bytes(uint32_t outter, uint32_t inner, uint32_t type_size, int last_axis, uint32_t& max_bytes,
                      uint32_t& min_bytes);
void adv_mean(DT dt, DT acc_dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
              uint32_t outter, uint32_t inner, uint32_t n, const Loc& loc);
uint32_t mean_tmp_bytes(uint32_t n, uint32_t type_size, uint32_t acc_size);
// ReduceSum/Max/Min/Prod/Mean (op 0..4) of a 2-D tensor {d0, d1} along axis 1 (AR) or axis 0 (ra = 1)
void adv_reduce_axis(int op, DT dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
                     uint32_t d0, uint32_t d1, int ra, int inner_pad, const Loc& loc);
// Pad: [height, width] rows whose first oriWidth columns are data, the rest of the row up to width
// (at most one 32-byte block past oriWidth) filled with padValue.
void adv_pad(DT dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
             uint32_t height, uint32_t width, uint32_t ori_width, uint16_t left, uint16_t right, double value,
             const Loc& loc);
uint32_t pad_tmp_bytes(uint32_t height, uint32_t width, uint32_t type_size, int want_max);
// UnPad: [height, width] rows (32-byte aligned) to [height, width - rightPad], packed
void adv_unpad(DT dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
               uint32_t height, uint32_t width, uint16_t left, uint16_t right, const Loc& loc);
uint32_t unpad_tmp_bytes(uint32_t height, uint32_t width, uint32_t type_size, int want_max);
}  // namespace kgsim

namespace AscendC {
using ::SoftMaxTiling;
using ::LogSoftMaxTiling;
using ::LayerNormTiling;
using ::RmsNormTiling;
using ::PadTiling;
using ::UnPadTiling;
namespace tiling {
using ::SoftMaxTiling;
using ::LogSoftMaxTiling;
using ::LayerNormTiling;
using ::RmsNormTiling;
using ::PadTiling;
using ::UnPadTiling;
}  // namespace tiling

// ---- SoftMax family -------------------------------------------------------------------------
enum class SoftmaxMode { SOFTMAX_NORMAL = 0, SOFTMAX_OUTPUT_WITHOUT_BRC = 1 };
struct SoftmaxConfig {
    constexpr SoftmaxConfig(const bool isCheckTilingIn) : isCheckTiling(isCheckTilingIn) {}
    constexpr SoftmaxConfig(const bool isCheckTilingIn, const uint32_t m, const uint32_t k)
        : isCheckTiling(isCheckTilingIn), oriSrcM(m), oriSrcK(k) {}
    constexpr SoftmaxConfig(const bool isCheckTilingIn, const uint32_t m, const uint32_t k, const SoftmaxMode md)
        : isCheckTiling(isCheckTilingIn), oriSrcM(m), oriSrcK(k), mode(md) {}
    bool isCheckTiling = true;
    uint32_t oriSrcM = 0;
    uint32_t oriSrcK = 0;
    SoftmaxMode mode = SoftmaxMode::SOFTMAX_NORMAL;
};
constexpr SoftmaxConfig SOFTMAX_DEFAULT_CFG = {true, 0, 0, SoftmaxMode::SOFTMAX_NORMAL};
struct SoftMaxShapeInfo {
    uint32_t srcM{0};
    uint32_t srcK{0};
    uint32_t oriSrcM{0};
    uint32_t oriSrcK{0};
};

namespace kgsim_detail {
// Shape of a softmax call: SoftMaxShapeInfo when it is filled in, the tiling's otherwise (the
// simulator's LocalTensor carries no ShapeInfo).
// SoftMax's tiling of an [m, k] input (the host Tiling functions and the kernel-side *Impl forms share it):
// the documented split, baseM rows of (32 / typeSize + k + 64) floats fit the work space
inline void softmax_tiling_mk(uint32_t m, uint32_t k, uint32_t typeSize, uint32_t workBytes, SoftMaxTiling& t) {
    if (typeSize == 0 || k == 0) return;
    const uint32_t epb = 32 / typeSize;
    uint32_t baseM = std::min<uint32_t>(workBytes / 4 / (epb + k + 64), m);
    if (baseM < m && baseM > 8) baseM = baseM / 8 * 8;
    if (baseM > 8 && m % 8 == 0 && k % 64 == 0) {  // basic block
        baseM = baseM / 8 * 8;
        while (m % baseM) baseM -= 8;
        while (baseM * k >= 64 * 256) baseM /= 2;
    }
    t = SoftMaxTiling{};
    t.srcM = m; t.srcK = k; t.srcSize = m * k;
    t.outMaxM = m; t.outMaxK = epb; t.outMaxSize = m * epb;
    t.splitM = baseM; t.splitK = k; t.splitSize = baseM * k;
    t.reduceM = baseM; t.reduceK = epb; t.reduceSize = baseM * epb;
    t.rangeM = baseM ? m / baseM : 0;
    t.tailM = baseM ? m % baseM : 0;
    t.tailSplitSize = t.tailM * k;
    t.tailReduceSize = t.tailM * epb;
}
inline void softmax_shape(::kgsim::SoftmaxArgs& a, const SoftMaxTiling& t, const SoftMaxShapeInfo& s) {
    if (s.srcM == 0 || s.srcK == 0) {
        a.m = t.srcM;
        a.k = t.srcK;
        a.ori_k = t.srcK;
    } else {
        a.m = s.srcM;
        a.k = s.srcK;
        a.ori_k = s.oriSrcK ? s.oriSrcK : s.srcK;
    }
}
template <class T, class U>
inline void softmax_call(uint8_t kind, const LocalTensor<T>& dst, const LocalTensor<U>* sum, const LocalTensor<U>* max,
                         const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp, const SoftMaxTiling& tiling,
                         const SoftMaxShapeInfo& shape, const ::kgsim::Loc& loc) {
    ::kgsim::SoftmaxArgs a;
    a.kind = kind;
    a.dst = dst.r_;
    a.src = src.r_;
    if (sum) {
        a.sum = sum->r_;
        a.max = max->r_;
        a.has_stats = 1;
    }
    if (tmp) {
        a.tmp = tmp->r_;
        a.tmp_bytes = tmp->GetSize();
        a.has_tmp = 1;
    }
    softmax_shape(a, tiling, shape);
    ::kgsim::adv_softmax(::kgsim::dt_of<T>::v, ::kgsim::dt_of<U>::v, a, loc);
}
template <class T>
inline void softmax_grad_call(int front, const LocalTensor<T>& dst, const LocalTensor<T>& grad,
                              const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp, const SoftMaxTiling& tiling,
                              const SoftMaxShapeInfo& shape, const ::kgsim::Loc& loc) {
    ::kgsim::SoftmaxArgs a;
    a.dst = dst.r_;
    a.sum = grad.r_;
    a.src = src.r_;
    if (tmp) {
        a.tmp = tmp->r_;
        a.tmp_bytes = tmp->GetSize();
        a.has_tmp = 1;
    }
    softmax_shape(a, tiling, shape);
    ::kgsim::adv_softmax_grad(::kgsim::dt_of<T>::v, a, front, loc);
}
}  // namespace kgsim_detail

// SoftMaxFlashV2TilingFuncImpl: the kernel-side form of the host SoftMaxFlashV2TilingFunc, for a kernel
// that re-tiles per block: the shape as (srcM, srcK), the work space in floats (the library passes
// tmp.GetSize() / sizeof(float)), the tiling returned by value; the same split as the host form.
inline SoftMaxTiling SoftMaxFlashV2TilingFuncImpl(const uint32_t srcM, const uint32_t srcK, const uint32_t dataTypeSize1,
                                                  const uint32_t dataTypeSize2, const uint32_t localWorkSpaceSize,
                                                  const bool isUpdate = false, const bool isBasicBlock = false) {
    (void)dataTypeSize2, (void)isUpdate, (void)isBasicBlock;
    SoftMaxTiling t{};
    kgsim_detail::softmax_tiling_mk(srcM, srcK, dataTypeSize1, localWorkSpaceSize * 4, t);
    return t;
}
// SoftmaxFlashV2<T, isUpdate, ...>(dst, expSum, max, src, expMax, inExpSum, inMax, [tmp,] tiling, shape): ND only
#define KGSIM_FLASHV2_TPL                                                                                         \
    template <typename T, bool isUpdate = false, bool isReuseSource = false, bool isBasicBlock = false,            \
              bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
namespace kgsim_detail {
template <class T, class U, class E>
inline void flash_v2_call(int update, const LocalTensor<T>& dst, const LocalTensor<U>& sum, const LocalTensor<U>& max,
                          const LocalTensor<T>& src, const LocalTensor<E>& expMax, const LocalTensor<U>& inSum,
                          const LocalTensor<U>& inMax, const LocalTensor<uint8_t>* tmp, const SoftMaxTiling& tiling,
                          const SoftMaxShapeInfo& shape, const ::kgsim::Loc& loc) {
    ::kgsim::SoftmaxArgs a;
    a.dst = dst.r_;
    a.sum = sum.r_;
    a.max = max.r_;
    a.src = src.r_;
    if (tmp) {
        a.tmp = tmp->r_;
        a.tmp_bytes = tmp->GetSize();
        a.has_tmp = 1;
    }
    softmax_shape(a, tiling, shape);
    ::kgsim::adv_softmax_flash_v2(::kgsim::dt_of<T>::v, ::kgsim::dt_of<U>::v, a, expMax.r_, inSum.r_, inMax.r_, update,
                                  loc);
}
}  // namespace kgsim_detail
KGSIM_FLASHV2_TPL
void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& expSumTensor,
                    const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                    const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inExpSumTensor,
                    const LocalTensor<T>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(),
                    ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftmaxFlashV2", T, half, float);
    static_assert(!isDataFormatNZ, "[kgsim:unsupported_dtype] SoftmaxFlashV2: the NZ data format is not simulated");
    kgsim_detail::flash_v2_call(isUpdate ? 1 : 0, dstTensor, expSumTensor, maxTensor, srcTensor, expMaxTensor,
                                inExpSumTensor, inMaxTensor, &sharedTmpBuffer, tiling, softmaxShapeInfo, loc);
}
KGSIM_FLASHV2_TPL
void SoftmaxFlashV2(const LocalTensor<T>& dstTensor, const LocalTensor<T>& expSumTensor,
                    const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
                    const LocalTensor<T>& expMaxTensor, const LocalTensor<T>& inExpSumTensor,
                    const LocalTensor<T>& inMaxTensor, const SoftMaxTiling& tiling,
                    const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(),
                    ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftmaxFlashV2", T, half, float);
    static_assert(!isDataFormatNZ, "[kgsim:unsupported_dtype] SoftmaxFlashV2: the NZ data format is not simulated");
    kgsim_detail::flash_v2_call(isUpdate ? 1 : 0, dstTensor, expSumTensor, maxTensor, srcTensor, expMaxTensor,
                                inExpSumTensor, inMaxTensor, nullptr, tiling, softmaxShapeInfo, loc);
}
KGSIM_FLASHV2_TPL
void SoftmaxFlashV2(const LocalTensor<half>& dstTensor, const LocalTensor<float>& expSumTensor,
                    const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
                    const LocalTensor<half>& expMaxTensor, const LocalTensor<float>& inExpSumTensor,
                    const LocalTensor<float>& inMaxTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(),
                    ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    static_assert(!isDataFormatNZ, "[kgsim:unsupported_dtype] SoftmaxFlashV2: the NZ data format is not simulated");
    kgsim_detail::flash_v2_call(isUpdate ? 1 : 0, dstTensor, expSumTensor, maxTensor, srcTensor, expMaxTensor,
                                inExpSumTensor, inMaxTensor, &sharedTmpBuffer, tiling, softmaxShapeInfo, loc);
}

// SoftmaxGrad(dst, grad, src, [tmp,] tiling, isFront, shape) and SoftmaxGradFront(dst, grad, src, [tmp,] tiling,
// shape): the softmax backward pass over rows (ND format)
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling, bool isFront = false,
                 const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(),
                 ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftmaxGrad", T, half, float);
    static_assert(!isDataFormatNZ, "[kgsim:unsupported_dtype] SoftmaxGrad: the NZ data format is not simulated");
    kgsim_detail::softmax_grad_call<T>(isFront ? 1 : 0, dstTensor, gradTensor, srcTensor, &sharedTmpBuffer, tiling,
                                       softmaxShapeInfo, loc);
}
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
void SoftmaxGrad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor, const LocalTensor<T>& srcTensor,
                 const SoftMaxTiling& tiling, bool isFront = false,
                 const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(),
                 ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftmaxGrad", T, half, float);
    static_assert(!isDataFormatNZ, "[kgsim:unsupported_dtype] SoftmaxGrad: the NZ data format is not simulated");
    kgsim_detail::softmax_grad_call<T>(isFront ? 1 : 0, dstTensor, gradTensor, srcTensor, nullptr, tiling,
                                       softmaxShapeInfo, loc);
}
template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                      const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                      const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(),
                      ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftmaxGradFront", T, half, float);
    static_assert(!isDataFormatNZ, "[kgsim:unsupported_dtype] SoftmaxGradFront: the NZ data format is not simulated");
    kgsim_detail::softmax_grad_call<T>(1, dstTensor, gradTensor, srcTensor, &sharedTmpBuffer, tiling, softmaxShapeInfo,
                                       loc);
}
template <typename T, bool isBasicBlock = false, bool isDataFormatNZ = false>
void SoftmaxGradFront(const LocalTensor<T>& dstTensor, const LocalTensor<T>& gradTensor,
                      const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
                      const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(),
                      ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftmaxGradFront", T, half, float);
    static_assert(!isDataFormatNZ, "[kgsim:unsupported_dtype] SoftmaxGradFront: the NZ data format is not simulated");
    kgsim_detail::softmax_grad_call<T>(1, dstTensor, gradTensor, srcTensor, nullptr, tiling, softmaxShapeInfo, loc);
}

// kgsim:partial SoftMax: ND format only (isDataFormatNZ is a compile error); without SoftMaxShapeInfo the shape is the tiling's srcM x srcK (a LocalTensor carries no ShapeInfo here)
// kgsim:partial SimpleSoftMax: ND format only; the shape comes from SoftMaxShapeInfo or the tiling, as for SoftMax
#define KGSIM_SOFTMAX_TPL \
    template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false, \
              const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
#define KGSIM_SOFTMAX_NZ static_assert(!isDataFormatNZ, "[kgsim:unsupported_dtype] SoftMax: the NZ data format (isDataFormatNZ) is not simulated")
// SoftMax(dst, sum, max, src, [tmp,] tiling, shapeInfo): same types, or half data with float sum/max
KGSIM_SOFTMAX_TPL
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
             const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(),
             ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftMax", T, half, float);
    KGSIM_SOFTMAX_NZ;
    kgsim_detail::softmax_call<T, T>(0, dstTensor, &sumTensor, &maxTensor, srcTensor, nullptr, tiling,
                                     softmaxShapeInfo, loc);
}
KGSIM_SOFTMAX_TPL
void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
             const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_SOFTMAX_NZ;
    kgsim_detail::softmax_call<half, float>(0, dstTensor, &sumTensor, &maxTensor, srcTensor, nullptr, tiling,
                                            softmaxShapeInfo, loc);
}
KGSIM_SOFTMAX_TPL
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
             const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftMax", T, half, float);
    KGSIM_SOFTMAX_NZ;
    kgsim_detail::softmax_call<T, T>(0, dstTensor, &sumTensor, &maxTensor, srcTensor, &sharedTmpBuffer, tiling,
                                     softmaxShapeInfo, loc);
}
KGSIM_SOFTMAX_TPL
void SoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& sumTensor,
             const LocalTensor<float>& maxTensor, const LocalTensor<half>& srcTensor,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_SOFTMAX_NZ;
    kgsim_detail::softmax_call<half, float>(0, dstTensor, &sumTensor, &maxTensor, srcTensor, &sharedTmpBuffer, tiling,
                                            softmaxShapeInfo, loc);
}
// SoftMax(dst, src, [tmp,] tiling, shapeInfo): no sum/max outputs
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftMax", T, half, float);
    kgsim_detail::softmax_call<T, T>(0, dstTensor, nullptr, nullptr, srcTensor, nullptr, tiling, softmaxShapeInfo,
                                     loc);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SoftMax", T, half, float);
    kgsim_detail::softmax_call<T, T>(0, dstTensor, nullptr, nullptr, srcTensor, &sharedTmpBuffer, tiling,
                                     softmaxShapeInfo, loc);
}

// SimpleSoftMax(dst, inSum, inMax, src, [tmp,] tiling, shapeInfo): softmax with precomputed sum and max
KGSIM_SOFTMAX_TPL
void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                   const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor, const SoftMaxTiling& tiling,
                   const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SimpleSoftMax", T, half, float);
    KGSIM_SOFTMAX_NZ;
    kgsim_detail::softmax_call<T, T>(1, dstTensor, &inSumTensor, &inMaxTensor, srcTensor, nullptr, tiling,
                                     softmaxShapeInfo, loc);
}
KGSIM_SOFTMAX_TPL
void SimpleSoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& inSumTensor,
                   const LocalTensor<float>& inMaxTensor, const LocalTensor<half>& srcTensor,
                   const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(),
                   ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_SOFTMAX_NZ;
    kgsim_detail::softmax_call<half, float>(1, dstTensor, &inSumTensor, &inMaxTensor, srcTensor, nullptr, tiling,
                                            softmaxShapeInfo, loc);
}
KGSIM_SOFTMAX_TPL
void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                   const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor,
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                   const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("SimpleSoftMax", T, half, float);
    KGSIM_SOFTMAX_NZ;
    kgsim_detail::softmax_call<T, T>(1, dstTensor, &inSumTensor, &inMaxTensor, srcTensor, &sharedTmpBuffer, tiling,
                                     softmaxShapeInfo, loc);
}
KGSIM_SOFTMAX_TPL
void SimpleSoftMax(const LocalTensor<half>& dstTensor, const LocalTensor<float>& inSumTensor,
                   const LocalTensor<float>& inMaxTensor, const LocalTensor<half>& srcTensor,
                   const LocalTensor<uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                   const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_SOFTMAX_NZ;
    kgsim_detail::softmax_call<half, float>(1, dstTensor, &inSumTensor, &inMaxTensor, srcTensor, &sharedTmpBuffer,
                                            tiling, softmaxShapeInfo, loc);
}
// LogSoftMax(dst, sum, max, src, sharedTmpBuffer, tiling, shapeInfo): dst = log10(softmax(src)), as documented
template <typename T, bool isReuseSource = false, bool isDataFormatNZ = false>
void LogSoftMax(const LocalTensor<T>& dst, const LocalTensor<T>& sum, const LocalTensor<T>& max,
                const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer, const LogSoftMaxTiling& tiling,
                const SoftMaxShapeInfo& softmaxShapeInfo = SoftMaxShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("LogSoftMax", T, half, float);
    KGSIM_SOFTMAX_NZ;
    kgsim_detail::softmax_call<T, T>(2, dst, &sum, &max, src, &sharedTmpBuffer, tiling, softmaxShapeInfo, loc);
}
#undef KGSIM_SOFTMAX_TPL
#undef KGSIM_SOFTMAX_NZ

// AdjustSoftMaxRes<T1, T2, isDataFormatNZ, stepSizeMode>(res, max, from, to, shape): after a softmax,
// every row whose max (the first element of its 32-byte block, or element r when stepSizeMode is
// set) has the bit pattern `from` is set to `to`; returns whether any row was. Each adjusted row
// costs a Duplicate.
template <typename T1, typename T2, bool isDataFormatNZ = false, uint8_t stepSizeMode = 0>
KGSIM_UNINSTRUMENTED bool AdjustSoftMaxRes(const LocalTensor<T1>& softMaxRes, const LocalTensor<T2>& maxTensor,
                                           const uint32_t from, const T1 to, const SoftMaxShapeInfo& softmaxShapeInfo,
                                           kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("AdjustSoftMaxRes", T1, half, float);
    KGSIM_DTYPES("AdjustSoftMaxRes", T2, half, float);
    static_assert(!isDataFormatNZ, "[kgsim:unsupported_dtype] AdjustSoftMaxRes: the NZ data format is not simulated");
    const uint32_t rows = softmaxShapeInfo.srcM, cols = softmaxShapeInfo.srcK;
    const uint32_t step = stepSizeMode != 0 ? 1u : uint32_t(32 / sizeof(T2));
    if (uint64_t(rows) * step > maxTensor.GetSize())
        kgsim::local_oob(maxTensor.r_, uint64_t(rows) * step * sizeof(T2), sizeof(T2), "AdjustSoftMaxRes", loc);
    const T2* mx = reinterpret_cast<const T2*>(maxTensor.GetPhyAddr());
    bool adjusted = false;
    for (uint32_t r = 0; r < rows; ++r) {
        uint32_t bits = 0;
        std::memcpy(&bits, mx + uint64_t(r) * step, sizeof(T2));
        if (bits != from) continue;
        Duplicate(softMaxRes[r * cols], to, int32_t(cols), loc);
        adjusted = true;
    }
    return adjusted;
}

// ---- LayerNorm / RmsNorm --------------------------------------------------------------------
struct LayerNormConfig {
    bool isNoBeta = false;
    bool isNoGamma = false;
    bool isOnlyOutput = false;
    bool isOutputRstd = true;
};
constexpr LayerNormConfig LNCFG_NORM = {false, false, false, true};
struct LayerNormPara {
    uint32_t aLength;
    uint32_t rLength;
    uint32_t rLengthWithPadding;
};
namespace kgsim_detail {
template <class T>
inline void layernorm_call(const LocalTensor<T>& out, const LocalTensor<T>& mean, const LocalTensor<T>& var,
                           const LocalTensor<T>& x, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
                           const LocalTensor<uint8_t>* tmp, float eps, const LayerNormTiling& t, int reuse,
                           const ::kgsim::Loc& loc) {
    ::kgsim::NormArgs a;
    a.dst = out.r_;
    a.mean = mean.r_;
    a.var = var.r_;
    a.src = x.r_;
    a.gamma = gamma.r_;
    a.beta = beta.r_;
    if (tmp) {
        a.tmp = tmp->r_;
        a.tmp_bytes = tmp->GetSize();
        a.has_tmp = 1;
    }
    a.rows = t.bLength * t.sLength;
    a.h = t.hLength;
    a.ori_h = t.originalHLength ? t.originalHLength : t.hLength;
    a.eps = eps;
    a.rstd = uint8_t(reuse);  // reuse flag for the temporary-space rule (isReuseSource with float)
    ::kgsim::adv_norm(::kgsim::dt_of<T>::v, ::kgsim::dt_of<T>::v, a, loc);
}
}  // namespace kgsim_detail
// the rstd form with LayerNormPara and LayerNormSeparateTiling: kgsim/layernorm_rstd.h
// LayerNorm(output, outputMean, outputVariance, inputX, gamma, beta, [sharedTmpBuffer,] epsilon, tiling):
// x is [B, S, H] (H 32-byte aligned, originalHLength valid), mean and variance are [B, S].
template <typename T, bool isReuseSource = false>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
               const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, LayerNormTiling& tiling,
               ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("LayerNorm", T, half, float);
    kgsim_detail::layernorm_call<T>(output, outputMean, outputVariance, inputX, gamma, beta, &sharedTmpBuffer,
                                    float(epsilon), tiling, isReuseSource, loc);
}
template <typename T, bool isReuseSource = false>
void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean, const LocalTensor<T>& outputVariance,
               const LocalTensor<T>& inputX, const LocalTensor<T>& gamma, const LocalTensor<T>& beta,
               const T epsilon, LayerNormTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("LayerNorm", T, half, float);
    kgsim_detail::layernorm_call<T>(output, outputMean, outputVariance, inputX, gamma, beta, nullptr, float(epsilon),
                                    tiling, isReuseSource, loc);
}

// RmsNorm(dst, src, gamma, [sharedTmpBuffer,] epsilon, tiling): dst = x / sqrt(mean(x^2) + eps) * gamma per row
template <typename T, bool isBasicBlock = false>
void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gammaLocal,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, const RmsNormTiling& tiling,
             ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("RmsNorm", T, half, float);
    ::kgsim::NormArgs a;
    a.rms = 1;
    a.dst = dstLocal.r_;
    a.src = srcLocal.r_;
    a.gamma = gammaLocal.r_;
    a.tmp = sharedTmpBuffer.r_;
    a.tmp_bytes = sharedTmpBuffer.GetSize();
    a.has_tmp = 1;
    a.rows = tiling.bLength * tiling.sLength;
    a.h = tiling.hLength;
    a.ori_h = tiling.originalHLength ? tiling.originalHLength : tiling.hLength;
    a.eps = float(epsilon);
    ::kgsim::adv_norm(::kgsim::dt_of<T>::v, ::kgsim::dt_of<T>::v, a, loc);
}
template <typename T, bool isBasicBlock = false>
void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gammaLocal,
             const T epsilon, const RmsNormTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("RmsNorm", T, half, float);
    ::kgsim::NormArgs a;
    a.rms = 1;
    a.dst = dstLocal.r_;
    a.src = srcLocal.r_;
    a.gamma = gammaLocal.r_;
    a.rows = tiling.bLength * tiling.sLength;
    a.h = tiling.hLength;
    a.ori_h = tiling.originalHLength ? tiling.originalHLength : tiling.hLength;
    a.eps = float(epsilon);
    ::kgsim::adv_norm(::kgsim::dt_of<T>::v, ::kgsim::dt_of<T>::v, a, loc);
}

// ---- CumSum ---------------------------------------------------------------------------------
enum class CumSumAlgorithm { CUMSUM_ALGORITHM_LINEBYLINE = 0, CUMSUM_ALGORITHM_SKLANSKY = 1 };
struct CumSumConfig {
    bool isLastAxis{true};
    bool isReuseSource{false};
    bool outputLastRow{false};
    CumSumAlgorithm algorithm{CumSumAlgorithm::CUMSUM_ALGORITHM_LINEBYLINE};
};
struct CumSumInfo {
    uint32_t outter{0};
    uint32_t inner{0};  // 32-byte aligned
};
constexpr CumSumConfig defaultCumSumConfig = {true, false, true};
// CumSum(dst, lastRow, src, [sharedTmpBuffer,] info): prefix sums along the last axis (each row) or the
// first axis (down the columns); lastRow gets the last column / last row when config.outputLastRow.
template <typename T, const CumSumConfig& config = defaultCumSumConfig>
void CumSum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
            const LocalTensor<uint8_t>& sharedTmpBuffer, const CumSumInfo& cumSumInfo,
            ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("CumSum", T, half, float);
    ::kgsim::adv_cumsum(::kgsim::dt_of<T>::v, dstTensor.r_, lastRowTensor.r_, srcTensor.r_, sharedTmpBuffer.r_, 1,
                        sharedTmpBuffer.GetSize(), config.isLastAxis, config.outputLastRow, cumSumInfo.outter,
                        cumSumInfo.inner, loc);
}
template <typename T, const CumSumConfig& config = defaultCumSumConfig>
void CumSum(const LocalTensor<T>& dstTensor, const LocalTensor<T>& lastRowTensor, const LocalTensor<T>& srcTensor,
            const CumSumInfo& cumSumInfo, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("CumSum", T, half, float);
    ::kgsim::adv_cumsum(::kgsim::dt_of<T>::v, dstTensor.r_, lastRowTensor.r_, srcTensor.r_, ::kgsim::TRef{}, 0, 0,
                        config.isLastAxis, config.outputLastRow, cumSumInfo.outter, cumSumInfo.inner, loc);
}

// ---- Mean: the mean of each of `outter` rows of n elements (rows `inner` elements apart) ----------
struct MeanParams {
    uint32_t outter = 1;
    uint32_t inner;
    uint32_t n;
};
template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false,
          int32_t reduceDim = -1>
void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
          const LocalTensor<uint8_t>& sharedTmpBuffer, const MeanParams& meanParams,
          ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("Mean", T, half, float);
    static_assert(sizeof(accType) >= sizeof(T), "[kgsim:unsupported_dtype] Mean: accType must not be narrower than T");
    ::kgsim::adv_mean(::kgsim::dt_of<T>::v, ::kgsim::dt_of<accType>::v, dstTensor.r_, srcTensor.r_,
                      sharedTmpBuffer.r_, 1, sharedTmpBuffer.GetSize(), meanParams.outter, meanParams.inner,
                      meanParams.n, loc);
}
template <typename T, typename accType = T, bool isReuseSource = false, bool isBasicBlock = false,
          int32_t reduceDim = -1>
void Mean(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const MeanParams& meanParams,
          ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("Mean", T, half, float);
    static_assert(sizeof(accType) >= sizeof(T), "[kgsim:unsupported_dtype] Mean: accType must not be narrower than T");
    ::kgsim::adv_mean(::kgsim::dt_of<T>::v, ::kgsim::dt_of<accType>::v, dstTensor.r_, srcTensor.r_, ::kgsim::TRef{},
                      0, 0, meanParams.outter, meanParams.inner, meanParams.n, loc);
}

// ---- ReduceSum/ReduceMax/ReduceMin/ReduceProd/ReduceMean with a pattern (AR or RA, 2-D shapes) ------
namespace Pattern {
namespace Reduce {
struct AR {
    static constexpr int kRA = 0;
};
struct RA {
    static constexpr int kRA = 1;
};
}  // namespace Reduce
}  // namespace Pattern
namespace kgsim_detail {
template <class pattern, class T>
void reduce_axis(int op, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                 const uint32_t srcShape[], bool srcInnerPad, ::kgsim::Loc loc) {
    ::kgsim::adv_reduce_axis(op, ::kgsim::dt_of<T>::v, dst.r_, src.r_, tmp ? tmp->r_ : ::kgsim::TRef{}, tmp ? 1 : 0,
                             tmp ? tmp->GetSize() : 0, srcShape[0], srcShape[1], pattern::kRA, srcInnerPad ? 1 : 0,
                             loc);
}
}  // namespace kgsim_detail
#define KGSIM_REDUCE_AXIS(NAME, OP, ...)                                                                       \
    template <class T, class pattern, bool isReuseSource = false>                                              \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,                                \
              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t srcShape[], bool srcInnerPad,        \
              ::kgsim::Loc loc = ::kgsim::Loc::current()) {                                                    \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                   \
        kgsim_detail::reduce_axis<pattern>(OP, dstTensor, srcTensor, &sharedTmpBuffer, srcShape, srcInnerPad,  \
                                           loc);                                                               \
    }                                                                                                          \
    template <class T, class pattern, bool isReuseSource = false>                                              \
    void NAME(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, const uint32_t srcShape[],     \
              bool srcInnerPad, ::kgsim::Loc loc = ::kgsim::Loc::current()) {                                  \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                   \
        kgsim_detail::reduce_axis<pattern>(OP, dstTensor, srcTensor, nullptr, srcShape, srcInnerPad, loc);     \
    }
KGSIM_REDUCE_AXIS(ReduceSum, 0, float)
KGSIM_REDUCE_AXIS(ReduceMax, 1, half, float)
KGSIM_REDUCE_AXIS(ReduceMin, 2, half, float)
KGSIM_REDUCE_AXIS(ReduceProd, 3, float)
KGSIM_REDUCE_AXIS(ReduceMean, 4, float)
#undef KGSIM_REDUCE_AXIS

// ---- Clamp(dst, src, min, max, count) --------------------------------------------------------------
// Clamp with both bounds exists only on Ascend 950 (CANN Clamp docs: "Atlas A2: not supported"; the A2
// build of CANN compiles the call to nothing), so on the simulated A2 profiles a call is a compile error.
// kgsim:partial Clamp: Ascend 950 only; on the simulated Atlas A2 SoCs a call is a compile error (CANN's A2 build would silently do nothing); ClampMax/ClampMin work
struct ClampConfig {
    bool isReuseSource;
};
constexpr ClampConfig DEFAULT_CLAMP_CONFIG = {false};
template <class U> inline constexpr bool kgsim_clamp_not_on_a2 = false;
template <const ClampConfig& config = DEFAULT_CLAMP_CONFIG, typename T, typename U, typename S>
void Clamp(const LocalTensor<T>&, const LocalTensor<T>&, const U&, const S&, const uint32_t) {
    static_assert(kgsim_clamp_not_on_a2<U>, "[kgsim:unsupported_dtype] Clamp: not available on Atlas A2 (Ascend910B): "
                  "the CANN docs list it for Ascend 950 only; use ClampMin then ClampMax");
}

// ---- Pad ------------------------------------------------------------------------------------
struct PadParams {
    uint16_t leftPad = 0;
    uint16_t rightPad = 0;
    int32_t padValue = 0;
};
// kgsim:partial Pad: the width-direction pad of the documented API, computed whole (no tiling loop)
template <typename T>
void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams,
         const LocalTensor<uint8_t>& sharedTmpBuffer, PadTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("Pad", T, half, float, int16_t, uint16_t, int32_t, uint32_t);
    ::kgsim::adv_pad(::kgsim::dt_of<T>::v, dstTensor.r_, srcTensor.r_, sharedTmpBuffer.r_, 1, sharedTmpBuffer.GetSize(),
                     tiling.srcHeight, tiling.srcWidth, tiling.srcOriWidth, padParams.leftPad, padParams.rightPad,
                     double(padParams.padValue), loc);
}
template <typename T>
void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams, PadTiling& tiling,
         ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("Pad", T, half, float, int16_t, uint16_t, int32_t, uint32_t);
    ::kgsim::adv_pad(::kgsim::dt_of<T>::v, dstTensor.r_, srcTensor.r_, ::kgsim::TRef{}, 0, 0, tiling.srcHeight,
                     tiling.srcWidth, tiling.srcOriWidth, padParams.leftPad, padParams.rightPad,
                     double(padParams.padValue), loc);
}

// ---- UnPad: drop rightPad columns of each 32-byte aligned row --------------------------------
struct UnPadParams {
    uint16_t leftPad = 0;
    uint16_t rightPad = 0;
};
template <typename T>
void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams,
           LocalTensor<uint8_t>& sharedTmpBuffer, UnPadTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("UnPad", T, half, float, int16_t, uint16_t, int32_t, uint32_t);
    ::kgsim::adv_unpad(::kgsim::dt_of<T>::v, dstTensor.r_, srcTensor.r_, sharedTmpBuffer.r_, 1,
                       sharedTmpBuffer.GetSize(), tiling.srcHeight, tiling.srcWidth, unPadParams.leftPad,
                       unPadParams.rightPad, loc);
}
template <typename T>
void UnPad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, UnPadParams& unPadParams,
           UnPadTiling& tiling, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("UnPad", T, half, float, int16_t, uint16_t, int32_t, uint32_t);
    ::kgsim::adv_unpad(::kgsim::dt_of<T>::v, dstTensor.r_, srcTensor.r_, ::kgsim::TRef{}, 0, 0, tiling.srcHeight,
                       tiling.srcWidth, unPadParams.leftPad, unPadParams.rightPad, loc);
}

}  // namespace AscendC
