// kgsim runtime: element access and checks shared by the high-level API files that compute element by
// element (rt_quantization.cpp, rt_normalization.cpp, rt_index.cpp): load/store one element of any
// dtype as a double, round to a dtype, the sharedTmpBuffer check and a V-pipe cost estimate.
#pragma once
#include <cmath>
#include <cstring>
#include <limits>
#include "rt.h"

namespace kgsim {
namespace elem {

inline double ld(DT dt, const uint8_t* p) {
    switch (dt) {
        case DT::F32: { float v; std::memcpy(&v, p, 4); return v; }
        case DT::F16: { half v; std::memcpy(&v, p, 2); return float(v); }
        case DT::BF16: {
            uint16_t b;
            std::memcpy(&b, p, 2);
            uint32_t u = uint32_t(b) << 16;
            float f;
            std::memcpy(&f, &u, 4);
            return f;
        }
        case DT::I8: return double(int8_t(*p));
        case DT::U8: case DT::B8: return double(*p);
        case DT::I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
        case DT::U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
        case DT::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
        case DT::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
        case DT::I64: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
        case DT::U64: { uint64_t v; std::memcpy(&v, p, 8); return double(v); }
        default: return 0;
    }
}
template <class I>
inline void st_int(uint8_t* p, double v) {
    double lo = double(std::numeric_limits<I>::min()), hi = double(std::numeric_limits<I>::max());
    I i = v != v ? I(0) : I(std::max(lo, std::min(hi, std::trunc(v))));
    std::memcpy(p, &i, sizeof(I));
}
// Store v (integers truncated and saturated; round first where the API rounds).
inline void st(DT dt, uint8_t* p, double v) {
    switch (dt) {
        case DT::F32: { float f = float(v); std::memcpy(p, &f, 4); break; }
        case DT::F16: { half h = half(float(v)); std::memcpy(p, &h, 2); break; }
        case DT::BF16: { bfloat16_t b = bfloat16_t(float(v)); std::memcpy(p, &b, 2); break; }
        case DT::I8: st_int<int8_t>(p, v); break;
        case DT::U8: case DT::B8: st_int<uint8_t>(p, v); break;
        case DT::I16: st_int<int16_t>(p, v); break;
        case DT::U16: st_int<uint16_t>(p, v); break;
        case DT::I32: st_int<int32_t>(p, v); break;
        case DT::U32: st_int<uint32_t>(p, v); break;
        case DT::I64: st_int<int64_t>(p, v); break;
        case DT::U64: st_int<uint64_t>(p, v); break;
        default: break;
    }
}
// v rounded to what a register of dtype dt holds
inline float to(DT dt, double v) {
    if (dt == DT::F16) return float(half(float(v)));
    if (dt == DT::BF16) return float(bfloat16_t(float(v)));
    return float(v);
}
// v as a float register holds it: keeps the compiler from fusing a multiply and an add the NPU rounds apart
inline float rnd(float v) {
    volatile float t = v;
    return t;
}
inline uint32_t align_up(uint64_t v, uint64_t a) { return uint32_t((v + a - 1) / a * a); }

// A caller-given sharedTmpBuffer must hold the documented minimum; without one, the API takes its
// space from the UB that TPipe left free.
inline void check_tmp(const char* api, const char* helper, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
                      uint32_t min_bytes, const Loc& loc) {
    if (has_tmp) {
        if (min_bytes) check_local(tmp, 0, std::min(tmp_bytes, min_bytes), 32, api, "sharedTmpBuffer", loc);
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

// V-pipe occupancy of `instrs` instructions of which `simple` element-wise passes and `trans`
// Exp/Ln/Div-class passes over `elems` float lanes, plus `reduce_repeats` repeat-wise reductions.
inline double vcost(double elems, double simple, double trans, double reduce_repeats, double instrs) {
    double repeats = std::ceil(elems / 64.0);
    return instrs * cfg.vec_issue_cycles +
           repeats * (simple * 256.0 / cfg.vec_simple_bytes_per_cycle +
                      trans * 64.0 / cfg.vec_transcendental_elems_per_cycle) +
           reduce_repeats * cfg.vec_reduce_cycles_per_repeat;
}

}  // namespace elem
}  // namespace kgsim
