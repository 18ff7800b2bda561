import torch
import torch.nn as nn


class Model(nn.Module):
    """Elementwise clamp: y = min(max(x, min_val), max_val)."""

    def __init__(self, min_val: float, max_val: float):
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=self.min_val, max=self.max_val)


batch_size = 16
dim = 16384
min_val = -0.5
max_val = 1.25


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [min_val, max_val]
