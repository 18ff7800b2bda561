// kernel_utils.h: the small helper header CANN's built-in operator kernels include from the
// toolkit's include path (integer rounding helpers and a type-equality trait in namespace ops).
#pragma once
#include <type_traits>

#include "kgsim/base.h"

namespace ops {
template <typename T>
__aicore__ inline T Ceil(T a, T b) { return b == 0 ? a : (a + b - 1) / b; }
template <typename T>
__aicore__ inline T CeilDiv(T a, T b) { return b == 0 ? a : (a + b - 1) / b; }
template <typename T>
__aicore__ inline T FloorDiv(T a, T b) { return b == 0 ? a : a / b; }
template <typename T>
__aicore__ inline T CeilAlign(T a, T b) { return b == 0 ? a : (a + b - 1) / b * b; }
template <typename T>
__aicore__ inline T FloorAlign(T a, T b) { return b == 0 ? a : a / b * b; }
template <typename A, typename B>
struct IsSame : std::is_same<A, B> {};
}  // namespace ops
