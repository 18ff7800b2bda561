import torch
import torch.nn as nn


class Model(nn.Module):
    """RMSNorm: y = x / sqrt(mean(x^2, dim=-1) + eps) * weight."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x * x, dim=-1, keepdim=True) + self.eps)
        return x / rms * self.weight


batch_size = 256
dim = 2048
eps = 1e-06


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [dim, eps]
