import torch
import torch.nn as nn


class Model(nn.Module):
    """GroupNorm: normalise each group of C/num_groups channels per sample, then y = x_hat * weight[c] + bias[c]."""

    def __init__(self, num_groups: int, num_features: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


batch_size = 16
num_features = 64
num_groups = 8
height = 32
width = 32


def get_inputs():
    x = torch.randn(batch_size, num_features, height, width)
    return [x]


def get_init_inputs():
    return [num_groups, num_features]
