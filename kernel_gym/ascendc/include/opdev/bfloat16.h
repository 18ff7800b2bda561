// kgsim: the host-side bfloat16 type of CANN's operator development kit (opdev/bfloat16.h):
// `op::bfloat16`, the upper two bytes of an IEEE binary32, converted from float with
// round-to-nearest-even (a NaN stays a quiet NaN).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace op {
struct bfloat16 {
    uint16_t value = 0;

    bfloat16() = default;
    template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
    bfloat16(T v) {  // NOLINT: implicit, as CANN's
        float f = static_cast<float>(v);
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof(bits));
        if ((bits & 0x7fffffffu) > 0x7f800000u) {
            value = uint16_t((bits >> 16) | 0x40u);
        } else {
            value = uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
        }
    }
    float ToFloat() const {
        uint32_t bits = uint32_t(value) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        return f;
    }
    operator float() const { return ToFloat(); }
    explicit operator double() const { return ToFloat(); }
};
static_assert(sizeof(bfloat16) == 2, "op::bfloat16 is two bytes, as a device bfloat16_t");
}  // namespace op
