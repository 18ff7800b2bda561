#pragma once
#include <string>
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
    static bool GetDataTypeLength(DataType dt, uint32_t& length) {
        int n = GetSizeByDataType(dt);
        if (n <= 0) return false;
        length = uint32_t(n);
        return true;
    }
};
}  // namespace ge
