// lib/sigmoid/kernel_operator_sigmoid_intf.h: Sigmoid, declared in kernel_operator.h here.
#pragma once
#include "kernel_operator.h"
