import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear with tail-sized dims, then tanh: y = tanh(x @ W^T + b)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.linear(x))


batch_size = 100
in_features = 500
out_features = 1000


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
