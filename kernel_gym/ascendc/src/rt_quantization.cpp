// kgsim runtime: AscendQuant, AscendDequant and AscendAntiQuant on Atlas A2 (kgsim/quantization.h),
// computed in the precision of the documented vector implementations: AscendQuant and the
// half-output AscendAntiQuant work in half (inputs, scale and offset cast to half, Muls/Adds
// rounded to half, then a round-half-to-even Cast to int8); AscendDequant and the bfloat16-output
// AscendAntiQuant work in float. Temporary space is checked against the CANN tiling helpers' sizes
// (kgsim/quantization_tiling.h computes the same numbers on the host).
#include "kgsim/quantization.h"
#include "rt_elem.h"

namespace kgsim {
using elem::ld;
using elem::st;
using elem::to;

namespace {
double scalar_cost(double elems, double passes, double instrs) { return elem::vcost(elems, passes, 0, 0, instrs); }
uint32_t quant_min_tmp() { return 2 * 256; }
uint32_t dequant_min_tmp(uint32_t n) { return (64 + n + (n + 8)) * 4; }
}  // namespace

void adv_ascend_quant(const QuantArgs& a, const Loc& loc) {
    const char* api = "AscendQuant";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(a.src_dt), n = a.count;
    if (n == 0) return;
    check_local(a.src, 0, uint64_t(n) * es, 32, api, "srcTensor", loc);
    check_local(a.dst, 0, n, 32, api, "dstTensor", loc);
    if (a.scale_tensor) {
        if (a.scale_count == 0 || n % a.scale_count)
            fault("invalid_argument", loc, "AscendQuant: calCount (%u) must be a multiple of scaleCount (%u)", n,
                  a.scale_count);
        check_local(a.scale, 0, uint64_t(a.scale_count) * es, 32, api, "scaleTensor", loc);
    }
    if (a.offset_tensor) {
        if (a.offset_count != a.scale_count)
            fault("invalid_argument", loc, "AscendQuant: offsetCount (%u) must equal scaleCount (%u)", a.offset_count,
                  a.scale_count);
        check_local(a.offset, 0, uint64_t(a.offset_count) * es, 32, api, "offsetTensor", loc);
    }
    elem::check_tmp(api, "GetAscendQuantMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes, quant_min_tmp(), loc);
    if (cfg.check_uninit) check_init_range(a.src, a.src.addr, n * es, api, loc);
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    const float sc_scalar = to(DT::F16, a.scale_v), off_scalar = to(DT::F16, a.offset_v);
    for (uint32_t i = 0; i < n; ++i) {
        float x = to(DT::F16, ld(a.src_dt, s + uint64_t(i) * es));
        float sc = a.scale_tensor
                       ? to(DT::F16, ld(a.src_dt, mem_ptr(a.scale.mem, a.scale.addr) + (i % a.scale_count) * es))
                       : sc_scalar;
        float off = a.offset_tensor
                        ? to(DT::F16, ld(a.src_dt, mem_ptr(a.offset.mem, a.offset.addr) + (i % a.offset_count) * es))
                        : off_scalar;
        float y = to(DT::F16, to(DT::F16, x * sc) + off);
        st(DT::I8, d + i, std::nearbyint(y));  // round half to even, saturated to int8
    }
    mark_init_range(a.dst.mem, a.dst.addr, n);
    double occ = scalar_cost(n, 4 + (a.src_dt == DT::F32), 5);
    Span rd{a.src.addr, n * es}, w{a.dst.addr, n};
    issue(P_V, occ, 0, &rd, 1, &w, 1, api, loc);
}

void adv_ascend_dequant(const QuantArgs& a, const Loc& loc) {
    const char* api = "AscendDequant";
    check_in_launch(loc, api);
    tick(loc);
    uint32_t m = a.m, n = a.n, cal = a.count;
    const uint32_t des = dt_size(a.dst_dt);
    if (m == 0 || n == 0) fault("invalid_argument", loc, "AscendDequant: DequantParams m and n must be positive");
    if ((uint64_t(n) * 4) % 32)
        fault("invalid_argument", loc, "AscendDequant: DequantParams n (%u) * sizeof(int32_t) must be a multiple of "
              "32 B", n);
    if (cal > n) fault("invalid_argument", loc, "AscendDequant: calCount (%u) exceeds n (%u)", cal, n);
    // DEQUANT_WITH_SINGLE_ROW reads {1, n, calCount} as n / calCount rows of calCount
    if (a.mode == 0 && m == 1 && cal && cal % (32 / des) == 0 && n % cal == 0) m = n / cal, n = cal;
    if (a.scale_tensor && cal > a.scale_count)
        fault("invalid_argument", loc, "AscendDequant: calCount (%u) exceeds the deqScale tensor's %u elements", cal,
              a.scale_count);
    const uint32_t n_dst = elem::align_up(uint64_t(n) * des, 32) / des;
    check_local(a.src, 0, uint64_t(m) * n * 4, 32, api, "srcTensor", loc);
    check_local(a.dst, 0, uint64_t(m) * n_dst * des, 32, api, "dstTensor", loc);
    const uint32_t pes = dt_size(a.param_dt);
    if (a.scale_tensor) check_local(a.scale, 0, uint64_t(cal) * pes, 32, api, "deqScale", loc);
    elem::check_tmp(api, "GetAscendDequantMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes, dequant_min_tmp(n), loc);
    if (cfg.check_uninit) check_init_range(a.src, a.src.addr, m * n * 4, api, loc);
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    const uint8_t* sp = a.scale_tensor ? mem_ptr(a.scale.mem, a.scale.addr) : nullptr;
    for (uint32_t r = 0; r < m; ++r) {
        for (uint32_t j = 0; j < n; ++j) {
            float x = float(ld(DT::I32, s + (uint64_t(r) * n + j) * 4));
            float v = x;
            if (j < cal) {
                float sc;
                if (!a.scale_tensor) sc = to(a.param_dt, a.scale_v);
                else if (a.param_dt == DT::U64) {  // the low 32 bits hold the float scale
                    uint32_t lo;
                    std::memcpy(&lo, sp + uint64_t(j) * 8, 4);
                    std::memcpy(&sc, &lo, 4);
                } else {
                    sc = float(ld(a.param_dt, sp + uint64_t(j) * pes));
                }
                v = x * sc;
            }
            st(a.dst_dt, d + (uint64_t(r) * n_dst + j) * des, v);
        }
    }
    mark_init_range(a.dst.mem, a.dst.addr, m * n_dst * des);
    double occ = scalar_cost(double(m) * n, 3 + (a.dst_dt != DT::F32), 4 + m);
    Span rd{a.src.addr, m * n * 4}, w{a.dst.addr, m * n_dst * des};
    issue(P_V, occ, 0, &rd, 1, &w, 1, api, loc);
}

void adv_ascend_antiquant(const QuantArgs& a, const Loc& loc) {
    const char* api = "AscendAntiQuant";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t oes = dt_size(a.dst_dt);
    const bool bf16 = a.dst_dt == DT::BF16;
    const bool per_channel = a.scale_tensor && a.scale_count > 1;
    uint32_t rows = 0, cols = 0, group = 1, prm_w = 0;
    if (per_channel) {
        // offset / scale are [offsetHeight, offsetWidth]; src is [K, N] (transposed: [N, K])
        uint32_t ph = a.sc_h ? a.sc_h : (a.off_h ? a.off_h : 1);
        uint32_t pw = a.sc_w ? a.sc_w : (a.off_w ? a.off_w : a.scale_count / ph);
        if (a.k == 0) fault("invalid_argument", loc, "AscendAntiQuant: K must be positive");
        if (!a.transpose) {
            rows = a.k, cols = pw;
            if (ph == 0 || a.k % ph) fault("invalid_argument", loc, "AscendAntiQuant: K (%u) must be a multiple of "
                                           "the offset/scale height (%u)", a.k, ph);
            group = a.k / ph;
        } else {
            rows = ph, cols = a.k;
            if (pw == 0 || a.k % pw) fault("invalid_argument", loc, "AscendAntiQuant: K (%u) must be a multiple of "
                                           "the offset/scale width (%u)", a.k, pw);
            group = a.k / pw;
        }
        prm_w = pw;
        if (uint64_t(ph) * pw > a.scale_count)
            fault("invalid_argument", loc, "AscendAntiQuant: the scale shape [%u, %u] exceeds the scale tensor's %u "
                  "elements", ph, pw, a.scale_count);
    } else {
        rows = 1, cols = a.count;
    }
    const uint64_t total = uint64_t(rows) * cols;
    if (total == 0) return;
    check_local(a.src, 0, total * dt_size(a.src_dt), 32, api, "src", loc);
    check_local(a.dst, 0, total * oes, 32, api, "dst", loc);
    if (bf16) {
        uint32_t need = per_channel ? (a.transpose ? 80 * a.scale_count * 4 : a.scale_count * 2 * 4 + 64 * a.k * 4)
                                    : 1024;
        elem::check_tmp(api, "GetAscendAntiQuantMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes, need, loc);
    }
    if (cfg.check_uninit) check_init_range(a.src, a.src.addr, uint32_t(total * dt_size(a.src_dt)), api, loc);
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    const DT cdt = bf16 ? DT::F32 : DT::F16;  // bfloat16 output goes through float on A2
    for (uint32_t i = 0; i < rows; ++i) {
        for (uint32_t j = 0; j < cols; ++j) {
            float sc, off;
            if (per_channel) {
                uint64_t p = a.transpose ? uint64_t(i) * prm_w + j / group : uint64_t(i / group) * prm_w + j;
                sc = float(ld(a.param_dt, mem_ptr(a.scale.mem, a.scale.addr) + p * oes));
                off = a.offset_tensor ? float(ld(a.param_dt, mem_ptr(a.offset.mem, a.offset.addr) + p * oes)) : 0.f;
            } else {
                sc = a.scale_tensor ? float(ld(a.param_dt, mem_ptr(a.scale.mem, a.scale.addr))) : to(a.dst_dt, a.scale_v);
                off = a.offset_tensor ? float(ld(a.param_dt, mem_ptr(a.offset.mem, a.offset.addr)))
                                      : to(a.dst_dt, a.offset_v);
            }
            uint64_t e = uint64_t(i) * cols + j;
            float x = to(cdt, ld(a.src_dt, s + e * dt_size(a.src_dt)));
            float y = to(cdt, to(cdt, x + off) * sc);
            st(a.dst_dt, d + e * oes, y);
        }
    }
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(total * oes));
    double occ = scalar_cost(double(total), 3 + 2 * bf16, 3 + 2 * bf16);
    Span rd{a.src.addr, uint32_t(total * dt_size(a.src_dt))}, w{a.dst.addr, uint32_t(total * oes)};
    issue(P_V, occ, 0, &rd, 1, &w, 1, api, loc);
}
}  // namespace kgsim
