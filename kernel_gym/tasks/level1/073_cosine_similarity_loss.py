import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Cosine loss: y = mean(1 - cos_sim(predictions, targets, dim=1))."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(1 - F.cosine_similarity(predictions, targets, dim=1))


batch_size = 128
dim = 4096


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
