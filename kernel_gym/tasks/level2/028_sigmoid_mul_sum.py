import torch
import torch.nn as nn


class Model(nn.Module):
    """Gated sum over dim 1: y = sum(sigmoid(x) * y, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sum(torch.sigmoid(x) * y, dim=1)


batch_size = 64
rows = 64
cols = 128


def get_inputs():
    return [torch.randn(batch_size, rows, cols), torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return []
