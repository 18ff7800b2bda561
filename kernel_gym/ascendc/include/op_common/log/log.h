// kgsim: opbase's header at its installed path (op_common/log/log.h), the simulator's log/log.h
#pragma once
#include "log/log.h"
