import torch
import torch.nn as nn


class Model(nn.Module):
    """Half-precision LayerNorm, then sigmoid: y = sigmoid(layer_norm(x)) in float16."""

    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden).half()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.norm(x))


batch_size = 256
hidden = 1024


def get_inputs():
    return [torch.randn(batch_size, hidden).half()]


def get_init_inputs():
    return [hidden]
