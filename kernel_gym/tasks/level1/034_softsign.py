import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Softsign activation: y = x / (1 + |x|)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softsign(x)


batch_size = 16
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
