import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """MaxPool2d: y[n, c, i, j] = max of x[n, c, i + 2a, j + 2b] for a, b in 0..2."""

    def __init__(self, kernel_size: int, stride: int, dilation: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.dilation = dilation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x, self.kernel_size, stride=self.stride, padding=0, dilation=self.dilation)


batch_size = 8
channels = 16
height = 64
width = 64
kernel_size = 3
stride = 1
dilation = 2


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, dilation]
