// kgsim runtime: WelfordUpdate / WelfordFinalize and DeepNorm (kgsim/normalization.h). Welford works in
// float: mean' = mean + (x - mean) * nRec, M2' = M2 + (x - mean) * (x - mean'); Finalize weighs each
// partial by its count (counts tensor, or headCount / tailCount, or rnLength without a tail):
// mean = sum(count_i * mean_i) * rRec (sum(mean_i) * abRec without counts and tail),
// var = sum(M2_i + count_i * (mean_i - mean)^2) * rRec.
// DeepNorm (kgsim/normalization.h), computed in float as LayerNorm is (src/rt_adv.cpp):
// y = alpha * x + gx per row of originalH elements, mean and variance over them, then
// dst = (y - mean) / sqrt(variance + epsilon) * gamma + beta. The third output holds the variance: the
// parameter is named rstdLocal, but the documented example's values (106.3125 for x = gx = 0..7,
// alpha = -5.5) and the asc-devkit sample's golden data are the variance.
#include "kgsim/normalization.h"
#include "rt_elem.h"

namespace kgsim {

void adv_deepnorm(const DeepNormArgs& a, const Loc& loc) {
    const char* api = "DeepNorm";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(a.dt), rows = a.rows, h = a.h, oh = a.ori_h;
    if (rows == 0 || h == 0 || oh == 0 || oh > h)
        fault("invalid_argument", loc, "DeepNorm: the tiling's shape (B*S %u, H %u, originalH %u) is invalid; fill it "
              "with GetDeepNormTilingInfo", rows, h, oh);
    if ((uint64_t(h) * es) % 32) fault("invalid_argument", loc, "DeepNorm: H (%u) must be 32-byte aligned", h);
    if (h > 2040) fault("invalid_argument", loc, "DeepNorm: H (%u) may not exceed 2040", h);
    const uint64_t n = uint64_t(rows) * h;
    check_local(a.src, 0, n * es, 32, api, "srcLocal", loc);
    check_local(a.gx, 0, n * es, 32, api, "gxLocal", loc);
    check_local(a.dst, 0, n * es, 32, api, "dstLocal", loc);
    check_local(a.gamma, 0, uint64_t(h) * es, 32, api, "gammaLocal", loc);
    check_local(a.beta, 0, uint64_t(h) * es, 32, api, "betaLocal", loc);
    check_local(a.mean, 0, uint64_t(rows) * es, 32, api, "meanLocal", loc);
    check_local(a.rstd, 0, uint64_t(rows) * es, 32, api, "rstdLocal", loc);
    elem::check_tmp(api, "GetDeepNormMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes,
                    layernorm_tmp_bytes(rows, h, es, a.reuse, 0), loc);
    if (cfg.check_uninit) {
        check_init_range(a.src, a.src.addr, uint32_t(n * es), api, loc);
        check_init_range(a.gx, a.gx.addr, uint32_t(n * es), api, loc);
    }
    const uint8_t *s = mem_ptr(a.src.mem, a.src.addr), *g = mem_ptr(a.gx.mem, a.gx.addr);
    const uint8_t *gm = mem_ptr(a.gamma.mem, a.gamma.addr), *bt = mem_ptr(a.beta.mem, a.beta.addr);
    uint8_t *d = mem_ptr(a.dst.mem, a.dst.addr), *mo = mem_ptr(a.mean.mem, a.mean.addr);
    uint8_t* ro = mem_ptr(a.rstd.mem, a.rstd.addr);
    std::vector<float> y(h);
    for (uint32_t r = 0; r < rows; ++r) {
        double sum = 0;
        for (uint32_t j = 0; j < h; ++j) {
            uint64_t e = uint64_t(r) * h + j;
            y[j] = a.alpha * float(elem::ld(a.dt, s + e * es)) + float(elem::ld(a.dt, g + e * es));
            if (j < oh) sum += y[j];
        }
        float mean = float(sum / oh);
        double var = 0;
        for (uint32_t j = 0; j < oh; ++j) var += double(y[j] - mean) * double(y[j] - mean);
        float rstd = float(1.0 / std::sqrt(var / oh + double(a.eps)));
        float variance = float(var / oh);
        for (uint32_t j = 0; j < h; ++j) {
            float v = (y[j] - mean) * rstd * float(elem::ld(a.dt, gm + uint64_t(j) * es)) +
                      float(elem::ld(a.dt, bt + uint64_t(j) * es));
            elem::st(a.dt, d + (uint64_t(r) * h + j) * es, v);
        }
        elem::st(a.dt, mo + uint64_t(r) * es, mean);
        elem::st(a.dt, ro + uint64_t(r) * es, variance);
    }
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(n * es));
    mark_init_range(a.mean.mem, a.mean.addr, rows * es);
    mark_init_range(a.rstd.mem, a.rstd.addr, rows * es);
    double occ = elem::vcost(double(n), 9 + (a.dt == DT::F16) * 2, 1, 2.0 * rows * std::ceil(h / 64.0), 12.0 * rows);
    Span rd[2] = {{a.src.addr, uint32_t(n * es)}, {a.gx.addr, uint32_t(n * es)}};
    Span w{a.dst.addr, uint32_t(n * es)};
    issue(P_V, occ, 0, rd, 2, &w, 1, api, loc);
}

