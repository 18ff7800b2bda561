import torch
import torch.nn as nn


class Model(nn.Module):
    """Scaled sum, then LayerNorm: y = layer_norm((x + y) * scale)."""

    def __init__(self, hidden, scale):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.scale = scale

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.norm((x + y) * self.scale)


batch_size = 512
hidden = 768
scale = 0.7071


def get_inputs():
    return [torch.randn(batch_size, hidden), torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden, scale]
