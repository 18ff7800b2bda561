"""Sigmoid in float16. GCC 12 converts _Float16 one element at a time through libgcc on
CPUs without AVX512-FP16, so blocks of 512 are widened with F16C (vcvtph2ps, 8 per
instruction) into a float buffer, computed with the vectorised expf, and narrowed back
(vcvtps2ph, round to nearest even)."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cmath>
#include <cstdint>
#include <immintrin.h>

static inline void widen(const _Float16* src, float* dst, int64_t n) {
    int64_t i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(src + i))));
#endif
    for (; i < n; ++i) dst[i] = (float)src[i];
}

static inline void narrow(const float* src, _Float16* dst, int64_t n) {
    int64_t i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i*)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; ++i) dst[i] = (_Float16)src[i];
}

extern "C" void sigmoid_f16_kernel(const _Float16* __restrict x, _Float16* __restrict y, int64_t n) {
    constexpr int64_t B = 512;
    #pragma omp parallel for schedule(static)
    for (int64_t b0 = 0; b0 < n; b0 += B) {
        const int64_t len = n - b0 < B ? n - b0 : B;
        alignas(64) float buf[B];
        widen(x + b0, buf, len);
        #pragma omp simd
        for (int64_t i = 0; i < len; ++i) buf[i] = 1.f / (1.f + expf(-buf[i]));
        narrow(buf, y + b0, len);
    }
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP, extra_flags=["-ffast-math"])

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        self.lib.sigmoid_f16_kernel(x, y, x.numel())
        return y
