import torch
import torch.nn as nn


class Model(nn.Module):
    """Residual add, then RMSNorm: h = x + r; y = h * rsqrt(mean(h^2, -1) + eps) * g."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + torch.randn(hidden) * 0.1)
        self.eps = eps

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = x + residual
        return h * torch.rsqrt(torch.mean(h * h, dim=-1, keepdim=True) + self.eps) * self.weight


batch_size = 4
seq_len = 256
hidden = 1024
eps = 1e-6


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden), torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, eps]
