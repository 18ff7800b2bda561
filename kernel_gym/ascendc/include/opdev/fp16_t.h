// kgsim: the host-side half type of CANN's operator development kit (opdev/fp16_t.h), which host
// programs use to fill and check fp16 buffers: `op::fp16_t`, two bytes holding an IEEE binary16,
// converted from and to the arithmetic types with round-to-nearest-even.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace op {
struct fp16_t {
    uint16_t val = 0;

    fp16_t() = default;
    template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
    fp16_t(T v) {  // NOLINT: implicit, as CANN's (`fp16_t x = 1.5f;`)
        _Float16 h = static_cast<_Float16>(static_cast<float>(v));
        std::memcpy(&val, &h, sizeof(val));
    }
    float ToFloat() const {
        _Float16 h;
        std::memcpy(&h, &val, sizeof(val));
        return static_cast<float>(h);
    }
    operator float() const { return ToFloat(); }
    explicit operator double() const { return ToFloat(); }
    explicit operator int32_t() const { return static_cast<int32_t>(ToFloat()); }
    fp16_t& operator+=(float o) { return *this = fp16_t(ToFloat() + o); }
    fp16_t& operator-=(float o) { return *this = fp16_t(ToFloat() - o); }
    fp16_t& operator*=(float o) { return *this = fp16_t(ToFloat() * o); }
    fp16_t& operator/=(float o) { return *this = fp16_t(ToFloat() / o); }
};
static_assert(sizeof(fp16_t) == 2, "op::fp16_t is two bytes, as a device half");
}  // namespace op
