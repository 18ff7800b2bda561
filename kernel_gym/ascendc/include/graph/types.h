// kgsim operator-project shim: ge data types and formats.
#pragma once
#include <cstdint>
#include "graph/ge_error_codes.h"
namespace ge {
using char_t = char;  // graph/types.h names the host code's character type
enum DataType : int32_t {
    DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7,
    DT_UINT32 = 8, DT_INT64 = 9, DT_UINT64 = 10, DT_DOUBLE = 11, DT_BOOL = 12, DT_STRING = 13,
    DT_COMPLEX64 = 16, DT_COMPLEX128 = 17, DT_BF16 = 27, DT_INT4 = 29, DT_UNDEFINED = 28,
    // GE's other type codes (the quantised, sub-byte and 8/6/4-bit float types): named, so host code
    // listing them (an aclnn layer's dtype tables for other SoCs) builds; no simulated kernel takes them
    DT_DUAL_SUB_INT8 = 14, DT_DUAL_SUB_UINT8 = 15, DT_QINT8 = 18, DT_QINT16 = 19, DT_QINT32 = 20, DT_QUINT8 = 21,
    DT_QUINT16 = 22, DT_RESOURCE = 23, DT_STRING_REF = 24, DT_DUAL = 25, DT_VARIANT = 26, DT_UINT1 = 30,
    DT_INT2 = 31, DT_UINT2 = 32, DT_COMPLEX32 = 33, DT_HIFLOAT8 = 34, DT_FLOAT8_E5M2 = 35, DT_FLOAT8_E4M3FN = 36,
    DT_FLOAT8_E8M0 = 37, DT_FLOAT6_E3M2 = 38, DT_FLOAT6_E2M3 = 39, DT_FLOAT4_E2M1 = 40, DT_FLOAT4_E1M2 = 41,
    DT_HIFLOAT4 = 42, DT_MAX = 100
};
enum Format : int32_t {
    FORMAT_NCHW = 0, FORMAT_NHWC = 1, FORMAT_ND = 2, FORMAT_NC1HWC0 = 3, FORMAT_FRACTAL_Z = 4,
    FORMAT_NC1HWC0_C04 = 12, FORMAT_FRACTAL_Z_C04 = 13, FORMAT_CHWN = 14, FORMAT_HWCN = 16,
    FORMAT_FRACTAL_NZ = 29, FORMAT_NCDHW = 30, FORMAT_DHWCN = 31, FORMAT_NDHWC = 27, FORMAT_NDC1HWC0 = 32, FORMAT_FRACTAL_Z_3D = 33,
    FORMAT_CN = 34, FORMAT_NC = 35, FORMAT_DHWNC = 36, FORMAT_RESERVED = 40, FORMAT_NCL = 47, FORMAT_MAX = 0xff
};
// an unknown dimension and an unknown rank in a shape
constexpr int64_t UNKNOWN_DIM = -1;
constexpr int64_t UNKNOWN_DIM_NUM = -2;
// the primary format of a format value (its low byte; the higher bytes carry a sub-format and C0)
inline int32_t GetPrimaryFormat(int32_t format) { return format & 0xff; }
inline int GetSizeByDataType(DataType dt) {
    switch (dt) {
        case DT_FLOAT: case DT_INT32: case DT_UINT32: return 4;
        case DT_FLOAT16: case DT_BF16: case DT_INT16: case DT_UINT16: return 2;
        case DT_INT8: case DT_UINT8: case DT_BOOL: return 1;
        case DT_INT64: case DT_UINT64: case DT_DOUBLE: case DT_COMPLEX64: return 8;
        case DT_COMPLEX128: return 16;
        default: return -1;
    }
}
// how an op's output shape is known, for a dynamic-shape (AI CPU) op (GE's UnknowShapeOpType)
enum UnknowShapeOpType { DEPEND_IN_SHAPE = 1, DEPEND_CONST_VALUE = 2, DEPEND_SHAPE_RANGE = 3, DEPEND_COMPUTE = 4 };
}  // namespace ge
