import torch
import torch.nn as nn


class Model(nn.Module):
    """Diagonal matmul: C = diag(A) @ B, i.e. C[i, j] = A[i] * B[i, j]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return A.unsqueeze(1) * B


N = 1024
M = 1024


def get_inputs():
    A = torch.randn(N)
    B = torch.randn(N, M)
    return [A, B]


def get_init_inputs():
    return []
