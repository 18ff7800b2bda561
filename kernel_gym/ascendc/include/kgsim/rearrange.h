// kgsim: data-rearranging vector APIs (GatherMask, Brcb, BroadCast, Copy), the compare-mask
// register (GetCmpMask/SetCmpMask), SetPadValue and the int4b_t type.
#pragma once
#include "kgsim/vector.h"

namespace kgsim {
uint64_t gather_mask(DT dt, const TRef& dst, const TRef& src0, const TRef& pattern, int fixed_pattern,
                     int reduce_mode, uint32_t mask, uint32_t src0_blk, uint32_t repeat, uint32_t src0_rep,
                     uint32_t src1_rep, const Loc& loc);
void brcb(DT dt, const TRef& dst, const TRef& src, int32_t repeat, uint32_t dst_blk, uint32_t dst_rep, const Loc& loc);
void broadcast(DT dt, const TRef& dst, const TRef& src, int dim, int axis, const uint32_t* dst_shape,
               const uint32_t* src_shape, const Loc& loc);
void cmp_mask(int set, const TRef& t, const Loc& loc);
}  // namespace kgsim

// 4-bit signed integer, two per byte (only a storage type for the vector APIs)
struct int4b_t {
    uint8_t bits_ = 0;
};
namespace kgsim {
template <> struct dt_of<::int4b_t> { static constexpr DT v = DT::S4; };
}  // namespace kgsim

namespace AscendC {
using ::int4b_t;  // kernels spell it AscendC::int4b_t too

struct GatherMaskParams {
    GatherMaskParams() {}
    GatherMaskParams(const uint8_t src0BlockStrideIn, const uint16_t repeatTimesIn, const uint16_t src0RepeatStrideIn,
                     const uint8_t src1RepeatStrideIn)
        : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn), src0RepeatStride(src0RepeatStrideIn),
          src1RepeatStride(src1RepeatStrideIn) {}
    uint8_t src0BlockStride = DEFAULT_BLK_STRIDE;
    uint16_t repeatTimes = 0;
    uint16_t src0RepeatStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepeatStride = DEFAULT_REPEAT_STRIDE;
};
enum class GatherMaskMode : uint8_t { VERSION_V1 = 0, VERSION_V2 = 1 };
constexpr GatherMaskMode defaultGahterMaskMode = GatherMaskMode::VERSION_V1;

// asc-devkit refuses a src1Pattern type other than uint16_t / uint32_t at build (static_assert) but checks
// T, and T against the pattern width, with debug-build asserts only (it moves elements by width).
#define KGSIM_GATHERMASK_T half, bfloat16_t, uint16_t, int16_t, float, uint32_t, int32_t
template <class T, class U, GatherMaskMode mode = GatherMaskMode::VERSION_V1>
void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                uint64_t& rsvdCnt, kgsim::Loc loc = kgsim::Loc::current()) {
    static_assert(kgsim::one_of_v<U, uint16_t, uint32_t>,
                  "[kgsim:unsupported_dtype] GatherMask: src1Pattern is uint16_t for 16-bit T, uint32_t for 32-bit T");
    KGSIM_DTYPES_RUNTIME("GatherMask", T, KGSIM_GATHERMASK_T);
    if constexpr (sizeof(U) != sizeof(T))
        kgsim::fault("unsupported_dtype", loc,
                     "GatherMask: src1Pattern is uint16_t for 16-bit T, uint32_t for 32-bit T on Atlas A2");
    rsvdCnt = kgsim::gather_mask(kgsim::dt_of<T>::v, dst.r_, src0.r_, src1Pattern.r_, 0, reduceMode, mask,
                                 gatherMaskParams.src0BlockStride, gatherMaskParams.repeatTimes,
                                 gatherMaskParams.src0RepeatStride, gatherMaskParams.src1RepeatStride, loc);
}
template <class T, GatherMaskMode mode = GatherMaskMode::VERSION_V1>
void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const uint8_t src1Pattern,
                const bool reduceMode, const uint32_t mask, const GatherMaskParams& gatherMaskParams,
                uint64_t& rsvdCnt, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("GatherMask", T, KGSIM_GATHERMASK_T);
    if (src1Pattern == 0) kgsim::fault("invalid_argument", loc, "GatherMask: fixed src1Pattern must be in [1, 7]");
    rsvdCnt = kgsim::gather_mask(kgsim::dt_of<T>::v, dst.r_, src0.r_, kgsim::TRef{}, src1Pattern, reduceMode, mask,
                                 gatherMaskParams.src0BlockStride, gatherMaskParams.repeatTimes,
                                 gatherMaskParams.src0RepeatStride, gatherMaskParams.src1RepeatStride, loc);
}

struct BrcbRepeatParams {
    BrcbRepeatParams() {}
    BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), dstRepStride(dstRepStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1BlkStride = 0, src1RepStride = 0;
    bool repeatStrideMode = false, strideSizeMode = false;
};
// Brcb: each of 8 source elements per repeat fills one 32-byte block of dst. asc-devkit checks the type
// with a debug-build assert and dispatches on its width, so another type builds (and does nothing there).
template <class T>
void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTime,
          const BrcbRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("Brcb", T, int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float);
    kgsim::brcb(kgsim::dt_of<T>::v, dst.r_, src.r_, repeatTime, repeatParams.dstBlkStride, repeatParams.dstRepStride,
                loc);
}

