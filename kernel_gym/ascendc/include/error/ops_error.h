// kgsim operator-project shim: CANN's error/ops_error.h, the error reports of the operator
// library's host code (an inner error of a vector or cube op: logged to stderr here).
#pragma once
#include "log/ops_log.h"

#ifndef OPS_REPORT_VECTOR_INNER_ERR
#define OPS_REPORT_VECTOR_INNER_ERR(op_name, ...) KGSIM_OPS_LOG_ERROR(op_name, __VA_ARGS__)
#endif
#ifndef OPS_REPORT_CUBE_INNER_ERR
#define OPS_REPORT_CUBE_INNER_ERR(op_name, ...) KGSIM_OPS_LOG_ERROR(op_name, __VA_ARGS__)
#endif
#ifndef VECTOR_INNER_ERR_REPORT_TILIING
#define VECTOR_INNER_ERR_REPORT_TILIING(op_name, ...) KGSIM_OPS_LOG_ERROR(op_name, __VA_ARGS__)
#endif
#ifndef CUBE_INNER_ERR_REPORT
#define CUBE_INNER_ERR_REPORT(op_name, ...) KGSIM_OPS_LOG_ERROR(op_name, __VA_ARGS__)
#endif
