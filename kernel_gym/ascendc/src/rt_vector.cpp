// kgsim runtime: vector instructions. Count-form calls on contiguous data run as tight loops;
// mask/repeat forms go through a generic strided engine. Every call is checked (alignment,
// repeat and mask ranges, bounds, optional uninitialised reads) and timed on the V pipe.
#include "rt.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace kgsim {
namespace {

// ---- element types and arithmetic -------------------------------------------------------------
template <class T> struct CTy { using type = T; };
template <> struct CTy<half> { using type = float; };
template <> struct CTy<bfloat16_t> { using type = float; };
template <> struct CTy<int16_t> { using type = int32_t; };
template <> struct CTy<uint16_t> { using type = uint32_t; };
template <> struct CTy<int32_t> { using type = int64_t; };
template <> struct CTy<uint32_t> { using type = uint64_t; };
template <class T> using C = typename CTy<T>::type;

template <class T> inline C<T> scal(const Scalar& s) {
    if constexpr (std::is_integral_v<T>) return C<T>(s.i);
    else return C<T>(s.f);
}

template <VOp OP, class X>
inline X fop(X a, X b, X s) {
    constexpr bool fl = std::is_floating_point_v<X>;
    if constexpr (OP == V_ADD) return a + b;
    else if constexpr (OP == V_SUB) return a - b;
    else if constexpr (OP == V_MUL) return a * b;
    else if constexpr (OP == V_DIV) return a / b;
    else if constexpr (OP == V_MAX) { if constexpr (fl) return (a != a || a > b) ? a : b; else return a > b ? a : b; }
    else if constexpr (OP == V_MIN) { if constexpr (fl) return (a != a || a < b) ? a : b; else return a < b ? a : b; }
    else if constexpr (OP == V_AND) { if constexpr (!fl) return a & b; else return a; }
    else if constexpr (OP == V_OR) { if constexpr (!fl) return a | b; else return a; }
    else if constexpr (OP == V_ADDS) return a + s;
    else if constexpr (OP == V_MULS) return a * s;
    else if constexpr (OP == V_MAXS) { if constexpr (fl) return (a != a || a > s) ? a : s; else return a > s ? a : s; }
    else if constexpr (OP == V_MINS) { if constexpr (fl) return (a != a || a < s) ? a : s; else return a < s ? a : s; }
    else if constexpr (OP == V_LEAKYRELU) return a >= X(0) ? a : a * s;
    else if constexpr (OP == V_SHL) { if constexpr (!fl) return X(a << s); else return a; }
    else if constexpr (OP == V_SHR) { if constexpr (!fl) return X(a >> s); else return a; }
    else if constexpr (OP == V_EXP) { if constexpr (fl) return std::exp(a); else return a; }
    else if constexpr (OP == V_LN) { if constexpr (fl) return std::log(a); else return a; }
    else if constexpr (OP == V_ABS) { if constexpr (fl) return std::fabs(a); else return a < 0 ? -a : a; }
    else if constexpr (OP == V_SQRT) { if constexpr (fl) return std::sqrt(a); else return a; }
    else if constexpr (OP == V_RSQRT) { if constexpr (fl) return X(1) / std::sqrt(a); else return a; }
    else if constexpr (OP == V_RECIP) { if constexpr (fl) return X(1) / a; else return a; }
    else if constexpr (OP == V_RELU) return a < X(0) ? X(0) : a;
    else if constexpr (OP == V_NOT) { if constexpr (!fl) return ~a; else return a; }
    else if constexpr (OP == V_COPY) return a;
    else if constexpr (OP == V_DUP) return s;
    else return a;
}

inline bool op_has_a(VOp op) { return op != V_DUP; }
inline bool op_has_b(VOp op) { return op <= V_OR; }

const char* op_name(VOp op) {
    static const char* names[] = {"Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or", "Adds", "Muls", "Maxs",
                                  "Mins", "LeakyRelu", "ShiftLeft", "ShiftRight", "Exp", "Ln", "Abs", "Sqrt", "Rsqrt",
                                  "Reciprocal", "Relu", "Not", "Copy", "Duplicate"};
    return op < V_COUNT ? names[op] : "vector op";
}
bool op_transcendental(VOp op) { return op == V_EXP || op == V_LN || op == V_SQRT || op == V_DIV; }

// ---- element selection: which elements of which repeats an instruction touches -------------------
struct Sel {
    uint32_t R = 0;    // repeats
    uint32_t epr = 0;  // elements per repeat
    uint64_t lo = 0, hi = 0, last_lo = 0, last_hi = 0;
    int64_t prefix_n = -1;  // >= 0: the selection is the first prefix_n elements of a contiguous layout
    bool count_form = false;
    bool enabled(uint32_t r, uint32_t e) const {
        uint64_t l = r + 1 == R ? last_lo : lo, h = r + 1 == R ? last_hi : hi;
        return e < 64 ? ((l >> e) & 1) : ((h >> (e - 64)) & 1);
    }
};

void bits_prefix(uint64_t n, uint64_t& lo, uint64_t& hi) {
    lo = n >= 64 ? ~0ull : ((1ull << n) - 1);
    hi = n <= 64 ? 0 : (n >= 128 ? ~0ull : ((1ull << (n - 64)) - 1));
}

Sel make_sel(const MaskArg& m, int64_t repeat, uint32_t epr, const char* api, const Loc& loc) {
    Sel s;
    s.epr = epr;
    uint64_t full_lo, full_hi;
    bits_prefix(epr, full_lo, full_hi);
    BlockState& b = rt.blk;
    auto counted = [&](int64_t n) {
        if (n < 0) fault("invalid_argument", loc, "%s: negative element count %lld", api, (long long)n);
        s.R = uint32_t((n + epr - 1) / epr);
        s.lo = full_lo;
        s.hi = full_hi;
        bits_prefix(uint64_t(n - int64_t(s.R ? s.R - 1 : 0) * epr), s.last_lo, s.last_hi);
        s.prefix_n = n;
    };
    if (m.kind == 0) {
        s.count_form = true;
        counted(m.count);
        return s;
    }
    if (b.counter_mode) {  // counter mode: the mask (or the mask register) is an element count
        counted(m.kind == 3 ? b.mask_count : int64_t(m.lo));
        return s;
    }
    if (repeat < 0 || repeat > int64_t(cfg.max_repeat))
        fault("repeat_out_of_range", loc, "%s: repeatTime %lld is out of range [0, %.0f]; split the work into "
              "several calls (or use the count form)", api, (long long)repeat, cfg.max_repeat);
    s.R = uint32_t(repeat);
    // An empty mask in normal mode makes the instruction a NOP on Atlas A2 (asc-devkit's CheckMaskValue /
    // CheckMaskArray only warn; the assertion is for __NPU_ARCH__ 2002): nothing is read or written.
    auto empty = [&]() {
        warn("empty_mask", loc, fmt("%s: the mask selects no element; the instruction is a NOP", api));
        s.R = 0;
        s.lo = s.hi = 0;
    };
    if (m.kind == 1) {
        if (m.lo > epr)
            fault("mask_out_of_range", loc, "%s: mask %llu is out of range [0, %u] (a repeat holds %u elements of this "
                  "type)", api, (unsigned long long)m.lo, epr, epr);
        if (m.lo == 0) empty();
        bits_prefix(m.lo, s.lo, s.hi);
    } else {
        uint64_t lo = m.kind == 2 ? m.lo : b.mask_lo, hi = m.kind == 2 ? m.hi : b.mask_hi;
        if (m.kind == 3) { lo &= full_lo; hi &= full_hi; }
        if (epr <= 64 && hi != 0)
            fault("mask_out_of_range", loc, "%s: mask[1] must be 0 for this type (a repeat holds only %u elements)",
                  api, epr);
        if (epr < 64 && (lo >> epr) != 0)
            fault("mask_out_of_range", loc, "%s: mask[0] has bits above element %u", api, epr - 1);
        if (lo == 0 && hi == 0) empty();
        s.lo = lo;
        s.hi = hi;
    }
    s.last_lo = s.lo;
    s.last_hi = s.hi;
    if (s.lo == full_lo && s.hi == full_hi) s.prefix_n = int64_t(s.R) * epr;
    return s;
}

// An operand's layout: element e of repeat r is at base + r*rep + (e/epb)*blk + (e%epb)*es.
struct Opnd {
    uint8_t* base = nullptr;
    uint32_t addr = 0, es = 4, blk = 32, rep = 256;
    bool contiguous(uint32_t epr) const { return blk == 32 && rep == epr * es; }
    uint64_t off(uint32_t r, uint32_t e) const {
        uint32_t epb = 32 / es;
        return uint64_t(r) * rep + uint64_t(e / epb) * blk + uint64_t(e % epb) * es;
    }
    uint8_t* at(uint32_t r, uint32_t e) const { return base + off(r, e); }
};

Opnd make_opnd(const TRef& t, uint32_t es, const Sel& s, uint32_t blk_stride, uint32_t rep_stride) {
    Opnd o;
    o.base = mem_ptr(t.mem, t.addr);
    o.addr = t.addr;
    o.es = es;
    if (s.count_form || rt.blk.counter_mode) {
        o.blk = 32;
        o.rep = s.epr * es;
        if (!s.count_form) {  // counter mode keeps the strides of the call
            o.blk = blk_stride * 32;
            o.rep = rep_stride * 32;
        }
    } else {
        o.blk = blk_stride * 32;
        o.rep = rep_stride * 32;
    }
    return o;
}

// bytes from the operand start to the end of the last element the selection touches
uint64_t span(const Opnd& o, const Sel& s) {
    if (s.R == 0) return 0;
    if (s.prefix_n >= 0 && o.contiguous(s.epr)) return uint64_t(s.prefix_n) * o.es;
    uint64_t mx = 0;
    for (uint32_t e = 0; e < s.epr; ++e) {
        if (s.enabled(s.R - 1, e)) mx = std::max(mx, o.off(s.R - 1, e) + o.es);
        if (s.R >= 2 && s.enabled(0, e)) mx = std::max(mx, o.off(s.R - 2, e) + o.es);
    }
    return mx;
}

template <class F>
void for_each(const Sel& s, F&& f) {
    for (uint32_t r = 0; r < s.R; ++r)
        for (uint32_t e = 0; e < s.epr; ++e)
            if (s.enabled(r, e)) f(r, e);
}

void check_src_init(const Opnd& o, const TRef& t, const Sel& s, const char* api, const Loc& loc) {
    if (!cfg.check_uninit || t.mem != MEM_UB) return;
    if (s.prefix_n >= 0 && o.contiguous(s.epr)) {
        check_init_range(t, o.addr, uint32_t(s.prefix_n * o.es), api, loc);
        return;
    }
    for_each(s, [&](uint32_t r, uint32_t e) { check_init_range(t, o.addr + uint32_t(o.off(r, e)), o.es, api, loc); });
}
void mark_dst_init(const Opnd& o, const TRef& t, const Sel& s) {
    if (!cfg.check_uninit || t.mem != MEM_UB) return;
    if (s.prefix_n >= 0 && o.contiguous(s.epr)) {
        mark_init_range(t.mem, o.addr, uint32_t(s.prefix_n * o.es));
        return;
    }
    for_each(s, [&](uint32_t r, uint32_t e) { mark_init_range(t.mem, o.addr + uint32_t(o.off(r, e)), o.es); });
}

void check_operand(const TRef& t, const Opnd& o, const Sel& s, uint32_t align, const char* api, const char* name,
                   const Loc& loc) {
    check_local(t, 0, span(o, s), align, api, name, loc);
}

double instr_count(const Sel& s) {
    if (!s.count_form) return 1;
    return std::max(1.0, std::ceil(double(s.R) / cfg.max_repeat));
}

void time_v(const Sel& s, double cycles_per_repeat, const Span* reads, int nr, const Span* writes, int nw,
            const char* api, const Loc& loc) {
    double occ = instr_count(s) * cfg.vec_issue_cycles + double(s.R) * cycles_per_repeat;
    issue(P_V, occ, 0, reads, nr, writes, nw, api, loc);
}

// ---- element-wise execution -----------------------------------------------------------------
template <VOp OP, class T>
void exec_elementwise(const Opnd& D, const Opnd& A, const Opnd& B, Scalar sc, const Sel& s) {
    const C<T> sv = scal<T>(sc);
    constexpr bool has_a = OP != V_DUP, has_b = OP <= V_OR;
    if (s.prefix_n >= 0 && D.contiguous(s.epr) && (!has_a || A.contiguous(s.epr)) && (!has_b || B.contiguous(s.epr))) {
        T* d = reinterpret_cast<T*>(D.base);
        const T* a = reinterpret_cast<const T*>(A.base);
        const T* b = reinterpret_cast<const T*>(B.base);
        const int64_t n = s.prefix_n;
        for (int64_t i = 0; i < n; ++i) {
            C<T> x = has_a ? C<T>(a[i]) : C<T>(0);
            C<T> y = has_b ? C<T>(b[i]) : C<T>(0);
            d[i] = T(fop<OP, C<T>>(x, y, sv));
        }
        return;
    }
    for_each(s, [&](uint32_t r, uint32_t e) {
        C<T> x = 0, y = 0;
        if (has_a) { T v; std::memcpy(&v, A.at(r, e), sizeof(T)); x = C<T>(v); }
        if (has_b) { T v; std::memcpy(&v, B.at(r, e), sizeof(T)); y = C<T>(v); }
        T out = T(fop<OP, C<T>>(x, y, sv));
        std::memcpy(D.at(r, e), &out, sizeof(T));
    });
}

template <VOp OP, class... Ts>
bool run_types(DT dt, const Opnd& D, const Opnd& A, const Opnd& B, Scalar sc, const Sel& s) {
    return ((dt_of<Ts>::v == dt ? (exec_elementwise<OP, Ts>(D, A, B, sc, s), true) : false) || ...);
}

bool dispatch_elementwise(VOp op, DT dt, const Opnd& D, const Opnd& A, const Opnd& B, Scalar sc, const Sel& s) {
#define KG_CASE(OP, ...) case OP: return run_types<OP, __VA_ARGS__>(dt, D, A, B, sc, s);
    switch (op) {
        KG_CASE(V_ADD, half, float, int16_t, int32_t)
        KG_CASE(V_SUB, half, float, int16_t, int32_t)
        KG_CASE(V_MUL, half, float, int16_t, int32_t)
        KG_CASE(V_DIV, half, float)
        KG_CASE(V_MAX, half, float, int16_t, int32_t)
        KG_CASE(V_MIN, half, float, int16_t, int32_t)
        KG_CASE(V_AND, int16_t, uint16_t)
        KG_CASE(V_OR, int16_t, uint16_t)
        KG_CASE(V_ADDS, half, float, int16_t, int32_t)
        KG_CASE(V_MULS, half, float, int16_t, int32_t)
        KG_CASE(V_MAXS, half, float, int16_t, int32_t)
        KG_CASE(V_MINS, half, float, int16_t, int32_t)
        KG_CASE(V_LEAKYRELU, half, float)
        KG_CASE(V_SHL, int16_t, uint16_t, int32_t, uint32_t)
        KG_CASE(V_SHR, int16_t, uint16_t, int32_t, uint32_t)
        KG_CASE(V_EXP, half, float)
        KG_CASE(V_LN, half, float)
        KG_CASE(V_ABS, half, float)
        KG_CASE(V_SQRT, half, float)
        KG_CASE(V_RSQRT, half, float)
        KG_CASE(V_RECIP, half, float)
        KG_CASE(V_RELU, half, float, int32_t)
        KG_CASE(V_NOT, int16_t, uint16_t)
        KG_CASE(V_COPY, half, float, bfloat16_t, int16_t, uint16_t, int32_t, uint32_t)
        KG_CASE(V_DUP, half, float, bfloat16_t, int16_t, uint16_t, int32_t, uint32_t)
        default: return false;
    }
#undef KG_CASE
}

// ---- conversions ---------------------------------------------------------------------------------
enum RM { RM_NONE = 0, RM_RINT, RM_FLOOR, RM_CEIL, RM_ROUND, RM_TRUNC, RM_ODD };

double round_int(double x, int mode) {
    switch (mode) {
        case RM_FLOOR: return std::floor(x);
        case RM_CEIL: return std::ceil(x);
        case RM_ROUND: return std::round(x);
        case RM_TRUNC: return std::trunc(x);
        default: return std::nearbyint(x);
    }
}
template <class I> I sat(double x) {
    if (x != x) return I(0);
    if (x <= double(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
    if (x >= double(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
    return I(x);
}
template <class F> uint64_t fbits(F v) {
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(F));
    return b;
}
half half_next_up(half h) {
    uint16_t u;
    std::memcpy(&u, &h, 2);
    if ((u & 0x7fff) > 0x7c00 || u == 0x7c00) return h;  // NaN, +inf
    if (u == 0x8000) u = 0x0001;
    else if (u & 0x8000) u--;
    else u++;
    half r;
    std::memcpy(&r, &u, 2);
    return r;
}
half half_next_down(half h) { return half(-float(half_next_up(half(-float(h))))); }

template <class F>
F pick(double x, F lo, F hi, int mode) {
    switch (mode) {
        case RM_FLOOR: return lo;
        case RM_CEIL: return hi;
        case RM_TRUNC: return x > 0 ? lo : hi;
        case RM_ROUND: {
            double dl = x - double(lo), dh = double(hi) - x;
            return dl < dh ? lo : dh < dl ? hi : (x > 0 ? hi : lo);
        }
        case RM_ODD: return (fbits(lo) & 1) ? lo : hi;
        default: return lo;
    }
}
float to_float(double x, int mode) {
    float f = float(x);
    if (mode == RM_NONE || mode == RM_RINT || x != x || double(f) == x || std::isinf(f)) return f;
    float lo, hi;
    if (double(f) < x) { lo = f; hi = std::nextafter(f, INFINITY); }
    else { hi = f; lo = std::nextafter(f, -INFINITY); }
    return pick(x, lo, hi, mode);
}
half to_half(double x, int mode) {
    half h = half(x);
    if (mode == RM_NONE || mode == RM_RINT || x != x || double(h) == x || std::isinf(float(h))) return h;
    half lo, hi;
    if (double(h) < x) { lo = h; hi = half_next_up(h); }
    else { hi = h; lo = half_next_down(h); }
    return pick(x, lo, hi, mode);
}
bfloat16_t to_bf16(double x, int mode) {
    float f = float(x);
    if (mode == RM_NONE || mode == RM_RINT || f != f) return bfloat16_t(f);
    uint32_t u = uint32_t(fbits(f));
    uint16_t t = uint16_t(u >> 16);  // truncation toward zero
    bool inexact = (u & 0xffff) != 0, neg = u >> 31;
    uint16_t r = t;
    if (inexact) {
        switch (mode) {
            case RM_FLOOR: r = neg ? t + 1 : t; break;
            case RM_CEIL: r = neg ? t : t + 1; break;
            case RM_ROUND: r = uint16_t((u + 0x8000u) >> 16); break;
            case RM_ODD: r = (t & 1) ? t : t + 1; break;
            default: r = t;
        }
    }
    return bfloat16_t::from_bits(r);
}

double load(DT dt, const uint8_t* p) {
    switch (dt) {
        case DT::F32: { float v; std::memcpy(&v, p, 4); return v; }
        case DT::F16: { half v; std::memcpy(&v, p, 2); return double(float(v)); }
        case DT::BF16: { bfloat16_t v; std::memcpy(&v, p, 2); return double(float(v)); }
        case DT::I8: return double(*reinterpret_cast<const int8_t*>(p));
        case DT::U8: return double(*p);
        case DT::I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
        case DT::U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
        case DT::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
        case DT::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
        case DT::I64: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
        case DT::U64: { uint64_t v; std::memcpy(&v, p, 8); return double(v); }
        case DT::F64: { double v; std::memcpy(&v, p, 8); return v; }
        default: return 0;
    }
}
template <class T> void put(uint8_t* p, T v) { std::memcpy(p, &v, sizeof(T)); }

void store_cast(DT dt, DT st, uint8_t* p, double x, int mode) {
    bool src_float = st == DT::F32 || st == DT::F16 || st == DT::BF16 || st == DT::F64;
    switch (dt) {
        case DT::F32: put<float>(p, st == DT::F32 ? float(round_int(x, mode)) : to_float(x, mode)); break;
        case DT::F16:
            if (st == DT::I32) put<half>(p, half(x * rt.blk.deq_scale));
            else put<half>(p, to_half(x, mode));
            break;
        case DT::BF16: put<bfloat16_t>(p, to_bf16(x, mode)); break;
        case DT::I8: put<int8_t>(p, sat<int8_t>(src_float ? round_int(x, mode) : x)); break;
        case DT::U8: put<uint8_t>(p, sat<uint8_t>(src_float ? round_int(x, mode) : x)); break;
        case DT::I16: put<int16_t>(p, sat<int16_t>(src_float ? round_int(x, mode) : x)); break;
        case DT::I32: put<int32_t>(p, sat<int32_t>(src_float ? round_int(x, mode) : x)); break;
        case DT::I64: put<int64_t>(p, sat<int64_t>(src_float ? round_int(x, mode) : x)); break;
        default: break;
    }
}

// ---- reductions ---------------------------------------------------------------------------------
// The vector unit reduces a repeat with a tree of adds; partial results are rounded to T.
double tree_sum(double* v, uint32_t n, bool is_half) {
    if (n == 0) return 0;
    while (n > 1) {
        uint32_t h = n / 2;
        for (uint32_t i = 0; i < h; ++i) v[i] = double(float(v[2 * i]) + float(v[2 * i + 1]));
        if (n & 1) v[h] = v[n - 1];
        n = h + (n & 1);
    }
    return is_half ? double(float(half(float(v[0])))) : double(float(v[0]));
}

// tree_sum of n floats (F32 operands): the same pairs in the same order, in float, as tree_sum
// computes them through doubles that hold floats; the host's hot path for published-shape
// reductions (FrobeniusNorm's first pass sums 1.9e9 elements through ReduceSum)
#ifdef __AVX2__
// [x0+x1, x2+x3, .., x6+x7, y0+y1, .., y6+y7]: hadd pairs neighbours within 128-bit lanes, the
// permute puts the lanes back in order
inline __m256 neighbour_sums(__m256 x, __m256 y) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_hadd_ps(x, y)), 0xD8));
}
// tree_sum_f32 of a whole repeat (64 floats): the same pairs level by level, eight adds at a time
// (the in-place loop ran one at a time: 62 % of vec_reduce, a quarter of MatmulGeluSoftmax's host
// time); the same IEEE additions, so the same bits
double tree_sum_f32_repeat(const float* v) {
    const __m256 a0 = neighbour_sums(_mm256_loadu_ps(v), _mm256_loadu_ps(v + 8));
    const __m256 a1 = neighbour_sums(_mm256_loadu_ps(v + 16), _mm256_loadu_ps(v + 24));
    const __m256 a2 = neighbour_sums(_mm256_loadu_ps(v + 32), _mm256_loadu_ps(v + 40));
    const __m256 a3 = neighbour_sums(_mm256_loadu_ps(v + 48), _mm256_loadu_ps(v + 56));
    const __m256 c = neighbour_sums(neighbour_sums(a0, a1), neighbour_sums(a2, a3));
    const __m128 d = _mm_hadd_ps(_mm256_castps256_ps128(c), _mm256_extractf128_ps(c, 1));
    const __m128 e = _mm_hadd_ps(d, d);
    return double(_mm_cvtss_f32(e) + _mm_cvtss_f32(_mm_shuffle_ps(e, e, 1)));
}
#endif

