import torch
import torch.nn as nn


class Model(nn.Module):
    """Sigmoid activation in float16: y = 1 / (1 + exp(-x))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


batch_size = 16
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []
