import torch
import torch.nn as nn


class Model(nn.Module):
    """Scaled causal softmax: y = softmax(masked_fill(s * scale, j > i, -inf), dim=-1)."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        n = scores.shape[-1]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool, device=scores.device), diagonal=1)
        s = (scores * self.scale).masked_fill(mask, float("-inf"))
        return torch.softmax(s, dim=-1)


batch_size = 4
num_heads = 8
seq_len = 128
scale = 0.125


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, seq_len)]


def get_init_inputs():
    return [scale]
