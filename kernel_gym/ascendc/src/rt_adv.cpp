// kgsim runtime: the row-wise high-level APIs (SoftMax, SimpleSoftMax, LogSoftMax, LayerNorm, RmsNorm,
// CumSum, Mean) and Pad, with the temporary-space sizes of their CANN tiling helpers.
// Results are computed in float (half in, half out) as the documented implementations do; the
// cost is that of the basic vector instructions each API decomposes into (reductions, element-
// wise ops, Exp/Ln/Div), charged to the V pipe as one instruction stream.
#include "rt.h"
#include "kgsim/math.h"

namespace kgsim {
namespace {

double ld(DT dt, const uint8_t* p) {
    switch (dt) {
        case DT::F32: { float v; std::memcpy(&v, p, 4); return v; }
        case DT::F16: { half v; std::memcpy(&v, p, 2); return float(v); }
        case DT::BF16: { uint16_t b; std::memcpy(&b, p, 2); uint32_t u = uint32_t(b) << 16; float f; std::memcpy(&f, &u, 4); return f; }
        case DT::I8: return double(int8_t(*p));
        case DT::U8: return double(*p);
        case DT::I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
        case DT::U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
        case DT::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
        case DT::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
        default: return 0;
    }
}
template <class I>
void st_int(uint8_t* p, double v) {
    double lo = double(std::numeric_limits<I>::min()), hi = double(std::numeric_limits<I>::max());
    I i = v != v ? I(0) : I(std::max(lo, std::min(hi, std::trunc(v))));
    std::memcpy(p, &i, sizeof(I));
}
void st(DT dt, uint8_t* p, double v) {
    switch (dt) {
        case DT::F32: { float f = float(v); std::memcpy(p, &f, 4); break; }
        case DT::F16: { half h = half(float(v)); std::memcpy(p, &h, 2); break; }
        case DT::BF16: { bfloat16_t b = bfloat16_t(float(v)); std::memcpy(p, &b, 2); break; }
        case DT::I8: st_int<int8_t>(p, v); break;
        case DT::U8: st_int<uint8_t>(p, v); break;
        case DT::I16: st_int<int16_t>(p, v); break;
        case DT::U16: st_int<uint16_t>(p, v); break;
        case DT::I32: st_int<int32_t>(p, v); break;
        case DT::U32: st_int<uint32_t>(p, v); break;
        default: break;
    }
}
float round_to(DT dt, float v) { return dt == DT::F16 ? float(half(v)) : v; }

// A caller-given sharedTmpBuffer must hold the documented minimum; without one, the API takes its
// space from the UB that TPipe left free.
void check_tmp(const char* api, const char* helper, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
               uint32_t min_bytes, const Loc& loc) {
    if (has_tmp) {
        check_local(tmp, 0, tmp_bytes, 32, api, "sharedTmpBuffer", loc);
        if (tmp_bytes < min_bytes)
            fault("invalid_argument", loc, "%s: sharedTmpBuffer holds %u B but the API needs at least %u B (%s gives "
                  "the minimum)", api, tmp_bytes, min_bytes, helper);
        return;
    }
    double left = cfg.usable_ub_bytes - double(rt.blk.top[MEM_UB]);
    if (left < double(min_bytes))
        fault("ub_overflow", loc, "%s without sharedTmpBuffer needs %u B of UB that no InitBuffer holds, but only "
              "%.0f B of the usable UB of %.0f B are left; pass a sharedTmpBuffer or allocate less",
              api, min_bytes, std::max(0.0, left), cfg.usable_ub_bytes);
}

// V-pipe occupancy: `simple` element-wise ops and `trans` Exp/Ln/Div-class ops over `elems` float
// lanes, `reduce_repeats` repeat-wise reductions, `instrs` instructions issued; half data pays a
// Cast up and a Cast down.
double vcost(double elems, DT dt, double simple, double trans, double reduce_repeats, double instrs) {
    double repeats = std::ceil(elems / 64.0);
    double occ = instrs * cfg.vec_issue_cycles + repeats * (simple * 256.0 / cfg.vec_simple_bytes_per_cycle +
                                                             trans * 64.0 / cfg.vec_transcendental_elems_per_cycle) +
                 reduce_repeats * cfg.vec_reduce_cycles_per_repeat;
    if (dt == DT::F16) occ += 2 * cfg.vec_issue_cycles + repeats * 2 * 64.0 / cfg.vec_cast_elems_per_cycle;
    return occ;
}
uint32_t align_up(uint64_t v, uint64_t a) { return uint32_t((v + a - 1) / a * a); }

}  // namespace

// ---- SoftMax family ---------------------------------------------------------------------------
// GetSoftMaxMax/MinTmpSize on Atlas A2: (32 / typeSize + srcK + 64) floats per row; min one row, max all rows.
uint32_t softmax_tmp_bytes(uint32_t m, uint32_t k, uint32_t stat_type_size, int want_max) {
    uint32_t epb = 32 / (stat_type_size ? stat_type_size : 4);
    uint64_t row = uint64_t(epb) + k + 64;
    return uint32_t((want_max ? row * m : row) * 4);
}

void adv_softmax(DT dt, DT sdt, const SoftmaxArgs& a, const Loc& loc) {
    static const char* names[3] = {"SoftMax", "SimpleSoftMax", "LogSoftMax"};
    static const char* helpers[3] = {"GetSoftMaxMinTmpSize", "GetSoftMaxMinTmpSize", "GetLogSoftMaxMinTmpSize"};
    const char* api = names[a.kind];
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt), ses = dt_size(sdt), sepb = 32 / ses;
    const uint32_t m = a.m, k = a.k, ok = a.ori_k;
    if (m == 0 || k == 0)
        fault("invalid_argument", loc, "%s: the shape [%u, %u] is empty (fill SoftMaxShapeInfo or the tiling's srcM/srcK)",
              api, m, k);
    if ((uint64_t(k) * es) % 32)
        fault("invalid_argument", loc, "%s: srcK (%u) * sizeof(T) must be a multiple of 32 B; pad the last axis and pass "
              "the valid length as SoftMaxShapeInfo.oriSrcK", api, k);
    if (ok == 0 || ok > k) fault("invalid_argument", loc, "%s: oriSrcK (%u) must be in [1, srcK = %u]", api, ok, k);
    const uint64_t nbytes = uint64_t(m) * k * es, sbytes = uint64_t(m) * sepb * ses;
    check_local(a.src, 0, nbytes, 32, api, "srcTensor", loc);
    check_local(a.dst, 0, nbytes, 32, api, "dstTensor", loc);
    if (a.has_stats) {
        check_local(a.sum, 0, sbytes, 32, api, "sumTensor", loc);
        check_local(a.max, 0, sbytes, 32, api, "maxTensor", loc);
    }
    // the smallest of the documented minimums (stat type float: 8 elements per block)
    check_tmp(api, helpers[a.kind], a.tmp, a.has_tmp, a.tmp_bytes, softmax_tmp_bytes(1, k, 4, 0), loc);
    if (cfg.check_uninit) {
        for (uint32_t r = 0; r < m; ++r) check_init_range(a.src, a.src.addr + r * k * es, ok * es, api, loc);
        if (a.kind == 1) {
            check_init_range(a.sum, a.sum.addr, uint32_t(sbytes), api, loc);
            check_init_range(a.max, a.max.addr, uint32_t(sbytes), api, loc);
        }
    }
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    uint8_t* ps = a.has_stats ? mem_ptr(a.sum.mem, a.sum.addr) : nullptr;
    uint8_t* pm = a.has_stats ? mem_ptr(a.max.mem, a.max.addr) : nullptr;
    std::vector<float> row(k);
    for (uint32_t r = 0; r < m; ++r) {
        for (uint32_t c = 0; c < k; ++c) row[c] = float(ld(dt, s + (uint64_t(r) * k + c) * es));
        float mx, sum;
        if (a.kind == 1) {
            mx = float(ld(sdt, pm + uint64_t(r) * sepb * ses));
            sum = float(ld(sdt, ps + uint64_t(r) * sepb * ses));
        } else {
            mx = -std::numeric_limits<float>::infinity();
            for (uint32_t c = 0; c < ok; ++c) mx = std::max(mx, row[c]);
            sum = 0;
            for (uint32_t c = 0; c < ok; ++c) sum += std::exp(row[c] - mx);
        }
        for (uint32_t c = 0; c < k; ++c) {
            float v = std::exp(row[c] - mx) / sum;
            if (a.kind == 2) v = std::log10(v);
            st(dt, d + (uint64_t(r) * k + c) * es, v);
        }
        if (a.kind != 1 && a.has_stats)
            for (uint32_t e = 0; e < sepb; ++e) {
                st(sdt, ps + (uint64_t(r) * sepb + e) * ses, sum);
                st(sdt, pm + (uint64_t(r) * sepb + e) * ses, mx);
            }
    }
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(nbytes));
    if (a.kind != 1 && a.has_stats) {
        mark_init_range(a.sum.mem, a.sum.addr, uint32_t(sbytes));
        mark_init_range(a.max.mem, a.max.addr, uint32_t(sbytes));
    }
    // reducemax + broadcast, sub, exp, reducesum + broadcast, div (+ ln and muls for LogSoftMax)
    const double elems = double(m) * k, red = double(m) * std::ceil(k / 64.0);
    double occ = a.kind == 1 ? vcost(elems, dt, 1, 2, 0, 3 * m)
                             : vcost(elems, dt, 3, 2 + (a.kind == 2 ? 1 : 0), 2 * red, 7 * m);
    if (a.kind == 2) occ += vcost(elems, DT::F32, 1, 0, 0, m);
    Span rd[3] = {{a.src.addr, uint32_t(nbytes)}, {a.sum.addr, uint32_t(sbytes)}, {a.max.addr, uint32_t(sbytes)}};
    Span wr[3] = {{a.dst.addr, uint32_t(nbytes)}, {a.sum.addr, uint32_t(sbytes)}, {a.max.addr, uint32_t(sbytes)}};
    int nr = a.kind == 1 ? 3 : 1, nw = (a.kind != 1 && a.has_stats) ? 3 : 1;
    issue(P_V, occ, 0, rd, nr, wr, nw, api, loc);
}

