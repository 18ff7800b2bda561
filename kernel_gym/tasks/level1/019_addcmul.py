import torch
import torch.nn as nn


class Model(nn.Module):
    """Fused multiply-add: y = x + value * a * b."""

    def __init__(self, value: float):
        super().__init__()
        self.value = value

    def forward(self, x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.addcmul(x, a, b, value=self.value)


batch_size = 16
dim = 16384
value = 0.5


def get_inputs():
    x = torch.randn(batch_size, dim)
    a = torch.randn(batch_size, dim)
    b = torch.randn(batch_size, dim)
    return [x, a, b]


def get_init_inputs():
    return [value]
