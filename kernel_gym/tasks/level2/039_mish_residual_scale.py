import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Mish residual with channel scale: y = (x * tanh(softplus(x)) + x) * gamma[c]."""

    def __init__(self, channels):
        super().__init__()
        self.gamma = nn.Parameter(1.0 + torch.randn(channels, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * torch.tanh(F.softplus(x)) + x) * self.gamma


batch_size = 8
channels = 32
height = 32
width = 64


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
