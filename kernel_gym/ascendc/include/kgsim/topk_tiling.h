// kgsim: host-side helpers of TopK (kgsim/topk.h): the Atlas A2 temporary-space sizes of CANN's
// GetTopKMaxMinTmpSize (the runtime checks the same numbers) and TopKTilingFunc.
#pragma once
#include "graph/types.h"
#include "kgsim/topk.h"
#include "tiling/platform/platform_ascendc.h"

namespace AscendC {
namespace kgsim_detail {
inline bool topk_shape_ok(int32_t inner, int32_t outter, TopKMode mode) {
    return inner > 0 && inner % 32 == 0 && outter > 0 && (mode == TopKMode::TOPK_NSMALL ? inner == 32 : inner <= 4096);
}
}  // namespace kgsim_detail
inline bool GetTopKMaxMinTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform, const int32_t inner,
                                 const int32_t outter, const bool isReuseSource, const bool isInitIndex,
                                 enum TopKMode mode, const bool isLargest, const uint32_t dataTypeSize,
                                 uint32_t& maxValue, uint32_t& minValue) {
    (void)ascendcPlatform, (void)isReuseSource, (void)dataTypeSize;
    if (!kgsim_detail::topk_shape_ok(inner, outter, mode)) return false;
    minValue = maxValue =
        ::kgsim::topk_tmp_bytes(inner, outter, isInitIndex, mode == TopKMode::TOPK_NSMALL, isLargest);
    return true;
}
inline bool GetTopKMaxMinTmpSize(const int32_t inner, const int32_t outter, const int32_t k, const bool isReuseSource,
                                 const bool isInitIndex, enum TopKMode mode, const bool isLargest,
                                 ge::DataType dataType, const TopKConfig& config, uint32_t& maxValue,
                                 uint32_t& minValue) {
    (void)k, (void)isReuseSource, (void)dataType, (void)config;
    if (!kgsim_detail::topk_shape_ok(inner, outter, mode)) return false;
    minValue = maxValue =
        ::kgsim::topk_tmp_bytes(inner, outter, isInitIndex, mode == TopKMode::TOPK_NSMALL, isLargest);
    return true;
}
inline bool TopKTilingFunc(const platform_ascendc::PlatformAscendC& ascendcPlatform, const int32_t inner,
                           const int32_t outter, const int32_t k, const uint32_t dataTypeSize, const bool isInitIndex,
                           enum TopKMode mode, const bool isLargest, TopkTiling& topKTiling) {
    (void)ascendcPlatform;
    if (!kgsim_detail::topk_shape_ok(inner, outter, mode) || k < 1 || k > inner || dataTypeSize == 0) return false;
    topKTiling = TopkTiling{};
    topKTiling.tmpLocalSize =
        int32_t(::kgsim::topk_tmp_bytes(inner, outter, isInitIndex, mode == TopKMode::TOPK_NSMALL, isLargest));
    topKTiling.allDataSize = inner * outter;
    topKTiling.innerDataSize = inner * outter * int32_t(8 / dataTypeSize);
    topKTiling.sortRepeat = uint32_t(inner * outter / 32);
    topKTiling.kAlignFourBytes = (k + 7) / 8 * 8;
    topKTiling.kAlignTwoBytes = (k + 15) / 16 * 16;
    return true;
}
}  // namespace AscendC
