// kgsim: the log and check macros of CANN's operator base library (opbase, installed as
// op_common/log/log.h; ops-math's host code includes it as "log/log.h"): OP_LOGE/W/I/D(op, fmt, ...),
// OP_CHECK_IF(cond, log, return_expr), OP_CHECK_NULL_WITH_CONTEXT(context, ptr), and the
// OP_LOGE_FOR_INVALID_* / OP_LOGE_WITH_INVALID_* family that names what is invalid. The NPU build
// writes them to the device log (DlogRecord); here errors go to stderr, the other levels print
// nothing. The op argument is a context (its node name), a C string or a std::string, and in the
// op-API framework an aclnn error code.
#pragma once
#include <cinttypes>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "exe_graph/runtime/shape.h"
#include "graph/ge_error_codes.h"
#include "graph/types.h"
#include "opdev/kgsim_oplog.h"

#ifndef DLOG_DEBUG
#define DLOG_DEBUG 0
#endif
#ifndef DLOG_INFO
#define DLOG_INFO 1
#endif
#ifndef DLOG_WARN
#define DLOG_WARN 2
#endif
#ifndef DLOG_ERROR
#define DLOG_ERROR 3
#endif

namespace kgsim_opbase {
// the name an opbase macro logs under: a context's node name, a string as it is
inline std::string op_name(const char* s) { return s ? s : "nil"; }
inline std::string op_name(const std::string& s) { return s; }
template <class C, std::enable_if_t<std::is_class_v<C>, int> = 0>
inline std::string op_name(const C* ctx) {
    return ctx == nullptr ? std::string("nil") : op_name(ctx->GetNodeName());
}
template <class C, std::enable_if_t<std::is_class_v<C>, int> = 0>
inline std::string op_name(C* ctx) {
    return op_name(static_cast<const C*>(ctx));
}

inline void append(std::ostringstream& os, const char* s) { os << (s ? s : "(null)"); }
inline void append(std::ostringstream& os, const std::string& s) { os << s; }
template <class T>
inline void append(std::ostringstream& os, const T& v) {
    if constexpr (std::is_enum_v<T>) os << static_cast<int64_t>(v);
    else if constexpr (std::is_arithmetic_v<T> || std::is_pointer_v<T>) os << v;
    else os << "?";
}

// OP_LOGE_FOR_INVALID_DTYPE(op, "x", "DT_INT8", "float16 or float32") and its kin: what is invalid,
// then every argument the macro was given, in order
template <class W, class... A>
inline void log_invalid(const W& who, const char* what, const A&... args) {
    std::ostringstream os;
    os << what << ":";
    ((os << " [", append(os, args), os << "]"), ...);
    ::kgsim_opdev::log_line("ERROR", op_name(who).c_str(), "%s", os.str().c_str());
}
template <class W, class... A>
inline void log_error(const W& who, const char* fmt, A... a) {
    if constexpr (std::is_integral_v<W> || std::is_enum_v<W>) ::kgsim_opdev::log_error(int64_t(who), fmt, a...);
    else ::kgsim_opdev::log_line("ERROR", op_name(who).c_str(), fmt, a...);
}
}  // namespace kgsim_opbase

namespace Ops {
namespace Base {
template <class T>
inline std::string GetOpInfo(const T& who) {
    return ::kgsim_opbase::op_name(who);
}
inline std::string ToString(ge::DataType type) { return std::to_string(static_cast<int64_t>(type)); }
inline std::string ToString(const gert::Shape& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.GetDimNum(); ++i) s += (i ? ", " : "") + std::to_string(shape.GetDim(i));
    return s + "]";
}
}  // namespace Base
}  // namespace Ops

#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif

#define KGSIM_OPBASE_OFF(...) \
    do {                      \
    } while (0)
#ifndef OP_LOGD
#define OP_LOGD(...) KGSIM_OPBASE_OFF()
#endif
#ifndef OP_LOGI
#define OP_LOGI(...) KGSIM_OPBASE_OFF()
#endif
#ifndef OP_LOGW
#define OP_LOGW(...) KGSIM_OPBASE_OFF()
#endif
#ifndef OP_LOGE
#define OP_LOGE(op, ...) ::kgsim_opbase::log_error(op, __VA_ARGS__)
#endif
#ifndef OP_LOGE_WITHOUT_REPORT
#define OP_LOGE_WITHOUT_REPORT(op, ...) ::kgsim_opbase::log_error(op, __VA_ARGS__)
#endif
#define D_OP_LOGD(...) KGSIM_OPBASE_OFF()
#define D_OP_LOGI(...) KGSIM_OPBASE_OFF()
#define D_OP_LOGW(...) KGSIM_OPBASE_OFF()
#define D_OP_LOGE(op, ...) ::kgsim_opbase::log_error(op, __VA_ARGS__)

