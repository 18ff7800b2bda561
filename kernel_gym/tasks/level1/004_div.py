import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise division: y = a / b (b in [0.5, 1.5))."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a / b


batch_size = 16
dim = 16384


def get_inputs():
    a = torch.randn(batch_size, dim)
    b = torch.rand(batch_size, dim) + 0.5
    return [a, b]


def get_init_inputs():
    return []