// SoftmaxGrad (front = 0): dst = src * (grad - rowsum(grad * src)); SoftmaxGradFront / isFront (front = 1):
// dst = rowsum(grad * src), one 32-byte block per row. a.sum carries the grad tensor.
void adv_softmax_grad(DT dt, const SoftmaxArgs& a, int front, const Loc& loc) {
    const char* api = front ? "SoftmaxGradFront" : "SoftmaxGrad";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt), epb = 32 / es;
    const uint32_t m = a.m, k = a.k, ok = a.ori_k;
    if (m == 0 || k == 0)
        fault("invalid_argument", loc, "%s: the shape [%u, %u] is empty (fill SoftMaxShapeInfo or the tiling's srcM/srcK)",
              api, m, k);
    if ((uint64_t(k) * es) % 32)
        fault("invalid_argument", loc, "%s: srcK (%u) * sizeof(T) must be a multiple of 32 B; pad the last axis and pass "
              "the valid length as SoftMaxShapeInfo.oriSrcK", api, k);
    if (ok == 0 || ok > k) fault("invalid_argument", loc, "%s: oriSrcK (%u) must be in [1, srcK = %u]", api, ok, k);
    const uint64_t nbytes = uint64_t(m) * k * es, dbytes = front ? uint64_t(m) * 32 : nbytes;
    check_local(a.src, 0, nbytes, 32, api, "srcTensor", loc);
    check_local(a.sum, 0, nbytes, 32, api, "gradTensor", loc);
    check_local(a.dst, 0, dbytes, 32, api, "dstTensor", loc);
    check_tmp(api, "GetSoftMaxGradMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes, softmax_grad_tmp_bytes(1, k, es, front, 0),
              loc);
    if (cfg.check_uninit)
        for (uint32_t r = 0; r < m; ++r) {
            check_init_range(a.src, a.src.addr + r * k * es, ok * es, api, loc);
            check_init_range(a.sum, a.sum.addr + r * k * es, ok * es, api, loc);
        }
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    const uint8_t* g = mem_ptr(a.sum.mem, a.sum.addr);
    std::vector<uint8_t> out(dbytes);
    std::vector<double> prod(ok);
    for (uint32_t r = 0; r < m; ++r) {
        // grad * src in float, summed as the vector unit reduces a row (not sequentially: a
        // 960-wide row summed in order drifts by ~1e-5 from the NPU's tree)
        for (uint32_t c = 0; c < ok; ++c)
            prod[c] = double(float(ld(dt, g + (uint64_t(r) * k + c) * es)) * float(ld(dt, s + (uint64_t(r) * k + c) * es)));
        const float dot = float(vector_row_sum(prod.data(), ok, 64, false));  // float math, 64 floats a repeat
        if (front) {
            for (uint32_t e = 0; e < epb; ++e) st(dt, out.data() + (uint64_t(r) * epb + e) * es, dot);
            continue;
        }
        for (uint32_t c = 0; c < k; ++c) {
            float x = float(ld(dt, s + (uint64_t(r) * k + c) * es)), gr = float(ld(dt, g + (uint64_t(r) * k + c) * es));
            st(dt, out.data() + (uint64_t(r) * k + c) * es, x * (gr - dot));
        }
    }
    std::memcpy(mem_ptr(a.dst.mem, a.dst.addr), out.data(), dbytes);
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(dbytes));
    // mul, reducesum + broadcast (front); then sub and mul
    const double elems = double(m) * k, red = double(m) * std::ceil(k / 64.0);
    double occ = vcost(elems, dt, front ? 1 : 3, 0, red, 3 * m);
    Span rd[2] = {{a.src.addr, uint32_t(nbytes)}, {a.sum.addr, uint32_t(nbytes)}};
    Span wr{a.dst.addr, uint32_t(dbytes)};
    issue(P_V, occ, 0, rd, 2, &wr, 1, api, loc);
}

