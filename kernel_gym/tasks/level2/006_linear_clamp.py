import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear, then clamp: y = clamp(x @ W^T + b, min_val, max_val)."""

    def __init__(self, in_features, out_features, min_val, max_val):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.linear(x), self.min_val, self.max_val)


batch_size = 128
in_features = 640
out_features = 320
min_val = -0.25
max_val = 0.25


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, min_val, max_val]
