// Minimal acl/acl.h for the kernel-gym Ascend C simulator: the types host launch code names.
#pragma once
#include <cstddef>
#include <cstdint>
#ifndef KGSIM_ACL_TYPES
#define KGSIM_ACL_TYPES
typedef void* aclrtStream;
typedef int aclError;
#endif
#ifndef ACL_SUCCESS
#define ACL_SUCCESS 0
#endif
inline aclError aclrtSynchronizeStream(aclrtStream) { return ACL_SUCCESS; }
