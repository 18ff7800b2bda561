#pragma once
#include "register/op_def_registry.h"