uint32_t softmax_grad_tmp_bytes(uint32_t m, uint32_t k, uint32_t type_size, int front, int want_max) {
    // one float row of the product (plus a float copy of each input for half) and a 32-byte row result per row
    uint64_t per_row = uint64_t(k) * 4 * (type_size == 2 ? 3 : 1) + (front ? 32 : 64);
    return uint32_t(want_max ? per_row * m : per_row);
}

// SoftmaxFlashV2 (FlashAttention-2 row update). update = 0: max = rowmax(x), dst = exp(x - max), sum = rowsum(dst).
// update = 1: max = max(inMax, rowmax(x)), dst = exp(x - max), expMax = exp(inMax - max),
// sum = expMax * inSum + rowsum(dst). max/sum/inMax/inSum: one 32-byte block per row of the stat type;
// expMax: one block per row of T. a.sum / a.max are the outputs, in_sum / in_max / exp_max the others.
void adv_softmax_flash_v2(DT dt, DT sdt, const SoftmaxArgs& a, const TRef& exp_max, const TRef& in_sum,
                          const TRef& in_max, int update, const Loc& loc) {
    const char* api = "SoftmaxFlashV2";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt), ses = dt_size(sdt), sepb = 32 / ses, epb = 32 / es;
    const uint32_t m = a.m, k = a.k, ok = a.ori_k;
    if (m == 0 || k == 0)
        fault("invalid_argument", loc, "%s: the shape [%u, %u] is empty (fill SoftMaxShapeInfo or the tiling's srcM/srcK)",
              api, m, k);
    if ((uint64_t(k) * es) % 32)
        fault("invalid_argument", loc, "%s: srcK (%u) * sizeof(T) must be a multiple of 32 B", api, k);
    if (ok == 0 || ok > k) fault("invalid_argument", loc, "%s: oriSrcK (%u) must be in [1, srcK = %u]", api, ok, k);
    const uint64_t nbytes = uint64_t(m) * k * es, sbytes = uint64_t(m) * 32, ebytes = uint64_t(m) * 32;
    check_local(a.src, 0, nbytes, 32, api, "srcTensor", loc);
    check_local(a.dst, 0, nbytes, 32, api, "dstTensor", loc);
    check_local(a.sum, 0, sbytes, 32, api, "expSumTensor", loc);
    check_local(a.max, 0, sbytes, 32, api, "maxTensor", loc);
    if (update) {
        check_local(exp_max, 0, ebytes, 32, api, "expMaxTensor", loc);
        check_local(in_sum, 0, sbytes, 32, api, "inExpSumTensor", loc);
        check_local(in_max, 0, sbytes, 32, api, "inMaxTensor", loc);
    }
    check_tmp(api, "GetSoftMaxFlashV2MinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes, softmax_tmp_bytes(1, k, 4, 0), loc);
    if (cfg.check_uninit) {
        for (uint32_t r = 0; r < m; ++r) check_init_range(a.src, a.src.addr + r * k * es, ok * es, api, loc);
        if (update) {
            check_init_range(in_sum, in_sum.addr, uint32_t(sbytes), api, loc);
            check_init_range(in_max, in_max.addr, uint32_t(sbytes), api, loc);
        }
    }
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    const uint8_t* pis = update ? mem_ptr(in_sum.mem, in_sum.addr) : nullptr;
    const uint8_t* pim = update ? mem_ptr(in_max.mem, in_max.addr) : nullptr;
    std::vector<uint8_t> out(nbytes), osum(sbytes), omax(sbytes), oexp(ebytes);
    std::vector<float> row(k);
    for (uint32_t r = 0; r < m; ++r) {
        for (uint32_t c = 0; c < k; ++c) row[c] = float(ld(dt, s + (uint64_t(r) * k + c) * es));
        float mx = -std::numeric_limits<float>::infinity();
        for (uint32_t c = 0; c < ok; ++c) mx = std::max(mx, row[c]);
        float in_mx = 0, in_sm = 0, emax = 1;
        if (update) {
            in_mx = float(ld(sdt, pim + uint64_t(r) * sepb * ses));
            in_sm = float(ld(sdt, pis + uint64_t(r) * sepb * ses));
            mx = std::max(mx, in_mx);
            emax = std::exp(in_mx - mx);
        }
        float sum = 0;
        for (uint32_t c = 0; c < k; ++c) {
            float v = std::exp(row[c] - mx);
            if (c < ok) sum += v;
            st(dt, out.data() + (uint64_t(r) * k + c) * es, v);
        }
        if (update) sum = emax * in_sm + sum;
        for (uint32_t e = 0; e < sepb; ++e) {
            st(sdt, osum.data() + (uint64_t(r) * sepb + e) * ses, sum);
            st(sdt, omax.data() + (uint64_t(r) * sepb + e) * ses, mx);
        }
        for (uint32_t e = 0; e < epb; ++e) st(dt, oexp.data() + (uint64_t(r) * epb + e) * es, emax);
    }
    std::memcpy(mem_ptr(a.dst.mem, a.dst.addr), out.data(), nbytes);
    std::memcpy(mem_ptr(a.sum.mem, a.sum.addr), osum.data(), sbytes);
    std::memcpy(mem_ptr(a.max.mem, a.max.addr), omax.data(), sbytes);
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(nbytes));
    mark_init_range(a.sum.mem, a.sum.addr, uint32_t(sbytes));
    mark_init_range(a.max.mem, a.max.addr, uint32_t(sbytes));
    if (update) {
        std::memcpy(mem_ptr(exp_max.mem, exp_max.addr), oexp.data(), ebytes);
        mark_init_range(exp_max.mem, exp_max.addr, uint32_t(ebytes));
    }
    const double elems = double(m) * k, red = double(m) * std::ceil(k / 64.0);
    double occ = vcost(elems, dt, 2, 1, 2 * red, (update ? 10 : 5) * m);
    Span rd[3] = {{a.src.addr, uint32_t(nbytes)}, {in_sum.addr, uint32_t(sbytes)}, {in_max.addr, uint32_t(sbytes)}};
    Span wr[4] = {{a.dst.addr, uint32_t(nbytes)}, {a.sum.addr, uint32_t(sbytes)}, {a.max.addr, uint32_t(sbytes)},
                  {exp_max.addr, uint32_t(ebytes)}};
    issue(P_V, occ, 0, rd, update ? 3 : 1, wr, update ? 4 : 3, api, loc);
}

