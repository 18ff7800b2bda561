import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise squared difference: y = (a - b) ** 2."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a - b) * (a - b)


batch_size = 250
dim = 1000


def get_inputs():
    a = torch.randn(batch_size, dim)
    b = torch.randn(batch_size, dim)
    return [a, b]


def get_init_inputs():
    return []
