import torch
import torch.nn as nn


class Model(nn.Module):
    """Lower-triangular matmul: C = tril(A @ B) with A, B lower triangular."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.matmul(A, B))


N = 512


def get_inputs():
    A = torch.tril(torch.randn(N, N))
    B = torch.tril(torch.randn(N, N))
    return [A, B]


def get_init_inputs():
    return []
