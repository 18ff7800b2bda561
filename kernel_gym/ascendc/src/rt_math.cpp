// kgsim runtime: the advanced math APIs (Tanh, Sigmoid, Gelu, Power, ...), Sum, and the
// data-rearranging vector instructions (GatherMask, Brcb, BroadCast, Copy, the compare mask).
// Advanced APIs are count-form element-wise functions computed in float (half in, half out; Sigmoid
// of half rounds each of its steps to half, as CANN's implementation computes it in the data type);
// their cost is that of the basic vector instructions they decompose into.
#include "rt.h"
#include "kgsim/math.h"

namespace kgsim {
namespace {

struct MathInfo {
    const char* name;
    uint8_t tmp_half, tmp_float;  // temporary buffer: live nodes of one repeat (CANN tiling factors)
    uint8_t simple, trans;        // basic instructions per repeat: simple ops, Exp/Ln/Div/Sqrt class
};

// Factors follow the public asc-devkit tiling rules (min tmp = factor * 256 B, max = factor *
// max(n * sizeof(T), 256 B)); instruction counts are the documented decomposition, rounded.
const MathInfo kInfo[M_COUNT] = {
    {"Tanh", 4, 1, 4, 2},        {"Sigmoid", 1, 1, 3, 2},     {"Log", 0, 0, 0, 1},
    {"Log2", 2, 0, 1, 1},        {"Log10", 0, 0, 1, 1},       {"Exp", 8, 3, 6, 1},
    {"Power", 14, 4, 10, 3},     {"Power", 14, 5, 10, 3},     {"Power", 14, 5, 10, 3},
    {"Erf", 8, 3, 14, 1},        {"Erfc", 16, 7, 18, 2},      {"Gelu", 3, 3, 6, 2},
    {"FasterGelu", 3, 3, 3, 2},  {"Silu", 0, 0, 3, 2},        {"Swish", 0, 0, 4, 2},
    {"Sin", 8, 3, 16, 0},        {"Cos", 8, 3, 16, 0},        {"Tan", 8, 3, 18, 1},
    {"Asin", 6, 2, 16, 2},       {"Acos", 6, 2, 17, 2},       {"Atan", 12, 5, 20, 1},
    {"Sinh", 6, 2, 4, 2},        {"Cosh", 6, 2, 4, 2},        {"Floor", 2, 0, 2, 0},
    {"Ceil", 2, 1, 2, 0},        {"Round", 1, 1, 2, 0},       {"Trunc", 2, 1, 2, 0},
    {"Frac", 2, 1, 3, 0},        {"Sign", 2, 1, 4, 0},        {"ClampMax", 1, 1, 2, 0},
    {"ClampMin", 1, 1, 2, 0},    {"Axpy", 4, 1, 2, 0},        {"Softplus", 2, 2, 3, 2},
    {"Asinh", 3, 3, 4, 2},       {"Acosh", 2, 1, 4, 2},       {"Atanh", 4, 1, 3, 2},
    {"Lgamma", 26, 8, 40, 6},    {"Digamma", 16, 7, 40, 4},   {"FasterGeluV2", 3, 3, 10, 1},
    {"GeGLU", 4, 3, 7, 2},       {"SwiGLU", 2, 1, 5, 2},      {"Fmod", 6, 2, 6, 1},
    {"Xor", 2, 1, 4, 0},
};

// digamma in double: reflection for x < 0, recurrence up to x >= 6, then the asymptotic series
double digamma(double x) {
    if (x != x) return x;
    if (x <= 0 && std::floor(x) == x) return x == 0 ? -HUGE_VAL : NAN;
    double acc = 0;
    if (x < 0) {
        acc = -M_PI / std::tan(M_PI * x);
        x = 1 - x;
    }
    while (x < 6) {
        acc -= 1 / x;
        x += 1;
    }
    double f = 1 / (x * x);
    double series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
    return acc + std::log(x) - 0.5 / x - series;
}

float apply(MathFn fn, float x, float y, double s0) {
    const float s = float(s0);
    switch (fn) {
        case M_TANH: return std::tanh(x);
        case M_SIGMOID: return 1.0f / (1.0f + std::exp(-x));
        case M_LOG: return std::log(x);
        case M_LOG2: return std::log2(x);
        case M_LOG10: return std::log10(x);
        case M_EXP: return std::exp(x);
        case M_POWER_TT: return std::pow(x, y);
        case M_POWER_TS: return std::pow(x, s);
        case M_POWER_ST: return std::pow(s, y);
        case M_ERF: return std::erf(x);
        case M_ERFC: return std::erfc(x);
        case M_GELU: {  // tanh approximation, written as x * sigmoid(2 * sqrt(2/pi) * (x + 0.044715 x^3))
            float t = 1.5957691216f * (x + 0.044715f * x * x * x);
            return x / (1.0f + std::exp(-t));
        }
        case M_FASTER_GELU: return x / (1.0f + std::exp(-1.702f * x));
        case M_SILU: return x / (1.0f + std::exp(-x));
        case M_SWISH: return x / (1.0f + std::exp(-s * x));
        case M_SIN: return std::sin(x);
        case M_COS: return std::cos(x);
        case M_TAN: return std::tan(x);
        case M_ASIN: return std::asin(x);
        case M_ACOS: return std::acos(x);
        case M_ATAN: return std::atan(x);
        case M_SINH: return std::sinh(x);
        case M_COSH: return std::cosh(x);
        case M_FLOOR: return std::floor(x);
        case M_CEIL: return std::ceil(x);
        case M_ROUND: return std::nearbyint(x);  // ties to even
        case M_TRUNC: return std::trunc(x);
        case M_FRAC: return x - std::trunc(x);
        case M_SIGN: return x > 0 ? 1.0f : (x < 0 ? -1.0f : (x != x ? x : 0.0f));
        case M_CLAMP_MAX: return (x != x || x < s) ? x : s;
        case M_CLAMP_MIN: return (x != x || x > s) ? x : s;
        case M_AXPY: return y + x * s;  // y is the old dst
        case M_SOFTPLUS: return x > 20.0f ? x : std::log1p(std::exp(x));
        case M_ASINH: return std::asinh(x);
        case M_ACOSH: return std::acosh(x);
        case M_ATANH: return std::atanh(x);
        case M_LGAMMA: return std::lgamma(x);
        case M_DIGAMMA: return float(digamma(x));
        case M_FASTER_GELU_V2: {  // x * (sgn(x) * (-0.1444 * (min(|0.7071 x|, 1.769) - 1.769)^2 + 0.5) + 0.5)
            float c = std::min(std::fabs(0.7071f * x), 1.769f) - 1.769f;
            float sg = (x + 1e-12f) / std::fabs(x + 1e-12f);
            return x * (sg * (-0.1444f * c * c + 0.5f) + 0.5f);
        }
        case M_GEGLU: {  // src0 * Gelu(src1): the tanh form, x1 / (1 + exp(a * x1 * (b + x1^2)))
            return x * (y / (1.0f + std::exp(-0.0713548162726f * y * (22.363860002236f + y * y))));
        }
        case M_SWIGLU: return x * (y / (1.0f + std::exp(-s * y)));
        case M_FMOD: return std::fmod(x, y);
        default: return x;
    }
}

// Sigmoid of half data as CANN's implementation for this architecture computes it (asc-devkit's
// SigmoidIntrinsicsImpl: Muls by -1, Exp, Adds 1, Div of a Duplicate'd 1, each in the data type):
// every step rounded to half, not the whole function in float rounded once (the difference is
// several ulps near 0.5; cann-ops' mul_sigmoid golden, fp16 step by step, needs the former).
float sigmoid_half_steps(float x) {
    const half e = half(std::exp(float(half(-x))));
    const half d = half(float(e) + 1.0f);
    return float(half(1.0f / float(d)));
}

bool is_binary(MathFn fn) {
    return fn == M_POWER_TT || fn == M_POWER_ST || fn == M_AXPY || fn == M_GEGLU || fn == M_SWIGLU || fn == M_FMOD ||
           fn == M_XOR;
}

double load_as(DT dt, const uint8_t* p) {
    switch (dt) {
        case DT::F32: { float v; std::memcpy(&v, p, 4); return v; }
        case DT::F16: { half v; std::memcpy(&v, p, 2); return float(v); }
        case DT::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
        default: return 0;
    }
}
void store_as(DT dt, uint8_t* p, double v) {
    if (dt == DT::F32) { float f = float(v); std::memcpy(p, &f, 4); }
    else if (dt == DT::F16) { half h = half(float(v)); std::memcpy(p, &h, 2); }
    else if (dt == DT::I32) {
        int32_t i = v != v ? 0 : int32_t(std::max(-2147483648.0, std::min(2147483647.0, std::trunc(v))));
        std::memcpy(p, &i, 4);
    }
}

// Vector-pipe occupancy of `simple` + `trans` instructions over n float-sized lanes (half
// inputs also pay a Cast up and down), split into several passes when the temporary buffer
// holds less than the whole input.
double math_cycles(const MathInfo& mi, DT dt, int64_t n, uint32_t passes) {
    double repeats = std::ceil(double(n) / 64.0);
    double per_repeat = mi.simple * 256.0 / cfg.vec_simple_bytes_per_cycle + mi.trans * 64.0 /
                        cfg.vec_transcendental_elems_per_cycle;
    double instrs = double(mi.simple + mi.trans);
    if (dt == DT::F16) {
        per_repeat += 2 * 64.0 / cfg.vec_cast_elems_per_cycle;
        instrs += 2;
    }
    double splits = std::max(1.0, std::ceil(repeats / cfg.max_repeat)) * std::max<uint32_t>(1, passes);
    return instrs * splits * cfg.vec_issue_cycles + repeats * per_repeat;
}

void check_tmp(const MathInfo& mi, DT dt, const TRef& tmp, uint32_t tmp_bytes, int has_tmp, uint32_t min_bytes,
               const Loc& loc) {
    if (min_bytes == 0) return;
    if (has_tmp) {
        check_local(tmp, 0, tmp_bytes, 32, mi.name, "sharedTmpBuffer", loc);
        if (tmp_bytes < min_bytes)
            fault("invalid_argument", loc, "%s: sharedTmpBuffer holds %u B but the API needs at least %u B for %s "
                  "(Get%sMaxMinTmpSize gives the minimum)", mi.name, tmp_bytes, min_bytes, dt_name(dt), mi.name);
        return;
    }
    // Without sharedTmpBuffer the API takes its temporary space from the UB that TPipe left free.
    double left = cfg.usable_ub_bytes - double(rt.blk.top[MEM_UB]);
    if (left < double(min_bytes))
        fault("ub_overflow", loc, "%s without sharedTmpBuffer needs %u B of UB that no InitBuffer holds, but only "
              "%.0f B of the usable UB of %.0f B are left; pass a sharedTmpBuffer or allocate less",
              mi.name, min_bytes, std::max(0.0, left), cfg.usable_ub_bytes);
}

}  // namespace

uint32_t math_tmp_bytes(MathFn fn, uint32_t type_size, uint64_t n, int want_max) {
    if (fn >= M_COUNT) return 0;
    const MathInfo& mi = kInfo[fn];
    if (fn == M_SIGMOID) return want_max ? uint32_t(std::max<uint64_t>(n * type_size, 256)) : 256;
    if (fn == M_ACOSH) {  // GetAcoshMaxMinTmpSize: max(factor * n, 256) elements of type_size bytes
        uint32_t f = type_size == 4 ? mi.tmp_float : mi.tmp_half;
        return want_max ? uint32_t(std::max<uint64_t>(f * n, 256) * type_size) : f * 256;
    }
    if (fn == M_GELU || fn == M_FASTER_GELU || fn == M_FASTER_GELU_V2) return want_max ? uint32_t(std::max<uint64_t>(3 * n * 4, 768)) : 768;
    if (fn == M_CLAMP_MAX || fn == M_CLAMP_MIN) {
        uint32_t epr = 256 / type_size;
        return want_max ? uint32_t(std::max<uint64_t>(n, epr)) : epr;
    }
    uint32_t f = type_size == 4 ? mi.tmp_float : mi.tmp_half;
    return want_max ? uint32_t(f * std::max<uint64_t>(n * type_size, 256)) : f * 256;
}

void vec_math(MathFn fn, DT dt, DT src_dt, const MathArgs& a, const Loc& loc) {
    if (fn >= M_COUNT) fault("invalid_argument", loc, "unknown math function");
    const MathInfo& mi = kInfo[fn];
    check_in_launch(loc, mi.name);
    tick(loc);
    if (a.count < 0) fault("invalid_argument", loc, "%s: negative calCount %lld", mi.name, (long long)a.count);
    if (a.count == 0) return;
    const uint32_t es = dt_size(dt), ses = dt_size(src_dt);
    const uint64_t n = uint64_t(a.count);
    const bool second = is_binary(fn);
    const bool src0_used = fn != M_POWER_ST;
    check_local(a.dst, 0, n * es, 32, mi.name, "dst", loc);
    if (src0_used) check_local(a.src0, 0, n * ses, 32, mi.name, "src", loc);
    if (second && fn != M_AXPY) check_local(a.src1, 0, n * es, 32, mi.name, "src1", loc);
    if (cfg.check_uninit) {
        if (src0_used) check_init_range(a.src0, a.src0.addr, uint32_t(n * ses), mi.name, loc);
        if (second) {
            const TRef& t = fn == M_AXPY ? a.dst : a.src1;
            check_init_range(t, t.addr, uint32_t(n * es), mi.name, loc);
        }
    }
    uint32_t min_tmp = math_tmp_bytes(fn, es, n, 0), max_tmp = math_tmp_bytes(fn, es, n, 1);
    check_tmp(mi, dt, a.tmp, a.tmp_bytes, a.has_tmp, min_tmp, loc);
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    const uint8_t* x = mem_ptr(a.src0.mem, a.src0.addr);
    const uint8_t* y = fn == M_AXPY ? d : mem_ptr(a.src1.mem, a.src1.addr);
    for (uint64_t i = 0; i < n; ++i) {
        float xv = src0_used ? float(load_as(src_dt, x + i * ses)) : 0.0f;
        float yv = second ? float(load_as(dt, y + i * es)) : 0.0f;
        if (fn == M_XOR) {  // bitwise on the 16-bit patterns
            uint16_t p, q;
            std::memcpy(&p, x + i * es, 2);
            std::memcpy(&q, y + i * es, 2);
            p ^= q;
            std::memcpy(d + i * es, &p, 2);
            continue;
        }
        if (dt == DT::I32 && (fn == M_POWER_TT || fn == M_POWER_TS || fn == M_POWER_ST)) {
            double b = fn == M_POWER_ST ? a.s0 : load_as(dt, x + i * es);
            double e = fn == M_POWER_TS ? a.s0 : load_as(dt, y + i * es);
            store_as(dt, d + i * es, e < 0 ? (std::fabs(b) == 1 ? std::pow(b, e) : 0.0) : std::pow(b, e));
            continue;
        }
        const float v = fn == M_SIGMOID && dt == DT::F16 ? sigmoid_half_steps(xv) : apply(fn, xv, yv, a.s0);
        store_as(dt, d + i * es, v);
    }
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(n * es));
    uint32_t passes = 1;
    if (a.has_tmp && a.tmp_bytes > 0 && max_tmp > a.tmp_bytes) passes = (max_tmp + a.tmp_bytes - 1) / a.tmp_bytes;
    Span rd[2];
    int nr = 0;
    if (src0_used) rd[nr++] = Span{a.src0.addr, uint32_t(n * ses)};
    if (second) rd[nr++] = Span{fn == M_AXPY ? a.dst.addr : a.src1.addr, uint32_t(n * es)};
    Span w{a.dst.addr, uint32_t(n * es)};
    issue(P_V, math_cycles(mi, dt, a.count, passes), 0, rd, nr, &w, 1, mi.name, loc);
}

