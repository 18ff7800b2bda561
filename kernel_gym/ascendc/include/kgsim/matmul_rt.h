// kgsim: the runtime's interface for the Matmul API (src/rt_matmul.cpp, lib/matmul_intf.h).
#pragma once
#include "kgsim/base.h"

namespace kgsim {
// A matrix operand in GM or a local memory; element (r, c) lies at index r * ld + c.
struct MmOperand {
    const void* gm = nullptr;
    int32_t buf = -1;
    TRef local{};
    uint8_t is_local = 0;
    DT dt = DT::F16;
    uint8_t trans = 0;
    int64_t ld = 0;
};
// One m x n block of C at (row0, col0) of this core's C, accumulated over k into l0c (m * n
// floats, the L0C contents), plus the bias row when given.
void mm_block(const MmOperand& a, const MmOperand& b, const MmOperand* bias, int64_t row0, int64_t col0, int64_t m,
              int64_t n, int64_t k, int64_t base_k, int64_t step_ka, int64_t step_kb, float* l0c, const Loc& loc);
// Write an m x n block from L0C to c (element (i, j) at offset + i * c.ld + j), converting to
// c's type; atomic adds to what is there.
void mm_out(const float* l0c, int64_t m, int64_t n, const MmOperand& c, int64_t offset, int atomic, const Loc& loc);
// True on the AIC of a mixed launch: it serves the Matmul objects of its AIVs.
bool matmul_server_core();
}  // namespace kgsim
