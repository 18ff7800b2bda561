import torch
import torch.nn as nn


class Model(nn.Module):
    """Scalar multiplication: y = x * scale."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale


batch_size = 32
dim = 8192
scale = 2.5


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [scale]
