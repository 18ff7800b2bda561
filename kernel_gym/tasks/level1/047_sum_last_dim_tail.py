import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum over the last dim: y = x.sum(-1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=-1)


batch_size = 128
dim = 4093


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
