// kgsim: host-side helpers of Arange (kgsim/index.h): it needs no temporary space.
#pragma once
#include <cstdint>

namespace AscendC {
inline void GetArangeMaxMinTmpSize(uint32_t& maxValue, uint32_t& minValue) { maxValue = minValue = 0; }
inline void GetArithProgressionMaxMinTmpSize(uint32_t& maxValue, uint32_t& minValue) { maxValue = minValue = 0; }
}  // namespace AscendC
