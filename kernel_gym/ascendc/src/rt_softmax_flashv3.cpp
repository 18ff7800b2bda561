// kgsim runtime: SoftmaxFlashV3 (kgsim/softmax_flashv3.h), per row in float as the documented pseudo-code:
// piece sums by the two block reductions (64 sums of 8 over the first 512 elements, then each further
// 64-element repeat added lane-wise, then 8 sums of 8), piece means over baseK = n / splitMeanCnt, the shift
// (mean - piece mean) * alpha / (1 - alpha) per contiguous piece of baseK, then max / exp / sum.
#include "kgsim/softmax_flashv3.h"
#include "rt_elem.h"

namespace kgsim {

void adv_softmax_flashv3(const FlashV3Args& a, const Loc& loc) {
    const char* api = "SoftmaxFlashV3";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t m = a.m, n = a.k, es = dt_size(a.dt);
    if (m == 0 || m % 8 || n < 512 || n % 64)
        fault("invalid_argument", loc, "SoftmaxFlashV3: srcM (%u) must be a positive multiple of 8 and srcK (%u) a "
              "multiple of 64 of at least 512", m, n);
    if (a.split != 8)
        fault("invalid_argument", loc, "SoftmaxFlashV3: splitMeanCnt (%u) must be 8", a.split);
    if (a.update && a.loop_cnt == 0) fault("invalid_argument", loc, "SoftmaxFlashV3: loopCnt must be at least 1");
    if (!(a.alpha > 0.0f && a.alpha < 1.0f))
        fault("invalid_argument", loc, "SoftmaxFlashV3: alpha (%g) must lie in (0, 1)", double(a.alpha));
    const uint64_t nbytes = uint64_t(m) * n * es, sb = uint64_t(m) * 32;
    check_local(a.src, 0, nbytes, 32, api, "srcTensor", loc);
    check_local(a.dst, 0, nbytes, 32, api, "dstTensor", loc);
    check_local(a.mean, 0, sb, 32, api, "meanTensor", loc);
    check_local(a.sum, 0, sb, 32, api, "expSumTensor", loc);
    check_local(a.max, 0, sb, 32, api, "maxTensor", loc);
    if (a.update) {
        check_local(a.exp_max, 0, sb, 32, api, "expMaxTensor", loc);
        check_local(a.in_mean, 0, sb, 32, api, "inMeanTensor", loc);
        check_local(a.in_sum, 0, sb, 32, api, "inExpSumTensor", loc);
        check_local(a.in_max, 0, sb, 32, api, "inMaxTensor", loc);
    }
    if (cfg.check_uninit) {
        check_init_range(a.src, a.src.addr, uint32_t(nbytes), api, loc);
        if (a.update) {
            for (uint32_t r = 0; r < m; ++r) {
                check_init_range(a.in_mean, a.in_mean.addr + r * 32, 4, api, loc);
                check_init_range(a.in_sum, a.in_sum.addr + r * 32, 4, api, loc);
                check_init_range(a.in_max, a.in_max.addr + r * 32, 4, api, loc);
            }
        }
    }
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    const double scalar = double(a.alpha) / (1.0 - double(a.alpha));
    const uint32_t base_k = n / a.split, extra = n / 64 - 8;
    const uint32_t bpr = 32 / es;  // expMaxTensor's elements per row block
    std::vector<float> x(n);
    for (uint32_t r = 0; r < m; ++r) {
        for (uint32_t c = 0; c < n; ++c) x[c] = float(elem::ld(a.dt, s + (uint64_t(r) * n + c) * es));
        float in_mean = 0, in_sum = 0, in_max = 0;
        if (a.update) {  // read before writing: the outputs may alias the inputs
            in_mean = reinterpret_cast<const float*>(mem_ptr(a.in_mean.mem, a.in_mean.addr + r * 32))[0];
            in_sum = reinterpret_cast<const float*>(mem_ptr(a.in_sum.mem, a.in_sum.addr + r * 32))[0];
            in_max = reinterpret_cast<const float*>(mem_ptr(a.in_max.mem, a.in_max.addr + r * 32))[0];
        }
        float part[64];
        for (uint32_t g = 0; g < 64; ++g) {
            float t = 0;
            for (uint32_t e = 0; e < 8; ++e) t += x[g * 8 + e];
            part[g] = t;
        }
        for (uint32_t j = 0; j < extra; ++j)
            for (uint32_t l = 0; l < 64; ++l) part[l] += x[512 + j * 64 + l];
        float local[8], total = 0;
        for (uint32_t j = 0; j < 8; ++j) {
            float t = 0;
            for (uint32_t e = 0; e < 8; ++e) t += part[j * 8 + e];
            local[j] = t / float(base_k);
            total += local[j];
        }
        const float global = total / 8.0f;
        for (uint32_t c = 0; c < n; ++c) x[c] -= float((global - local[c / base_k]) * scalar);
        float row_max = x[0];
        for (uint32_t c = 1; c < n; ++c) row_max = std::max(row_max, x[c]);
        float x_mean = global, shift_curr = 0, shift_prev = 0, x_max = row_max;
        if (a.update) {
            x_mean = (global + in_mean * float(a.loop_cnt - 1)) / float(a.loop_cnt);
            shift_curr = float((global - x_mean) * scalar);
            shift_prev = float((in_mean - x_mean) * scalar);
            x_max = std::max(shift_curr + row_max, shift_prev + in_max);
        }
        const float sub = x_max - shift_curr;
        float sum = 0;
        for (uint32_t c = 0; c < n; ++c) {
            float e = std::exp(x[c] - sub);
            sum += e;
            elem::st(a.dt, d + (uint64_t(r) * n + c) * es, e);
        }
        float exp_max = 0;
        if (a.update) {
            exp_max = std::exp(in_max - x_max + shift_prev);
            sum = exp_max * in_sum + sum;
        }
        float* mo = reinterpret_cast<float*>(mem_ptr(a.mean.mem, a.mean.addr + r * 32));
        float* so = reinterpret_cast<float*>(mem_ptr(a.sum.mem, a.sum.addr + r * 32));
        float* xo = reinterpret_cast<float*>(mem_ptr(a.max.mem, a.max.addr + r * 32));
        for (uint32_t e = 0; e < 8; ++e) mo[e] = x_mean, so[e] = sum, xo[e] = x_max;
        if (a.update) {
            uint8_t* em = mem_ptr(a.exp_max.mem, a.exp_max.addr + r * 32);
            for (uint32_t e = 0; e < bpr; ++e) elem::st(a.dt, em + e * es, exp_max);
        }
    }
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(nbytes));
    mark_init_range(a.mean.mem, a.mean.addr, uint32_t(sb));
    mark_init_range(a.sum.mem, a.sum.addr, uint32_t(sb));
    mark_init_range(a.max.mem, a.max.addr, uint32_t(sb));
    if (a.update) mark_init_range(a.exp_max.mem, a.exp_max.addr, uint32_t(sb));
    // two block reductions and an add per repeat, the shift, max, sub + exp, sum, casts for half
    const double red = double(m) * std::ceil(n / 64.0);
    double occ = elem::vcost(double(m) * n, 6, 1, 3 * red, 16.0 * m / 8 + 24);
    Span rd[4] = {{a.src.addr, uint32_t(nbytes)}, {a.in_mean.addr, uint32_t(sb)}, {a.in_sum.addr, uint32_t(sb)},
                  {a.in_max.addr, uint32_t(sb)}};
    Span wr[5] = {{a.dst.addr, uint32_t(nbytes)}, {a.mean.addr, uint32_t(sb)}, {a.sum.addr, uint32_t(sb)},
                  {a.max.addr, uint32_t(sb)}, {a.exp_max.addr, uint32_t(sb)}};
    issue(P_V, occ, 0, rd, a.update ? 4 : 1, wr, a.update ? 5 : 4, api, loc);
}

}  // namespace kgsim