double tree_sum_f32(float* v, uint32_t n) {
    if (n == 0) return 0;
#ifdef __AVX2__
    if (n == 64) return tree_sum_f32_repeat(v);
#endif
    while (n > 1) {
        uint32_t h = n / 2;
        for (uint32_t i = 0; i < h; ++i) v[i] = v[2 * i] + v[2 * i + 1];
        if (n & 1) v[h] = v[n - 1];
        n = h + (n & 1);
    }
    return double(v[0]);
}

// The F32 elements that repeat r of a contiguous operand selects, into out (at most 64); returns
// their count.
uint32_t gather_f32(const Sel& s, const uint8_t* base, uint32_t r, float* out) {
    const uint64_t bits = r + 1 == s.R ? s.last_lo : s.lo;
    const uint8_t* row = base + uint64_t(r) * 256;
    if (bits == ~0ull) {
        std::memcpy(out, row, 256);
        return 64;
    }
    uint32_t k = 0;
    for (uint64_t b = bits; b != 0; b &= b - 1) std::memcpy(out + k++, row + 4 * uint32_t(__builtin_ctzll(b)), 4);
    return k;
}

struct RedResult {
    double value = 0;
    int64_t index = 0;
    bool any = false;
};
void red_acc(RedResult& r, int kind, double v, int64_t idx) {
    if (!r.any) { r.value = v; r.index = idx; r.any = true; return; }
    if (kind == 1 ? (v > r.value || (v != v && r.value == r.value)) : (v < r.value || (v != v && r.value == r.value))) {
        r.value = v;
        r.index = idx;
    }
}
void store_val(DT dt, uint8_t* p, double v) {
    if (dt == DT::F16) put<half>(p, half(float(v)));
    else put<float>(p, float(v));
}
void store_idx(DT dt, uint8_t* p, int64_t idx) {
    if (dt == DT::F16) put<uint16_t>(p, uint16_t(idx));
    else put<uint32_t>(p, uint32_t(idx));
}

}  // namespace

