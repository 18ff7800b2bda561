// kgsim: the data-filter APIs of Ascend C - Select with a byte mask (SelectWithBytesMaskShapeInfo)
// and DropOut (byte or bit mask). The element work lives in src/rt_filter.cpp; the host sizing
// helpers in kgsim/filter_tiling.h.
#pragma once
#include "kgsim/tensor.h"

namespace kgsim {
struct FilterArgs {
    TRef dst, src, mask, tmp;
    DT dt = DT::F32, mask_dt = DT::U8;
    uint8_t has_tmp = 0, scalar_is_src0 = 0, reuse_mask = 1;
    uint32_t tmp_bytes = 0, first = 0, src_last = 0, mask_last = 0, mode = 0;
    double scalar = 0;
    float keep_prob = 1;
};
// Select: dst = mask ? src1 : src0, one of them a scalar; the mask's rows may be longer than the data's
void adv_select_bytes_mask(const FilterArgs& a, const Loc& loc);
// DropOut: dst = mask ? src / keepProb : 0, the mask a byte per element or a bit per element
void adv_dropout(const FilterArgs& a, const Loc& loc);
}  // namespace kgsim

namespace AscendC {
struct SelectWithBytesMaskShapeInfo {
    uint32_t firstAxis = 0;
    uint32_t srcLastAxis = 0;
    uint32_t maskLastAxis = 0;
};
struct DropOutShapeInfo {
    uint32_t firstAxis = 0;
    uint32_t srcLastAxis = 0;
    uint32_t maskLastAxis = 0;
};
namespace kgsim_detail {
template <class T, class U>
void select_bytes_call(const LocalTensor<T>& dst, const LocalTensor<T>& src, T scalar, bool scalar_is_src0,
                       const LocalTensor<U>& mask, const LocalTensor<uint8_t>& tmp, bool reuse,
                       const SelectWithBytesMaskShapeInfo& info, const ::kgsim::Loc& loc) {
    KGSIM_DTYPES("Select", T, half, float);
    KGSIM_DTYPES("Select", U, bool, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t);
    ::kgsim::FilterArgs a;
    a.dst = dst.r_;
    a.src = src.r_;
    a.mask = mask.r_;
    a.tmp = tmp.r_;
    a.has_tmp = 1;
    a.tmp_bytes = tmp.GetSize();
    a.dt = ::kgsim::dt_of<T>::v;
    a.mask_dt = ::kgsim::dt_of<U>::v;
    a.scalar = double(scalar);
    a.scalar_is_src0 = scalar_is_src0;
    a.reuse_mask = reuse;
    a.first = info.firstAxis;
    a.src_last = info.srcLastAxis;
    a.mask_last = info.maskLastAxis;
    ::kgsim::adv_select_bytes_mask(a, loc);
}
}  // namespace kgsim_detail
template <typename T, typename U, bool isReuseMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, T src1, const LocalTensor<U>& mask,
            const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info,
            ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::select_bytes_call<T, U>(dst, src0, src1, false, mask, sharedTmpBuffer, isReuseMask, info, loc);
}
template <typename T, typename U, bool isReuseMask = true>
void Select(const LocalTensor<T>& dst, T src0, const LocalTensor<T>& src1, const LocalTensor<U>& mask,
            const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info,
            ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::select_bytes_call<T, U>(dst, src1, src0, true, mask, sharedTmpBuffer, isReuseMask, info, loc);
}
// SelectWithBytesMask: the documented name of the same API in CANN 8.0 (mask 0 picks src0,
// otherwise src1; one source a scalar)
template <typename T, typename U, bool isReuseMask = true>
void SelectWithBytesMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, T src1, const LocalTensor<U>& mask,
                         const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info,
                         ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::select_bytes_call<T, U>(dst, src0, src1, false, mask, sharedTmpBuffer, isReuseMask, info, loc);
}
template <typename T, typename U, bool isReuseMask = true>
void SelectWithBytesMask(const LocalTensor<T>& dst, T src0, const LocalTensor<T>& src1, const LocalTensor<U>& mask,
                         const LocalTensor<uint8_t>& sharedTmpBuffer, const SelectWithBytesMaskShapeInfo& info,
                         ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    kgsim_detail::select_bytes_call<T, U>(dst, src1, src0, true, mask, sharedTmpBuffer, isReuseMask, info, loc);
}

// dropOutMode: 0 inferred from the shapes, 1 byte mask with padding, 2 byte mask, 3 bit mask, 4 bit mask with padding
template <typename T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& maskLocal,
             const LocalTensor<uint8_t>& sharedTmpBuffer, const float keepProb, const DropOutShapeInfo& info,
             ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("DropOut", T, half, float, bfloat16_t);
    static_assert(dropOutMode <= 4, "DropOut: dropOutMode must be 0..4");
    ::kgsim::FilterArgs a;
    a.dst = dstLocal.r_;
    a.src = srcLocal.r_;
    a.mask = maskLocal.r_;
    a.tmp = sharedTmpBuffer.r_;
    a.has_tmp = 1;
    a.tmp_bytes = sharedTmpBuffer.GetSize();
    a.dt = ::kgsim::dt_of<T>::v;
    a.keep_prob = keepProb;
    a.first = info.firstAxis;
    a.src_last = info.srcLastAxis;
    a.mask_last = info.maskLastAxis;
    a.mode = dropOutMode;
    ::kgsim::adv_dropout(a, loc);
}
template <typename T, bool isInitBitMode = false, uint32_t dropOutMode = 0>
void DropOut(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<uint8_t>& maskLocal,
             const float keepProb, const DropOutShapeInfo& info, ::kgsim::Loc loc = ::kgsim::Loc::current()) {
    KGSIM_DTYPES("DropOut", T, half, float, bfloat16_t);
    ::kgsim::FilterArgs a;
    a.dst = dstLocal.r_;
    a.src = srcLocal.r_;
    a.mask = maskLocal.r_;
    a.dt = ::kgsim::dt_of<T>::v;
    a.keep_prob = keepProb;
    a.first = info.firstAxis;
    a.src_last = info.srcLastAxis;
    a.mask_last = info.maskLastAxis;
    a.mode = dropOutMode;
    ::kgsim::adv_dropout(a, loc);
}
}  // namespace AscendC
