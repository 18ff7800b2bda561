// kgsim: the bounds-checked copy functions of the Huawei securec library that CANN headers bring in
// (memcpy_s, memmove_s, memset_s); host code of published samples calls them.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#ifndef KGSIM_SECUREC_DEFINED
#define KGSIM_SECUREC_DEFINED
using errno_t = int;
// securec's success code (what memcpy_s and its kin return when they copied)
#ifndef EOK
#define EOK 0
#endif
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
// snprintf_s: at most count characters (and below destMax) are written; -1 when the text was cut
inline int snprintf_s(char* dest, size_t destMax, size_t count, const char* format, ...) {
    if (dest == nullptr || destMax == 0 || format == nullptr) return -1;
    size_t cap = count + 1 < destMax ? count + 1 : destMax;
    va_list ap;
    va_start(ap, format);
    int n = std::vsnprintf(dest, cap, format, ap);
    va_end(ap);
    return n < 0 || size_t(n) >= cap ? -1 : n;
}
inline errno_t memset_s(void* dest, size_t destMax, int c, size_t count) {
    if (dest == nullptr || count > destMax) return EINVAL;
    std::memset(dest, c, count);
    return 0;
}
#endif
