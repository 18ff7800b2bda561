// kgsim: the host-side integer helpers of CANN's operator base library (opbase,
// op_common/op_host/util/math_util.h; ops-math's tiling code includes it as "util/math_util.h"):
// Ops::Base::CeilDiv / FloorDiv / CeilAlign / FloorAlign (0 for a zero divisor or alignment),
// IsFloatEqual, LastPow2 (the largest power of two not above n), and the equal splits of a length.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace Ops {
namespace Base {
template <typename T>
auto FloorDiv(T x, T y) -> typename std::enable_if<std::is_integral<T>::value, T>::type {
    return y == 0 ? x : x / y;
}
template <typename T>
auto FloorAlign(T x, T align) -> typename std::enable_if<std::is_integral<T>::value, T>::type {
    return align == 0 ? 0 : x / align * align;
}
template <typename T>
auto CeilDiv(T x, T y) -> typename std::enable_if<std::is_integral<T>::value, T>::type {
    if (y == 0) return x;
    if constexpr (std::is_signed<T>::value) {
        T q = x / y;
        return (x % y != 0 && ((x > 0) == (y > 0))) ? q + 1 : q;
    } else {
        return x / y + (x % y != 0 ? 1 : 0);
    }
}
template <typename T>
auto CeilAlign(T x, T align) -> typename std::enable_if<std::is_integral<T>::value, T>::type {
    return align == 0 ? 0 : CeilDiv(x, align) * align;
}
template <typename T>
auto IsFloatEqual(T a, T b) -> typename std::enable_if<std::is_floating_point<T>::value, bool>::type {
    return std::fabs(a - b) <= std::numeric_limits<T>::epsilon();
}
inline uint64_t LastPow2(uint64_t n) {
    if (n == 0) return 0;
    uint64_t p = 1;
    while (p <= n / 2) p <<= 1;
    return p;
}
}  // namespace Base
}  // namespace Ops
