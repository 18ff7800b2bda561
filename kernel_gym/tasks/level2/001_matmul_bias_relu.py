import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, then ReLU: y = relu(x @ W^T + b)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


batch_size = 128
in_features = 512
out_features = 256


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
