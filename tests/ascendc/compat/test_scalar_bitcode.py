"""GetScalarBitcodeValue: a scalar's bits as an integer, from asc-devkit's basic-API utilities that
kernel_operator.h brings in (CANN's kernels fill DataCopyPadParams::paddingValue with it). Written
from that declaration: T's bytes in the low end; the two-type form converts them to U;
GetScalarBitcodeToHalf reads the low two bytes as a half."""

from __future__ import annotations

import struct

import torch

import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void bitcodes(GM_ADDR y, float f)
{
    GlobalTensor<uint64_t> yg;
    yg.SetGlobalBuffer((__gm__ uint64_t*)y, 4);
    yg.SetValue(0, GetScalarBitcodeValue(f));
    yg.SetValue(1, GetScalarBitcodeValue<half, uint16_t>((half)f));
    yg.SetValue(2, GetScalarBitcodeValue((int16_t)-2));
    half h = GetScalarBitcodeToHalf((uint16_t)0x3C00);  // 1.0 in binary16
    yg.SetValue(3, (uint64_t)(float(h) * 10.0f));
}
extern "C" void run_bitcodes(uint8_t* y, float f)
{
    bitcodes<<<1, nullptr, nullptr>>>(y, f);
}
"""


def test_get_scalar_bitcode_value_gives_the_scalar_bits():
    mod = asc.load(SOURCE, name="bitcodes.cpp")
    y = torch.zeros(4, dtype=torch.int64)
    mod.run_bitcodes(y, -2.5)
    got = [int(v) & (2**64 - 1) for v in y.tolist()]
    assert got[0] == struct.unpack("<I", struct.pack("<f", -2.5))[0]
    assert got[1] == struct.unpack("<H", struct.pack("<e", -2.5))[0]
    assert got[2] == 0xFFFE  # int16_t -2's two bytes, the upper six zero
    assert got[3] == 10
