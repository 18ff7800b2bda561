// kgsim: host-side sizing helpers of Select (byte mask) and DropOut (kgsim/filter.h), with the sizes
// CANN's helpers return.
#pragma once
#include <algorithm>
#include "graph/tensor.h"

namespace AscendC {
namespace kgsim_detail {
inline uint32_t select_tmp(const ge::Shape& src0, const ge::Shape& src1, const ge::Shape& mask, uint32_t maskTypeSize,
                           bool isReuseMask, bool want_min) {
    bool src0_scalar = src0.GetDims().empty() || src0.GetShapeSize() == 1;
    const ge::Shape& s = src0_scalar ? src1 : src0;
    int64_t n = s.GetShapeSize();
    int64_t src_last = s.GetDims().empty() ? 1 : s.GetDims().back();
    int64_t mask_last = mask.GetDims().empty() ? 1 : mask.GetDims().back();
    uint64_t cal = (want_min && n > 4096) ? 4096 : uint64_t(std::max<int64_t>(n, 0));
    uint32_t need = std::max<uint32_t>(1024, uint32_t((cal + 31) / 32 * 32 * 2 + 512));
    if (mask_last != src_last && !isReuseMask && mask_last > 1) need += uint32_t((n * maskTypeSize + 31) / 32 * 32);
    return need;
}
}  // namespace kgsim_detail
inline uint32_t GetSelectMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape, const uint32_t srcTypeSize,
                                    const ge::Shape& maskShape, const uint32_t maskTypeSize, const bool isReuseMask) {
    (void)srcTypeSize;
    return kgsim_detail::select_tmp(src0Shape, src1Shape, maskShape, maskTypeSize, isReuseMask, true);
}
inline uint32_t GetSelectMaxTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape, const uint32_t srcTypeSize,
                                    const ge::Shape& maskShape, const uint32_t maskTypeSize, const bool isReuseMask) {
    (void)srcTypeSize;
    return kgsim_detail::select_tmp(src0Shape, src1Shape, maskShape, maskTypeSize, isReuseMask, false);
}
inline void GetSelectMaxMinTmpSize(const ge::Shape& src0Shape, const ge::Shape& src1Shape, const uint32_t srcTypeSize,
                                   const ge::Shape& maskShape, const uint32_t maskTypeSize, const bool isReuseMask,
                                   uint32_t& maxValue, uint32_t& minValue) {
    maxValue = GetSelectMaxTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
    minValue = GetSelectMinTmpSize(src0Shape, src1Shape, srcTypeSize, maskShape, maskTypeSize, isReuseMask);
}
// the older names of the three helpers
inline uint32_t GetSelectWithBytesMaskMinTmpSize(const ge::Shape& a, const ge::Shape& b, const uint32_t ts,
                                                 const ge::Shape& m, const uint32_t mts, const bool r) {
    return GetSelectMinTmpSize(a, b, ts, m, mts, r);
}
inline uint32_t GetSelectWithBytesMaskMaxTmpSize(const ge::Shape& a, const ge::Shape& b, const uint32_t ts,
                                                 const ge::Shape& m, const uint32_t mts, const bool r) {
    return GetSelectMaxTmpSize(a, b, ts, m, mts, r);
}
inline void GetSelectWithBytesMaskMaxMinTmpSize(const ge::Shape& a, const ge::Shape& b, const uint32_t ts,
                                                const ge::Shape& m, const uint32_t mts, const bool r, uint32_t& maxValue,
                                                uint32_t& minValue) {
    GetSelectMaxMinTmpSize(a, b, ts, m, mts, r, maxValue, minValue);
}
// DropOut: two 256-byte repeats at least, twice the input in float at most
inline uint32_t GetDropOutMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource) {
    (void)srcShape, (void)typeSize, (void)isReuseSource;
    return 512;
}
inline uint32_t GetDropOutMaxTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource) {
    (void)typeSize, (void)isReuseSource;
    uint64_t n = uint64_t(std::max<int64_t>(srcShape.GetShapeSize(), 0));
    return uint32_t(std::max<uint64_t>(512, 2 * n * 4));
}
inline void GetDropOutMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                    uint32_t& maxValue, uint32_t& minValue) {
    maxValue = GetDropOutMaxTmpSize(srcShape, typeSize, isReuseSource);
    minValue = GetDropOutMinTmpSize(srcShape, typeSize, isReuseSource);
}
}  // namespace AscendC
