import torch
import torch.nn as nn


class Model(nn.Module):
    """Transposed-B matmul: C[M, N] = A @ B.T with B of shape [N, K]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B.T)


M = 256
K = 512
N = 384


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(N, K)
    return [A, B]


def get_init_inputs():
    return []
