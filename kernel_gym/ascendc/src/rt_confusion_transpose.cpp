// kgsim runtime: ConfusionTranspose (kgsim/confusion_transpose.h), TRANSPOSE_NZ2ND_0213: element (b, n, s, j) of
// the NZ source, at ((b * N + n) * H/N / c0 + j / c0) * S * c0 + s * c0 + j % c0, goes to ND [B, S, N, H/N].
#include "kgsim/confusion_transpose.h"
#include <cstring>
#include "rt_elem.h"

namespace kgsim {

void adv_confusion_transpose(DT dt, const TRef& dst, const TRef& src, const TRef* tmp, int type, uint32_t b,
                             uint32_t n, uint32_t s, uint32_t hn, uint32_t tiled_type, const Loc& loc) {
    (void)tmp;
    const char* api = "ConfusionTranspose";
    check_in_launch(loc, api);
    tick(loc);
    if (type != 1)  // TransposeType::TRANSPOSE_NZ2ND_0213
        fault("unsupported_api", loc, "ConfusionTranspose: only TRANSPOSE_NZ2ND_0213 is simulated (got TransposeType %d)",
              type);
    if (tiled_type != uint32_t(type))
        fault("invalid_argument", loc, "ConfusionTranspose: the tiling was made for TransposeType %u, the call asks "
              "for %d; pass the same type to GetTransposeTilingInfo", tiled_type, type);
    const uint32_t es = dt_size(dt), c0 = 32 / es;
    if (b == 0 || n == 0 || s == 0 || hn == 0)
        fault("invalid_argument", loc, "ConfusionTranspose: the tiling's shape [B %u, N %u, S %u, H/N %u] is empty; "
              "fill it with GetTransposeTilingInfo", b, n, s, hn);
    if (hn % c0 || s % 16)
        fault("invalid_argument", loc, "ConfusionTranspose: NZ input needs H/N (%u) a multiple of %u and S (%u) a "
              "multiple of 16", hn, c0, s);
    const uint64_t total = uint64_t(b) * n * s * hn, nbytes = total * es;
    check_local(src, 0, nbytes, 32, api, "srcTensor", loc);
    check_local(dst, 0, nbytes, 32, api, "dstTensor", loc);
    if (cfg.check_uninit) check_init_range(src, src.addr, uint32_t(nbytes), api, loc);
    if (src.mem == dst.mem && src.addr < dst.addr + nbytes && dst.addr < src.addr + nbytes)
        fault("invalid_argument", loc, "ConfusionTranspose: srcTensor and dstTensor overlap");
    const uint8_t* sp = mem_ptr(src.mem, src.addr);
    uint8_t* dp = mem_ptr(dst.mem, dst.addr);
    const uint32_t blocks = hn / c0;
    for (uint32_t bi = 0; bi < b; ++bi)
        for (uint32_t ni = 0; ni < n; ++ni)
            for (uint32_t jb = 0; jb < blocks; ++jb)
                for (uint32_t si = 0; si < s; ++si) {
                    uint64_t from = ((uint64_t(bi) * n + ni) * blocks + jb) * s * c0 + uint64_t(si) * c0;
                    uint64_t to = ((uint64_t(bi) * s + si) * n + ni) * hn + uint64_t(jb) * c0;
                    std::memcpy(dp + to * es, sp + from * es, c0 * es);
                }
    mark_init_range(dst.mem, dst.addr, uint32_t(nbytes));
    // one 32-byte block per row of each fractal, moved by a data-movement-like vector copy
    double occ = elem::vcost(double(total) * es / 4.0, 1, 0, 0, double(b) * n * blocks);
    Span rd{src.addr, uint32_t(nbytes)}, wr{dst.addr, uint32_t(nbytes)};
    issue(P_V, occ, 0, &rd, 1, &wr, 1, api, loc);
}

}  // namespace kgsim