// ---- LayerNorm / RmsNorm ---------------------------------------------------------------------
// GetLayerNormMaxMinTmpSize: 3 (2 with isReuseSource and float) float buffers of one row (min) or of
// the whole input (max), plus two 32-byte aligned [B*S] float buffers for mean and variance.
uint32_t layernorm_tmp_bytes(uint32_t rows, uint32_t h, uint32_t type_size, int reuse, int want_max) {
    uint32_t nbuf = (reuse && type_size == 4) ? 2 : 3;
    uint64_t mv = align_up(uint64_t(rows) * 4, 32);
    uint64_t one = want_max ? align_up(uint64_t(rows) * h * 4, 32) : align_up(uint64_t(h) * 4, 32);
    return uint32_t(nbuf * one + 2 * mv);
}
// GetRmsNormMaxMinTmpSize: (h, or 2h for half) floats per row plus the row results (8 floats for min)
uint32_t rmsnorm_tmp_bytes(uint32_t rows, uint32_t h, uint32_t type_size, int want_max) {
    uint32_t coeff = type_size == 2 ? 2 : 1;
    if (!want_max) return (h * coeff + 8) * 4;
    uint64_t bs = align_up(rows, 32 / (type_size ? type_size : 4));
    return uint32_t((uint64_t(rows) * h * coeff + bs) * 4);
}

