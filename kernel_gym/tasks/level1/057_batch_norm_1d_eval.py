import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """BatchNorm1d (eval): y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]."""

    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm1d(num_features)
        with torch.no_grad():
            self.bn.weight.copy_(torch.linspace(0.5, 1.5, num_features))
            self.bn.bias.copy_(torch.linspace(-0.25, 0.25, num_features))
            self.bn.running_mean.copy_(torch.linspace(-0.5, 0.5, num_features))
            self.bn.running_var.copy_(torch.linspace(0.5, 2.0, num_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(
            x,
            self.bn.running_mean,
            self.bn.running_var,
            self.bn.weight,
            self.bn.bias,
            training=False,
            momentum=0.0,
            eps=self.bn.eps,
        )


batch_size = 32
num_features = 64
length = 256


def get_inputs():
    x = torch.randn(batch_size, num_features, length)
    return [x]


def get_init_inputs():
    return [num_features]
