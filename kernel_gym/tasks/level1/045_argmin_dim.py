import torch
import torch.nn as nn


class Model(nn.Module):
    """Argmin reduction: y = argmin(x, dim)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmin(x, dim=self.dim)


batch_size = 16
dim1 = 256
dim2 = 256
reduce_dim = 2


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