void adv_norm(DT dt, DT gdt, const NormArgs& a, const Loc& loc) {
    const char* api = a.rms ? "RmsNorm" : "LayerNorm";
    const char* helper = a.rms ? "GetRmsNormMaxMinTmpSize" : "GetLayerNormMaxMinTmpSize";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt), ges = dt_size(gdt);
    const uint32_t rows = a.rows, h = a.h, oh = a.ori_h;
    if (rows == 0 || h == 0)
        fault("invalid_argument", loc, "%s: the tiling's shape (B * S = %u rows of H = %u) is empty; fill it with the "
              "host tiling helper", api, rows, h);
    if ((uint64_t(h) * es) % 32)
        fault("invalid_argument", loc, "%s: hLength (%u) * sizeof(T) must be a multiple of 32 B", api, h);
    if (oh > h) fault("invalid_argument", loc, "%s: originalHLength (%u) exceeds hLength (%u)", api, oh, h);
    const uint64_t nbytes = uint64_t(rows) * h * es;
    check_local(a.src, 0, nbytes, 32, api, a.rms ? "srcLocal" : "inputX", loc);
    check_local(a.dst, 0, nbytes, 32, api, a.rms ? "dstLocal" : "output", loc);
    check_local(a.gamma, 0, uint64_t(h) * ges, 32, api, "gamma", loc);
    if (!a.rms) {
        check_local(a.beta, 0, uint64_t(h) * ges, 32, api, "beta", loc);
        check_local(a.mean, 0, uint64_t(rows) * es, 32, api, "outputMean", loc);
        check_local(a.var, 0, uint64_t(rows) * es, 32, api, "outputVariance", loc);
    }
    uint32_t min_tmp = a.rms ? rmsnorm_tmp_bytes(rows, h, es, 0) : layernorm_tmp_bytes(rows, h, es, a.rstd, 0);
    check_tmp(api, helper, a.tmp, a.has_tmp, a.tmp_bytes, min_tmp, loc);
    if (cfg.check_uninit) {
        for (uint32_t r = 0; r < rows; ++r) check_init_range(a.src, a.src.addr + r * h * es, oh * es, api, loc);
        check_init_range(a.gamma, a.gamma.addr, oh * ges, api, loc);
        if (!a.rms) check_init_range(a.beta, a.beta.addr, oh * ges, api, loc);
    }
    const uint8_t* x = mem_ptr(a.src.mem, a.src.addr);
    const uint8_t* g = mem_ptr(a.gamma.mem, a.gamma.addr);
    const uint8_t* b = a.rms ? nullptr : mem_ptr(a.beta.mem, a.beta.addr);
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    std::vector<float> row(h), gam(h), bet(h, 0.0f);
    for (uint32_t c = 0; c < h; ++c) {
        gam[c] = float(ld(gdt, g + uint64_t(c) * ges));
        if (b) bet[c] = float(ld(gdt, b + uint64_t(c) * ges));
    }
    const float inv_n = 1.0f / float(oh ? oh : h);
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < h; ++c) row[c] = float(ld(dt, x + (uint64_t(r) * h + c) * es));
        float mean = 0, var = 0, scale;
        if (a.rms) {
            for (uint32_t c = 0; c < oh; ++c) var += row[c] * row[c];
            scale = 1.0f / std::sqrt(var * inv_n + a.eps);
        } else {
            for (uint32_t c = 0; c < oh; ++c) mean += row[c];
            mean *= inv_n;
            for (uint32_t c = 0; c < oh; ++c) var += (row[c] - mean) * (row[c] - mean);
            var *= inv_n;
            scale = 1.0f / std::sqrt(var + a.eps);
            st(dt, mem_ptr(a.mean.mem, a.mean.addr) + uint64_t(r) * es, mean);
            st(dt, mem_ptr(a.var.mem, a.var.addr) + uint64_t(r) * es, var);
        }
        for (uint32_t c = 0; c < h; ++c)
            st(dt, d + (uint64_t(r) * h + c) * es, (row[c] - mean) * scale * gam[c] + bet[c]);
    }
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(nbytes));
    if (!a.rms) {
        mark_init_range(a.mean.mem, a.mean.addr, rows * es);
        mark_init_range(a.var.mem, a.var.addr, rows * es);
    }
    // LayerNorm: reducesum, sub, mul, reducesum, adds + sqrt + div, mul gamma, add beta; RmsNorm: mul,
    // reducesum, muls + adds, sqrt, div, mul gamma
    const double elems = double(rows) * h, red = double(rows) * std::ceil(h / 64.0);
    double occ = a.rms ? vcost(elems, dt, 3, 1, red, 4 * rows) : vcost(elems, dt, 5, 1, 2 * red, 8 * rows);
    Span rd[3] = {{a.src.addr, uint32_t(nbytes)}, {a.gamma.addr, h * ges}, {a.beta.addr, h * ges}};
    Span wr[3] = {{a.dst.addr, uint32_t(nbytes)}, {a.mean.addr, rows * es}, {a.var.addr, rows * es}};
    issue(P_V, occ, 0, rd, a.rms ? 2 : 3, wr, a.rms ? 1 : 3, api, loc);
}

// ---- CumSum -------------------------------------------------------------------------------------
// GetCumSumMaxMinTmpSize: the last-axis form transposes 16-row groups (twice), half data also casts;
// the first-axis form needs a float copy of the input for half and nothing for float.
void cumsum_tmp_bytes(uint32_t outter, uint32_t inner, uint32_t ts, int last_axis, uint32_t& max_bytes,
                      uint32_t& min_bytes) {
    if (!last_axis) {
        max_bytes = min_bytes = ts == 2 ? outter * inner * 4 : 0;
        return;
    }
    uint32_t align_outter = align_up(outter, 16);
    min_bytes = (ts == 2 ? inner * 16 * 2 : 0) + 16 * inner * ts * 2;
    max_bytes = (ts == 2 ? inner * align_outter * 2 : 0) + align_outter * inner * ts * 2;
}

