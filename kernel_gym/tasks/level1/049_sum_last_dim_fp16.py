import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum over the last dim in float16: y = x.sum(-1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=-1)


batch_size = 64
dim = 4096


def get_inputs():
    x = torch.randn(batch_size, dim, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []
