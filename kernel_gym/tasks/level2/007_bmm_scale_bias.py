import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matmul, scale, bias: y = bmm(a, b) * scale + bias[n]."""

    def __init__(self, n, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n) * 0.1)
        self.scale = scale

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b) * self.scale + self.bias


batch = 16
m = 128
k = 64
n = 128
scale = 0.125


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n)]


def get_init_inputs():
    return [n, scale]
