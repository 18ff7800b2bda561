// kgsim operator-project shim: the op log macros under their aclnn/opdev/op_log.h name.
#pragma once
#include "log/ops_log.h"
