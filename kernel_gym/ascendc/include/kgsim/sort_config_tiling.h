// kgsim: SortConfig / SortType and GetSortMaxMinTmpSize, the host helper of the SortConfig form of Sort.
// That form (radix / merge sort with SortConfig) is an Ascend 950 API; on Atlas A2 CANN's helper reports
// the SoC unsupported and leaves its outputs unset. The simulated A2 sets them to 0: A2 kernels sort with
// Sort32 / MrgSort / the Concat-Sort-Extract Sort (kgsim/sort.h), which take no separate shared buffer.
// kgsim:partial GetSortMaxMinTmpSize: 0 on the simulated Atlas A2 (an Ascend 950 helper)
#pragma once
#include "graph/tensor.h"
#include "graph/types.h"

namespace AscendC {
enum class SortType { RADIX_SORT, MERGE_SORT };
struct SortConfig {
    SortType type = SortType::RADIX_SORT;
    bool isDescend = false;
    bool hasSrcIndex = false;
    bool hasDstIndex = false;
};
inline void GetSortMaxMinTmpSize(const ge::Shape& srcShape, ge::DataType valueType, ge::DataType indexType,
                                 bool isReuseSource, const SortConfig& config, uint32_t& maxValue, uint32_t& minValue) {
    (void)srcShape, (void)valueType, (void)indexType, (void)isReuseSource, (void)config;
    maxValue = minValue = 0;
}
}  // namespace AscendC
