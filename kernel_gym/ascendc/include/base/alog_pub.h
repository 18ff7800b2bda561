// kgsim operator-project shim: CANN's base/alog_pub.h, the device log the library's own log headers
// (src/common/inc/log) write through: the levels, the debug log type, the OP module id, and
// AlogCheckDebugLevel / AlogRecord. The log level is CANN's default, ERROR: a record of that level
// or above goes to stderr, the others are not written (AlogCheckDebugLevel says 0 for them).
#pragma once
#include <cstdarg>
#include <cstdio>

#define DLOG_DEBUG 0
#define DLOG_INFO 1
#define DLOG_WARN 2
#define DLOG_ERROR 3
#define DLOG_NULL 4
#define DLOG_EVENT 0x10
#define DLOG_TYPE_DEBUG 0
#define DLOG_TYPE_RUN 1
#ifndef MSG_LENGTH
#define MSG_LENGTH 1024
#endif
// What the library's CMake defines for its log headers' users (OPS_UTILS_LOG_SUB_MOD_NAME: "OP_TILING"
// for tiling, "OP_PROTO" for shape inference; the package type "[Custom]" in an open build): a
// default where the build here passes none, so those headers compile; it only labels a record.
#ifndef OPS_UTILS_LOG_SUB_MOD_NAME
#define OPS_UTILS_LOG_SUB_MOD_NAME "OP_TILING"
#endif
#ifndef OPS_UTILS_LOG_PACKAGE_TYPE
#define OPS_UTILS_LOG_PACKAGE_TYPE "[Custom]"
#endif
// the operator module's id (its number is not modelled: the simulator keeps one log)
enum KgsimAlogModule { OP = 64 };

inline int AlogCheckDebugLevel(int moduleId, int level) {
    (void)moduleId;
    return level >= DLOG_ERROR && level != DLOG_NULL ? 1 : 0;
}
inline void AlogRecord(int moduleId, int logType, int level, const char* fmt, ...) {
    (void)moduleId;
    (void)logType;
    if (AlogCheckDebugLevel(moduleId, level) == 0) return;
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
}
