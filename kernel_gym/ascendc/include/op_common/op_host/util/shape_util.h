// kgsim: opbase's header at its installed path (op_common/op_host/util/shape_util.h), the simulator's util/shape_util.h
#pragma once
#include "util/shape_util.h"