#define OP_CHECK_IF(condition, log, return_expr) \
    do {                                         \
        if (unlikely(condition)) {               \
            log;                                 \
            return_expr;                         \
        }                                        \
    } while (0)
#define OP_CHECK_NULL_WITH_CONTEXT(context, ptr)                                          \
    do {                                                                                  \
        if (unlikely((ptr) == nullptr)) {                                                 \
            ::kgsim_opbase::log_error(context, "%s is nullptr!", #ptr);                   \
            return ge::GRAPH_FAILED;                                                      \
        }                                                                                 \
    } while (0)

#define KGSIM_OPBASE_INVALID(what, op, ...) ::kgsim_opbase::log_invalid(op, what, ##__VA_ARGS__)
#define OP_LOGE_FOR_FILE_OPEN(op, ...) KGSIM_OPBASE_INVALID("cannot open file", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_FILE_PARSE(op, ...) KGSIM_OPBASE_INVALID("cannot parse file", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_FILE_PATH(op, ...) KGSIM_OPBASE_INVALID("invalid file path", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_ARGUMENT_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid argument", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_CONFIG(op, ...) KGSIM_OPBASE_INVALID("invalid config", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_CONFIG_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid config", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_CONFIGS_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid configs", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_DTYPE(op, ...) KGSIM_OPBASE_INVALID("invalid dtype", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_DTYPE_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid dtype", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_DTYPES_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid dtypes", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_FORMAT(op, ...) KGSIM_OPBASE_INVALID("invalid format", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_FORMAT_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid format", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_FORMATS_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid formats", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_GRAPH_NODE(op, ...) KGSIM_OPBASE_INVALID("invalid graph node", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_LISTSIZE(op, ...) KGSIM_OPBASE_INVALID("invalid list size", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_LISTSIZE_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid list size", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPE(op, ...) KGSIM_OPBASE_INVALID("invalid shape", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPE_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid shape", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPES_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid shapes", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPEDIM(op, ...) KGSIM_OPBASE_INVALID("invalid shape rank", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPEDIM_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid shape rank", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPEDIMS_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid shape ranks", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPESIZE(op, ...) KGSIM_OPBASE_INVALID("invalid shape size", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPESIZE_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid shape size", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_SHAPESIZES_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid shape sizes", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_STRIDE(op, ...) KGSIM_OPBASE_INVALID("invalid stride", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_TENSORNUM(op, ...) KGSIM_OPBASE_INVALID("invalid tensor count", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_TENSORNUMS_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid tensor counts", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_VALUE(op, ...) KGSIM_OPBASE_INVALID("invalid value", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_VALUE_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid value", op, ##__VA_ARGS__)
#define OP_LOGE_FOR_INVALID_VALUES_WITH_REASON(op, ...) KGSIM_OPBASE_INVALID("invalid values", op, ##__VA_ARGS__)
#define OP_LOGE_WITH_INVALID_ATTR(op, ...) KGSIM_OPBASE_INVALID("invalid attribute", op, ##__VA_ARGS__)
#define OP_LOGE_WITH_INVALID_ATTR_SIZE(op, ...) KGSIM_OPBASE_INVALID("invalid attribute size", op, ##__VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT(op, ...) KGSIM_OPBASE_INVALID("missing input", op, ##__VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT_DTYPE(op, ...) KGSIM_OPBASE_INVALID("invalid input dtype", op, ##__VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT_FORMAT(op, ...) KGSIM_OPBASE_INVALID("invalid input format", op, ##__VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT_SHAPE(op, ...) KGSIM_OPBASE_INVALID("invalid input shape", op, ##__VA_ARGS__)
#define OP_LOGE_WITH_INVALID_INPUT_SHAPESIZE(op, ...) KGSIM_OPBASE_INVALID("invalid input shape size", op, ##__VA_ARGS__)
