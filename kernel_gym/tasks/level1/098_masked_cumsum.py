import torch
import torch.nn as nn


class Model(nn.Module):
    """Masked cumulative sum: y[i] = sum_{k <= i} x[k] * mask[k] along dim."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 128
dim = 4096
scan_dim = 1


def get_inputs():
    x = torch.randn(batch_size, dim)
    mask = torch.rand(batch_size, dim) > 0.5
    return [x, mask]


def get_init_inputs():
    return [scan_dim]
