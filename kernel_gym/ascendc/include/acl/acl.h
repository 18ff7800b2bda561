// acl/acl.h for the kernel-gym Ascend C simulator: the ACL runtime calls that direct-launch
// samples make from their host `main`, on host memory. Device memory is host memory registered
// with the simulator as a GM buffer (so kernels' GM accesses are bounds-checked against it);
// copies of every kind are memcpy; streams, contexts and devices exist only as handles, and
// work is synchronous (a launch has finished when it returns).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include "securec.h"  // CANN host code sees memcpy_s and friends through its headers
#ifndef KGSIM_ACL_TYPES
#define KGSIM_ACL_TYPES
typedef void* aclrtStream;
typedef int aclError;
#endif
typedef void* aclrtContext;
typedef void* aclrtEvent;
// IEEE half as ACL hands it to host code: the 16 bits, with conversions to and from float.
typedef uint16_t aclFloat16;
inline float aclFloat16ToFloat(aclFloat16 value) {
    _Float16 h;
    std::memcpy(&h, &value, sizeof(h));
    return static_cast<float>(h);
}
inline aclFloat16 aclFloatToFloat16(float value) {
    _Float16 h = static_cast<_Float16>(value);
    aclFloat16 bits;
    std::memcpy(&bits, &h, sizeof(bits));
    return bits;
}
#ifndef ACL_SUCCESS
#define ACL_SUCCESS 0
#endif
#ifndef ACL_ERROR_NONE
#define ACL_ERROR_NONE 0  // the older name of ACL_SUCCESS, still used by samples' data_utils.h
#endif
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_BAD_ALLOC 200000

typedef enum aclrtMemMallocPolicy {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
} aclrtMemMallocPolicy;

typedef enum aclrtMemcpyKind {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4,
} aclrtMemcpyKind;

extern "C" void kgsim_register_gm(const char* name, const void* base, unsigned long long size);
extern "C" void* kgsim_gm_alloc(unsigned long long bytes);  // zero-filled GM pages (rt_gm_alloc.cpp)
extern "C" int kgsim_gm_free(void* p);

namespace kgsim_acl {
inline unsigned& device_buffers() {
    static unsigned n = 0;
    return n;
}
inline char* handle() {
    static char h[1];
    return h;
}
}  // namespace kgsim_acl

inline aclError aclInit(const char* /*configPath*/) { return ACL_SUCCESS; }
inline aclError aclFinalize() { return ACL_SUCCESS; }
inline aclError aclrtSetDevice(int32_t /*deviceId*/) { return ACL_SUCCESS; }
inline aclError aclrtResetDevice(int32_t /*deviceId*/) { return ACL_SUCCESS; }
inline aclError aclrtGetDevice(int32_t* deviceId) {
    if (deviceId) *deviceId = 0;
    return ACL_SUCCESS;
}
inline aclError aclrtGetDeviceCount(uint32_t* count) {
    if (count) *count = 1;
    return ACL_SUCCESS;
}
inline aclError aclrtCreateContext(aclrtContext* context, int32_t /*deviceId*/) {
    if (context) *context = kgsim_acl::handle();
    return ACL_SUCCESS;
}
inline aclError aclrtDestroyContext(aclrtContext /*context*/) { return ACL_SUCCESS; }
inline aclError aclrtSetCurrentContext(aclrtContext /*context*/) { return ACL_SUCCESS; }
inline aclError aclrtCreateStream(aclrtStream* stream) {
    if (stream) *stream = kgsim_acl::handle();
    return ACL_SUCCESS;
}
inline aclError aclrtDestroyStream(aclrtStream /*stream*/) { return ACL_SUCCESS; }
// A launch that faulted (a kernel assert, a simulated hardware fault) reports, as on the NPU, an
// AI Core exception at the next synchronisation; aclGetRecentErrMsg then says what it was.
extern "C" int kgsim_stream_error(const char** msg);
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015
namespace kgsim_acl {
inline std::string& recent_error() {
    static std::string s;
    return s;
}
inline aclError synchronize() {
    const char* msg = nullptr;
    if (!kgsim_stream_error(&msg)) return ACL_SUCCESS;
    recent_error() = msg ? msg : "AI Core exception";
    return ACL_ERROR_RT_AICORE_EXCEPTION;
}
}  // namespace kgsim_acl
inline aclError aclrtSynchronizeStream(aclrtStream) { return kgsim_acl::synchronize(); }
inline aclError aclrtSynchronizeDevice() { return kgsim_acl::synchronize(); }
// error queries: a fault of a launch ends the run in the simulator, so none is left to report
typedef enum aclrtLastErrLevel { ACL_RT_THREAD_LEVEL = 0 } aclrtLastErrLevel;
inline aclError aclrtGetLastError(aclrtLastErrLevel) { return ACL_SUCCESS; }
inline aclError aclrtPeekAtLastError(aclrtLastErrLevel) { return ACL_SUCCESS; }