// A sum formed as the vector unit forms a row reduction: a tree of adds within each 256-byte
// repeat (`per_repeat` elements), then a tree over the repeats' results; partials rounded to T.
double vector_row_sum(double* v, uint32_t n, uint32_t per_repeat, bool is_half) {
    std::vector<double> partials;
    for (uint32_t i = 0; i < n; i += per_repeat) partials.push_back(tree_sum(v + i, std::min(per_repeat, n - i), is_half));
    while (partials.size() > 1) {
        std::vector<double> next;
        for (size_t i = 0; i < partials.size(); i += per_repeat)
            next.push_back(tree_sum(partials.data() + i, uint32_t(std::min<size_t>(per_repeat, partials.size() - i)), is_half));
        partials.swap(next);
    }
    return partials.empty() ? 0.0 : partials[0];
}

// ---- public entry points -----------------------------------------------------------------------------
void vec_op(VOp op, DT dt, const TRef& dst, const TRef& src0, const TRef& src1, Scalar sc, const MaskArg& m,
            const RepArg& r, const Loc& loc) {
    const char* api = op_name(op);
    check_in_launch(loc, api);
    tick(loc);
    if (loop_skip(loc, loop_key(op, dt, tref_key(dst), tref_key(src0), tref_key(src1), mask_key(m), rep_key(r)))) return;
    uint32_t es = dt_size(dt), epr = 256 / es;
    Sel s = make_sel(m, r.repeat, epr, api, loc);
    if (s.R == 0) return;
    bool has_a = op_has_a(op), has_b = op_has_b(op);
    Opnd D = make_opnd(dst, es, s, r.dst_blk, r.dst_rep);
    Opnd A = make_opnd(src0, es, s, r.src0_blk, r.src0_rep);
    Opnd B = make_opnd(src1, es, s, r.src1_blk, r.src1_rep);
    check_operand(dst, D, s, 32, api, "dst", loc);
    if (has_a) check_operand(src0, A, s, 32, api, "src0", loc);
    if (has_b) check_operand(src1, B, s, 32, api, "src1", loc);
    if (has_a) check_src_init(A, src0, s, api, loc);
    if (has_b) check_src_init(B, src1, s, api, loc);
    if (!dispatch_elementwise(op, dt, D, A, B, sc, s))
        fault("unsupported_dtype", loc, "%s does not support %s on Atlas A2", api, dt_name(dt));
    mark_dst_init(D, dst, s);
    Span reads[2] = {{src0.addr, uint32_t(span(A, s))}, {src1.addr, uint32_t(span(B, s))}};
    Span w{dst.addr, uint32_t(span(D, s))};
    double cpr = op_transcendental(op) ? double(epr) / cfg.vec_transcendental_elems_per_cycle
                                       : 256.0 / cfg.vec_simple_bytes_per_cycle;
    time_v(s, cpr, reads, has_a ? (has_b ? 2 : 1) : 0, &w, 1, api, loc);
}

