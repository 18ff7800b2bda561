// kgsim: host-side sizing helpers of the quantization APIs (kgsim/quantization.h), with the sizes
// CANN's helpers return: AscendQuant needs two 256-byte repeats at least and twice the input at
// most; AscendDequant a float row (or the whole input) plus the float deqScale and one repeat;
// AscendAntiQuant nothing for half output, float staging of scale/offset and input for bfloat16.
#pragma once
#include <algorithm>
#include <vector>
#include "graph/tensor.h"
#include "graph/types.h"

namespace AscendC {
inline void GetAscendQuantMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                        uint32_t& minValue) {
    (void)typeSize;
    uint64_t n = srcShape.GetShapeSize() > 0 ? uint64_t(srcShape.GetShapeSize()) : 0;
    maxValue = uint32_t((std::max<uint64_t>(n * 2, 512) + 31) / 32 * 32);
    minValue = 512;
}
inline void GetAscendQuantTmpBufferFactorSize(uint32_t& maxLiveNodeCount, uint32_t& extraBuf) {
    maxLiveNodeCount = 2;
    extraBuf = 0;
}
inline void GetAscendDequantMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                          uint32_t& minValue) {
    (void)typeSize;
    std::vector<int64_t> dims = srcShape.GetDims();
    uint32_t outer = dims.size() == 2 ? uint32_t(dims[0]) : 1;
    uint32_t inner = dims.empty() ? 0 : uint32_t(dims.back());
    uint32_t scale = inner + 8;
    maxValue = (64 + outer * inner + scale) * 4;
    minValue = (64 + inner + scale) * 4;
}
inline void GetAscendDequantTmpBufferFactorSize(const ge::Shape& srcShape, uint32_t& maxLiveNodeCount,
                                                uint32_t& extraBuf) {
    std::vector<int64_t> dims = srcShape.GetDims();
    extraBuf = 8 + 64;
    if (dims.size() == 2) {
        extraBuf += uint32_t(dims[1]);
        maxLiveNodeCount = 1;
    } else if (dims.size() == 1) {
        maxLiveNodeCount = 2;
    } else {
        extraBuf = maxLiveNodeCount = 0;
    }
}
namespace kgsim_detail {
inline uint32_t antiquant_tmp(const ge::Shape& srcShape, const ge::Shape& scaleShape, bool isTranspose,
                              ge::DataType outputDataType, bool want_max) {
    if (outputDataType == ge::DT_FLOAT16) return 0;  // the half path needs no temporary space
    uint64_t scale = std::max<int64_t>(scaleShape.GetShapeSize(), 0), src = std::max<int64_t>(srcShape.GetShapeSize(), 0);
    std::vector<int64_t> dims = srcShape.GetDims();
    uint32_t k = dims.empty() ? 0 : uint32_t(dims[0]);
    bool per_channel = scale != 1;
    if (!per_channel) return want_max ? uint32_t(src * 4) : 1024;
    if (isTranspose) return uint32_t(80 * scale * 4);
    return uint32_t(scale * 2 * 4 + 64 * uint64_t(k) * 4);
}
}  // namespace kgsim_detail
inline uint32_t GetAscendAntiQuantMaxTmpSize(const ge::Shape& srcShape, const ge::Shape& scaleShape, bool isTranspose,
                                             ge::DataType inputDataType, ge::DataType outputDataType) {
    (void)inputDataType;
    return kgsim_detail::antiquant_tmp(srcShape, scaleShape, isTranspose, outputDataType, true);
}
inline uint32_t GetAscendAntiQuantMinTmpSize(const ge::Shape& srcShape, const ge::Shape& scaleShape, bool isTranspose,
                                             ge::DataType inputDataType, ge::DataType outputDataType) {
    (void)inputDataType;
    return kgsim_detail::antiquant_tmp(srcShape, scaleShape, isTranspose, outputDataType, false);
}
inline void GetAscendAntiQuantMaxMinTmpSize(const ge::Shape& srcShape, const ge::Shape& scaleShape, bool isTranspose,
                                            ge::DataType inputDataType, ge::DataType outputDataType,
                                            uint32_t& maxValue, uint32_t& minValue) {
    maxValue = GetAscendAntiQuantMaxTmpSize(srcShape, scaleShape, isTranspose, inputDataType, outputDataType);
    minValue = GetAscendAntiQuantMinTmpSize(srcShape, scaleShape, isTranspose, inputDataType, outputDataType);
}
inline void GetAscendAntiQuantTmpBufferFactorSize(const ge::Shape& srcShape, const ge::Shape& scaleShape,
                                                  bool isTranspose, ge::DataType inputDataType,
                                                  ge::DataType outputDataType, uint32_t& maxLiveNodeCount,
                                                  uint32_t& extraBuf) {
    (void)inputDataType;
    maxLiveNodeCount = extraBuf = 0;
    if (outputDataType == ge::DT_FLOAT16) return;
    uint64_t scale = std::max<int64_t>(scaleShape.GetShapeSize(), 0);
    std::vector<int64_t> dims = srcShape.GetDims();
    if (scale == 1) maxLiveNodeCount = 1;
    else if (isTranspose) extraBuf = uint32_t(80 * scale * 4);
    else extraBuf = uint32_t(scale * 2 * 4 + 64 * uint64_t(dims.empty() ? 0 : dims[0]) * 4);
}
}  // namespace AscendC
