import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise exponential: y = exp(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x)


batch_size = 64
dim = 4093


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