namespace {
void cast_impl(DT dt, DT st, const TRef& dst, const TRef& src, int mode, const MaskArg& m, const RepArg& r,
               const char* api, const Loc& loc);
}
void vec_cast(DT dt, DT st, const TRef& dst, const TRef& src, int mode, const MaskArg& m, const RepArg& r,
              const Loc& loc) {
    cast_impl(dt, st, dst, src, mode, m, r, "Cast", loc);
}
namespace {
// half <-> int4b_t. Two int4b_t share a byte, the even element in the low nibble; a repeat covers 128
// elements (the half side's 256 bytes), so the int4b_t side of a repeat is 64 bytes: two 32-byte blocks.
// half -> int4b_t rounds by the mode and saturates to [-8, 7].
void cast_s4(DT dt, const TRef& dst, const TRef& src, int mode, const MaskArg& m, const RepArg& r, const char* api,
             const Loc& loc) {
    const uint32_t epr = 128;
    Sel s = make_sel(m, r.repeat, epr, api, loc);
    if (s.R == 0) return;
    for (uint32_t rr : {0u, s.R - 1})
        for (uint32_t e = 0; e < epr; e += 2)
            if (s.enabled(rr, e) != s.enabled(rr, e + 1))
                fault("invalid_argument", loc, "%s with int4b_t: element %u of a repeat is selected and element %u is "
                      "not; two int4b_t share a byte, so the count, a continuous mask and each pair of mask bits must "
                      "select elements in pairs", api, s.enabled(rr, e) ? e : e + 1, s.enabled(rr, e) ? e + 1 : e);
    const bool to_s4 = dt == DT::S4;
    const TRef& h = to_s4 ? src : dst;  // the half operand
    const TRef& q = to_s4 ? dst : src;  // the int4b_t operand
    Opnd H = make_opnd(h, 2, s, to_s4 ? r.src0_blk : r.dst_blk, to_s4 ? r.src0_rep : r.dst_rep);
    Opnd Q = make_opnd(q, 1, s, to_s4 ? r.dst_blk : r.src0_blk, to_s4 ? r.dst_rep : r.src0_rep);
    if (s.count_form) {
        H.rep = epr * 2;
        Q.blk = 32;
        Q.rep = epr / 2;
    }
    auto qbyte = [&](uint32_t rr, uint32_t e) {
        return uint64_t(rr) * Q.rep + uint64_t(e / 64) * Q.blk + (e % 64) / 2;
    };
    uint64_t qspan = 0;
    for (uint32_t rr : {s.R >= 2 ? s.R - 2 : 0u, s.R - 1})
        for (uint32_t e = 0; e < epr; ++e)
            if (s.enabled(rr, e)) qspan = std::max(qspan, qbyte(rr, e) + 1);
    check_operand(h, H, s, 32, api, to_s4 ? "src" : "dst", loc);
    check_local(q, 0, qspan, 32, api, to_s4 ? "dst" : "src", loc);
    if (to_s4) check_src_init(H, h, s, api, loc);
    else if (cfg.check_uninit && q.mem == MEM_UB)
        for_each(s, [&](uint32_t rr, uint32_t e) { check_init_range(q, q.addr + uint32_t(qbyte(rr, e)), 1, api, loc); });
    for_each(s, [&](uint32_t rr, uint32_t e) {
        uint8_t* qp = Q.base + qbyte(rr, e);
        const int shift = (e & 1) * 4;
        if (to_s4) {
            double x = load(DT::F16, H.at(rr, e));
            int v = x != x ? 0 : int(std::min(7.0, std::max(-8.0, round_int(x, mode))));
            *qp = uint8_t((*qp & ~(0xF << shift)) | ((v & 0xF) << shift));
        } else {
            int v = (*qp >> shift) & 0xF;
            store_cast(DT::F16, DT::I8, H.at(rr, e), double(v >= 8 ? v - 16 : v), mode);
        }
    });
    if (to_s4) {
        if (cfg.check_uninit && q.mem == MEM_UB)
            for_each(s, [&](uint32_t rr, uint32_t e) { mark_init_range(q.mem, q.addr + uint32_t(qbyte(rr, e)), 1); });
    } else {
        mark_dst_init(H, h, s);
    }
    Span hs{h.addr, uint32_t(span(H, s))}, qs{q.addr, uint32_t(qspan)};
    time_v(s, double(epr) / cfg.vec_cast_elems_per_cycle, to_s4 ? &hs : &qs, 1, to_s4 ? &qs : &hs, 1, api, loc);
}

void cast_impl(DT dt, DT st, const TRef& dst, const TRef& src, int mode, const MaskArg& m, const RepArg& r,
               const char* api, const Loc& loc) {
    check_in_launch(loc, api);
    tick(loc);
    if (loop_skip(loc, loop_key(dt, st, mode, tref_key(dst), tref_key(src), mask_key(m), rep_key(r)))) return;
    if (dt == DT::S4 || st == DT::S4) return cast_s4(dt, dst, src, mode, m, r, api, loc);
    uint32_t esd = dt_size(dt), ess = dt_size(st), epr = 256 / std::max(esd, ess);
    Sel s = make_sel(m, r.repeat, epr, api, loc);
    if (s.R == 0) return;
    Opnd D = make_opnd(dst, esd, s, r.dst_blk, r.dst_rep);
    Opnd A = make_opnd(src, ess, s, r.src0_blk, r.src0_rep);
    if (s.count_form) {
        D.rep = epr * esd;
        A.rep = epr * ess;
    }
    check_operand(dst, D, s, 32, api, "dst", loc);
    check_operand(src, A, s, 32, api, "src", loc);
    check_src_init(A, src, s, api, loc);
    if (s.prefix_n >= 0 && D.contiguous(epr) && A.contiguous(epr)) {
        if (dt == DT::F32 && st == DT::F16) {
            float* d = reinterpret_cast<float*>(D.base);
            const half* a = reinterpret_cast<const half*>(A.base);
            for (int64_t i = 0; i < s.prefix_n; ++i) d[i] = float(a[i]);
        } else if (dt == DT::F16 && st == DT::F32 && (mode == RM_NONE || mode == RM_RINT)) {
            half* d = reinterpret_cast<half*>(D.base);
            const float* a = reinterpret_cast<const float*>(A.base);
            for (int64_t i = 0; i < s.prefix_n; ++i) d[i] = half(a[i]);
        } else {
            for (int64_t i = 0; i < s.prefix_n; ++i)
                store_cast(dt, st, D.base + i * esd, load(st, A.base + i * ess), mode);
        }
    } else {
        for_each(s, [&](uint32_t rr, uint32_t e) { store_cast(dt, st, D.at(rr, e), load(st, A.at(rr, e)), mode); });
    }
    mark_dst_init(D, dst, s);
    Span rd{src.addr, uint32_t(span(A, s))}, w{dst.addr, uint32_t(span(D, s))};
    time_v(s, double(epr) / cfg.vec_cast_elems_per_cycle, &rd, 1, &w, 1, api, loc);
}
}  // namespace

