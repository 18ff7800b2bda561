import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear interpolation: y = a + weight * (b - a)."""

    def __init__(self, weight: float):
        super().__init__()
        self.weight = weight

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.lerp(a, b, self.weight)


batch_size = 16
dim = 16384
weight = 0.3


def get_inputs():
    a = torch.randn(batch_size, dim)
    b = torch.randn(batch_size, dim)
    return [a, b]


def get_init_inputs():
    return [weight]