void vec_sum(DT dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
             uint32_t outter, uint32_t inner, uint32_t n, const Loc& loc) {
    const char* api = "Sum";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt), epb = 32 / es, epr = 256 / es;
    if (n == 0 || outter == 0) fault("invalid_argument", loc, "Sum: SumParams n and outter must be positive");
    if (n > inner) fault("invalid_argument", loc, "Sum: SumParams n (%u) exceeds inner (%u)", n, inner);
    if ((uint64_t(inner) * es) % 32)
        fault("invalid_argument", loc, "Sum: SumParams inner (%u) * sizeof(T) must be a multiple of 32 B", inner);
    check_local(src, 0, uint64_t(outter) * inner * es, 32, api, "src", loc);
    uint32_t dst_elems = (outter + epb - 1) / epb * epb;  // dst is padded to a 32-byte multiple
    check_local(dst, 0, uint64_t(dst_elems) * es, 32, api, "dst", loc);
    uint32_t repeats = (n + epr - 1) / epr;
    uint32_t need = (repeats + epb - 1) / epb * epb * es;  // GetSumMaxMinTmpSize
    if (has_tmp) {
        check_local(tmp, 0, tmp_bytes, 32, api, "sharedTmpBuffer", loc);
        if (tmp_bytes < need)
            fault("invalid_argument", loc, "Sum: sharedTmpBuffer holds %u B, GetSumMaxMinTmpSize requires %u B",
                  tmp_bytes, need);
    } else if (cfg.usable_ub_bytes - double(rt.blk.top[MEM_UB]) < double(need)) {
        fault("ub_overflow", loc, "Sum without sharedTmpBuffer needs %u B of free UB; %.0f B are left", need,
              std::max(0.0, cfg.usable_ub_bytes - double(rt.blk.top[MEM_UB])));
    }
    if (cfg.check_uninit)
        for (uint32_t r = 0; r < outter; ++r)
            check_init_range(src, src.addr + r * inner * es, n * es, api, loc);
    const uint8_t* s = mem_ptr(src.mem, src.addr);
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    const bool is_half = dt == DT::F16;
    auto round_t = [&](float v) { return is_half ? float(half(v)) : v; };
    auto tree = [&](std::vector<float>& v) {  // pairwise tree within one repeat
        size_t k = v.size();
        while (k > 1) {
            size_t h = k / 2;
            for (size_t i = 0; i < h; ++i) v[i] = round_t(v[2 * i] + v[2 * i + 1]);
            if (k & 1) v[h] = v[k - 1];
            k = h + (k & 1);
        }
        return k ? v[0] : 0.0f;
    };
    std::vector<float> buf;
    for (uint32_t r = 0; r < outter; ++r) {
        std::vector<float> partials;
        for (uint32_t j = 0; j < n; j += epr) {  // first level: one sum per repeat
            buf.clear();
            for (uint32_t e = j; e < std::min(n, j + epr); ++e) buf.push_back(float(load_as(dt, s + (uint64_t(r) * inner + e) * es)));
            partials.push_back(tree(buf));
        }
        while (partials.size() > 1) {  // further levels: the partials, repeat by repeat
            std::vector<float> next;
            for (size_t i = 0; i < partials.size(); i += epr) {
                buf.assign(partials.begin() + i, partials.begin() + std::min(partials.size(), i + epr));
                next.push_back(tree(buf));
            }
            partials.swap(next);
        }
        store_as(dt, d + uint64_t(r) * es, partials[0]);
    }
    mark_init_range(dst.mem, dst.addr, outter * es);
    double levels = 1 + (repeats > 1 ? 1 : 0) + (repeats > uint32_t(epr) ? 1 : 0);
    double occ = double(outter) * levels * cfg.vec_issue_cycles +
                 double(outter) * (repeats + levels) * cfg.vec_reduce_cycles_per_repeat;
    Span rd{src.addr, outter * inner * es}, w{dst.addr, dst_elems * es};
    issue(P_V, occ, 0, &rd, 1, &w, 1, api, loc);
}

}  // namespace kgsim

