"""Irregular matmul (257 x 1000 @ 1000 x 125): the blocked GEMM of 074_matmul_square.
M = 257 leaves a 5-row tail (a smaller micro-kernel instantiation), N = 125 a 29-column
tail (a zero-padded B panel), K = 1000 a 232-deep last KC block."""
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
#include <cstring>
#include <vector>

constexpr int MR = 6, NR = 32;
constexpr int64_t KC = 256, NC = 512;

template <int R>
static inline void micro(const float* __restrict a, int64_t lda, const float* __restrict bp,
                         int64_t kc, float* __restrict c, int64_t ldc, int nr, bool first) {
    float acc[R][NR];
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < NR; ++j) acc[r][j] = 0.f;
    for (int64_t k = 0; k < kc; ++k) {
        const float* b = bp + k * NR;
        for (int r = 0; r < R; ++r) {
            const float av = a[r * lda + k];
            #pragma omp simd
            for (int j = 0; j < NR; ++j) acc[r][j] += av * b[j];
        }
    }
    for (int r = 0; r < R; ++r) {
        float* cr = c + r * ldc;
        if (nr == NR) {
            if (first) {
                #pragma omp simd
                for (int j = 0; j < NR; ++j) cr[j] = acc[r][j];
            } else {
                #pragma omp simd
                for (int j = 0; j < NR; ++j) cr[j] += acc[r][j];
            }
        } else {
            for (int j = 0; j < nr; ++j) cr[j] = first ? acc[r][j] : cr[j] + acc[r][j];
        }
    }
}

static void tail_rows(int rows, const float* a, int64_t lda, const float* bp, int64_t kc,
                      float* c, int64_t ldc, int nr, bool first) {
    switch (rows) {
        case 1: micro<1>(a, lda, bp, kc, c, ldc, nr, first); break;
        case 2: micro<2>(a, lda, bp, kc, c, ldc, nr, first); break;
        case 3: micro<3>(a, lda, bp, kc, c, ldc, nr, first); break;
        case 4: micro<4>(a, lda, bp, kc, c, ldc, nr, first); break;
        case 5: micro<5>(a, lda, bp, kc, c, ldc, nr, first); break;
        default: break;
    }
}

// C[M, N] = A[M, K] @ B[K, N], all row-major and contiguous.
extern "C" void matmul_kernel(const float* __restrict A, const float* __restrict B,
                              float* __restrict C, int64_t M, int64_t N, int64_t K) {
    if (K == 0) {
        std::memset(C, 0, sizeof(float) * M * N);
        return;
    }
    const int64_t kc_max = K < KC ? K : KC;
    const int64_t npanels_max = ((N < NC ? N : NC) + NR - 1) / NR;
    std::vector<float> packed(kc_max * NR * npanels_max);
    for (int64_t jc = 0; jc < N; jc += NC) {
        const int64_t nc = N - jc < NC ? N - jc : NC;
        const int64_t npanels = (nc + NR - 1) / NR;
        for (int64_t pc = 0; pc < K; pc += KC) {
            const int64_t kc = K - pc < KC ? K - pc : KC;
            // pack B[pc:pc+kc, jc:jc+nc] into panels of NR columns (zero-padded)
            for (int64_t p = 0; p < npanels; ++p) {
                float* dst = packed.data() + p * kc_max * NR;
                const int64_t j0 = jc + p * NR;
                const int64_t w = N - j0 < NR ? N - j0 : NR;
                for (int64_t k = 0; k < kc; ++k) {
                    const float* src = B + (pc + k) * N + j0;
                    float* d = dst + k * NR;
                    if (w == NR) {
                        #pragma omp simd
                        for (int j = 0; j < NR; ++j) d[j] = src[j];
                    } else {
                        for (int j = 0; j < NR; ++j) d[j] = j < w ? src[j] : 0.f;
                    }
                }
            }
            const bool first = pc == 0;
            const int64_t mfull = M / MR * MR;
            #pragma omp parallel for schedule(static)
            for (int64_t i = 0; i < M; i += MR) {
                for (int64_t p = 0; p < npanels; ++p) {
                    const int64_t j0 = jc + p * NR;
                    const int nr = (int)(N - j0 < NR ? N - j0 : NR);
                    const float* a = A + i * K + pc;
                    const float* bp = packed.data() + p * kc_max * NR;
                    float* c = C + i * N + j0;
                    if (i < mfull) micro<MR>(a, K, bp, kc, c, N, nr, first);
                    else tail_rows((int)(M - i), a, K, bp, kc, c, N, nr, first);
                }
            }
        }
    }
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP, extra_flags=["-mprefer-vector-width=512"])

    def forward(self, A, B):
        A = A.contiguous()
        B = B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype)
        self.lib.matmul_kernel(A, B, C, M, N, K)
        return C
