// kgsim: the bounds-checked copy functions of the Huawei securec library that CANN headers bring in
// (memcpy_s, memmove_s, memset_s); host code of published samples calls them.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstring>

#ifndef KGSIM_SECUREC_DEFINED
#define KGSIM_SECUREC_DEFINED
using errno_t = int;
// Like securec: a count larger than destMax (or a null pointer) is an error and copies nothing.
inline errno_t memcpy_s(void* dest, size_t destMax, const void* src, size_t count) {
    if (dest == nullptr || src == nullptr || count > destMax) return EINVAL;
    std::memcpy(dest, src, count);
    return 0;
}
inline errno_t memmove_s(void* dest, size_t destMax, const void* src, size_t count) {
    if (dest == nullptr || src == nullptr || count > destMax) return EINVAL;
    std::memmove(dest, src, count);
    return 0;
}
inline errno_t memset_s(void* dest, size_t destMax, int c, size_t count) {
    if (dest == nullptr || count > destMax) return EINVAL;
    std::memset(dest, c, count);
    return 0;
}
#endif
