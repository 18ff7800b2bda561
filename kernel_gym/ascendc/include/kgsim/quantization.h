// kgsim: the quantization APIs of Ascend C for Atlas A2 - AscendQuant (half/float -> int8,
// per tensor or per channel), AscendDequant (int32 -> float/half/bfloat16 with a per-column or
// scalar deqScale) and AscendAntiQuant (int8 -> half/bfloat16, per channel or per tensor).
// The element work lives in src/rt_quantization.cpp; the host sizing helpers in
// kgsim/quantization_tiling.h. The Ascend 950 forms (Quantize/Dequantize/AntiQuantize, PER_TOKEN,
// PER_GROUP, fp8/fp4 types) are not provided: they do not exist on the simulated SoC.
// kgsim:partial AscendQuant: the Atlas A2 forms (int8 output, per tensor / per channel); not the Ascend 950 dstT, PER_TOKEN and PER_GROUP forms
// kgsim:partial AscendDequant: the Atlas A2 forms (per-column or scalar deqScale); not the Ascend 950 PER_TOKEN / PER_GROUP forms
// kgsim:partial AscendAntiQuant: int8 input, per tensor / per channel; not the int4, fp8/fp4, PER_TOKEN and PER_GROUP forms
#pragma once
#include "kgsim/tensor.h"

namespace kgsim {
struct QuantArgs {
    TRef dst, src, scale, offset, tmp;
    DT dst_dt = DT::I8, src_dt = DT::F32, param_dt = DT::F32;
    uint8_t scale_tensor = 0, offset_tensor = 0, has_tmp = 0, transpose = 0;
    float scale_v = 1, offset_v = 0;  // the scalar forms
    uint32_t tmp_bytes = 0, count = 0, scale_count = 0, offset_count = 0;
    uint32_t m = 0, n = 0, mode = 0;  // AscendDequant's DequantParams (count is calCount), DeQuantMode
    uint32_t k = 0;                   // AscendAntiQuant's K
    uint32_t off_h = 0, off_w = 0, sc_h = 0, sc_w = 0;  // AscendAntiQuant's AntiQuantShapeInfo
};
// AscendQuant: dst = round(src * scale + offset), in half as the A2 implementation computes
void adv_ascend_quant(const QuantArgs& a, const Loc& loc);
// AscendDequant: rows of n int32, the first calCount of each multiplied by deqScale
void adv_ascend_dequant(const QuantArgs& a, const Loc& loc);
// AscendAntiQuant: dst = scale * (src + offset)
void adv_ascend_antiquant(const QuantArgs& a, const Loc& loc);
}  // namespace kgsim

