import torch
import torch.nn as nn


class Model(nn.Module):
    """Temperature attention: y = softmax(q @ k^T / temperature, dim=-1) @ v."""

    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        p = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / self.temperature, dim=-1)
        return torch.matmul(p, v)


batch_size = 2
num_heads = 4
seq_len = 64
head_dim = 32
temperature = 4.0


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape), torch.randn(shape), torch.randn(shape)]


def get_init_inputs():
    return [temperature]
