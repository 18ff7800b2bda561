"""Sum over the middle dim of [B, R, C] (keepdim): one program per (b, block of C columns),
looping over R with coalesced row loads."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_mid_kernel(x_ptr, y_ptr, reduce, inner, BLOCK_C: tl.constexpr):
    o = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = cols < inner
    base = x_ptr + o * reduce * inner + cols
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for r in range(0, reduce):
        acc += tl.load(base + r * inner, mask=mask, other=0.0)
    tl.store(y_ptr + o * inner + cols, acc, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x = x.contiguous()
        d = self.dim % x.dim()
        shape = list(x.shape)
        outer = 1
        for s in shape[:d]:
            outer *= s
        inner = 1
        for s in shape[d + 1 :]:
            inner *= s
        reduce = shape[d]
        shape[d] = 1
        y = torch.empty(shape, dtype=x.dtype, device=x.device)
        sum_mid_kernel[(outer, triton.cdiv(inner, 128))](x, y, reduce, inner, BLOCK_C=128)
        return y
