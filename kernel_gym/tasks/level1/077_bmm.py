import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matmul: C[b] = A[b] @ B[b]."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch_size = 8
M = 128
K = 256
N = 192


def get_inputs():
    A = torch.randn(batch_size, M, K)
    B = torch.randn(batch_size, K, N)
    return [A, B]


def get_init_inputs():
    return []
