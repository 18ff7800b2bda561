// kgsim: the host-side half type of CANN's operator base library (opbase,
// op_common/op_host/util/fp16.h): Ops::Base::fp16_t, the same 16-bit IEEE half as the op-API
// framework's op::fp16_t (built from any number, read back as float).
#pragma once
#include "opdev/fp16_t.h"

namespace Ops {
namespace Base {
using fp16_t = ::op::fp16_t;
}  // namespace Base
}  // namespace Ops
