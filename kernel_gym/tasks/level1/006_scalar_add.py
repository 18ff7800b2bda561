import torch
import torch.nn as nn


class Model(nn.Module):
    """Scalar addition: y = x + offset."""

    def __init__(self, offset: float):
        super().__init__()
        self.offset = offset

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.offset


batch_size = 32
dim = 8192
offset = -0.75


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [offset]