void vec_cmp(DT dt, const TRef& dst, const TRef& src0, const TRef& src1, int scalar_form, Scalar sc, int mode,
             const MaskArg& m0, const RepArg& r, const Loc& loc) {
    const char* api = scalar_form ? "Compares" : "Compare";
    check_in_launch(loc, api);
    tick(loc);
    if (loop_skip(loc, loop_key(dt, scalar_form, mode, tref_key(dst), tref_key(src0), tref_key(src1), mask_key(m0), rep_key(r))))
        return;
    uint32_t es = dt_size(dt), epr = 256 / es;
    MaskArg m = m0;
    if (m.kind == 0 && m.count % epr) {
        if (cfg.align_strict)
            fault("misaligned_count", loc, "%s with count %lld: count*sizeof(T) must be a multiple of 256 bytes (%u "
                  "elements); the NPU compares only whole 256-byte repeats and leaves the rest", api,
                  (long long)m.count, epr);
        warn("misaligned_count", loc, fmt("%s with count %lld compares only %lld elements, as the NPU does: whole "
                                          "256-byte repeats of %u elements", api, (long long)m.count,
                                          (long long)(m.count / epr * epr), epr));
        m.count = m.count / epr * epr;
    }
    if (dt == DT::I32 && mode != 2)
        fault("unsupported_dtype", loc, "%s on int32_t supports only CMPMODE::EQ on Atlas A2", api);
    Sel s = make_sel(m, r.repeat, epr, api, loc);
    if (s.R == 0) return;
    Opnd A = make_opnd(src0, es, s, r.src0_blk, r.src0_rep);
    Opnd B = make_opnd(src1, es, s, r.src1_blk, r.src1_rep);
    check_operand(src0, A, s, 32, api, "src0", loc);
    if (!scalar_form) check_operand(src1, B, s, 32, api, "src1", loc);
    uint64_t nbits = uint64_t(s.R) * epr;
    check_local(dst, 0, (nbits + 7) / 8, 32, api, "dst", loc);
    check_src_init(A, src0, s, api, loc);
    if (!scalar_form) check_src_init(B, src1, s, api, loc);
    uint8_t* out = mem_ptr(dst.mem, dst.addr);
    if (s.prefix_n >= 0) std::memset(out, 0, size_t((s.prefix_n + 7) / 8));
    for_each(s, [&](uint32_t rr, uint32_t e) {
        double a = load(dt, A.at(rr, e)), b = scalar_form ? (dt == DT::I32 ? double(sc.i) : sc.f) : load(dt, B.at(rr, e));
        bool v;
        switch (mode) {
            case 0: v = a < b; break;
            case 1: v = a > b; break;
            case 2: v = a == b; break;
            case 3: v = a <= b; break;
            case 4: v = a >= b; break;
            default: v = a != b; break;
        }
        uint64_t bit = uint64_t(rr) * epr + e;
        if (v) out[bit / 8] |= uint8_t(1u << (bit % 8));
        else out[bit / 8] &= uint8_t(~(1u << (bit % 8)));
    });
    mark_init_range(dst.mem, dst.addr, uint32_t((nbits + 7) / 8));
    Span rd[2] = {{src0.addr, uint32_t(span(A, s))}, {src1.addr, uint32_t(span(B, s))}};
    Span w{dst.addr, uint32_t((nbits + 7) / 8)};
    time_v(s, 256.0 / cfg.vec_simple_bytes_per_cycle, rd, scalar_form ? 1 : 2, &w, 1, api, loc);
}

