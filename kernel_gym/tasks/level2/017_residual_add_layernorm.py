import torch
import torch.nn as nn


class Model(nn.Module):
    """Residual add, then LayerNorm: y = layer_norm(x + residual)."""

    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return self.norm(x + residual)


batch_size = 8
seq_len = 128
hidden = 512


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden), torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
