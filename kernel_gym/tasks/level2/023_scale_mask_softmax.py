import torch
import torch.nn as nn


class Model(nn.Module):
    """Scale, additive mask, softmax: y = softmax(s * scale + mask[b, 1, 1, k], dim=-1)."""

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.softmax(scores * self.scale + mask, dim=-1)


batch_size = 4
num_heads = 8
seq_len = 128
scale = 0.088


def get_inputs():
    scores = torch.randn(batch_size, num_heads, seq_len, seq_len)
    keep = torch.rand(batch_size, 1, 1, seq_len) > 0.2
    keep[..., 0] = True
    mask = torch.where(keep, torch.zeros(()), torch.full((), -10000.0))
    return [scores, mask]


def get_init_inputs():
    return [scale]
