// data_utils.h for direct-launch samples that do not ship their own: binary file I/O and the
// CHECK_ACL / INFO_LOG / ERROR_LOG macros samples use. A sample's own data_utils.h, beside its
// sources, takes precedence (quoted includes search the including file's directory first).
#pragma once
#include <cstdio>
#include <fstream>
#include <string>
#include "acl/acl.h"

#ifndef INFO_LOG
#define INFO_LOG(fmt, ...) std::fprintf(stdout, "[INFO]  " fmt "\n", ##__VA_ARGS__)
#endif
#ifndef WARN_LOG
#define WARN_LOG(fmt, ...) std::fprintf(stdout, "[WARN]  " fmt "\n", ##__VA_ARGS__)
#endif
#ifndef ERROR_LOG
#define ERROR_LOG(fmt, ...) std::fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)
#endif
#ifndef CHECK_ACL
#define CHECK_ACL(x)                                                                   \
    do {                                                                               \
        aclError __ret = (x);                                                          \
        if (__ret != ACL_SUCCESS) {                                                    \
            std::fprintf(stderr, "%s:%d aclError:%d\n", __FILE__, __LINE__, __ret);    \
        }                                                                              \
    } while (0)
#endif

inline bool ReadFile(const std::string& filePath, size_t& fileSize, void* buffer, size_t bufferSize) {
    std::ifstream in(filePath, std::ios::binary | std::ios::ate);
    if (!in) {
        ERROR_LOG("cannot open %s", filePath.c_str());
        return false;
    }
    size_t size = static_cast<size_t>(in.tellg());
    if (size > bufferSize) {
        ERROR_LOG("%s is %zu bytes, more than the buffer's %zu", filePath.c_str(), size, bufferSize);
        return false;
    }
    in.seekg(0);
    in.read(static_cast<char*>(buffer), static_cast<std::streamsize>(size));
    fileSize = size;
    return static_cast<bool>(in);
}

inline bool WriteFile(const std::string& filePath, const void* buffer, size_t size) {
    std::ofstream out(filePath, std::ios::binary | std::ios::trunc);
    if (!out) {
        ERROR_LOG("cannot write %s", filePath.c_str());
        return false;
    }
    out.write(static_cast<const char*>(buffer), static_cast<std::streamsize>(size));
    return static_cast<bool>(out);
}