namespace AscendC {
struct AscendQuantConfig {
    uint32_t calcCount = 0;
    uint32_t offsetCount = 0;
    uint32_t scaleCount = 0;
    uint32_t workLocalSize = 0;
};
constexpr AscendQuantConfig ASCEND_QUANT_DEFAULT_CFG = {0, 0, 0, 0};
enum class DeQuantMode : uint8_t { DEQUANT_WITH_SINGLE_ROW = 0, DEQUANT_WITH_MULTI_ROW };
struct DequantParams {
    uint32_t m;
    uint32_t n;
    uint32_t calCount;
};
struct AntiQuantShapeInfo {
    uint32_t offsetHeight{0};
    uint32_t offsetWidth{0};
    uint32_t scaleHeight{0};
    uint32_t scaleWidth{0};
};

namespace kgsim_detail {
template <class T>
inline void quant_tmp(::kgsim::QuantArgs& a, const LocalTensor<T>* tmp) {
    if (tmp) {
        a.tmp = tmp->r_;
        a.has_tmp = 1;
        a.tmp_bytes = tmp->GetLength();
    }
}
// one AscendQuant call: scaleT / offsetT null for the scalar forms, tmp null for the framework's space
template <class T>
void quant_call(const LocalTensor<int8_t>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>* tmp,
                const LocalTensor<T>* scaleT, const LocalTensor<T>* offsetT, float scale, float offset,
                uint32_t scaleCount, uint32_t offsetCount, uint32_t calCount, const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("AscendQuant", T, half, float);
    ::kgsim::QuantArgs a;
    a.dst = dst.r_;
    a.src = src.r_;
    a.src_dt = a.param_dt = ::kgsim::dt_of<T>::v;
    quant_tmp(a, tmp);
    a.scale_v = scale;
    a.offset_v = offset;
    if (scaleT) {
        a.scale = scaleT->r_;
        a.scale_tensor = 1;
        a.scale_count = scaleCount ? scaleCount : scaleT->GetSize();
    }
    if (offsetT) {
        a.offset = offsetT->r_;
        a.offset_tensor = 1;
        a.offset_count = offsetCount ? offsetCount : offsetT->GetSize();
    }
    a.count = calCount ? calCount : src.GetSize();
    ::kgsim::adv_ascend_quant(a, loc);
}
}  // namespace kgsim_detail

// ---- AscendQuant: per tensor (scalar scale and offset) ------------------------------------------
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset,
                 const uint32_t calCount, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, &sharedTmpBuffer, nullptr, nullptr, scale, offset, 0, 0,
                                calCount, loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor, const float scale,
                 const float offset, const uint32_t calCount, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, nullptr, nullptr, nullptr, scale, offset, 0, 0, calCount, loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const float scale, const float offset,
                 ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, &sharedTmpBuffer, nullptr, nullptr, scale, offset, 0, 0, 0, loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor, const float scale,
                 const float offset, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, nullptr, nullptr, nullptr, scale, offset, 0, 0, 0, loc);
}
// ---- AscendQuant: per channel (scale tensor; offset scalar or tensor) ---------------------------
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor, const T offset,
                 const uint32_t scaleCount, const uint32_t calCount, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, nullptr, 0, float(offset),
                                scaleCount, 0, calCount, loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<T>& scaleTensor, const T offset, const uint32_t scaleCount,
                 const uint32_t calCount, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, nullptr, &scaleTensor, nullptr, 0, float(offset), scaleCount,
                                0, calCount, loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor, const T offset,
                 ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, nullptr, 0, float(offset), 0,
                                0, 0, loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<T>& scaleTensor, const T offset, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, nullptr, &scaleTensor, nullptr, 0, float(offset), 0, 0, 0, loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                 const LocalTensor<T>& offsetTensor, const uint32_t scaleCount, const uint32_t offsetCount,
                 const uint32_t calCount, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, &offsetTensor, 0, 0, scaleCount,
                                offsetCount, calCount, loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<T>& scaleTensor, const LocalTensor<T>& offsetTensor, const uint32_t scaleCount,
                 const uint32_t offsetCount, const uint32_t calCount, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, nullptr, &scaleTensor, &offsetTensor, 0, 0, scaleCount,
                                offsetCount, calCount, loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<uint8_t>& sharedTmpBuffer, const LocalTensor<T>& scaleTensor,
                 const LocalTensor<T>& offsetTensor, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, &sharedTmpBuffer, &scaleTensor, &offsetTensor, 0, 0, 0, 0, 0,
                                loc);
}
template <typename T, bool isReuseSource = false, const AscendQuantConfig& config = ASCEND_QUANT_DEFAULT_CFG>
void AscendQuant(const LocalTensor<int8_t>& dstTensor, const LocalTensor<T>& srcTensor,
                 const LocalTensor<T>& scaleTensor, const LocalTensor<T>& offsetTensor,
                 ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::quant_call<T>(dstTensor, srcTensor, nullptr, &scaleTensor, &offsetTensor, 0, 0, 0, 0, 0, loc);
}

