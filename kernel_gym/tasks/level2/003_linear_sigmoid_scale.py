import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, sigmoid, constant scale: y = sigmoid(x @ W^T + b) * scale."""

    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.linear(x)) * self.scale


batch_size = 192
in_features = 256
out_features = 512
scale = 2.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
