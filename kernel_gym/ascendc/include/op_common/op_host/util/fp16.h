// kgsim: opbase's header at its installed path (op_common/op_host/util/fp16.h), the simulator's op_host/util/fp16.h
#pragma once
#include "op_host/util/fp16.h"
