import torch
import torch.nn as nn


class Model(nn.Module):
    """GroupNorm on NCHW input, then ReLU: y = relu(group_norm(x, groups))."""

    def __init__(self, num_groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(x))


batch_size = 8
channels = 64
height = 32
width = 32
num_groups = 8


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [num_groups, channels]
