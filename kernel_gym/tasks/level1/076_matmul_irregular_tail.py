import torch
import torch.nn as nn


class Model(nn.Module):
    """Irregular matmul: C[M, N] = A[M, K] @ B[K, N] with odd sizes."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 257
K = 1000
N = 125


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
