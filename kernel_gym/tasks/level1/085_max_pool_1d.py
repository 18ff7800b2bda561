import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """MaxPool1d: y[n, c, i] = max over the padded window of x[n, c, :]."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool1d(x, self.kernel_size, self.stride, self.padding)


batch_size = 16
channels = 32
length = 1024
kernel_size = 4
stride = 2
padding = 1


def get_inputs():
    x = torch.randn(batch_size, channels, length)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
