import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-vector product: y[M, 1] = A[M, K] @ B[K, 1]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 1024
K = 1024


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, 1)
    return [A, B]


def get_init_inputs():
    return []
