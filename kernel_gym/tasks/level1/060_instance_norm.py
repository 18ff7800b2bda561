import torch
import torch.nn as nn


class Model(nn.Module):
    """InstanceNorm2d: y = (x - mean_hw) / sqrt(var_hw + eps) per sample and channel."""

    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inorm(x)


batch_size = 16
num_features = 32
height = 32
width = 32


def get_inputs():
    x = torch.randn(batch_size, num_features, height, width)
    return [x]


def get_init_inputs():
    return [num_features]