// ---- data rearrangement ------------------------------------------------------------------------
namespace kgsim {
namespace {
uint8_t cmp_mask_reg[16];  // the 128-bit CMPMASK register (one block runs at a time)
}

uint64_t gather_mask(DT dt, const TRef& dst, const TRef& src0, const TRef& pattern, int fixed_pattern,
                     int reduce_mode, uint32_t mask, uint32_t src0_blk, uint32_t repeat, uint32_t src0_rep,
                     uint32_t src1_rep, const Loc& loc) {
    const char* api = "GatherMask";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt), epr = 256 / es, epb = 32 / es;
    if (repeat > uint32_t(cfg.max_repeat))
        fault("repeat_out_of_range", loc, "GatherMask: repeatTimes %u is out of range [0, %.0f]", repeat, cfg.max_repeat);
    if (fixed_pattern == 0 && pattern.end == 0)
        fault("invalid_argument", loc, "GatherMask: src1Pattern must be 1..7 or a LocalTensor");
    if (fixed_pattern > 7) fault("invalid_argument", loc, "GatherMask: fixed src1Pattern %d is not in [1, 7]", fixed_pattern);
    // Normal mode: each repeat takes 256 B; counter mode (Atlas A2, way one): `mask` elements per repeat.
    const uint32_t per_repeat = reduce_mode ? mask : epr;
    if (reduce_mode && mask == 0) fault("mask_out_of_range", loc, "GatherMask: counter-mode mask must be >= 1");
    const uint32_t blk = src0_blk ? src0_blk : 1;
    auto src_off = [&](uint32_t r, uint32_t e) {
        return uint64_t(r) * src0_rep * 32 + uint64_t(e / epb) * blk * 32 + uint64_t(e % epb) * es;
    };
    uint64_t src_span = repeat ? src_off(repeat - 1, per_repeat - 1) + es : 0;
    check_local(src0, 0, src_span, 32, api, "src0", loc);
    if (!fixed_pattern) check_local(pattern, 0, uint64_t(repeat ? repeat - 1 : 0) * src1_rep * 32 + (per_repeat + 7) / 8,
                                    32, api, "src1Pattern", loc);
    const uint8_t* s = mem_ptr(src0.mem, src0.addr);
    const uint8_t* p = fixed_pattern ? nullptr : mem_ptr(pattern.mem, pattern.addr);
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    std::vector<uint8_t> out;
    out.reserve(size_t(repeat) * per_repeat * es);
    for (uint32_t r = 0; r < repeat; ++r)
        for (uint32_t e = 0; e < per_repeat; ++e) {
            bool keep;
            switch (fixed_pattern) {
                case 1: keep = e % 2 == 0; break;
                case 2: keep = e % 2 == 1; break;
                case 3: case 4: case 5: case 6: keep = e % 4 == uint32_t(fixed_pattern - 3); break;
                case 7: keep = true; break;
                default: {
                    const uint8_t* pr = p + uint64_t(r) * src1_rep * 32;
                    keep = (pr[e / 8] >> (e % 8)) & 1;
                }
            }
            if (keep) out.insert(out.end(), s + src_off(r, e), s + src_off(r, e) + es);
        }
    check_local(dst, 0, out.size(), 32, api, "dst", loc);
    std::memcpy(d, out.data(), out.size());
    mark_init_range(dst.mem, dst.addr, uint32_t(out.size()));
    Span rd{src0.addr, uint32_t(src_span)}, w{dst.addr, uint32_t(out.size())};
    double repeats = std::ceil(double(repeat) * per_repeat / epr);
    issue(P_V, cfg.vec_issue_cycles + repeats * 256.0 / cfg.vec_simple_bytes_per_cycle, 0, &rd, 1, &w, 1, api, loc);
    return out.size() / es;
}

