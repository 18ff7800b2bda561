import torch
import torch.nn as nn


class Model(nn.Module):
    """Reverse cumulative sum: y[i] = sum_{k >= i} x[k] along dim."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


batch_size = 128
dim = 4096
scan_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [scan_dim]
