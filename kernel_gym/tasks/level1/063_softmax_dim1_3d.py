import torch
import torch.nn as nn


class Model(nn.Module):
    """Softmax over dim 1: y = softmax(x, dim=1) for x of shape [B, C, L]."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 16
channels = 64
length = 256


def get_inputs():
    x = torch.randn(batch_size, channels, length)
    return [x]


def get_init_inputs():
    return []