// ---- AscendDequant ----------------------------------------------------------------------------
namespace kgsim_detail {
template <class dstT, class scaleT, DeQuantMode mode>
void dequant_call(const LocalTensor<dstT>& dst, const LocalTensor<int32_t>& src, const LocalTensor<scaleT>* scaleT_,
                  scaleT scale, const LocalTensor<uint8_t>* tmp, const DequantParams& p, const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("AscendDequant", dstT, half, float, bfloat16_t);
    KGSIM_DTYPES("AscendDequant", scaleT, uint64_t, float, bfloat16_t);
    ::kgsim::QuantArgs a;
    a.dst = dst.r_;
    a.src = src.r_;
    a.dst_dt = ::kgsim::dt_of<dstT>::v;
    a.src_dt = ::kgsim::DT::I32;
    a.param_dt = ::kgsim::dt_of<scaleT>::v;
    quant_tmp(a, tmp);
    if (scaleT_) {
        a.scale = scaleT_->r_;
        a.scale_tensor = 1;
        a.scale_count = scaleT_->GetSize();
    } else {
        a.scale_v = float(scale);
    }
    a.m = p.m;
    a.n = p.n;
    a.count = p.calCount;
    a.mode = uint32_t(mode);
    ::kgsim::adv_ascend_dequant(a, loc);
}
}  // namespace kgsim_detail
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                   const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                   DequantParams params, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::dequant_call<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT{}, &sharedTmpBuffer, params,
                                                   loc);
}
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                   const LocalTensor<scaleT>& deqScale, DequantParams params,
                   ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::dequant_call<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT{}, nullptr, params, loc);
}
// the older forms: one row of calCount (or all) elements
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                   const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                   const uint32_t calCount, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::dequant_call<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT{}, &sharedTmpBuffer,
                                                   DequantParams{1, calCount, calCount}, loc);
}
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                   const LocalTensor<scaleT>& deqScale, const uint32_t calCount,
                   ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::dequant_call<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT{}, nullptr,
                                                   DequantParams{1, calCount, calCount}, loc);
}
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                   const LocalTensor<scaleT>& deqScale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                   ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    uint32_t n = srcTensor.GetSize();
    kgsim_detail::dequant_call<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT{}, &sharedTmpBuffer,
                                                   DequantParams{1, n, n}, loc);
}
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor,
                   const LocalTensor<scaleT>& deqScale, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    uint32_t n = srcTensor.GetSize();
    kgsim_detail::dequant_call<dstT, scaleT, mode>(dstTensor, srcTensor, &deqScale, scaleT{}, nullptr,
                                                   DequantParams{1, n, n}, loc);
}
// scalar deqScale (bfloat16_t or float)
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor, const scaleT deqScale,
                   const LocalTensor<uint8_t>& sharedTmpBuffer, DequantParams params,
                   ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::dequant_call<dstT, scaleT, mode>(dstTensor, srcTensor, nullptr, deqScale, &sharedTmpBuffer, params,
                                                   loc);
}
template <typename dstT, typename scaleT, DeQuantMode mode = DeQuantMode::DEQUANT_WITH_SINGLE_ROW>
void AscendDequant(const LocalTensor<dstT>& dstTensor, const LocalTensor<int32_t>& srcTensor, const scaleT deqScale,
                   DequantParams params, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::dequant_call<dstT, scaleT, mode>(dstTensor, srcTensor, nullptr, deqScale, nullptr, params, loc);
}

