// kgsim: the platform queries of CANN's operator base library (opbase,
// op_common/op_host/util/platform_util.h; ops-math includes it as "util/platform_util.h"), taking a
// TilingContext or TilingParseContext: the vector and cube core counts, the UB size and the library
// API's workspace size from the context's platform info (platform_ascendc::PlatformAscendC); the
// UB block (32 bytes), vector register (256), cache line (256) and SIMT sizes as constants.
#pragma once
#include <cstdint>

#include "exe_graph/runtime/tiling_context.h"
#include "exe_graph/runtime/tiling_parse_context.h"
#include "log/log.h"
#include "tiling/platform/platform_ascendc.h"

namespace Ops {
namespace Base {
template <typename T>
uint32_t GetAivCoreNum(const T* context) {
    if (context == nullptr || context->GetPlatformInfo() == nullptr) return 0;
    return platform_ascendc::PlatformAscendC(context->GetPlatformInfo()).GetCoreNumAiv();
}
template <typename T>
uint32_t GetAicCoreNum(const T* context) {
    if (context == nullptr || context->GetPlatformInfo() == nullptr) return 0;
    return platform_ascendc::PlatformAscendC(context->GetPlatformInfo()).GetCoreNumAic();
}
template <typename T>
uint32_t GetUbSize(const T* context) {
    if (context == nullptr || context->GetPlatformInfo() == nullptr) return 0;
    uint64_t ub = 0;
    platform_ascendc::PlatformAscendC(context->GetPlatformInfo()).GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    return static_cast<uint32_t>(ub);
}
template <typename T>
uint32_t GetWorkspaceSize(const T* context) {
    if (context == nullptr || context->GetPlatformInfo() == nullptr) return 0;
    return platform_ascendc::PlatformAscendC(context->GetPlatformInfo()).GetLibApiWorkSpaceSize();
}
template <typename T>
uint32_t GetUbBlockSize([[maybe_unused]] const T* context) { return 32U; }
template <typename T>
uint32_t GetVRegSize([[maybe_unused]] const T* context) { return 256U; }
template <typename T>
uint32_t GetSimtMaxThreadNum([[maybe_unused]] const T* context) { return 2048U; }
template <typename T>
uint32_t GetSimtMaxDCacheSize([[maybe_unused]] const T* context) { return 128U * 1024U; }
template <typename T>
uint32_t GetCacheLineSize([[maybe_unused]] const T* context) { return 256U; }
template <typename T>
uint32_t GetSectorCacheLineSize(const T* context) { return GetCacheLineSize(context) / 2U; }
template <typename T>
uint32_t GetNddmaDcacheSize([[maybe_unused]] const T* context) { return 8U * 1024U; }
}  // namespace Base
}  // namespace Ops
