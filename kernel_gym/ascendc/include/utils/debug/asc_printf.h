// kgsim: the kernel-side debug print header of the newer Ascend C layout. On the simulator a
// kernel's printf is the host's (output goes to the process's stdout), so this only brings the
// kernel API in.
#pragma once
#include <cstdio>
#include "kernel_operator.h"
