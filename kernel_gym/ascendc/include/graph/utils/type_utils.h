#pragma once
#include <string>
#include "graph/operator.h"
#include "graph/types.h"

namespace ge {
// ge::TypeUtils: names and sizes of ge::DataType, for host tiling code.
class TypeUtils {
public:
    static std::string DataTypeToSerialString(DataType dt) {
        switch (dt) {
            case DT_FLOAT: return "DT_FLOAT";
            case DT_FLOAT16: return "DT_FLOAT16";
            case DT_BF16: return "DT_BF16";
            case DT_INT8: return "DT_INT8";
            case DT_UINT8: return "DT_UINT8";
            case DT_INT16: return "DT_INT16";
            case DT_UINT16: return "DT_UINT16";
            case DT_INT32: return "DT_INT32";
            case DT_UINT32: return "DT_UINT32";
            case DT_INT64: return "DT_INT64";
            case DT_UINT64: return "DT_UINT64";
            case DT_DOUBLE: return "DT_DOUBLE";
            case DT_BOOL: return "DT_BOOL";
            case DT_INT4: return "DT_INT4";
            default: return "DT_UNDEFINED";
        }
    }
    static DataType SerialStringToDataType(const std::string& s) {
        for (int i = 0; i < int(DT_MAX); ++i)
            if (DataTypeToSerialString(DataType(i)) == s) return DataType(i);
        return DT_UNDEFINED;
    }
    // a format's name without the FORMAT_ prefix ("ND", "FRACTAL_NZ"); one it does not name is "RESERVED"
    static std::string FormatToSerialString(Format f) {
        switch (int32_t(f)) {
            case FORMAT_NCHW: return "NCHW";
            case FORMAT_NHWC: return "NHWC";
            case FORMAT_ND: return "ND";
            case FORMAT_NC1HWC0: return "NC1HWC0";
            case FORMAT_FRACTAL_Z: return "FRACTAL_Z";
            case FORMAT_NC1HWC0_C04: return "NC1HWC0_C04";
            case FORMAT_FRACTAL_Z_C04: return "FRACTAL_Z_C04";
            case FORMAT_CHWN: return "CHWN";
            case FORMAT_HWCN: return "HWCN";
            case FORMAT_NDHWC: return "NDHWC";
            case FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
            case FORMAT_NCDHW: return "NCDHW";
            case FORMAT_NDC1HWC0: return "NDC1HWC0";
            case FORMAT_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
            case FORMAT_NC: return "NC";
            case FORMAT_NCL: return "NCL";
            default: return "RESERVED";
        }
    }
    static AscendString DataTypeToAscendString(DataType dt) { return AscendString(DataTypeToSerialString(dt).c_str()); }
    static AscendString FormatToAscendString(Format f) { return AscendString(FormatToSerialString(f).c_str()); }
    static bool GetDataTypeLength(DataType dt, uint32_t& length) {
        int n = GetSizeByDataType(dt);
        if (n <= 0) return false;
        length = uint32_t(n);
        return true;
    }
};
}  // namespace ge