// BroadCast<T, dim, axis>(dst, src, dstShape, srcShape[, sharedTmpBuffer])
// kgsim:partial BroadCast: dim 1 and 2 only; sharedTmpBuffer is not checked for size
// the A2 library moves 2- and 4-byte elements by width (bfloat16_t, int16_t, int32_t as half or float), so those
// types compile and work there too, though its table lists only half, float, int8_t and uint8_t
template <class T, int32_t dim, int32_t axis, bool isReuseSource = false>
void BroadCast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
               const uint32_t srcShape[dim], LocalTensor<uint8_t>& sharedTmpBuffer,
               kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("BroadCast", T, half, bfloat16_t, float, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t);
    kgsim::broadcast(kgsim::dt_of<T>::v, dst.r_, src.r_, dim, axis, dstShape, srcShape, loc);
}
template <class T, int32_t dim, int32_t axis, bool isReuseSource = false>
void BroadCast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
               const uint32_t srcShape[dim], kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("BroadCast", T, half, bfloat16_t, float, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t);
    kgsim::broadcast(kgsim::dt_of<T>::v, dst.r_, src.r_, dim, axis, dstShape, srcShape, loc);
}

// Broadcast: the newer spelling of BroadCast, same arguments.
template <class T, int32_t dim, int32_t axis, bool isReuseSource = false>
void Broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
               const uint32_t srcShape[dim], LocalTensor<uint8_t>& sharedTmpBuffer,
               kgsim::Loc loc = kgsim::Loc::current()) {
    BroadCast<T, dim, axis, isReuseSource>(dst, src, dstShape, srcShape, sharedTmpBuffer, loc);
}
template <class T, int32_t dim, int32_t axis, bool isReuseSource = false>
void Broadcast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
               const uint32_t srcShape[dim], kgsim::Loc loc = kgsim::Loc::current()) {
    BroadCast<T, dim, axis, isReuseSource>(dst, src, dstShape, srcShape, loc);
}

// Copy: UB -> UB vector copy with a mask and block/repeat strides (in 32-byte blocks)
struct CopyRepeatParams {
    CopyRepeatParams() {}
    CopyRepeatParams(const uint16_t dstStrideIn, const uint16_t srcStrideIn, const uint16_t dstRepeatSizeIn,
                     const uint16_t srcRepeatSizeIn)
        : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn),
          srcRepeatSize(srcRepeatSizeIn) {}
    uint16_t dstStride = DEFAULT_BLK_STRIDE;
    uint16_t srcStride = DEFAULT_BLK_STRIDE;
    uint16_t dstRepeatSize = DEFAULT_REPEAT_STRIDE;
    uint16_t srcRepeatSize = DEFAULT_REPEAT_STRIDE;
};
// asc-devkit dispatches Copy on the element width and asserts at run time for other widths
#define KGSIM_COPY_T half, bfloat16_t, int16_t, uint16_t, float, int32_t, uint32_t
template <class T, bool isSetMask = true>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask, const uint8_t repeatTime,
          const CopyRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("Copy", T, KGSIM_COPY_T);
    kgsim::vec_op(kgsim::V_COPY, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef, kgsim::Scalar{},
                  kgsim_detail::cont_mask(isSetMask, mask),
                  kgsim::RepArg{repeatTime, repeatParams.dstStride, repeatParams.srcStride, 0,
                                repeatParams.dstRepeatSize, repeatParams.srcRepeatSize, 0}, loc);
}
template <class T, bool isSetMask = true>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[], const uint8_t repeatTime,
          const CopyRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("Copy", T, KGSIM_COPY_T);
    kgsim::vec_op(kgsim::V_COPY, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef, kgsim::Scalar{},
                  kgsim_detail::bit_mask(isSetMask, mask),
                  kgsim::RepArg{repeatTime, repeatParams.dstStride, repeatParams.srcStride, 0,
                                repeatParams.dstRepeatSize, repeatParams.srcRepeatSize, 0}, loc);
}

// the 128-bit compare-mask register: GetCmpMask stores it to UB, SetCmpMask loads it from UB
template <class T>
void GetCmpMask(const LocalTensor<T>& dst, kgsim::Loc loc = kgsim::Loc::current()) { kgsim::cmp_mask(0, dst.r_, loc); }
template <class T>
void SetCmpMask(const LocalTensor<T>& src, kgsim::Loc loc = kgsim::Loc::current()) { kgsim::cmp_mask(1, src.r_, loc); }

// SetPadValue: the value DataCopyPad (GM -> UB) pads with when its isPad is false
template <class T, TPosition pos = TPosition::MAX>
void SetPadValue(T paddingValue) {
    kgsim_detail::pad_value_bits = kgsim_detail::bits_of(paddingValue);
    kgsim_detail::pad_value_gen = kgsim::hot.gen;
    kgsim_detail::pad_value_set = true;
}

}  // namespace AscendC
