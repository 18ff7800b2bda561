import torch
import torch.nn as nn


class Model(nn.Module):
    """Product reduction: y = prod(x, dim) for x near 1."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=self.dim)


batch_size = 16
dim1 = 64
dim2 = 512
reduce_dim = 1


def get_inputs():
    x = 1.0 + 0.05 * torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
