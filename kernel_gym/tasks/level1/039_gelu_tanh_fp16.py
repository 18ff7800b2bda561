import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """GELU (tanh approximation) in float16: y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


batch_size = 16
dim = 16384


def get_inputs():
    x = torch.randn(batch_size, dim, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []
