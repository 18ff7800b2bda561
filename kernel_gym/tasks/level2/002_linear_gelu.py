import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear layer, then exact GELU: y = gelu(x @ W^T + b)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.linear(x))


batch_size = 256
in_features = 384
out_features = 768


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
