import torch
import torch.nn as nn


class Model(nn.Module):
    """LayerNorm over a tail-sized last dim, then ReLU: y = relu(layer_norm(x))."""

    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(x))


batch_size = 200
hidden = 2047


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden]
