// runtime/context.h for the kernel-gym Ascend C simulator: CANN runtime's context calls. The
// simulator's ACL shim (acl/acl.h) has one context, a handle only; nothing here is needed beyond it.
#pragma once
#include "acl/acl.h"

// The context's system parameters (rtCtxGetSysParamOpt): deterministic computing is off, as a
// context's default is.
typedef int32_t rtError_t;
#ifndef RT_ERROR_NONE
#define RT_ERROR_NONE 0
#endif
typedef enum tagRtSysParamOpt {
    SYS_OPT_DETERMINISTIC = 0,
    SYS_OPT_ENABLE_DEBUG_KERNEL = 1,
    SYS_OPT_STRONG_CONSISTENCY = 2,
    SYS_OPT_RESERVED = 3,
} rtSysParamOpt;
inline rtError_t rtCtxGetSysParamOpt(rtSysParamOpt opt, int64_t* value) {
    if (value == nullptr) return 107000;
    *value = 0;
    (void)opt;
    return RT_ERROR_NONE;
}
inline rtError_t rtCtxSetSysParamOpt(rtSysParamOpt, int64_t) { return RT_ERROR_NONE; }