void vec_select(DT dt, const TRef& dst, const TRef& sel, const TRef& src0, const TRef& src1, int scalar_form,
                Scalar sc, int mode, const MaskArg& m, const RepArg& r, const Loc& loc) {
    const char* api = "Select";
    check_in_launch(loc, api);
    tick(loc);
    if (loop_skip(loc, loop_key(dt, scalar_form, mode, tref_key(dst), tref_key(sel), tref_key(src0), tref_key(src1), mask_key(m),
                                rep_key(r))))
        return;
    if (scalar_form && mode != 1)
        fault("invalid_argument", loc, "Select with a scalar src1 needs SELMODE::VSEL_TENSOR_SCALAR_MODE");
    if (!scalar_form && mode == 1)
        fault("invalid_argument", loc, "Select with SELMODE::VSEL_TENSOR_SCALAR_MODE needs a scalar src1");
    uint32_t es = dt_size(dt), epr = 256 / es;
    Sel s = make_sel(m, r.repeat, epr, api, loc);
    if (s.R == 0) return;
    Opnd D = make_opnd(dst, es, s, r.dst_blk, r.dst_rep);
    Opnd A = make_opnd(src0, es, s, r.src0_blk, r.src0_rep);
    Opnd B = make_opnd(src1, es, s, r.src1_blk, r.src1_rep);
    check_operand(dst, D, s, 32, api, "dst", loc);
    check_operand(src0, A, s, 32, api, "src0", loc);
    if (!scalar_form) check_operand(src1, B, s, 32, api, "src1", loc);
    uint64_t nbits = mode == 0 ? epr : uint64_t(s.R) * epr;
    if (s.prefix_n >= 0 && mode != 0) nbits = uint64_t(s.prefix_n);
    check_local(sel, 0, (nbits + 7) / 8, 32, api, "selMask", loc);
    check_src_init(A, src0, s, api, loc);
    if (!scalar_form) check_src_init(B, src1, s, api, loc);
    const uint8_t* bits = mem_ptr(sel.mem, sel.addr);
    auto body = [&](auto tag) {
        using T = decltype(tag);
        T b_scalar = T(float(sc.f));
        for_each(s, [&](uint32_t rr, uint32_t e) {
            uint64_t bit = mode == 0 ? e : uint64_t(rr) * epr + e;
            bool take0 = (bits[bit / 8] >> (bit % 8)) & 1;
            T v;
            if (take0) std::memcpy(&v, A.at(rr, e), sizeof(T));
            else if (scalar_form) v = b_scalar;
            else std::memcpy(&v, B.at(rr, e), sizeof(T));
            std::memcpy(D.at(rr, e), &v, sizeof(T));
        });
    };
    if (dt == DT::F16) body(half{});
    else if (dt == DT::F32) body(float{});
    else fault("unsupported_dtype", loc, "Select does not support %s on Atlas A2", dt_name(dt));
    mark_dst_init(D, dst, s);
    Span rd[3] = {{sel.addr, uint32_t((nbits + 7) / 8)}, {src0.addr, uint32_t(span(A, s))},
                  {src1.addr, uint32_t(span(B, s))}};
    Span w{dst.addr, uint32_t(span(D, s))};
    time_v(s, 256.0 / cfg.vec_simple_bytes_per_cycle, rd, scalar_form ? 2 : 3, &w, 1, api, loc);
}

double reduce_spr(int which, const Loc& loc) {
    check_in_launch(loc, which == 0 ? "GetReduceRepeatSumSpr" : "GetReduceRepeatMaxMinSpr");
    ++hot.local_reads;
    return rt.blk.reduce_spr[which < 0 || which > 3 ? 0 : which];
}

uint64_t max_min_cnt(const Loc& loc) {
    check_in_launch(loc, "get_max_min_cnt");
    ++hot.local_reads;
    // the value's bit pattern in the low bits (16 for half, 32 for float), the index in the high 32
    uint64_t bits = 0;
    store_val(rt.blk.reduce_spr_dt, reinterpret_cast<uint8_t*>(&bits), rt.blk.reduce_spr[1]);
    return bits | (uint64_t(uint32_t(rt.blk.reduce_spr[2])) << 32);
}

void vec_reduce(int kind, int shape, DT dt, const TRef& dst, const TRef& src, const TRef& work, const MaskArg& m,
                uint32_t repeat, int32_t dst_rep, int32_t src_blk, int32_t src_rep, int order, int cal_index,
                const Loc& loc) {
    static const char* names[5][3] = {{"ReduceSum", "ReduceMax", "ReduceMin"},
                                      {"ReduceSum", "ReduceMax", "ReduceMin"},
                                      {"WholeReduceSum", "WholeReduceMax", "WholeReduceMin"},
                                      {"BlockReduceSum", "BlockReduceMax", "BlockReduceMin"},
                                      {"PairReduceSum", "PairReduceMax", "PairReduceMin"}};
    if (kind < 0 || kind > 2 || shape < 0 || shape > 4) fault("invalid_argument", loc, "bad reduction");
    const char* api = names[shape][kind];
    check_in_launch(loc, api);
    tick(loc);
    if (loop_skip(loc, loop_key(kind, shape, dt, tref_key(dst), tref_key(src), tref_key(work), mask_key(m), repeat, dst_rep,
                                src_blk, src_rep, order, cal_index)))
        return;
    uint32_t es = dt_size(dt), epr = 256 / es, epb = 32 / es;
    bool is_half = dt == DT::F16;
    if (dst_rep < 0 || src_blk < 0 || src_rep < 0)
        fault("invalid_argument", loc, "%s: negative stride", api);
    Sel s = make_sel(m, int64_t(repeat), epr, api, loc);
    if (s.R == 0) return;
    Opnd A = make_opnd(src, es, s, shape == 0 ? 1 : uint32_t(src_blk), shape == 0 ? 8 : uint32_t(src_rep));
    check_operand(src, A, s, 32, api, "src", loc);
    check_src_init(A, src, s, api, loc);
    uint8_t* out = mem_ptr(dst.mem, dst.addr);
    double levels_repeats = s.R;
    double instrs = instr_count(s);
    uint64_t dst_bytes = 0;
    std::vector<double> buf(epr);
    if (shape <= 1) {  // everything selected -> dst[0] (and the index -> dst[1])
        // Atlas A2 (CANN ReduceSum docs): the count form sums the repeats in order and never uses
        // sharedTmpBuffer; the mask/repeat form sums them with a tree of repeats and needs
        // DivCeil(repeatTime, elements per block) * elements per block elements of it.
        if (shape == 1 && kind == 0)
            check_local(work, 0, uint64_t((s.R + epb - 1) / epb) * epb * es, 32, api, "sharedTmpBuffer", loc);
        RedResult res;
        std::vector<double> partials;
        partials.reserve(s.R);
        // (an F32 sum over a contiguous operand: the same sums through float buffers)
        const bool fast_f32 = kind == 0 && dt == DT::F32 && A.contiguous(epr);
        for (uint32_t rr = 0; fast_f32 && rr < s.R; ++rr) {
            float fb[64];
            partials.push_back(tree_sum_f32(fb, gather_f32(s, A.base, rr, fb)));
        }
        for (uint32_t rr = 0; !fast_f32 && rr < s.R; ++rr) {
            uint32_t k = 0;
            RedResult rres;
            for (uint32_t e = 0; e < epr; ++e) {
                if (!s.enabled(rr, e)) continue;
                double v = load(dt, A.at(rr, e));
                if (kind == 0) buf[k++] = v;
                else red_acc(res, kind, v, int64_t(rr) * epr + e);
            }
            if (kind == 0) partials.push_back(tree_sum(buf.data(), k, is_half));
        }
        if (kind == 0 && shape == 0) {  // count form: repeat results accumulated in order, rounded to T
            double acc = partials.empty() ? 0 : partials[0];
            for (size_t i = 1; i < partials.size(); ++i) {
                acc = double(float(acc) + float(partials[i]));
                if (is_half) acc = double(float(half(float(acc))));
            }
            levels_repeats += 1;
            instrs += 1;
            res.value = acc;
        } else if (kind == 0) {  // mask form: further levels reduce the partials repeat by repeat
            while (partials.size() > 1) {
                std::vector<double> next;
                for (size_t i = 0; i < partials.size(); i += epr) {
                    uint32_t k = uint32_t(std::min<size_t>(epr, partials.size() - i));
                    for (uint32_t j = 0; j < k; ++j) buf[j] = partials[i + j];
                    next.push_back(tree_sum(buf.data(), k, is_half));
                }
                levels_repeats += double(next.size());
                instrs += 1;
                partials.swap(next);
            }
            res.value = partials.empty() ? 0 : partials[0];
        } else {
            levels_repeats += std::ceil(double(s.R) / epr);
            instrs += 1;
        }
        dst_bytes = (kind != 0 && cal_index) ? 2 * es : es;
        check_local(dst, 0, dst_bytes, es, api, "dst", loc);
        store_val(dt, out, res.value);
        if (kind != 0 && cal_index) store_idx(dt, out + es, res.index);
        // the special registers GetReduceRepeatSumSpr / GetReduceRepeatMaxMinSpr read back
        if (kind == 0) {
            rt.blk.reduce_spr[0] = res.value;
            rt.blk.reduce_spr[3] = double(int(dt));
        } else {
            rt.blk.reduce_spr[1] = res.value;
            rt.blk.reduce_spr[2] = double(res.index);
            rt.blk.reduce_spr_dt = dt;
        }
    } else if (shape == 2) {  // one result per repeat
        uint32_t unit = kind == 0 ? 1 : (order <= 1 ? 2 : 1);
        dst_bytes = (uint64_t(s.R - 1) * uint32_t(dst_rep) * unit + unit) * es;
        check_local(dst, 0, dst_bytes, es, api, "dst", loc);
        RedResult whole;  // over every repeat: the register GetReduceMaxMinCount reads
        for (uint32_t rr = 0; rr < s.R; ++rr) {
            uint32_t k = 0;
            RedResult res;
            for (uint32_t e = 0; e < epr; ++e) {
                if (!s.enabled(rr, e)) continue;
                double v = load(dt, A.at(rr, e));
                if (kind == 0) buf[k++] = v;
                else {
                    red_acc(res, kind, v, e);
                    red_acc(whole, kind, v, int64_t(rr) * epr + e);
                }
            }
            uint8_t* o = out + uint64_t(rr) * uint32_t(dst_rep) * unit * es;
            if (kind == 0) {
                store_val(dt, o, tree_sum(buf.data(), k, is_half));
            } else if (order == 0) {
                store_val(dt, o, res.value);
                store_idx(dt, o + es, res.index);
            } else if (order == 1) {
                store_idx(dt, o, res.index);
                store_val(dt, o + es, res.value);
            } else if (order == 2) {
                store_val(dt, o, res.value);
            } else {
                store_idx(dt, o, res.index);
            }
        }
        if (kind != 0 && whole.any) {
            rt.blk.reduce_spr[1] = whole.value;
            rt.blk.reduce_spr[2] = double(whole.index);
            rt.blk.reduce_spr_dt = dt;
        }
    } else if (shape == 3) {  // one result per 32-byte block
        dst_bytes = (uint64_t(s.R - 1) * uint32_t(dst_rep) * 8 + 8) * es;
        check_local(dst, 0, dst_bytes, es, api, "dst", loc);
        for (uint32_t rr = 0; rr < s.R; ++rr) {
            for (uint32_t blk = 0; blk < 8; ++blk) {
                uint32_t k = 0;
                RedResult res;
                for (uint32_t e = blk * epb; e < (blk + 1) * epb; ++e) {
                    if (!s.enabled(rr, e)) continue;
                    double v = load(dt, A.at(rr, e));
                    if (kind == 0) buf[k++] = v;
                    else red_acc(res, kind, v, e);
                }
                if (k == 0 && !res.any) continue;
                uint8_t* o = out + (uint64_t(rr) * uint32_t(dst_rep) * 8 + blk) * es;
                store_val(dt, o, kind == 0 ? tree_sum(buf.data(), k, is_half) : res.value);
            }
        }
    } else {  // pairs
        uint32_t half_n = epr / 2;
        dst_bytes = (uint64_t(s.R - 1) * uint32_t(dst_rep) * half_n + half_n) * es;
        check_local(dst, 0, dst_bytes, es, api, "dst", loc);
        for (uint32_t rr = 0; rr < s.R; ++rr)
            for (uint32_t p = 0; p < half_n; ++p) {
                double v = 0;
                bool any = false;
                for (uint32_t e = 2 * p; e < 2 * p + 2; ++e)
                    if (s.enabled(rr, e)) { v = double(float(v) + float(load(dt, A.at(rr, e)))); any = true; }
                if (any) store_val(dt, out + (uint64_t(rr) * uint32_t(dst_rep) * half_n + p) * es, v);
            }
    }
    mark_init_range(dst.mem, dst.addr, uint32_t(dst_bytes));
    Span rd{src.addr, uint32_t(span(A, s))}, w{dst.addr, uint32_t(dst_bytes)};
    double occ = instrs * cfg.vec_issue_cycles + levels_repeats * cfg.vec_reduce_cycles_per_repeat;
    issue(P_V, occ, 0, &rd, 1, &w, 1, api, loc);
}

