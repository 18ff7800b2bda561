import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Eval batch norm with fixed buffers, then hardswish: y = hardswish(bn_eval(x))."""

    def __init__(self, channels, eps):
        super().__init__()
        self.weight = nn.Parameter(1.0 + torch.randn(channels) * 0.1)
        self.bias = nn.Parameter(torch.randn(channels) * 0.1)
        self.register_buffer("running_mean", torch.randn(channels) * 0.2)
        self.register_buffer("running_var", torch.rand(channels) + 0.5)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.batch_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias, training=False, momentum=0.0, eps=self.eps
        )
        return F.hardswish(y)


batch_size = 16
channels = 32
height = 32
width = 32
eps = 1e-5


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, eps]
