import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Half-precision linear, then SiLU: y = silu(x @ W^T + b) in float16."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.linear(x))


batch_size = 128
in_features = 256
out_features = 256


def get_inputs():
    return [torch.randn(batch_size, in_features).half()]


def get_init_inputs():
    return [in_features, out_features]