// ---- fused element-wise ops (AddRelu, SubRelu, FusedMulAdd, MulAddDst), CastDeq, Gather, Gatherb ----
namespace {
template <class T> inline double ld(const uint8_t* p) { T v; std::memcpy(&v, p, sizeof(T)); return double(v); }
template <class T> inline void st(uint8_t* p, double x) {
    T v;
    if constexpr (std::is_integral_v<T>) v = T(int64_t(x));  // integer results wrap as in Add/Sub
    else v = T(x);
    std::memcpy(p, &v, sizeof(T));
}
// One element of a fused op; a: src0, b: src1, d: the old dst value.
template <class TD, class TS>
inline void fused_one(int op, uint8_t* dp, const uint8_t* ap, const uint8_t* bp) {
    if constexpr (std::is_integral_v<TD>) {
        int64_t a = int64_t(ld<TS>(ap)), b = int64_t(ld<TS>(bp));
        int64_t v = op == 0 ? a + b : a - b;
        TD w = TD(v);  // wraps like Add/Sub, then ReLU
        st<TD>(dp, double(w < 0 ? TD(0) : w));
    } else {
        float a = float(ld<TS>(ap)), b = float(ld<TS>(bp));
        float v;
        switch (op) {
            case 0: v = a + b; v = v < 0.f ? 0.f : v; break;
            case 1: v = a - b; v = v < 0.f ? 0.f : v; break;
            case 2: v = std::fma(a, float(ld<TD>(dp)), b); break;   // dst = src0 * dst + src1
            default: v = std::fma(a, b, float(ld<TD>(dp))); break;  // dst = src0 * src1 + dst
        }
        if constexpr (std::is_same_v<TD, half>) { half h = half(v); std::memcpy(dp, &h, 2); }
        else std::memcpy(dp, &v, 4);
    }
}
}  // namespace

void vec_fused(int op, DT dt, DT st_, const TRef& dst, const TRef& src0, const TRef& src1, const MaskArg& m,
               const RepArg& r, const Loc& loc) {
    static const char* names[] = {"AddRelu", "SubRelu", "FusedMulAdd", "MulAddDst"};
    const char* api = (op >= 0 && op < 4) ? names[op] : "fused op";
    check_in_launch(loc, api);
    tick(loc);
    if (loop_skip(loc, loop_key(op, dt, st_, tref_key(dst), tref_key(src0), tref_key(src1), mask_key(m), rep_key(r)))) return;
    uint32_t esd = dt_size(dt), ess = dt_size(st_), epr = 256 / std::max(esd, ess);
    Sel s = make_sel(m, r.repeat, epr, api, loc);
    if (s.R == 0) return;
    Opnd D = make_opnd(dst, esd, s, r.dst_blk, r.dst_rep);
    Opnd A = make_opnd(src0, ess, s, r.src0_blk, r.src0_rep);
    Opnd B = make_opnd(src1, ess, s, r.src1_blk, r.src1_rep);
    if (s.count_form) {
        D.rep = epr * esd;
        A.rep = B.rep = epr * ess;
    }
    const bool reads_dst = op >= 2;
    check_operand(dst, D, s, 32, api, "dst", loc);
    check_operand(src0, A, s, 32, api, "src0", loc);
    check_operand(src1, B, s, 32, api, "src1", loc);
    check_src_init(A, src0, s, api, loc);
    check_src_init(B, src1, s, api, loc);
    if (reads_dst) check_src_init(D, dst, s, api, loc);
    auto run = [&](auto td, auto ts) {
        using TD = decltype(td);
        using TS = decltype(ts);
        if (s.prefix_n >= 0 && D.contiguous(epr) && A.contiguous(epr) && B.contiguous(epr)) {
            for (int64_t i = 0; i < s.prefix_n; ++i)
                fused_one<TD, TS>(op, D.base + i * esd, A.base + i * ess, B.base + i * ess);
        } else {
            for_each(s, [&](uint32_t rr, uint32_t e) { fused_one<TD, TS>(op, D.at(rr, e), A.at(rr, e), B.at(rr, e)); });
        }
    };
    if (dt == DT::F32 && st_ == DT::F32) run(float{}, float{});
    else if (dt == DT::F16 && st_ == DT::F16) run(half{}, half{});
    else if (dt == DT::F32 && st_ == DT::F16) run(float{}, half{});
    else if (dt == DT::I16 && st_ == DT::I16 && op < 2) run(int16_t{}, int16_t{});
    else fault("unsupported_dtype", loc, "%s does not support %s on Atlas A2", api, dt_name(dt));
    mark_dst_init(D, dst, s);
    Span reads[3] = {{src0.addr, uint32_t(span(A, s))}, {src1.addr, uint32_t(span(B, s))}, {dst.addr, uint32_t(span(D, s))}};
    Span w{dst.addr, uint32_t(span(D, s))};
    // one 256-byte repeat per cycle like the simple binary ops (assumed: CANN gives no separate rate)
    time_v(s, 256.0 / cfg.vec_simple_bytes_per_cycle, reads, reads_dst ? 3 : 2, &w, 1, api, loc);
}

