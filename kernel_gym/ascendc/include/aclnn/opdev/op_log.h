// kgsim operator-project shim: CANN's aclnn/opdev/op_log.h, the op log macros (OP_LOGD/I/W/E and
// OP_LOGE_WITHOUT_REPORT). The NPU build writes them to the device log, not the program's output:
// here errors go to stderr and the debug/info/warning levels print nothing (their arguments are not
// evaluated, as a disabled level's are not). A project defining one of these itself keeps its own.
#pragma once
#include <cstdio>

#include "opdev/kgsim_oplog.h"

// (the first argument: an op's name, or an aclnn error code as CANN's op-API framework passes it)
#define KGSIM_OP_LOG_ERROR(op_name, ...) ::kgsim_opdev::log_error(op_name, __VA_ARGS__)
#define KGSIM_OP_LOG_OFF(...) \
    do {                      \
    } while (0)

#ifndef OP_LOGD
#define OP_LOGD(op_name, ...) KGSIM_OP_LOG_OFF()
#endif
#ifndef OP_LOGI
#define OP_LOGI(op_name, ...) KGSIM_OP_LOG_OFF()
#endif
#ifndef OP_LOGW
#define OP_LOGW(op_name, ...) KGSIM_OP_LOG_OFF()
#endif
#ifndef OP_LOGE
#define OP_LOGE(op_name, ...) KGSIM_OP_LOG_ERROR(op_name, __VA_ARGS__)
#endif
#ifndef OP_LOGE_WITHOUT_REPORT
#define OP_LOGE_WITHOUT_REPORT(op_name, ...) KGSIM_OP_LOG_ERROR(op_name, __VA_ARGS__)
#endif
