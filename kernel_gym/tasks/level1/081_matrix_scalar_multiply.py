import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-scalar product: C = A * s."""

    def __init__(self, s: float):
        super().__init__()
        self.s = s

    def forward(self, A: torch.Tensor) -> torch.Tensor:
        return A * self.s


M = 1024
N = 512
s = 3.14


def get_inputs():
    A = torch.randn(M, N)
    return [A]


def get_init_inputs():
    return [s]