void adv_welford_update(const WelfordArgs& a, const Loc& loc) {
    const char* api = "WelfordUpdate";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(a.dt);
    if (a.rn != 1) fault("invalid_argument", loc, "WelfordUpdate: WelfordUpdateParam rnLength must be 1 (got %u)", a.rn);
    if (a.ab == 0 || (uint64_t(a.ab) * es) % 32)
        fault("invalid_argument", loc, "WelfordUpdate: abLength (%u) must be a positive multiple of 32 / sizeof(T)", a.ab);
    if (a.ab_compute == 0 || a.ab_compute > a.ab)
        fault("invalid_argument", loc, "WelfordUpdate: abComputeLength (%u) must be in (0, abLength = %u]",
              a.ab_compute, a.ab);
    const uint32_t n = a.ab;
    check_local(a.x, 0, uint64_t(n) * es, 32, api, "inputX", loc);
    const char* names[4] = {"outputMean", "outputVariance", "inputMean", "inputVariance"};
    const TRef* refs[4] = {&a.out_mean, &a.out_var, &a.in_mean, &a.in_var};
    for (int i = 0; i < 4; ++i) check_local(*refs[i], 0, uint64_t(n) * 4, 32, api, names[i], loc);
    uint32_t need = es == 2 ? 3 * 256 : (a.reuse ? 256 : 2 * 256);
    elem::check_tmp(api, "GetWelfordUpdateMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes, need, loc);
    if (cfg.check_uninit) {
        check_init_range(a.x, a.x.addr, a.ab_compute * es, api, loc);
        check_init_range(a.in_mean, a.in_mean.addr, a.ab_compute * 4, api, loc);
        check_init_range(a.in_var, a.in_var.addr, a.ab_compute * 4, api, loc);
    }
    const uint8_t* x = mem_ptr(a.x.mem, a.x.addr);
    const float* im = reinterpret_cast<const float*>(mem_ptr(a.in_mean.mem, a.in_mean.addr));
    const float* iv = reinterpret_cast<const float*>(mem_ptr(a.in_var.mem, a.in_var.addr));
    float* om = reinterpret_cast<float*>(mem_ptr(a.out_mean.mem, a.out_mean.addr));
    float* ov = reinterpret_cast<float*>(mem_ptr(a.out_var.mem, a.out_var.addr));
    for (uint32_t i = 0; i < n; ++i) {
        if (i >= a.ab_compute) {  // outside the computed range: the inputs when in place, else untouched
            if (a.inplace) om[i] = im[i], ov[i] = iv[i];
            continue;
        }
        // each vector instruction rounds to float: no fused multiply-add
        float xv = float(elem::ld(a.dt, x + uint64_t(i) * es));
        float d = elem::rnd(xv - im[i]);
        float m = elem::rnd(im[i] + elem::rnd(d * a.n_rec));
        float v = elem::rnd(iv[i] + elem::rnd(d * elem::rnd(xv - m)));
        om[i] = m;
        ov[i] = v;
    }
    uint32_t written = a.inplace ? n : a.ab_compute;
    mark_init_range(a.out_mean.mem, a.out_mean.addr, written * 4);
    mark_init_range(a.out_var.mem, a.out_var.addr, written * 4);
    double occ = elem::vcost(double(n), 6 + 2 * (es == 2), 0, 0, 8);
    Span rd[3] = {{a.x.addr, n * es}, {a.in_mean.addr, n * 4}, {a.in_var.addr, n * 4}};
    Span w[2] = {{a.out_mean.addr, written * 4}, {a.out_var.addr, written * 4}};
    issue(P_V, occ, 0, rd, 3, w, 2, api, loc);
}

void adv_welford_finalize(const WelfordArgs& a, const Loc& loc) {
    const char* api = "WelfordFinalize";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t n = a.ab;
    if (n == 0 || n % 8) fault("invalid_argument", loc, "WelfordFinalize: abLength (%u) must be a positive multiple of 8", n);
    if (!a.has_counts && a.head_len + a.tail_len != n)
        fault("invalid_argument", loc, "WelfordFinalize: headCountLength (%u) + tailCountLength (%u) must equal "
              "abLength (%u)", a.head_len, a.tail_len, n);
    if (!a.has_counts && a.tail_len && !a.tail_count)
        fault("invalid_argument", loc, "WelfordFinalize: tailCount must not be 0 when tailCountLength is not 0");
    check_local(a.in_mean, 0, uint64_t(n) * 4, 32, api, "inputMean", loc);
    check_local(a.in_var, 0, uint64_t(n) * 4, 32, api, "inputVariance", loc);
    if (a.has_counts) check_local(a.counts, 0, uint64_t(n) * 4, 32, api, "counts", loc);
    check_local(a.out_mean, 0, 4, 32, api, "outputMean", loc);
    check_local(a.out_var, 0, 4, 32, api, "outputVariance", loc);
    elem::check_tmp(api, "GetWelfordFinalizeMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes, 64 * 4 * 4, loc);
    if (cfg.check_uninit) {
        check_init_range(a.in_mean, a.in_mean.addr, n * 4, api, loc);
        check_init_range(a.in_var, a.in_var.addr, n * 4, api, loc);
    }
    const float* im = reinterpret_cast<const float*>(mem_ptr(a.in_mean.mem, a.in_mean.addr));
    const float* iv = reinterpret_cast<const float*>(mem_ptr(a.in_var.mem, a.in_var.addr));
    const int32_t* cn = a.has_counts ? reinterpret_cast<const int32_t*>(mem_ptr(a.counts.mem, a.counts.addr)) : nullptr;
    const bool tail = !a.has_counts && a.tail_len && a.tail_count;
    auto count = [&](uint32_t i) -> float {
        if (cn) return float(cn[i]);
        if (tail) return float(i < a.head_len ? a.head_count : a.tail_count);
        return float(a.rn);
    };
    double mean = 0;
    for (uint32_t i = 0; i < n; ++i) mean += (cn || tail) ? double(count(i) * im[i] * a.r_rec) : double(im[i] * a.ab_rec);
    const float mf = float(mean);
    double var = 0;
    for (uint32_t i = 0; i < n; ++i) var += double((iv[i] + count(i) * (im[i] - mf) * (im[i] - mf)) * a.r_rec);
    *reinterpret_cast<float*>(mem_ptr(a.out_mean.mem, a.out_mean.addr)) = mf;
    *reinterpret_cast<float*>(mem_ptr(a.out_var.mem, a.out_var.addr)) = float(var);
    mark_init_range(a.out_mean.mem, a.out_mean.addr, 4);
    mark_init_range(a.out_var.mem, a.out_var.addr, 4);
    double occ = elem::vcost(double(n), 8, 0, 2.0 * std::ceil(n / 64.0) + 2, 12);
    Span rd[2] = {{a.in_mean.addr, n * 4}, {a.in_var.addr, n * 4}};
    Span w[2] = {{a.out_mean.addr, 4}, {a.out_var.addr, 4}};
    issue(P_V, occ, 0, rd, 2, w, 2, api, loc);
}

// GetLayerNormGradMaxMinTmpSize on Atlas A2: 6 (float), 4 (float reusing the source) or 9 (half) buffers
// of the larger (max) or smaller (min) of B*S*H and H*H elements of the input type
uint32_t layernorm_grad_tmp_bytes(uint32_t rows, uint32_t h, uint32_t ts, int reuse, int want_max) {
    uint64_t bsh = uint64_t(rows) * h, hh = uint64_t(h) * h;
    uint64_t base = want_max ? std::max(bsh, hh) : std::min(bsh, hh);
    uint32_t bufs = ts == 2 ? 9 : (reuse ? 4 : 6);
    return uint32_t(base * bufs * ts);
}
// GetLayerNormGradBetaMaxMinTmpSize: 2 (float) or 4 (half) float buffers of H (min) or B*S*H (max)
uint32_t layernorm_grad_beta_tmp_bytes(uint32_t rows, uint32_t h, uint32_t ts, int want_max) {
    uint64_t n = want_max ? uint64_t(rows) * h : h;
    return uint32_t(n * 4 * (ts == 2 ? 4 : 2));
}

void adv_layernorm_grad(const NormGradArgs& a, const Loc& loc) {
    const char* api = "LayerNormGrad";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(a.dt), rows = a.rows, h = a.h, oh = a.ori_h;
    if (rows == 0 || h == 0 || oh == 0 || oh > h)
        fault("invalid_argument", loc, "LayerNormGrad: the tiling's shape (B*S %u, H %u, originalH %u) is invalid; "
              "fill it with GetLayerNormGradNDTilingInfo", rows, h, oh);
    if ((uint64_t(h) * es) % 32) fault("invalid_argument", loc, "LayerNormGrad: H (%u) must be 32-byte aligned", h);
    const uint64_t n = uint64_t(rows) * h;
    check_local(a.dy, 0, n * es, 32, api, "inputDy", loc);
    check_local(a.x, 0, n * es, 32, api, "inputX", loc);
    check_local(a.pd_x, 0, n * es, 32, api, "outputPdX", loc);
    check_local(a.res_gamma, 0, n * es, 32, api, "resForGamma", loc);
    check_local(a.var, 0, uint64_t(rows) * es, 32, api, "inputVariance", loc);
    check_local(a.mean, 0, uint64_t(rows) * es, 32, api, "inputMean", loc);
    check_local(a.gamma, 0, uint64_t(h) * es, 32, api, "inputGamma", loc);
    elem::check_tmp(api, "GetLayerNormGradMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes,
                    layernorm_grad_tmp_bytes(rows, h, es, a.reuse, 0), loc);
    if (cfg.check_uninit) {
        check_init_range(a.dy, a.dy.addr, uint32_t(n * es), api, loc);
        check_init_range(a.x, a.x.addr, uint32_t(n * es), api, loc);
    }
    auto at = [&](const TRef& t, uint64_t i) { return float(elem::ld(a.dt, mem_ptr(t.mem, t.addr) + i * es)); };
    uint8_t *px = mem_ptr(a.pd_x.mem, a.pd_x.addr), *rg = mem_ptr(a.res_gamma.mem, a.res_gamma.addr);
    const double inv_h = 1.0 / oh;
    for (uint32_t r = 0; r < rows; ++r) {
        const double mean = at(a.mean, r), var = at(a.var, r);
        const double rstd = 1.0 / std::sqrt(var + double(a.eps));
        double pd_var = 0, sum_x1 = 0, sum_x2 = 0;
        for (uint32_t j = 0; j < oh; ++j) {
            uint64_t e = uint64_t(r) * h + j;
            double x1 = double(at(a.dy, e)) * at(a.gamma, j), x2 = at(a.x, e) - mean;
            pd_var += -0.5 * x1 * x2 * rstd * rstd * rstd;
            sum_x1 += -x1 * rstd;
            sum_x2 += -2.0 * x2;
        }
        const double pd_mean = sum_x1 + pd_var * inv_h * sum_x2;
        for (uint32_t j = 0; j < h; ++j) {
            uint64_t e = uint64_t(r) * h + j;
            double x1 = double(at(a.dy, e)) * at(a.gamma, j), x2 = at(a.x, e) - mean;
            elem::st(a.dt, px + e * es, x1 * rstd + pd_var * 2.0 * inv_h * x2 + pd_mean * inv_h);
            elem::st(a.dt, rg + e * es, x2 * rstd);
        }
    }
    mark_init_range(a.pd_x.mem, a.pd_x.addr, uint32_t(n * es));
    mark_init_range(a.res_gamma.mem, a.res_gamma.addr, uint32_t(n * es));
    double occ = elem::vcost(double(n), 16 + 4 * (es == 2), 2, 3.0 * rows * std::ceil(h / 64.0), 20.0 * rows);
    Span rd[2] = {{a.dy.addr, uint32_t(n * es)}, {a.x.addr, uint32_t(n * es)}};
    Span w[2] = {{a.pd_x.addr, uint32_t(n * es)}, {a.res_gamma.addr, uint32_t(n * es)}};
    issue(P_V, occ, 0, rd, 2, w, 2, api, loc);
}

void adv_layernorm_grad_beta(const NormGradArgs& a, const Loc& loc) {
    const char* api = "LayerNormGradBeta";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(a.dt), rows = a.rows, h = a.h;
    if (rows == 0 || h == 0)
        fault("invalid_argument", loc, "LayerNormGradBeta: the tiling's shape (B*S %u, H %u) is invalid; fill it with "
              "GetLayerNormGradBetaNDTilingInfo", rows, h);
    if ((uint64_t(h) * es) % 32) fault("invalid_argument", loc, "LayerNormGradBeta: H (%u) must be 32-byte aligned", h);
    const uint64_t n = uint64_t(rows) * h;
    check_local(a.dy, 0, n * es, 32, api, "inputDy", loc);
    check_local(a.res_gamma, 0, n * es, 32, api, "resForGamma", loc);
    check_local(a.pd_gamma, 0, uint64_t(h) * es, 32, api, "outputPdGamma", loc);
    check_local(a.pd_beta, 0, uint64_t(h) * es, 32, api, "outputPdBeta", loc);
    elem::check_tmp(api, "GetLayerNormGradBetaMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes,
                    layernorm_grad_beta_tmp_bytes(rows, h, es, 0), loc);
    if (cfg.check_uninit) {
        check_init_range(a.dy, a.dy.addr, uint32_t(n * es), api, loc);
        check_init_range(a.res_gamma, a.res_gamma.addr, uint32_t(n * es), api, loc);
    }
    const uint8_t *dy = mem_ptr(a.dy.mem, a.dy.addr), *rg = mem_ptr(a.res_gamma.mem, a.res_gamma.addr);
    uint8_t *pg = mem_ptr(a.pd_gamma.mem, a.pd_gamma.addr), *pb = mem_ptr(a.pd_beta.mem, a.pd_beta.addr);
    for (uint32_t j = 0; j < h; ++j) {
        float sg = 0, sb = 0;  // float accumulation over the rows, as the Add chain does
        for (uint32_t r = 0; r < rows; ++r) {
            uint64_t e = uint64_t(r) * h + j;
            float d = float(elem::ld(a.dt, dy + e * es));
            sg = elem::rnd(sg + elem::rnd(d * float(elem::ld(a.dt, rg + e * es))));
            sb = elem::rnd(sb + d);
        }
        elem::st(a.dt, pg + uint64_t(j) * es, sg);
        elem::st(a.dt, pb + uint64_t(j) * es, sb);
    }
    mark_init_range(a.pd_gamma.mem, a.pd_gamma.addr, h * es);
    mark_init_range(a.pd_beta.mem, a.pd_beta.addr, h * es);
    double occ = elem::vcost(double(n), 3 + 2 * (es == 2), 0, 0, 3.0 * rows + 4);
    Span rd[2] = {{a.dy.addr, uint32_t(n * es)}, {a.res_gamma.addr, uint32_t(n * es)}};
    Span w[2] = {{a.pd_gamma.addr, h * es}, {a.pd_beta.addr, h * es}};
    issue(P_V, occ, 0, rd, 2, w, 2, api, loc);
}
}  // namespace kgsim
