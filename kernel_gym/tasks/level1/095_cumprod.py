import torch
import torch.nn as nn


class Model(nn.Module):
    """Cumulative product: y[i] = prod_{k <= i} x[k] along dim."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumprod(x, dim=self.dim)


batch_size = 128
dim = 4096
scan_dim = 1


def get_inputs():
    x = 1.0 + 0.02 * (torch.rand(batch_size, dim) - 0.5)
    return [x]


def get_init_inputs():
    return [scan_dim]