// ---- AscendAntiQuant ----------------------------------------------------------------------------
namespace kgsim_detail {
template <class In, class Out, bool isTranspose>
void antiquant_call(const LocalTensor<Out>& dst, const LocalTensor<In>& src, const LocalTensor<Out>* offsetT,
                    const LocalTensor<Out>* scaleT, Out offset, Out scale, bool has_offset,
                    const LocalTensor<uint8_t>* tmp, uint32_t k, const AntiQuantShapeInfo& si,
                    const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("AscendAntiQuant", In, int8_t);
    KGSIM_DTYPES("AscendAntiQuant", Out, half, bfloat16_t);
    ::kgsim::QuantArgs a;
    a.dst = dst.r_;
    a.src = src.r_;
    a.dst_dt = a.param_dt = ::kgsim::dt_of<Out>::v;
    a.src_dt = ::kgsim::dt_of<In>::v;
    a.transpose = isTranspose;
    quant_tmp(a, tmp);
    a.k = k;
    a.count = src.GetSize() < dst.GetSize() ? src.GetSize() : dst.GetSize();
    if (scaleT) {
        ShapeInfo s = scaleT->GetShapeInfo();
        a.scale = scaleT->r_;
        a.scale_tensor = 1;
        a.scale_count = scaleT->GetSize();
        a.sc_h = si.scaleHeight ? si.scaleHeight : (s.shapeDim == 2 ? s.shape[0] : 0);
        a.sc_w = si.scaleWidth ? si.scaleWidth : (s.shapeDim == 2 ? s.shape[1] : 0);
    } else {
        a.scale_v = float(scale);
    }
    if (offsetT) {
        ShapeInfo s = offsetT->GetShapeInfo();
        a.offset = offsetT->r_;
        a.offset_tensor = 1;
        a.offset_count = offsetT->GetSize();
        a.off_h = si.offsetHeight ? si.offsetHeight : (s.shapeDim == 2 ? s.shape[0] : 0);
        a.off_w = si.offsetWidth ? si.offsetWidth : (s.shapeDim == 2 ? s.shape[1] : 0);
    } else {
        a.offset_v = has_offset ? float(offset) : 0.f;
    }
    ::kgsim::adv_ascend_antiquant(a, loc);
}
}  // namespace kgsim_detail
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const LocalTensor<OutputDataType>& offset, const LocalTensor<OutputDataType>& scale,
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                     const AntiQuantShapeInfo& shapeInfo = AntiQuantShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::antiquant_call<InputDataType, OutputDataType, isTranspose>(
        dst, src, &offset, &scale, OutputDataType{}, OutputDataType{}, true, &sharedTmpBuffer, k, shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const LocalTensor<OutputDataType>& scale, const LocalTensor<uint8_t>& sharedTmpBuffer,
                     const uint32_t k, const AntiQuantShapeInfo& shapeInfo = AntiQuantShapeInfo(),
                     ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::antiquant_call<InputDataType, OutputDataType, isTranspose>(
        dst, src, nullptr, &scale, OutputDataType{}, OutputDataType{}, false, &sharedTmpBuffer, k, shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const LocalTensor<OutputDataType>& offset, const LocalTensor<OutputDataType>& scale,
                     const uint32_t k, const AntiQuantShapeInfo& shapeInfo = AntiQuantShapeInfo(),
                     ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::antiquant_call<InputDataType, OutputDataType, isTranspose>(
        dst, src, &offset, &scale, OutputDataType{}, OutputDataType{}, true, nullptr, k, shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const LocalTensor<OutputDataType>& scale, const uint32_t k,
                     const AntiQuantShapeInfo& shapeInfo = AntiQuantShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::antiquant_call<InputDataType, OutputDataType, isTranspose>(
        dst, src, nullptr, &scale, OutputDataType{}, OutputDataType{}, false, nullptr, k, shapeInfo, loc);
}
// per tensor: scalar offset and scale
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const OutputDataType offset, const OutputDataType scale,
                     const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                     const AntiQuantShapeInfo& shapeInfo = AntiQuantShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::antiquant_call<InputDataType, OutputDataType, isTranspose>(dst, src, nullptr, nullptr, offset, scale,
                                                                             true, &sharedTmpBuffer, k, shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const OutputDataType scale, const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t k,
                     const AntiQuantShapeInfo& shapeInfo = AntiQuantShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::antiquant_call<InputDataType, OutputDataType, isTranspose>(
        dst, src, nullptr, nullptr, OutputDataType{}, scale, false, &sharedTmpBuffer, k, shapeInfo, loc);
}
template <typename InputDataType, typename OutputDataType, bool isTranspose>
void AscendAntiQuant(const LocalTensor<OutputDataType>& dst, const LocalTensor<InputDataType>& src,
                     const OutputDataType offset, const OutputDataType scale, const uint32_t k,
                     const AntiQuantShapeInfo& shapeInfo = AntiQuantShapeInfo(), ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::antiquant_call<InputDataType, OutputDataType, isTranspose>(dst, src, nullptr, nullptr, offset, scale,
                                                                             true, nullptr, k, shapeInfo, loc);
}
}  // namespace AscendC
