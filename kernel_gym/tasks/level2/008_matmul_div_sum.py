import torch
import torch.nn as nn


class Model(nn.Module):
    """Matmul, divide, row sum: y = sum((x @ W) / divisor, dim=1, keepdim=True)."""

    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) * 0.05)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.matmul(x, self.weight) / self.divisor
        return torch.sum(y, dim=1, keepdim=True)


batch_size = 256
in_features = 512
out_features = 256
divisor = 4.0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, divisor]
