// kgsim: opbase's header at its installed path (op_common/op_host/util/platform_util.h), the simulator's util/platform_util.h
#pragma once
#include "util/platform_util.h"
