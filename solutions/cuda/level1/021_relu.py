"""ReLU: one thread per element, float4 loads where the size allows."""
import torch
import torch.nn as nn
from kernel_gym.backends.cuda import load_cuda

CUDA = r"""
#include <cstdint>
__global__ void relu_vec4(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = x[i];
        v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f); v.z = fmaxf(v.z, 0.f); v.w = fmaxf(v.w, 0.f);
        y[i] = v;
    }
}
__global__ void relu_tail(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    int64_t i = start + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f);
}
extern "C" void relu(const float* x, float* y, int64_t n) {
    int64_t n4 = n / 4;
    if (n4 > 0) relu_vec4<<<(unsigned)((n4 + 255) / 256), 256>>>((const float4*)x, (float4*)y, n4);
    int64_t rest = n - n4 * 4;
    if (rest > 0) relu_tail<<<1, 256>>>(x, y, n4 * 4, n);
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cuda(CUDA, functions=["relu"])

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        self.lib.relu(x, y, x.numel())
        return y
