import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Half-precision gated GELU: y = gelu(x) * y + z in float16."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return F.gelu(x) * y + z


batch_size = 256
features = 1024


def get_inputs():
    shape = (batch_size, features)
    return [torch.randn(shape).half(), torch.randn(shape).half(), torch.randn(shape).half()]


def get_init_inputs():
    return []
