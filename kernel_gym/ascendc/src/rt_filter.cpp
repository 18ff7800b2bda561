// kgsim runtime: Select with a byte mask and DropOut (kgsim/filter.h). Both are a compare of the mask
// with zero and a select per element (DropOut then Muls by 1 / keepProb, in float as its Muls is);
// their temporary space is checked against the CANN tiling helpers' minimum.
#include "kgsim/filter.h"
#include "rt_elem.h"

namespace kgsim {

void adv_select_bytes_mask(const FilterArgs& a, const Loc& loc) {
    const char* api = "Select";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(a.dt), ms = dt_size(a.mask_dt);
    if (a.first == 0 || a.src_last == 0)
        fault("invalid_argument", loc, "Select: SelectWithBytesMaskShapeInfo firstAxis and srcLastAxis must be positive");
    if (a.mask_last < a.src_last)
        fault("invalid_argument", loc, "Select: the mask's last axis (%u) is shorter than the source's (%u)",
              a.mask_last, a.src_last);
    if ((uint64_t(a.src_last) * es) % 32)
        fault("invalid_argument", loc, "Select: the source's last axis (%u elements) must be 32-byte aligned",
              a.src_last);
    if ((uint64_t(a.mask_last) * ms) % 32 || a.mask_last % 16)
        fault("invalid_argument", loc, "Select: the mask's last axis (%u elements) must be 32-byte aligned and a "
              "multiple of 16", a.mask_last);
    const uint64_t n = uint64_t(a.first) * a.src_last;
    check_local(a.src, 0, n * es, 32, api, "srcTensor", loc);
    check_local(a.dst, 0, n * es, 32, api, "dstTensor", loc);
    check_local(a.mask, 0, uint64_t(a.first) * a.mask_last * ms, 32, api, "mask", loc);
    uint64_t cal = std::min<uint64_t>(n, 4096);
    uint32_t need = std::max<uint32_t>(1024, elem::align_up(cal, 32) * 2 + 512);
    if (a.mask_last != a.src_last && !a.reuse_mask) need += elem::align_up(n * ms, 32);
    // The documented minimum is a debug-build assertion of CANN's Select, not checked on the NPU
    // (cann-ops' select_reduce_max_d_sub_exp_reduce_sum_d_real_div passes 128 B): a warning,
    // the fault only under bounds_mode="strict", which stands for CANN's CPU debug build.
    if (a.has_tmp && a.tmp_bytes < need && !cfg.bounds_strict) {
        warn("invalid_argument", loc,
             fmt("Select: sharedTmpBuffer holds %u B but the API needs at least %u B (GetSelectMaxMinTmpSize gives "
                 "the minimum); the NPU runs it unchecked, but the docs promise a correct result only from the "
                 "minimum up", a.tmp_bytes, need));
        need = a.tmp_bytes;
    }
    elem::check_tmp(api, "GetSelectMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes, need, loc);
    if (cfg.check_uninit) check_init_range(a.src, a.src.addr, uint32_t(n * es), api, loc);
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    const uint8_t* m = mem_ptr(a.mask.mem, a.mask.addr);
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    for (uint32_t r = 0; r < a.first; ++r) {
        for (uint32_t j = 0; j < a.src_last; ++j) {
            uint64_t e = uint64_t(r) * a.src_last + j;
            bool on = elem::ld(a.mask_dt, m + (uint64_t(r) * a.mask_last + j) * ms) != 0;
            // mask 0 picks src0, otherwise src1
            bool pick_scalar = a.scalar_is_src0 ? !on : on;
            if (pick_scalar) elem::st(a.dt, d + e * es, a.scalar);
            else std::memmove(d + e * es, s + e * es, es);
        }
    }
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(n * es));
    double occ = elem::vcost(double(n), 3, 0, 0, 3 * a.first + 2);
    Span rd[2] = {{a.src.addr, uint32_t(n * es)}, {a.mask.addr, a.first * a.mask_last * ms}};
    Span w{a.dst.addr, uint32_t(n * es)};
    issue(P_V, occ, 0, rd, 2, &w, 1, api, loc);
}

void adv_dropout(const FilterArgs& a, const Loc& loc) {
    const char* api = "DropOut";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(a.dt);
    if (a.first == 0 || a.src_last == 0 || a.mask_last == 0)
        fault("invalid_argument", loc, "DropOut: DropOutShapeInfo firstAxis, srcLastAxis and maskLastAxis must be "
              "positive");
    if (!(a.keep_prob > 0.f && a.keep_prob < 1.f))
        fault("invalid_argument", loc, "DropOut: keepProb (%g) must be in (0, 1)", double(a.keep_prob));
    uint32_t mode = a.mode;
    if (mode == 0) {
        if (a.src_last < a.mask_last) mode = 1;
        else if (a.src_last == a.mask_last) mode = 2;
        else if (a.src_last == a.mask_last * 8) mode = 3;
        else mode = 4;
    }
    const bool bits = mode >= 3;
    if (bits && uint64_t(a.mask_last) * 8 < a.src_last)
        fault("invalid_argument", loc, "DropOut: a bit mask of %u bytes per row cannot cover %u elements",
              a.mask_last, a.src_last);
    if (!bits && a.mask_last < a.src_last)
        fault("invalid_argument", loc, "DropOut: a byte mask of %u per row cannot cover %u elements", a.mask_last,
              a.src_last);
    const uint64_t n = uint64_t(a.first) * a.src_last;
    check_local(a.src, 0, n * es, 32, api, "srcLocal", loc);
    check_local(a.dst, 0, n * es, 32, api, "dstLocal", loc);
    check_local(a.mask, 0, uint64_t(a.first) * a.mask_last, 32, api, "maskLocal", loc);
    elem::check_tmp(api, "GetDropOutMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes, 512, loc);
    if (cfg.check_uninit) check_init_range(a.src, a.src.addr, uint32_t(n * es), api, loc);
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    const uint8_t* m = mem_ptr(a.mask.mem, a.mask.addr);
    uint8_t* d = mem_ptr(a.dst.mem, a.dst.addr);
    const float inv = 1.0f / a.keep_prob;
    for (uint32_t r = 0; r < a.first; ++r) {
        const uint8_t* row = m + uint64_t(r) * a.mask_last;
        for (uint32_t j = 0; j < a.src_last; ++j) {
            uint64_t e = uint64_t(r) * a.src_last + j;
            bool keep = bits ? ((row[j / 8] >> (j % 8)) & 1) : row[j] != 0;  // bit j of the row, LSB first
            float x = keep ? elem::to(a.dt, elem::ld(a.dt, s + e * es)) : 0.f;
            elem::st(a.dt, d + e * es, elem::to(a.dt, x * inv));
        }
    }
    mark_init_range(a.dst.mem, a.dst.addr, uint32_t(n * es));
    double occ = elem::vcost(double(n), 3 + (a.dt != DT::F32) * 2, 0, 0, 3 * a.first + 2);
    Span rd[2] = {{a.src.addr, uint32_t(n * es)}, {a.mask.addr, a.first * a.mask_last}};
    Span w{a.dst.addr, uint32_t(n * es)};
    issue(P_V, occ, 0, rd, 2, &w, 1, api, loc);
}
}  // namespace kgsim
