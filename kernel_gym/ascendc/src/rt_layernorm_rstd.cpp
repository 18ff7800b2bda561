// kgsim runtime: the [A, R] LayerNorm (rstd form) and Normalize (kgsim/layernorm_rstd.h). Per row, in
// float: mean and variance over the first rLength elements (LayerNorm) or read from the inputs (Normalize),
// rstd = 1 / sqrt(var + eps), y = (x - mean) * rstd * gamma + beta over all rLengthWithPadding elements.
#include "kgsim/layernorm_rstd.h"
#include "rt_elem.h"

namespace kgsim {

// the simulator's own sizes: two float rows (min) or two float copies of the input (max) for LayerNorm;
// Normalize works in its output for float and needs a float row per converted operand otherwise
uint32_t layernorm_rstd_tmp_bytes(uint32_t a, uint32_t r, uint32_t type_size, int want_max) {
    (void)type_size;
    uint64_t row = elem::align_up(uint64_t(r) * 4, 32);
    return uint32_t(2 * (want_max ? row * a : row));
}
uint32_t normalize_tmp_bytes(uint32_t a, uint32_t r, uint32_t type_size_u, uint32_t type_size_t, int want_max) {
    if (type_size_u == 4 && type_size_t == 4) return 0;
    uint64_t row = elem::align_up(uint64_t(r) * 4, 32);
    return uint32_t(2 * (want_max ? row * a : row));
}

void adv_layernorm_rstd(const LnRstdArgs& a, const Loc& loc) {
    const char* api = a.normalize ? "Normalize" : "LayerNorm";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(a.dt), ges = dt_size(a.gdt), rows = a.a, r = a.r, rp = a.r_pad;
    if (rows == 0 || r == 0 || rp < r)
        fault("invalid_argument", loc, "%s: aLength (%u) and rLength (%u) must be positive and rLengthWithPadding "
              "(%u) at least rLength", api, rows, r, rp);
    if ((uint64_t(rp) * es) % 32)
        fault("invalid_argument", loc, "%s: rLengthWithPadding (%u) * sizeof(T) must be a multiple of 32 B", api, rp);
    const uint64_t n = uint64_t(rows) * rp;
    check_local(a.src, 0, n * es, 32, api, "inputX", loc);
    check_local(a.dst, 0, n * es, 32, api, "output", loc);
    if (a.has_gamma) check_local(a.gamma, 0, uint64_t(rp) * ges, 32, api, "gamma", loc);
    if (a.has_beta) check_local(a.beta, 0, uint64_t(rp) * ges, 32, api, "beta", loc);
    check_local(a.rstd, 0, uint64_t(rows) * 4, 32, api, "outputRstd", loc);
    if (a.normalize) {
        check_local(a.mean, 0, uint64_t(rows) * 4, 32, api, "inputMean", loc);
        check_local(a.var, 0, uint64_t(rows) * 4, 32, api, "inputVariance", loc);
        elem::check_tmp(api, "GetNormalizeMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes,
                        normalize_tmp_bytes(rows, r, ges, es, 0), loc);
    } else {
        check_local(a.mean, 0, uint64_t(rows) * 4, 32, api, "outputMean", loc);
        elem::check_tmp(api, "GetLayerNormMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes,
                        layernorm_rstd_tmp_bytes(rows, r, es, 0), loc);
    }
    if (cfg.check_uninit) {
        for (uint32_t i = 0; i < rows; ++i) check_init_range(a.src, a.src.addr + i * rp * es, r * es, api, loc);
        if (a.has_gamma) check_init_range(a.gamma, a.gamma.addr, r * ges, api, loc);
        if (a.has_beta) check_init_range(a.beta, a.beta.addr, r * ges, api, loc);
        if (a.normalize) {
            check_init_range(a.mean, a.mean.addr, rows * 4, api, loc);
            check_init_range(a.var, a.var.addr, rows * 4, api, loc);
        }
    }
    const uint8_t* x = mem_ptr(a.src.mem, a.src.addr);
    std::vector<float> gam(rp, 1.0f), bet(rp, 0.0f), row(rp);
    for (uint32_t c = 0; c < rp; ++c) {
        if (a.has_gamma) gam[c] = float(elem::ld(a.gdt, mem_ptr(a.gamma.mem, a.gamma.addr) + uint64_t(c) * ges));
        if (a.has_beta) bet[c] = float(elem::ld(a.gdt, mem_ptr(a.beta.mem, a.beta.addr) + uint64_t(c) * ges));
    }
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    float* mo = reinterpret_cast<float*>(mem_ptr(a.mean.mem, a.mean.addr));
    float* ro = reinterpret_cast<float*>(mem_ptr(a.rstd.mem, a.rstd.addr));
    const float* vi = a.normalize ? reinterpret_cast<const float*>(mem_ptr(a.var.mem, a.var.addr)) : nullptr;
    for (uint32_t i = 0; i < rows; ++i) {
        for (uint32_t c = 0; c < rp; ++c) row[c] = float(elem::ld(a.dt, x + (uint64_t(i) * rp + c) * es));
        float mean, var;
        if (a.normalize) {
            mean = mo[i];
            var = vi[i];
        } else {
            double s = 0, q = 0;
            for (uint32_t c = 0; c < r; ++c) s += row[c];
            mean = float(s / r);
            for (uint32_t c = 0; c < r; ++c) q += double(row[c] - mean) * double(row[c] - mean);
            var = float(q / r);
        }
        const float rstd = float(1.0 / std::sqrt(double(var) + double(a.eps)));
        for (uint32_t c = 0; c < rp; ++c)
            elem::st(a.dt, d + (uint64_t(i) * rp + c) * es, (row[c] - mean) * rstd * gam[c] + bet[c]);
        if (!a.normalize) mo[i] = mean;
        ro[i] = a.out_rstd ? rstd : var;
    }
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(n * es));
    mark_init_range(a.rstd.mem, a.rstd.addr, rows * 4);
    if (!a.normalize) mark_init_range(a.mean.mem, a.mean.addr, rows * 4);
    // LayerNorm: reducesum, sub, mul, reducesum, adds + sqrt + div, mul gamma, add beta; Normalize drops the sums
    const double red = a.normalize ? 0.0 : 2.0 * rows * std::ceil(rp / 64.0);
    double occ = elem::vcost(double(n), a.normalize ? 3 : 5, 1, red, (a.normalize ? 6.0 : 8.0) * rows);
    Span rd[5] = {{a.src.addr, uint32_t(n * es)}, {a.gamma.addr, rp * ges}, {a.beta.addr, rp * ges},
                  {a.mean.addr, rows * 4}, {a.var.addr, rows * 4}};
    Span wr[3] = {{a.dst.addr, uint32_t(n * es)}, {a.rstd.addr, rows * 4}, {a.mean.addr, rows * 4}};
    issue(P_V, occ, 0, rd, a.normalize ? 5 : 3, wr, a.normalize ? 2 : 3, api, loc);
}

}  // namespace kgsim
