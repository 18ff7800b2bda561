// kgsim operator-project support, kernel side: GET_TILING_DATA & co. The generated translation
// unit defines `KgsimOpTilingData` (the op's tiling class) before including this header.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kgsim_gen_op {
inline uint64_t g_tiling_key = 0;
template <class T>
inline void load_tiling(T* dst, const uint8_t* tiling) {
    std::memcpy(static_cast<void*>(dst), tiling, sizeof(T));
}
}  // namespace kgsim_gen_op

#define GET_TILING_DATA(var, tiling) KgsimOpTilingData var; ::kgsim_gen_op::load_tiling(&var, (const uint8_t*)(tiling))
#define GET_TILING_DATA_WITH_STRUCT(type, var, tiling) type var; ::kgsim_gen_op::load_tiling(&var, (const uint8_t*)(tiling))
#define GET_TILING_DATA_PTR_WITH_STRUCT(type, var, tiling) const type* var = reinterpret_cast<const type*>(tiling)
#define GET_TILING_DATA_MEMBER(type, member, var, tiling)                                          \
    decltype(type::member) var;                                                                    \
    std::memcpy(&var, (const uint8_t*)(tiling) + offsetof(type, member), sizeof(var))
#define TILING_KEY_IS(k) (::kgsim_gen_op::g_tiling_key == (uint64_t)(k))
// the tiling struct GET_TILING_DATA reads in this kernel (a plain C++ struct filled by the host
// through GetTilingData<T>()): a block-scope alias shadowing the generated one
#define REGISTER_TILING_DEFAULT(t) using KgsimOpTilingData = t
#define REGISTER_TILING_FOR_TILINGKEY(...)
