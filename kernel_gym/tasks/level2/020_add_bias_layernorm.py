import torch
import torch.nn as nn


class Model(nn.Module):
    """Add, bias, then LayerNorm: y = layer_norm(x + residual + bias)."""

    def __init__(self, hidden):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(hidden) * 0.1)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(x + residual + self.bias)


batch_size = 16
seq_len = 64
hidden = 384


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden), torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
