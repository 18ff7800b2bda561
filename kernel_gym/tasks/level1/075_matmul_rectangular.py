import torch
import torch.nn as nn


class Model(nn.Module):
    """Rectangular matmul: C[M, N] = A[M, K] @ B[K, N]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 256
K = 1024
N = 384


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