// Device memory: host memory, 512-byte aligned like the NPU allocator, registered as a GM buffer.
namespace kgsim_acl {
// The ACL docs: aclrtMalloc gives ALIGN_UP(size, 32) + 32 bytes, aclrtMallocAlign32 ALIGN_UP(size, 32);
// a kernel access inside that allocation does not fault on the NPU, so that is the GM buffer.
inline aclError device_alloc(void** devPtr, size_t size, size_t usable, const char* api) {
    if (devPtr == nullptr || size == 0) return ACL_ERROR_INVALID_PARAM;
    // a new process's device pages come cleared by the driver (kgsim_gm_alloc's pages are zero):
    // samples that copy a shorter input file into a larger buffer read zeros past it (asc-devkit reduce)
    void* p = kgsim_gm_alloc((usable + 511) / 512 * 512);
    if (p == nullptr) return ACL_ERROR_BAD_ALLOC;
    char name[40];
    std::snprintf(name, sizeof(name), "%s#%u", api, device_buffers()++);
    kgsim_register_gm(name, p, usable);
    *devPtr = p;
    return ACL_SUCCESS;
}
}  // namespace kgsim_acl
inline aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy /*policy*/ = ACL_MEM_MALLOC_HUGE_FIRST) {
    return kgsim_acl::device_alloc(devPtr, size, (size + 31) / 32 * 32 + 32, "aclrtMalloc");
}
inline aclError aclrtMallocAlign32(void** devPtr, size_t size,
                                   aclrtMemMallocPolicy /*policy*/ = ACL_MEM_MALLOC_HUGE_FIRST) {
    return kgsim_acl::device_alloc(devPtr, size, (size + 31) / 32 * 32, "aclrtMallocAlign32");
}
inline aclError aclrtFree(void* devPtr) {
    if (devPtr == nullptr) return ACL_ERROR_INVALID_PARAM;
    return kgsim_gm_free(devPtr) == 0 ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;  // not from aclrtMalloc
}
inline aclError aclrtMallocHost(void** hostPtr, size_t size) {
    if (hostPtr == nullptr || size == 0) return ACL_ERROR_INVALID_PARAM;
    // pinned host memory is fresh pages from the OS, which come zeroed: samples that read a
    // shorter input file into a larger buffer see zeros past it, not recycled heap bytes
    *hostPtr = std::calloc(1, size);
    return *hostPtr ? ACL_SUCCESS : ACL_ERROR_BAD_ALLOC;
}
inline aclError aclrtFreeHost(void* hostPtr) {
    std::free(hostPtr);
    return ACL_SUCCESS;
}
inline aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind /*kind*/) {
    if (count > destMax || (count && (dst == nullptr || src == nullptr))) return ACL_ERROR_INVALID_PARAM;
    std::memmove(dst, src, count);
    return ACL_SUCCESS;
}
inline aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                                 aclrtStream /*stream*/) {
    return aclrtMemcpy(dst, destMax, src, count, kind);
}
inline aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
    if (count > maxCount || (count && devPtr == nullptr)) return ACL_ERROR_INVALID_PARAM;
    std::memset(devPtr, value, count);
    return ACL_SUCCESS;
}
inline const char* aclGetRecentErrMsg() { return kgsim_acl::recent_error().c_str(); }
