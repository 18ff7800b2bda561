import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Smooth L1 loss: y = mean(0.5 d^2 if |d| < 1 else |d| - 0.5), d = predictions - targets."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets)


batch_size = 64
dim = 4096


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
