// lib/pad/kernel_operator_pad_intf.h: Pad / UnPad, declared in kernel_operator.h here.
#pragma once
#include "kernel_operator.h"
