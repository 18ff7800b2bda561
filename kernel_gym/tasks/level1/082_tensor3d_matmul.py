import torch
import torch.nn as nn


class Model(nn.Module):
    """3D-by-2D matmul: C[n, m, l] = sum_k A[n, m, k] * B[k, l]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 8
M = 128
K = 256
L = 256


def get_inputs():
    A = torch.randn(N, M, K)
    B = torch.randn(K, L)
    return [A, B]


def get_init_inputs():
    return []
