import torch
import torch.nn as nn


class Model(nn.Module):
    """LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias over the trailing normalized_shape dims."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 16
features = 64
dim = 256


def get_inputs():
    x = torch.randn(batch_size, features, dim)
    return [x]


def get_init_inputs():
    return [(features, dim)]
