import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum over dim 1: y[b, j] = sum_i x[b, i, j]."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=1)


batch_size = 32
dim1 = 128
dim2 = 128


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return []
