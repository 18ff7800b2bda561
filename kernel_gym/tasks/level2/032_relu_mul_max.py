import torch
import torch.nn as nn


class Model(nn.Module):
    """Gated max over dim 1: y = amax(relu(x) * w, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.amax(torch.relu(x) * w, dim=1)


batch_size = 32
channels = 128
length = 256


def get_inputs():
    return [torch.randn(batch_size, channels, length), torch.rand(batch_size, channels, length)]


def get_init_inputs():
    return []
