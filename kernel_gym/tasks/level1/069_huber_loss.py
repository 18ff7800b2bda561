import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Huber loss: y = mean(0.5 d^2 if |d| <= delta else delta * (|d| - 0.5 delta)), d = predictions - targets."""

    def __init__(self, delta: float):
        super().__init__()
        self.delta = delta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.huber_loss(predictions, targets, delta=self.delta)


batch_size = 64
dim = 4096
delta = 0.5


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return [delta]
