import torch
import torch.nn as nn


class Model(nn.Module):
    """SELU activation: y = scale * (x if x > 0 else alpha * (exp(x) - 1)), scale=1.0507, alpha=1.6733."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


batch_size = 16
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