void adv_cumsum(DT dt, const TRef& dst, const TRef& last_row, const TRef& src, const TRef& tmp, int has_tmp,
                uint32_t tmp_bytes, int last_axis, int output_last_row, uint32_t outter, uint32_t inner,
                const Loc& loc) {
    const char* api = "CumSum";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt);
    if (outter == 0 || inner == 0)
        fault("invalid_argument", loc, "CumSum: cumSumInfo.outter (%u) and inner (%u) must be positive", outter, inner);
    if ((uint64_t(inner) * es) % 32)
        fault("invalid_argument", loc, "CumSum: cumSumInfo.inner (%u) * sizeof(T) must be a multiple of 32 B", inner);
    const uint64_t nbytes = uint64_t(outter) * inner * es;
    const uint32_t last_n = last_axis ? outter : inner;
    check_local(src, 0, nbytes, 32, api, "srcTensor", loc);
    check_local(dst, 0, nbytes, 32, api, "dstTensor", loc);
    if (output_last_row) check_local(last_row, 0, uint64_t(last_n) * es, 32, api, "lastRowTensor", loc);
    uint32_t mx, mn;
    cumsum_tmp_bytes(outter, inner, es, last_axis, mx, mn);
    check_tmp(api, "GetCumSumMaxMinTmpSize", tmp, has_tmp, tmp_bytes, mn, loc);
    if (cfg.check_uninit) check_init_range(src, src.addr, uint32_t(nbytes), api, loc);
    const uint8_t* s = mem_ptr(src.mem, src.addr);
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    std::vector<float> out(size_t(outter) * inner);
    for (uint32_t r = 0; r < outter; ++r)
        for (uint32_t c = 0; c < inner; ++c) {
            float v = float(ld(dt, s + (uint64_t(r) * inner + c) * es));
            float prev = last_axis ? (c ? out[size_t(r) * inner + c - 1] : 0.0f)
                                   : (r ? out[size_t(r - 1) * inner + c] : 0.0f);
            out[size_t(r) * inner + c] = prev + v;
        }
    for (size_t i = 0; i < out.size(); ++i) st(dt, d + i * es, out[i]);
    mark_init_range(dst.mem, dst.addr, uint32_t(nbytes));
    if (output_last_row) {
        uint8_t* l = mem_ptr(last_row.mem, last_row.addr);
        for (uint32_t i = 0; i < last_n; ++i)
            st(dt, l + uint64_t(i) * es,
               last_axis ? out[size_t(i) * inner + inner - 1] : out[size_t(outter - 1) * inner + i]);
        mark_init_range(last_row.mem, last_row.addr, last_n * es);
    }
    // line by line: one add per row (first axis) or per column after a transpose (last axis)
    const double elems = double(outter) * inner;
    double occ = last_axis ? vcost(elems, dt, 3, 0, 0, 4 + inner) : vcost(elems, dt, 1, 0, 0, outter);
    Span rd{src.addr, uint32_t(nbytes)};
    Span wr[2] = {{dst.addr, uint32_t(nbytes)}, {last_row.addr, last_n * es}};
    issue(P_V, occ, 0, &rd, 1, wr, output_last_row ? 2 : 1, api, loc);
}

// ---- Mean -------------------------------------------------------------------------------------
// GetMeanMaxMinTmpSize: the per-repeat partial sums rounded up to 32, plus a float copy of a row when
// half data is accumulated in float.
uint32_t mean_tmp_bytes(uint32_t n, uint32_t ts, uint32_t acc) {
    uint32_t epr = 256 / ts, repeats = (n + epr - 1) / epr;
    uint32_t work = align_up(repeats, 32);
    if (ts == 2 && acc == 4) {
        uint32_t inner = align_up(uint64_t(n) * ts, 32) / ts;
        work = align_up((n + 63) / 64, 32) + inner * 4;
    }
    return work;
}

void adv_mean(DT dt, DT acc_dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
              uint32_t outter, uint32_t inner, uint32_t n, const Loc& loc) {
    const char* api = "Mean";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt);
    if (n == 0 || outter == 0) fault("invalid_argument", loc, "Mean: MeanParams n and outter must be positive");
    if (n > inner) fault("invalid_argument", loc, "Mean: MeanParams n (%u) exceeds inner (%u)", n, inner);
    if ((uint64_t(inner) * es) % 32)
        fault("invalid_argument", loc, "Mean: MeanParams inner (%u) * sizeof(T) must be a multiple of 32 B", inner);
    check_local(src, 0, uint64_t(outter) * inner * es, 32, api, "srcTensor", loc);
    check_local(dst, 0, uint64_t(outter) * es, 32, api, "dstTensor", loc);
    check_tmp(api, "GetMeanMaxMinTmpSize", tmp, has_tmp, tmp_bytes, mean_tmp_bytes(n, es, dt_size(acc_dt)), loc);
    if (cfg.check_uninit)
        for (uint32_t r = 0; r < outter; ++r) check_init_range(src, src.addr + r * inner * es, n * es, api, loc);
    const uint8_t* s = mem_ptr(src.mem, src.addr);
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    const bool half_acc = acc_dt == DT::F16;
    const uint32_t epr = half_acc ? 128 : 64;
    for (uint32_t r = 0; r < outter; ++r) {
        // one partial per repeat, then the partials; half accumulation rounds each partial
        float total = 0;
        for (uint32_t j = 0; j < n; j += epr) {
            float part = 0;
            for (uint32_t e = j; e < std::min(n, j + epr); ++e) part += float(ld(dt, s + (uint64_t(r) * inner + e) * es));
            total = half_acc ? round_to(DT::F16, total + round_to(DT::F16, part)) : total + part;
        }
        st(dt, d + uint64_t(r) * es, total / float(n));
    }
    mark_init_range(dst.mem, dst.addr, outter * es);
    uint32_t repeats = (n + epr - 1) / epr;
    double occ = double(outter) * (2 + (repeats > 1)) * cfg.vec_issue_cycles +
                 double(outter) * (repeats + 2) * cfg.vec_reduce_cycles_per_repeat;
    if (dt != acc_dt) occ += vcost(double(outter) * inner, DT::F16, 0, 0, 0, 0);
    Span rd{src.addr, outter * inner * es}, w{dst.addr, outter * es};
    issue(P_V, occ, 0, &rd, 1, &w, 1, api, loc);
}