void brcb(DT dt, const TRef& dst, const TRef& src, int32_t repeat, uint32_t dst_blk, uint32_t dst_rep,
          const Loc& loc) {
    const char* api = "Brcb";
    check_in_launch(loc, api);
    tick(loc);
    if (repeat < 0 || repeat > int32_t(cfg.max_repeat))
        fault("repeat_out_of_range", loc, "Brcb: repeatTime %d is out of range [0, %.0f]", repeat, cfg.max_repeat);
    if (repeat == 0) return;  // a NOP on Atlas A2
    if (dst_blk == 0) fault("invalid_argument", loc, "Brcb: dstBlkStride 0 is undefined behaviour on the NPU");
    const uint32_t es = dt_size(dt), epb = 32 / es;
    check_local(src, 0, uint64_t(repeat) * 8 * es, 32, api, "src", loc);
    uint64_t span = (uint64_t(repeat - 1) * dst_rep + 7ull * dst_blk) * 32 + 32;
    check_local(dst, 0, span, 32, api, "dst", loc);
    if (cfg.check_uninit) check_init_range(src, src.addr, uint32_t(repeat) * 8 * es, api, loc);
    const uint8_t* s = mem_ptr(src.mem, src.addr);
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    for (int32_t i = 0; i < repeat; ++i)
        for (uint32_t j = 0; j < 8; ++j) {
            uint8_t* blk = d + (uint64_t(i) * dst_rep + uint64_t(j) * dst_blk) * 32;
            for (uint32_t k = 0; k < epb; ++k) std::memcpy(blk + k * es, s + (uint64_t(i) * 8 + j) * es, es);
            mark_init_range(dst.mem, dst.addr + uint32_t((uint64_t(i) * dst_rep + uint64_t(j) * dst_blk) * 32), 32);
        }
    Span rd{src.addr, uint32_t(repeat) * 8 * es}, w{dst.addr, uint32_t(span)};
    issue(P_V, cfg.vec_issue_cycles + double(repeat) * 256.0 / cfg.vec_simple_bytes_per_cycle, 0, &rd, 1, &w, 1, api,
          loc);
}

