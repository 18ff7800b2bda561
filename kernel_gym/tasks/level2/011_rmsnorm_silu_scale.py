import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """RMSNorm, SiLU, scale: y = silu(x * rsqrt(mean(x^2, -1) + eps) * g) * scale."""

    def __init__(self, hidden, eps, scale):
        super().__init__()
        self.weight = nn.Parameter(1.0 + torch.randn(hidden) * 0.1)
        self.eps = eps
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + self.eps)
        return F.silu(x * rms * self.weight) * self.scale


batch_size = 32
seq_len = 32
hidden = 768
eps = 1e-6
scale = 1.5


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, eps, scale]
