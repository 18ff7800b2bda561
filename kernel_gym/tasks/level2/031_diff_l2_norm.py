import torch
import torch.nn as nn


class Model(nn.Module):
    """Row-wise L2 distance: y = sqrt(sum((a - b)^2, dim=-1))."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        d = a - b
        return torch.sqrt(torch.sum(d * d, dim=-1))


batch_size = 32
num_points = 64
dim = 256


def get_inputs():
    return [torch.randn(batch_size, num_points, dim), torch.randn(batch_size, num_points, dim)]


def get_init_inputs():
    return []
