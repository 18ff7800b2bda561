import torch
import torch.nn as nn


class Model(nn.Module):
    """Half-precision residual add, then LayerNorm: y = layer_norm(x + residual) in float16."""

    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden).half()

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(x + residual)


batch_size = 256
hidden = 1024


def get_inputs():
    return [torch.randn(batch_size, hidden).half(), torch.randn(batch_size, hidden).half()]


def get_init_inputs():
    return [hidden]
