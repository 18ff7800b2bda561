import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed-A matmul: C[M, N] = A.T @ B with A of shape [K, M]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


M = 384
K = 512
N = 256


def get_inputs():
    A = torch.randn(K, M)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
