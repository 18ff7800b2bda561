// lib/matrix/matmul/matmul.h: the Matmul high-level API (lib/matmul_intf.h).
#pragma once
#include "lib/matmul_intf.h"
