// kgsim: CANN's operator base library (opbase, op_common/op_host/tiling_base_util.h):
// IsRegbaseSocVersion (whether the SoC is of the register-based vector architecture, Ascend 950;
// never one of the simulated Atlas A2/A3 parts) and EnsureNotScalar (a scalar's shape as [1]).
#pragma once
#include "register/op_impl_registry.h"

namespace Ops {
namespace Base {
inline bool IsRegbaseSocVersion([[maybe_unused]] const gert::TilingParseContext* context) { return false; }
inline bool IsRegbaseSocVersion([[maybe_unused]] const gert::TilingContext* context) { return false; }
inline const gert::Shape& EnsureNotScalar(const gert::Shape& inShape) {
    static const gert::Shape one{1};
    return inShape.IsScalar() ? one : inShape;
}
}  // namespace Base
}  // namespace Ops
