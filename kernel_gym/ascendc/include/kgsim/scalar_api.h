// The Ascend C scalar API (CANN docs, "标量计算"): bit counting on 64-bit values and scalar type
// conversion on the scalar unit. Pure functions of their arguments, so they are header-only and
// charge no vector time.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kgsim/base.h"

namespace AscendC {

// bfloat16_t <-> float: bf16 is the high half of a float, so widening is exact; narrowing rounds
// to nearest even (as the vector Cast's CAST_RINT / CAST_NONE).
__aicore__ inline float ToFloat(const bfloat16_t& bVal) { return float(bVal); }
__aicore__ inline bfloat16_t ToBfloat16(const float& fVal) { return bfloat16_t(fVal); }

// The number of bits equal to countValue (0 or 1) in valueIn.
template <int countValue>
__aicore__ inline int64_t GetBitCount(uint64_t valueIn) {
    static_assert(countValue == 0 || countValue == 1, "GetBitCount: countValue must be 0 or 1");
    int64_t ones = std::popcount(valueIn);
    return countValue == 1 ? ones : 64 - ones;
}
template <int countValue>
__aicore__ inline int64_t ScalarGetCountOfValue(uint64_t valueIn) { return GetBitCount<countValue>(valueIn); }

// Leading zero bits of a 64-bit value (64 for 0).
__aicore__ inline int64_t CountLeadingZero(uint64_t valueIn) { return std::countl_zero(valueIn); }
__aicore__ inline int64_t ScalarCountLeadingZero(uint64_t valueIn) { return CountLeadingZero(valueIn); }

// Consecutive bits below the sign bit equal to it; -1 for 0 and -1 (every bit is the sign).
__aicore__ inline int64_t CountBitsCntSameAsSignBit(int64_t valueIn) {
    if (valueIn == 0 || valueIn == -1) return -1;
    uint64_t u = static_cast<uint64_t>(valueIn);
    return int64_t(std::countl_zero(valueIn < 0 ? ~u : u)) - 1;
}

// The position (from bit 0) of the first bit equal to countValue; -1 when there is none.
template <int countValue>
__aicore__ inline int64_t GetSFFValue(uint64_t valueIn) {
    static_assert(countValue == 0 || countValue == 1, "GetSFFValue: countValue must be 0 or 1");
    uint64_t v = countValue == 1 ? valueIn : ~valueIn;
    return v == 0 ? -1 : int64_t(std::countr_zero(v));
}
template <int countValue>
__aicore__ inline int64_t ScalarGetSFFValue(uint64_t valueIn) { return GetSFFValue<countValue>(valueIn); }

namespace kgsim_scalar {
// float -> half with round-to-odd: truncate toward zero, then set the last mantissa bit when the
// value was not exact (the docs' only round mode for f32 -> f16 here).
inline half to_half_odd(float f) {
    half h = half(f);
    if (f != f || float(h) == f) return h;
    uint16_t u = std::bit_cast<uint16_t>(h);
    if (std::isinf(float(h))) return std::bit_cast<half>(uint16_t((u & 0x8000u) | 0x7bffu));  // largest finite
    if (std::fabs(float(h)) > std::fabs(f)) --u;  // one step toward zero (sign-magnitude)
    return std::bit_cast<half>(uint16_t(u | 1u));
}
inline int32_t to_int32(float f, RoundMode mode) {
    double x = f;
    switch (mode) {
        case RoundMode::CAST_FLOOR: x = std::floor(x); break;
        case RoundMode::CAST_CEIL: x = std::ceil(x); break;
        case RoundMode::CAST_ROUND: x = std::round(x); break;  // halves away from zero
        case RoundMode::CAST_TRUNC: x = std::trunc(x); break;
        default: x = std::nearbyint(x); break;                  // CAST_RINT: halves to even
    }
    if (x != x) return 0;
    if (x <= double(std::numeric_limits<int32_t>::min())) return std::numeric_limits<int32_t>::min();
    if (x >= double(std::numeric_limits<int32_t>::max())) return std::numeric_limits<int32_t>::max();
    return int32_t(x);
}
}  // namespace kgsim_scalar

// Scalar type conversion: float -> half (CAST_ODD) and float -> int32_t (CAST_ROUND, CAST_CEIL,
// CAST_FLOOR, CAST_RINT), the pairs and modes the docs list. Newer CANN names it Cast<T, U, mode>.
template <typename T, typename U, RoundMode roundMode>
__aicore__ inline U ScalarCast(T valueIn) {
    static_assert(std::is_same_v<T, float> && (std::is_same_v<U, half> || std::is_same_v<U, int32_t>),
                  "[kgsim:unsupported_dtype] ScalarCast converts float to half or int32_t only");
    if constexpr (std::is_same_v<U, half>) {
        static_assert(roundMode == RoundMode::CAST_ODD, "ScalarCast float -> half supports RoundMode::CAST_ODD only");
        return kgsim_scalar::to_half_odd(valueIn);
    } else {
        static_assert(roundMode == RoundMode::CAST_ROUND || roundMode == RoundMode::CAST_CEIL ||
                          roundMode == RoundMode::CAST_FLOOR || roundMode == RoundMode::CAST_RINT,
                      "ScalarCast float -> int32_t supports CAST_ROUND, CAST_CEIL, CAST_FLOOR and CAST_RINT");
        return kgsim_scalar::to_int32(valueIn, roundMode);
    }
}
template <typename T, typename U, RoundMode roundMode>
__aicore__ inline U Cast(T valueIn) {
    return ScalarCast<T, U, roundMode>(valueIn);
}

}  // namespace AscendC