void vec_cast_deq(DT dt, DT st_, const TRef& dst, const TRef& src, const MaskArg& m, const RepArg& r, const Loc& loc) {
    if (!(dt == DT::F16 && st_ == DT::I32))
        fault("unsupported_dtype", loc, "CastDeq supports only int32_t -> half on Atlas A2");
    cast_impl(dt, st_, dst, src, RM_NONE, m, r, "CastDeq", loc);
}

// Gather: dst[i] = *(T*)(src + srcBaseAddr + srcOffset[i]) (byte offsets); the mask/repeat form fills
// one 256-byte dst repeat per repeat (8 data blocks on Atlas A2) and reads epr offsets per repeat.
void vec_gather(DT dt, const TRef& dst, const TRef& src, const TRef& offset, uint32_t base, const MaskArg& m,
                int32_t repeat, uint32_t dst_rep, const Loc& loc) {
    const char* api = "Gather";
    check_in_launch(loc, api);
    tick(loc);
    uint32_t es = dt_size(dt), epr = 256 / es;
    Sel s = make_sel(m, repeat, epr, api, loc);
    if (s.R == 0) return;
    Opnd D = make_opnd(dst, es, s, 1, dst_rep);
    if (s.count_form) D.rep = epr * es;
    check_operand(dst, D, s, 32, api, "dst", loc);
    check_local(src, 0, 0, 32, api, "src", loc);
    uint64_t n_off = s.prefix_n >= 0 ? uint64_t(s.prefix_n) : uint64_t(s.R) * epr;
    check_local(offset, 0, n_off * 4, 32, api, "srcOffset", loc);
    if (cfg.check_uninit && offset.mem == MEM_UB) {
        if (s.prefix_n >= 0) check_init_range(offset, offset.addr, uint32_t(n_off * 4), api, loc);
        else for_each(s, [&](uint32_t rr, uint32_t e) {
            check_init_range(offset, offset.addr + (rr * epr + e) * 4, 4, api, loc);
        });
    }
    if (base % es)
        fault("invalid_argument", loc, "%s: srcBaseAddr %u is not a multiple of sizeof(T) = %u (the NPU gathers "
              "misplaced data; CANN Gather docs)", api, base, es);
    const uint8_t* offs = mem_ptr(offset.mem, offset.addr);
    const uint8_t* sb = mem_ptr(src.mem, src.addr);
    uint64_t src_room = uint64_t(src.end) - src.addr;
    uint32_t lo = UINT32_MAX, hi = 0;
    for_each(s, [&](uint32_t rr, uint32_t e) {
        uint32_t o;
        std::memcpy(&o, offs + (uint64_t(rr) * epr + e) * 4, 4);
        uint64_t at = uint64_t(base) + o;
        if (o % es)
            fault("invalid_argument", loc, "%s: srcOffset[%u] = %u bytes is not a multiple of sizeof(T) = %u (offsets "
                  "are byte offsets; CANN Gather docs)", api, rr * epr + e, o, es);
        if (at + es > src_room)
            fault("local_out_of_bounds", loc, "%s: srcOffset[%u] = %u (+ srcBaseAddr %u) reads bytes [%llu, %llu) of "
                  "src, whose buffer holds only %llu bytes", api, rr * epr + e, o, base, (unsigned long long)at,
                  (unsigned long long)(at + es), (unsigned long long)src_room);
        if (cfg.check_uninit) check_init_range(src, src.addr + uint32_t(at), es, api, loc);
        std::memcpy(D.at(rr, e), sb + at, es);
        lo = std::min<uint32_t>(lo, uint32_t(at));
        hi = std::max<uint32_t>(hi, uint32_t(at + es));
    });
    mark_dst_init(D, dst, s);
    Span rd[2] = {{offset.addr, uint32_t(n_off * 4)}, {src.addr + (lo == UINT32_MAX ? 0 : lo), hi > lo ? hi - lo : 0}};
    Span w{dst.addr, uint32_t(span(D, s))};
    // assumed: one 32-byte dst block per cycle (8 cycles a repeat): CANN gives no rate for vgather
    time_v(s, 8.0, rd, 2, &w, 1, api, loc);
}

// Gatherb: 8 blocks of 32 bytes per repeat; block j of repeat i comes from src + offset[i*8 + j] bytes.
void vec_gatherb(DT dt, const TRef& dst, const TRef& src, const TRef& offset, int32_t repeat, uint32_t dst_blk,
                 uint32_t dst_rep, const Loc& loc) {
    const char* api = "Gatherb";
    check_in_launch(loc, api);
    tick(loc);
    if (repeat < 0 || repeat > int32_t(cfg.max_repeat))
        fault("repeat_out_of_range", loc, "%s: repeatTime %d is out of range [0, %.0f]", api, repeat, cfg.max_repeat);
    if (repeat == 0) return;
    if (dst_blk == 0) dst_blk = 1;  // CANN: dstBlkStride 0 is treated as 1
    uint64_t dst_bytes = uint64_t(repeat - 1) * dst_rep * 32 + 7ull * dst_blk * 32 + 32;
    check_local(dst, 0, dst_bytes, 32, api, "dst", loc);
    check_local(src, 0, 0, 32, api, "src", loc);
    check_local(offset, 0, uint64_t(repeat) * 8 * 4, 32, api, "offset", loc);
    check_init_range(offset, offset.addr, uint32_t(repeat) * 32, api, loc);
    const uint8_t* offs = mem_ptr(offset.mem, offset.addr);
    const uint8_t* sb = mem_ptr(src.mem, src.addr);
    uint8_t* db = mem_ptr(dst.mem, dst.addr);
    uint64_t src_room = uint64_t(src.end) - src.addr;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (int32_t i = 0; i < repeat; ++i)
        for (uint32_t j = 0; j < 8; ++j) {
            uint32_t o;
            std::memcpy(&o, offs + (uint64_t(i) * 8 + j) * 4, 4);
            if (o % 32)
                fault("invalid_argument", loc, "%s: offset[%u] = %u bytes is not 32-byte aligned (CANN Gatherb docs: "
                      "the offset address must be 32-byte aligned)", api, i * 8 + j, o);
            if (uint64_t(o) + 32 > src_room)
                fault("local_out_of_bounds", loc, "%s: offset[%u] = %u reads bytes [%u, %u) of src, whose buffer holds "
                      "only %llu bytes", api, i * 8 + j, o, o, o + 32, (unsigned long long)src_room);
            check_init_range(src, src.addr + o, 32, api, loc);
            uint64_t d = uint64_t(i) * dst_rep * 32 + uint64_t(j) * dst_blk * 32;
            std::memmove(db + d, sb + o, 32);
            lo = std::min(lo, o);
            hi = std::max(hi, o + 32);
            mark_init_range(dst.mem, dst.addr + uint32_t(d), 32);
        }
    (void)dt;
    Span rd[2] = {{offset.addr, uint32_t(repeat) * 32}, {src.addr + lo, hi - lo}};
    Span w{dst.addr, uint32_t(dst_bytes)};
    double occ = std::ceil(double(repeat) / cfg.max_repeat) * cfg.vec_issue_cycles + double(repeat) * 8.0;
    issue(P_V, occ, 0, rd, 2, &w, 1, api, loc);
}

}  // namespace kgsim
