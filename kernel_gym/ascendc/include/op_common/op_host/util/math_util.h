// kgsim: opbase's header at its installed path (op_common/op_host/util/math_util.h), the simulator's util/math_util.h
#pragma once
#include "util/math_util.h"
