import torch
import torch.nn as nn


class Model(nn.Module):
    """Attention probabilities: y = softmax(q @ k^T * scale, dim=-1)."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.scale, dim=-1)


batch_size = 2
num_heads = 8
seq_len = 128
head_dim = 64
scale = 0.125


def get_inputs():
    return [
        torch.randn(batch_size, num_heads, seq_len, head_dim),
        torch.randn(batch_size, num_heads, seq_len, head_dim),
    ]


def get_init_inputs():
    return [scale]
