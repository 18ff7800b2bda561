// kgsim operator-project shim: CANN's base/err_msg.h, the error-message reports (an inner error by
// its error code; a predefined message by its code and its key/value arguments). The NPU build
// sends them to the error manager; here they go to stderr.
#pragma once
#include <cstdio>

#ifndef REPORT_INNER_ERR_MSG
#define REPORT_INNER_ERR_MSG(error_code, ...)                                     \
    do {                                                                          \
        std::fprintf(stderr, "[ERROR] E%s: ", static_cast<const char*>(error_code)); \
        std::fprintf(stderr, __VA_ARGS__);                                        \
        std::fprintf(stderr, "\n");                                               \
    } while (0)
#endif
#ifndef REPORT_PREDEFINED_ERR_MSG
#define REPORT_PREDEFINED_ERR_MSG(error_code, ...) \
    std::fprintf(stderr, "[ERROR] %s\n", static_cast<const char*>(error_code))
#endif
