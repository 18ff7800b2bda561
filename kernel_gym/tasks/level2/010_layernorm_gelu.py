import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """LayerNorm over the last dim, then GELU: y = gelu(layer_norm(x))."""

    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.norm(x))


batch_size = 16
seq_len = 64
hidden = 512


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]
