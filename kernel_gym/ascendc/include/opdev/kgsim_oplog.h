// kgsim: the error log of CANN's op-API framework and of op host code: OP_LOGE(code or op name, fmt, ...)
// to stderr (the NPU build writes it to the device log). The first argument is an aclnn error code
// in the opdev framework (OP_LOGE(ACLNN_ERR_PARAM_INVALID, ...)) and an op's name in tiling code.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace kgsim_opdev {
template <class... A>
inline void log_line(const char* level, const char* where, const char* fmt, A... a) {
    std::fprintf(stderr, "[%s] %s: ", level, where);
    if constexpr (sizeof...(A) == 0) std::fputs(fmt, stderr);
    else {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat"
        std::fprintf(stderr, fmt, a...);
#pragma GCC diagnostic pop
    }
    std::fputc('\n', stderr);
}
template <class... A>
inline void log_error(int64_t code, const char* fmt, A... a) {
    std::string where = "aclnn error " + std::to_string(code);
    log_line("ERROR", where.c_str(), fmt, a...);
}
template <class... A>
inline void log_error(const char* name, const char* fmt, A... a) { log_line("ERROR", name ? name : "", fmt, a...); }
template <class... A>
inline void log_error(const std::string& name, const char* fmt, A... a) { log_line("ERROR", name.c_str(), fmt, a...); }
}  // namespace kgsim_opdev

