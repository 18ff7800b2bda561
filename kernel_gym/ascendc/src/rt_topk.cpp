// kgsim runtime: TopK (kgsim/topk.h). Each row is sorted as Sort32 + MrgSort order it on Atlas A2
// (descending for the largest, ascending for the smallest; equal values keep their index order) and its
// first k (value, index) pairs written out; rows flagged in finishLocal get the index n.
#include <algorithm>
#include <numeric>
#include <vector>
#include "kgsim/topk.h"
#include "rt_elem.h"

namespace kgsim {

// GetTopKMaxMinTmpSize on Atlas A2: sort proposals and, without given indices, an index row
uint32_t topk_tmp_bytes(int32_t inner, int32_t outter, int init_index, int small, int largest) {
    const uint32_t io = uint32_t(inner) * uint32_t(outter);
    if (!small) return init_index ? 16u * uint32_t(inner) : 20u * uint32_t(inner);
    uint32_t v = io * 8 + 64;
    if (!largest) v += io * 4;
    if (!init_index) v += io * 4;
    return v;
}

void adv_topk(const TopKArgs& a, const Loc& loc) {
    const char* api = "TopK";
    check_in_launch(loc, api);
    tick(loc);
    const uint32_t es = dt_size(a.dt);
    if (a.outter <= 0 || a.inner <= 0 || a.inner % 32 || (a.small ? a.inner != 32 : a.inner > 4096))
        fault("invalid_argument", loc, "TopK: TopKInfo inner (%d) must be a multiple of 32 (32 in the Small mode, at "
              "most 4096 in the Normal mode) and outter (%d) positive", a.inner, a.outter);
    if (a.n <= 0 || a.n > a.inner)
        fault("invalid_argument", loc, "TopK: TopKInfo n (%d) must be in [1, inner = %d]", a.n, a.inner);
    if (a.k < 1 || a.k > a.n) fault("invalid_argument", loc, "TopK: k (%d) must be in [1, n = %d]", a.k, a.n);
    const uint32_t rows = uint32_t(a.outter), inner = uint32_t(a.inner), k = uint32_t(a.k);
    const uint32_t kv = a.small ? k : elem::align_up(k, 32 / es), ki = a.small ? k : elem::align_up(k, 8);
    check_local(a.src, 0, uint64_t(rows) * inner * es, 32, api, "srcLocal", loc);
    check_local(a.dst_val, 0, uint64_t(rows) * kv * es, 32, api, "dstValueLocal", loc);
    check_local(a.dst_idx, 0, uint64_t(rows) * ki * 4, 32, api, "dstIndexLocal", loc);
    const uint32_t idx_rows = a.small ? rows : 1;
    if (a.init_index) check_local(a.src_idx, 0, uint64_t(idx_rows) * inner * 4, 32, api, "srcIndexLocal", loc);
    if (a.has_finish) check_local(a.finish, 0, rows, 32, api, "finishLocal", loc);
    elem::check_tmp(api, "GetTopKMaxMinTmpSize", a.tmp, a.has_tmp, a.tmp_bytes,
                    topk_tmp_bytes(a.inner, a.outter, a.init_index, a.small, a.largest), loc);
    if (cfg.check_uninit) check_init_range(a.src, a.src.addr, rows * inner * es, api, loc);
    const uint8_t* s = mem_ptr(a.src.mem, a.src.addr);
    const int32_t* si = a.init_index ? reinterpret_cast<const int32_t*>(mem_ptr(a.src_idx.mem, a.src_idx.addr)) : nullptr;
    const uint8_t* fin = a.has_finish ? mem_ptr(a.finish.mem, a.finish.addr) : nullptr;
    uint8_t* dv = mem_ptr(a.dst_val.mem, a.dst_val.addr);
    int32_t* di = reinterpret_cast<int32_t*>(mem_ptr(a.dst_idx.mem, a.dst_idx.addr));
    std::vector<uint32_t> order(inner);
    std::vector<double> v(inner);
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t j = 0; j < inner; ++j) v[j] = elem::ld(a.dt, s + (uint64_t(r) * inner + j) * es);
        std::iota(order.begin(), order.end(), 0u);
        if (a.largest)
            std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return v[x] > v[y]; });
        else
            std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return v[x] < v[y]; });
        const bool done = fin && fin[r];
        for (uint32_t i = 0; i < k; ++i) {
            uint32_t j = order[i];
            elem::st(a.dt, dv + (uint64_t(r) * kv + i) * es, v[j]);
            int32_t idx = si ? si[(a.small ? uint64_t(r) * inner : 0) + j] : int32_t(j);
            di[uint64_t(r) * ki + i] = done ? a.n : idx;
        }
        mark_init_range(a.dst_val.mem, a.dst_val.addr + r * kv * es, k * es);
        mark_init_range(a.dst_idx.mem, a.dst_idx.addr + r * ki * 4, k * 4);
    }
    // Sort32 over the row, log2(inner / 32) MrgSort passes, two GatherMask extractions per row
    double passes = std::max(1.0, std::ceil(std::log2(double(inner) / 32.0)) + 1);
    double occ = elem::vcost(double(rows) * inner, 2 * passes + 2 * !a.largest, 0, 0, rows * (passes + 4));
    Span rd{a.src.addr, rows * inner * es};
    Span w[2] = {{a.dst_val.addr, rows * kv * es}, {a.dst_idx.addr, rows * ki * 4}};
    issue(P_V, occ, 0, &rd, 1, w, 2, api, loc);
}
}  // namespace kgsim
