import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise power: y = x ** exponent for x > 0."""

    def __init__(self, exponent: float):
        super().__init__()
        self.exponent = exponent

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.pow(x, self.exponent)


batch_size = 16
dim = 16384
exponent = 2.5


def get_inputs():
    x = torch.rand(batch_size, dim) + 0.1
    return [x]


def get_init_inputs():
    return [exponent]
