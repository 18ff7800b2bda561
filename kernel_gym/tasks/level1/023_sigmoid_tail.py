import torch
import torch.nn as nn


class Model(nn.Module):
    """Sigmoid activation: y = 1 / (1 + exp(-x))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


batch_size = 128
dim = 1003


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