// ---- Pad --------------------------------------------------------------------------------------
// GetPadMaxMinTmpSize: two buffers of 16 blocks (min) or of the whole input rounded to 16 elements (max)
uint32_t pad_tmp_bytes(uint32_t height, uint32_t width, uint32_t ts, int want_max) {
    uint32_t epb = 32 / ts;
    uint64_t groups = want_max ? (uint64_t(height) * width + 15) / 16 : 1;
    return uint32_t(groups * 16 * epb * 2 * ts);
}

void adv_pad(DT dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
             uint32_t height, uint32_t width, uint32_t ori_width, uint16_t left, uint16_t right, double value,
             const Loc& loc) {
    const char* api = "Pad";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt), epb = 32 / es;
    if (height == 0 || width == 0 || ori_width == 0 || ori_width > width)
        fault("invalid_argument", loc, "Pad: the tiling's shape (srcHeight %u, srcWidth %u, srcOriWidth %u) is invalid; "
              "fill it with PadTilingFunc", height, width, ori_width);
    const uint8_t* s = mem_ptr(src.mem, src.addr);
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    uint64_t src_bytes = uint64_t(height) * width * es, dst_bytes;
    if ((uint64_t(width) * es) % 32 == 0) {
        // aligned rows: copy, then write padValue over rightPad elements from oriWidth on in each row's last block
        if (left != 0 || ori_width + right > width || width - ori_width >= epb)
            fault("invalid_argument", loc, "Pad: with a 32-byte aligned srcWidth (%u) only rightPad within the last "
                  "block is possible (oriWidth %u, leftPad %u, rightPad %u)", width, ori_width, left, right);
        dst_bytes = src_bytes;
        check_local(src, 0, src_bytes, 32, api, "srcTensor", loc);
        check_local(dst, 0, dst_bytes, 32, api, "dstTensor", loc);
        if (cfg.check_uninit)
            for (uint32_t r = 0; r < height; ++r) check_init_range(src, src.addr + r * width * es, ori_width * es, api, loc);
        std::vector<uint8_t> buf(s, s + src_bytes);
        for (uint32_t r = 0; r < height; ++r)
            for (uint32_t c = ori_width; c < ori_width + right; ++c) st(dt, buf.data() + (uint64_t(r) * width + c) * es, value);
        std::memcpy(d, buf.data(), src_bytes);
    } else {
        // unaligned rows (height x width packed): each output row is leftPad values, the row, rightPad values
        const uint64_t out_w = uint64_t(left) + width + right;
        if ((out_w * es) % 32)
            fault("invalid_argument", loc, "Pad: leftPad (%u) + srcWidth (%u) + rightPad (%u) must make a 32-byte "
                  "aligned row", left, width, right);
        dst_bytes = height * out_w * es;
        check_local(src, 0, src_bytes, 32, api, "srcTensor", loc);
        check_local(dst, 0, dst_bytes, 32, api, "dstTensor", loc);
        check_tmp(api, "GetPadMaxMinTmpSize", tmp, has_tmp, tmp_bytes, pad_tmp_bytes(height, width, es, 0), loc);
        if (cfg.check_uninit) check_init_range(src, src.addr, uint32_t(src_bytes), api, loc);
        std::vector<uint8_t> buf(dst_bytes);
        for (uint32_t r = 0; r < height; ++r)
            for (uint64_t c = 0; c < out_w; ++c) {
                uint8_t* o = buf.data() + (r * out_w + c) * es;
                if (c < left || c >= left + uint64_t(ori_width)) st(dt, o, value);
                else std::memcpy(o, s + (uint64_t(r) * width + (c - left)) * es, es);
            }
        std::memcpy(d, buf.data(), dst_bytes);
    }
    mark_init_range(dst.mem, dst.addr, uint32_t(dst_bytes));
    Span rd{src.addr, uint32_t(src_bytes)}, w{dst.addr, uint32_t(dst_bytes)};
    double repeats = std::ceil(double(dst_bytes) / 256.0);
    issue(P_V, 3 * cfg.vec_issue_cycles + 3 * repeats * 256.0 / cfg.vec_simple_bytes_per_cycle, 0, &rd, 1, &w, 1, api,
          loc);
}

uint32_t unpad_tmp_bytes(uint32_t height, uint32_t width, uint32_t ts, int want_max) {
    // one 32-byte block per row of a group of 16 rows (the minimum), or per row of the whole tensor
    uint64_t rows = want_max ? std::max<uint64_t>(height, 16) : 16;
    (void)width;
    return uint32_t(rows * 32 * (ts == 4 ? 2 : 1));
}

