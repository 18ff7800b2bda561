import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """MaxPool2d in float16: y[n, c, i, j] = max over the 2x2 window at stride 2."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)


batch_size = 8
channels = 16
height = 64
width = 64
kernel_size = 2
stride = 2
padding = 0


def get_inputs():
    x = torch.randn(batch_size, channels, height, width, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