void broadcast(DT dt, const TRef& dst, const TRef& src, int dim, int axis, const uint32_t* dst_shape,
               const uint32_t* src_shape, const Loc& loc) {
    const char* api = "BroadCast";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(dt);
    uint32_t rows = dim == 2 ? dst_shape[0] : 1, cols = dim == 2 ? dst_shape[1] : dst_shape[0];
    uint32_t srows = dim == 2 ? src_shape[0] : 1, scols = dim == 2 ? src_shape[1] : src_shape[0];
    bool ok = dim == 1 ? scols == 1 : (axis == 0 ? (srows == 1 && scols == cols) : (srows == rows && scols == 1));
    if (!ok || (dim != 1 && dim != 2))
        fault("invalid_argument", loc, "BroadCast<dim=%d, axis=%d>: source shape [%u, %u] does not broadcast to [%u, %u]",
              dim, axis, srows, scols, rows, cols);
    check_local(src, 0, uint64_t(srows) * scols * es, 32, api, "src", loc);
    check_local(dst, 0, uint64_t(rows) * cols * es, 32, api, "dst", loc);
    if (cfg.check_uninit) check_init_range(src, src.addr, srows * scols * es, api, loc);
    const uint8_t* s = mem_ptr(src.mem, src.addr);
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    for (uint32_t r = 0; r < rows; ++r)
        for (uint32_t c = 0; c < cols; ++c) {
            uint32_t si = (srows == 1 ? 0 : r) * scols + (scols == 1 ? 0 : c);
            std::memcpy(d + (uint64_t(r) * cols + c) * es, s + uint64_t(si) * es, es);
        }
    mark_init_range(dst.mem, dst.addr, rows * cols * es);
    Span rd{src.addr, srows * scols * es}, w{dst.addr, rows * cols * es};
    double repeats = std::ceil(double(rows) * cols * es / 256.0);
    issue(P_V, 2 * cfg.vec_issue_cycles + 2 * repeats * 256.0 / cfg.vec_simple_bytes_per_cycle, 0, &rd, 1, &w, 1, api,
          loc);
}

void cmp_mask(int set, const TRef& t, const Loc& loc) {
    const char* api = set ? "SetCmpMask" : "GetCmpMask";
    check_in_launch(loc, api);
    tick(loc);
    check_local(t, 0, 16, 32, api, set ? "src" : "dst", loc);
    uint8_t* p = mem_ptr(t.mem, t.addr);
    if (set) {
        if (cfg.check_uninit) check_init_range(t, t.addr, 16, api, loc);
        std::memcpy(cmp_mask_reg, p, 16);
    } else {
        std::memcpy(p, cmp_mask_reg, 16);
        mark_init_range(t.mem, t.addr, 16);
    }
    Span sp{t.addr, 16};
    issue(P_V, cfg.vec_issue_cycles, 0, set ? &sp : nullptr, set ? 1 : 0, set ? nullptr : &sp, set ? 0 : 1, api, loc);
}

}  // namespace kgsim