void adv_unpad(DT dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
               uint32_t height, uint32_t width, uint16_t left, uint16_t right, const Loc& loc) {
    const char* api = "UnPad";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt), epb = 32 / es;
    if (height == 0 || width == 0)
        fault("invalid_argument", loc, "UnPad: the tiling's shape (srcHeight %u, srcWidth %u) is invalid; fill it with "
              "UnPadTilingFunc", height, width);
    if ((uint64_t(width) * es) % 32)
        fault("invalid_argument", loc, "UnPad: srcWidth (%u) * sizeof(T) must be 32-byte aligned", width);
    if (left != 0 || right == 0 || right >= epb)
        fault("invalid_argument", loc, "UnPad: only a rightPad in (0, %u) elements (under 32 B) is possible on this SoC "
              "(leftPad %u, rightPad %u)", epb, left, right);
    const uint64_t out_w = width - right, src_bytes = uint64_t(height) * width * es, dst_bytes = height * out_w * es;
    check_local(src, 0, src_bytes, 32, api, "srcTensor", loc);
    check_local(dst, 0, dst_bytes, 32, api, "dstTensor", loc);
    check_tmp(api, "GetUnPadMaxMinTmpSize", tmp, has_tmp, tmp_bytes, unpad_tmp_bytes(height, width, es, 0), loc);
    if (cfg.check_uninit)
        for (uint32_t r = 0; r < height; ++r) check_init_range(src, src.addr + r * width * es, uint32_t(out_w * es), api, loc);
    const uint8_t* s = mem_ptr(src.mem, src.addr);
    std::vector<uint8_t> buf(dst_bytes);
    for (uint32_t r = 0; r < height; ++r) std::memcpy(buf.data() + r * out_w * es, s + uint64_t(r) * width * es, out_w * es);
    std::memcpy(mem_ptr(dst.mem, dst.addr), buf.data(), dst_bytes);
    mark_init_range(dst.mem, dst.addr, uint32_t(dst_bytes));
    Span rd{src.addr, uint32_t(src_bytes)}, w{dst.addr, uint32_t(dst_bytes)};
    double repeats = std::ceil(double(src_bytes) / 256.0);
    issue(P_V, 3 * cfg.vec_issue_cycles + 3 * repeats * 256.0 / cfg.vec_simple_bytes_per_cycle, 0, &rd, 1, &w, 1, api,
          loc);
}

// ---- ReduceSum/Max/Min/Prod/Mean over one axis of a 2-D tensor (pattern AR or RA) ----------------
// AR: dst[i] = reduce_j src[i][j], RA: dst[j] = reduce_i src[i][j]. With srcInnerPad the rows are
// the inner length rounded up to 32 bytes apart. Sums accumulate in float.
void adv_reduce_axis(int op, DT dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
                     uint32_t d0, uint32_t d1, int ra, int inner_pad, const Loc& loc) {
    static const char* names[] = {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceMean"};
    const char* api = names[op];
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt);
    if (d0 == 0 || d1 == 0) fault("invalid_argument", loc, "%s: srcShape {%u, %u} has an empty axis", api, d0, d1);
    const uint32_t stride = inner_pad ? align_up(uint64_t(d1) * es, 32) / es : d1;
    const uint32_t n_out = ra ? d1 : d0, n_red = ra ? d0 : d1;
    check_local(src, 0, uint64_t(d0 - 1) * stride * es + uint64_t(d1) * es, 32, api, "srcTensor", loc);
    check_local(dst, 0, uint64_t(n_out) * es, 32, api, "dstTensor", loc);
    check_tmp(api, "the Get<Api>MaxMinTmpSize helper", tmp, has_tmp, tmp_bytes, 0, loc);
    if (cfg.check_uninit)
        for (uint32_t r = 0; r < d0; ++r) check_init_range(src, src.addr + r * stride * es, d1 * es, api, loc);
    const uint8_t* s = mem_ptr(src.mem, src.addr);
    std::vector<double> out(n_out);
    for (uint32_t o = 0; o < n_out; ++o) {
        double acc = 0;
        for (uint32_t k = 0; k < n_red; ++k) {
            uint64_t at = ra ? uint64_t(k) * stride + o : uint64_t(o) * stride + k;
            double v = ld(dt, s + at * es);
            if (k == 0) { acc = v; continue; }
            switch (op) {
                case 1: acc = (v > acc || v != v) ? v : acc; break;
                case 2: acc = (v < acc || v != v) ? v : acc; break;
                case 3: acc = double(float(acc) * float(v)); break;
                default: acc = double(float(acc) + float(v)); break;
            }
        }
        out[o] = op == 4 ? double(float(acc) / float(n_red)) : acc;
    }
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    for (uint32_t o = 0; o < n_out; ++o) st(dt, d + uint64_t(o) * es, out[o]);
    mark_init_range(dst.mem, dst.addr, n_out * es);
    // RA: one element-wise op per row; AR: a repeat reduction per 256 bytes of each row
    double elems = double(d0) * stride;
    double occ = ra ? vcost(elems, dt, 1, 0, 0, d0) : vcost(elems, dt, 0, 0, std::ceil(elems * es / 256.0), d0);
    Span rd{src.addr, uint32_t(uint64_t(d0) * stride * es)}, w{dst.addr, n_out * es};
    issue(P_V, occ, 0, &rd, 1, &w, 1, api, loc);
}

}  // namespace kgsim
