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
#include <deque>
#include <string>
#include "kgsim/kernel_registry.h"
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
// Data types and formats (acl_base.h), with the values the ACL reference gives them.
typedef enum {
    ACL_DT_UNDEFINED = -1, ACL_FLOAT = 0, ACL_FLOAT16 = 1, ACL_INT8 = 2, ACL_INT32 = 3, ACL_UINT8 = 4,
    ACL_INT16 = 6, ACL_UINT16 = 7, ACL_UINT32 = 8, ACL_INT64 = 9, ACL_UINT64 = 10, ACL_DOUBLE = 11, ACL_BOOL = 12,
    ACL_STRING = 13, ACL_COMPLEX64 = 16, ACL_COMPLEX128 = 17, ACL_BF16 = 27, ACL_INT4 = 29, ACL_UINT1 = 30,
    ACL_COMPLEX32 = 33,
} aclDataType;
typedef enum {
    ACL_FORMAT_UNDEFINED = -1, ACL_FORMAT_NCHW = 0, ACL_FORMAT_NHWC = 1, ACL_FORMAT_ND = 2, ACL_FORMAT_NC1HWC0 = 3,
    ACL_FORMAT_FRACTAL_Z = 4, ACL_FORMAT_NC1HWC0_C04 = 12, ACL_FORMAT_HWCN = 16, ACL_FORMAT_NDHWC = 27,
    ACL_FORMAT_FRACTAL_NZ = 29, ACL_FORMAT_NCDHW = 30, ACL_FORMAT_NDC1HWC0 = 32, ACL_FRACTAL_Z_3D = 33,
    ACL_FORMAT_NC = 35, ACL_FORMAT_NCL = 47,
} aclFormat;
inline size_t aclDataTypeSize(aclDataType t) {
    switch (t) {
        case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: case ACL_COMPLEX32: return 4;
        case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
        case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
        case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64: return 8;
        case ACL_COMPLEX128: return 16;
        default: return 0;
    }
}
#ifndef ACL_SUCCESS
#define ACL_SUCCESS 0
#endif
#ifndef ACL_ERROR_NONE
#define ACL_ERROR_NONE 0  // the older name of ACL_SUCCESS, still used by samples' data_utils.h
#endif
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_BAD_ALLOC 200000
#define ACL_ERROR_INTERNAL_ERROR 500000
#define ACL_ERROR_FAILURE 500001

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
// The GM address of the hardware cross-core synchronisation area, which a host passes to a mixed
// kernel (SetSyncBaseAddr). The simulator's cross-core flags need no such area: a non-null
// placeholder address, which SetSyncBaseAddr accepts and ignores.
inline aclError aclrtGetHardwareSyncAddr(void** addr) {
    static uint64_t sync_area[8];
    if (addr == nullptr) return ACL_ERROR_INVALID_PARAM;
    *addr = sync_area;
    return ACL_SUCCESS;
}
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

// Kernel binaries (aclrtBinaryLoadFromFile .. aclrtLaunchKernelWithConfig). The kernels of a
// sample are compiled into its own program, so "loading" the .o only hands out a handle, and
// aclrtBinaryGetFunction finds a kernel by name among those compiled in (kgsim/kernel_registry.h).
// A function handle is the registry entry, an argument list keeps each appended parameter's bytes.
typedef void* aclrtBinHandle;
typedef void* aclrtFuncHandle;
typedef void* aclrtArgsHandle;
typedef void* aclrtParamHandle;
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_HANDLE 107017

typedef enum aclrtBinaryLoadOptionType {
    ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD = 1,
    ACL_RT_BINARY_LOAD_OPT_MAGIC = 2,
    ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE = 3,
} aclrtBinaryLoadOptionType;
typedef union aclrtBinaryLoadOptionValue {
    uint32_t isLazyLoad;
    uint32_t magic;
    int32_t cpuKernelMode;
    uint32_t rsv[4];
} aclrtBinaryLoadOptionValue;
typedef struct {
    aclrtBinaryLoadOptionType type;
    aclrtBinaryLoadOptionValue value;
} aclrtBinaryLoadOption;
typedef struct aclrtBinaryLoadOptions {
    aclrtBinaryLoadOption* options;
    size_t numOpt;
} aclrtBinaryLoadOptions;

// Launch attributes are accepted and ignored: scheduling modes and timeouts do not change what the
// simulator computes.
typedef enum aclrtLaunchKernelAttrId {
    ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE = 1,
    ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE = 2,
    ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE = 3,
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET,
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH,
    ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP,
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT,
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US = 8,
} aclrtLaunchKernelAttrId;
typedef union aclrtLaunchKernelAttrValue {
    uint8_t schemMode;
    uint32_t dynUBufSize;
    uint32_t blockDimOffset;
    uint8_t isBlockTaskPrefetch;
    uint8_t isDataDump;
    uint16_t timeout;
    uint32_t rsv[4];
} aclrtLaunchKernelAttrValue;
typedef struct aclrtLaunchKernelAttr {
    aclrtLaunchKernelAttrId id;
    aclrtLaunchKernelAttrValue value;
} aclrtLaunchKernelAttr;
typedef struct aclrtLaunchKernelCfg {
    aclrtLaunchKernelAttr* attrs;
    size_t numAttrs;
} aclrtLaunchKernelCfg;

namespace kgsim_acl {
struct LoadedBinary {
    std::string path;
};
struct KernelArgs {
    const kgsim::RegisteredKernel* kernel;
    kgsim::PackedArgs params;
    bool finalized = false;
};
// Argument lists live until the program ends (the runtime owns them, as aclrtKernelArgsInit's
// system-managed memory); a deque keeps the handles already given out valid.
inline std::deque<KernelArgs>& args_lists() {
    static std::deque<KernelArgs> lists;
    return lists;
}
inline aclError fail(aclError code, const std::string& why) {
    recent_error() = why;
    return code;
}
}  // namespace kgsim_acl

