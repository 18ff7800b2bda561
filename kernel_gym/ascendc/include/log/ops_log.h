// kgsim operator-project shim: the operator library's host-side log and check macros (CANN's
// log/ops_log.h, opdev/op_log.h names). The NPU build writes these to the device log, not to the
// program's output: here errors go to stderr and the debug/info/warning levels print nothing (their
// arguments are not evaluated, as a disabled level's are not). A project defining one of these
// itself keeps its own definition.
#pragma once
#include <cstdio>

#define KGSIM_OPS_LOG_ERROR(op_name, ...)                                                   \
    do {                                                                                    \
        std::fprintf(stderr, "[ERROR] %s: ", static_cast<const char*>(op_name));           \
        std::fprintf(stderr, __VA_ARGS__);                                                  \
        std::fprintf(stderr, "\n");                                                         \
    } while (0)
#define KGSIM_OPS_LOG_OFF(...) \
    do {                       \
    } while (0)

#ifndef OPS_LOG_D
#define OPS_LOG_D(op_name, ...) KGSIM_OPS_LOG_OFF()
#endif
#ifndef OPS_LOG_I
#define OPS_LOG_I(op_name, ...) KGSIM_OPS_LOG_OFF()
#endif
#ifndef OPS_LOG_W
#define OPS_LOG_W(op_name, ...) KGSIM_OPS_LOG_OFF()
#endif
#ifndef OPS_LOG_E
#define OPS_LOG_E(op_name, ...) KGSIM_OPS_LOG_ERROR(op_name, __VA_ARGS__)
#endif
#ifndef OP_LOGD
#define OP_LOGD(op_name, ...) KGSIM_OPS_LOG_OFF()
#endif
#ifndef OP_LOGI
#define OP_LOGI(op_name, ...) KGSIM_OPS_LOG_OFF()
#endif
#ifndef OP_LOGW
#define OP_LOGW(op_name, ...) KGSIM_OPS_LOG_OFF()
#endif
#ifndef OP_LOGE
#define OP_LOGE(op_name, ...) KGSIM_OPS_LOG_ERROR(op_name, __VA_ARGS__)
#endif
#ifndef OP_LOGE_WITHOUT_REPORT
#define OP_LOGE_WITHOUT_REPORT(op_name, ...) KGSIM_OPS_LOG_ERROR(op_name, __VA_ARGS__)
#endif
// a null pointer from the context: log it, then run `expr` (a return)
#ifndef OPS_LOG_E_IF_NULL
#define OPS_LOG_E_IF_NULL(context, ptr, expr)                                    \
    if ((ptr) == nullptr) {                                                      \
        KGSIM_OPS_LOG_ERROR((context)->GetNodeName(), "%s is nullptr", #ptr);    \
        expr;                                                                    \
    }
#endif
// `cond` holds: run `log_func`, then `expr`
#ifndef OPS_CHECK
#define OPS_CHECK(cond, log_func, expr) \
    if (cond) {                         \
        log_func;                       \
        expr;                           \
    }
#endif
#ifndef OP_CHECK
#define OP_CHECK(cond, log_func, expr) OPS_CHECK(cond, log_func, expr)
#endif
#ifndef OP_TILING_CHECK
#define OP_TILING_CHECK(cond, log_func, expr) OPS_CHECK(cond, log_func, expr)
#endif
#ifndef OPS_CHECK_NULL_WITH_CONTEXT
#define OPS_CHECK_NULL_WITH_CONTEXT(context, ptr) OPS_LOG_E_IF_NULL(context, ptr, return ge::GRAPH_FAILED)
#endif
#ifndef OP_CHECK_NULL_WITH_CONTEXT
#define OP_CHECK_NULL_WITH_CONTEXT(context, ptr) OPS_LOG_E_IF_NULL(context, ptr, return ge::GRAPH_FAILED)
#endif
