// runtime/context.h for the kernel-gym Ascend C simulator: CANN runtime's context calls. The
// simulator's ACL shim (acl/acl.h) has one context, a handle only; nothing here is needed beyond it.
#pragma once
#include "acl/acl.h"