inline aclError aclrtBinaryLoadFromFile(const char* binPath, aclrtBinaryLoadOptions* /*options*/,
                                        aclrtBinHandle* binHandle) {
    if (binPath == nullptr || binHandle == nullptr)
        return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtBinaryLoadFromFile: binPath and binHandle are required");
    *binHandle = new kgsim_acl::LoadedBinary{binPath};
    return ACL_SUCCESS;
}
inline aclError aclrtBinaryLoadFromData(const void* data, size_t length, const aclrtBinaryLoadOptions* /*options*/,
                                        aclrtBinHandle* binHandle) {
    if (data == nullptr || length == 0 || binHandle == nullptr)
        return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtBinaryLoadFromData: data, length and binHandle are "
                               "required");
    *binHandle = new kgsim_acl::LoadedBinary{"<data>"};
    return ACL_SUCCESS;
}
inline aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle) {
    if (binHandle == nullptr) return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtBinaryUnLoad: null binHandle");
    delete static_cast<kgsim_acl::LoadedBinary*>(binHandle);
    return ACL_SUCCESS;
}
inline aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char* kernelName,
                                       aclrtFuncHandle* funcHandle) {
    if (binHandle == nullptr || kernelName == nullptr || funcHandle == nullptr)
        return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtBinaryGetFunction: binHandle, kernelName and "
                               "funcHandle are required");
    auto& table = kgsim::kernel_registry();
    auto it = table.find(kernelName);
    if (it == table.end()) {
        std::string known;
        for (const auto& entry : table) known += (known.empty() ? "" : ", ") + entry.first;
        return kgsim_acl::fail(ACL_ERROR_RT_PARAM_INVALID, std::string("aclrtBinaryGetFunction: no kernel named '") +
                               kernelName + "' in the binary (kernels: " + (known.empty() ? "none" : known) + ")");
    }
    *funcHandle = const_cast<kgsim::RegisteredKernel*>(&it->second);
    return ACL_SUCCESS;
}
inline aclError aclrtKernelArgsInit(aclrtFuncHandle funcHandle, aclrtArgsHandle* argsHandle) {
    if (funcHandle == nullptr || argsHandle == nullptr)
        return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtKernelArgsInit: funcHandle and argsHandle are required");
    auto& lists = kgsim_acl::args_lists();
    lists.push_back(kgsim_acl::KernelArgs{static_cast<const kgsim::RegisteredKernel*>(funcHandle), {}, false});
    *argsHandle = &lists.back();
    return ACL_SUCCESS;
}
inline aclError aclrtKernelArgsAppend(aclrtArgsHandle argsHandle, void* param, size_t paramSize,
                                      aclrtParamHandle* paramHandle) {
    if (argsHandle == nullptr || param == nullptr || paramSize == 0 || paramHandle == nullptr)
        return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtKernelArgsAppend: argsHandle, param, a non-zero "
                               "paramSize and paramHandle are required");
    auto* args = static_cast<kgsim_acl::KernelArgs*>(argsHandle);
    const uint8_t* bytes = static_cast<const uint8_t*>(param);
    args->params.emplace_back(bytes, bytes + paramSize);  // copied now: the caller's variable may change
    *paramHandle = reinterpret_cast<aclrtParamHandle>(uintptr_t(args->params.size()));  // 1-based index
    return ACL_SUCCESS;
}
inline aclError aclrtKernelArgsParaUpdate(aclrtArgsHandle argsHandle, aclrtParamHandle paramHandle, void* param,
                                          size_t paramSize) {
    auto* args = static_cast<kgsim_acl::KernelArgs*>(argsHandle);
    size_t index = size_t(reinterpret_cast<uintptr_t>(paramHandle));
    if (args == nullptr || param == nullptr || paramSize == 0 || index == 0 || index > args->params.size())
        return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtKernelArgsParaUpdate: invalid handle or parameter");
    const uint8_t* bytes = static_cast<const uint8_t*>(param);
    args->params[index - 1].assign(bytes, bytes + paramSize);
    return ACL_SUCCESS;
}
inline aclError aclrtKernelArgsFinalize(aclrtArgsHandle argsHandle) {
    if (argsHandle == nullptr) return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtKernelArgsFinalize: null handle");
    static_cast<kgsim_acl::KernelArgs*>(argsHandle)->finalized = true;
    return ACL_SUCCESS;
}
// Synchronous, as every launch of the shim: a fault of the kernel is reported by the next
// aclrtSynchronizeStream, as an asynchronous launch's would be.
inline aclError aclrtLaunchKernelWithConfig(aclrtFuncHandle funcHandle, uint32_t numBlocks, aclrtStream /*stream*/,
                                            aclrtLaunchKernelCfg* /*cfg*/, aclrtArgsHandle argsHandle,
                                            void* reserve) {
    if (funcHandle == nullptr || argsHandle == nullptr || numBlocks == 0 || reserve != nullptr)
        return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchKernelWithConfig: funcHandle, argsHandle and "
                               "numBlocks > 0 are required, and reserve must be NULL");
    const auto& kernel = *static_cast<const kgsim::RegisteredKernel*>(funcHandle);
    const auto& args = *static_cast<const kgsim_acl::KernelArgs*>(argsHandle);
    std::string why;
    if (!kernel.launch(kernel, numBlocks, args.params, why))
        return kgsim_acl::fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchKernelWithConfig: " + why);
    return ACL_SUCCESS;
}
