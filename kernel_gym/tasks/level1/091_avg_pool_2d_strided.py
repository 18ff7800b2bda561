import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """AvgPool2d: y[n, c, i, j] = mean of the non-overlapping 4x4 window."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


batch_size = 8
channels = 16
height = 96
width = 96
kernel_size = 4
stride = 4
padding = 0


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
