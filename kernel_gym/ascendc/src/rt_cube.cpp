// kgsim runtime: the cube unit (kgsim/cube.h). Functional semantics of DataCopy with Nd2NzParams,
// LoadData 2D (with the fractal transposes), Mmad and Fixpipe on the fractal layouts, their
// checks (positions, alignment, bounds, documented parameter ranges), and their timing on the
// MTE2 / MTE1 / M / FIX pipes with the synchronisation check for the cube memories.
//
// Layouts, element offsets with k0 = 32 B / sizeof(T):
//   L1 NZ (Nd2Nz):  (r, c) -> (c / k0) * C0Stride * k0 + r * NStride * k0 + c % k0
//   L0A Zz (A2):    (i, k) -> ((i / 16) * K1 + k / k0) * 16 * k0 + (i % 16) * k0 + k % k0   (m == 1: k, GEMV)
//   L0B Zn (B2):    (k, j) -> ((k / k0) * N1 + j / 16) * 16 * k0 + (j % 16) * k0 + k % k0
//   L0C Nz (CO1):   (i, j) -> ((j / 16) * M1 + i / 16) * 256 + (i % 16) * 16 + j % 16
#include <unordered_set>

#include "kgsim/cube.h"
#include "rt.h"

#pragma GCC optimize("O3")  // the Mmad inner loops: vectorised, they are the simulator's host cost

namespace kgsim {
namespace {

constexpr uint32_t kFractalBytes = 512;

// GM lines (512 B) read by cube copies in the current launch: re-reads hit the L2 and cost no HBM
// bandwidth while what was touched fits in the L2.
struct L2Lines {
    const LaunchRec* launch = nullptr;
    size_t n_launches = 0;
    std::unordered_set<uintptr_t> lines;
} l2;

const char* pos_str(uint8_t pos) {
    static const char* names[] = {"GM", "A1", "A2", "B1", "B2", "C1", "C2", "CO1", "CO2", "VECIN", "VECOUT",
                                  "VECCALC", "SPM", "TSCM", "C2PIPE2GM", "C2PIPE2LOCAL"};
    return pos < 16 ? names[pos] : "?";
}
const char* mem_str(uint8_t mem) {
    static const char* names[] = {"UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"};
    return mem < MEM_COUNT ? names[mem] : "?";
}

[[noreturn]] void wrong_position(const char* api, const char* operand, const TRef& t, const char* want,
                                 const Loc& loc) {
    fault("wrong_position", loc, "%s: operand %s is a tensor of position %s (%s), but the instruction needs %s", api,
          operand, pos_str(t.pos), mem_str(t.mem), want);
}

void check_align(const TRef& t, uint32_t al, const char* api, const char* operand, const Loc& loc) {
    if (t.addr % al == 0) return;
    fault(t.mem == MEM_UB ? "unaligned_local_tensor" : "unaligned_cube_tensor", loc,
          "%s: operand %s starts at byte %u of its memory, which is not %u-byte aligned (a LocalTensor offset view "
          "t[k] needs k*sizeof(T) to be a multiple of %u)", api, operand, t.addr, al, al);
}

// Bounds of a cube operand: like check_local, with the cube memory's alignment.
void operand(const TRef& t, uint64_t nbytes, uint32_t al, const char* api, const char* name, const Loc& loc) {
    check_align(t, al, api, name, loc);
    check_local(t, 0, nbytes, 0, api, name, loc);
}

uint32_t align_of(uint8_t mem) {
    switch (mem) {
        case MEM_L0A: case MEM_L0B: return 512;
        case MEM_L0C: case MEM_BT: return 64;
        case MEM_FB: return 128;
        default: return 32;
    }
}

float ld_f(DT dt, const uint8_t* p) {
    switch (dt) {
        case DT::F32: { float v; std::memcpy(&v, p, 4); return v; }
        case DT::F16: { _Float16 v; std::memcpy(&v, p, 2); return float(v); }
        case DT::BF16: { uint16_t b; std::memcpy(&b, p, 2); return std::bit_cast<float>(uint32_t(b) << 16); }
        default: return 0.0f;
    }
}

double pipe_time(Pipe p) { return std::max(hot.s_time, rt.blk.free_[p]); }

// Issue on a cube pipe and record the cube-memory spans it touches.
struct Touch {
    uint8_t mem;
    uint32_t addr, len;
    bool write;
};
void issue_cube(Pipe p, double occ, double lat, std::initializer_list<Touch> touches, const Span* ub_r, int nr,
                const Span* ub_w, int nw, const char* api, const Loc& loc) {
    double start = issue(p, occ, lat, ub_r, nr, ub_w, nw, api, loc);
    for (const Touch& t : touches)
        if (t.len) cube_track(t.mem, t.addr, t.len, p, t.write, start, start + occ + lat, api, loc);
}

}  // namespace

void cube_launch_reset() {
    l2.lines.clear();
    l2.launch = rt.cur;
    l2.n_launches = rt.launches.size();
}

uint64_t cube_gm_first_touch(uintptr_t lo, uint64_t n) {
    if (l2.launch != rt.cur || l2.n_launches != rt.launches.size()) cube_launch_reset();
    if (double(l2.lines.size()) * kFractalBytes > cfg.l2_bytes) return n;  // thrashing: every read goes to HBM
    uint64_t fresh = 0;
    for (uintptr_t line = lo / kFractalBytes; line * kFractalBytes < lo + n; ++line) {
        if (!l2.lines.insert(line).second) continue;
        uintptr_t a = std::max<uintptr_t>(lo, line * kFractalBytes), b = std::min<uintptr_t>(lo + n, (line + 1) * kFractalBytes);
        fresh += b - a;
    }
    return fresh;
}

// ---- the synchronisation check of the cube memories --------------------------------------------
void cube_track(uint8_t mem, uint32_t addr, uint32_t len, Pipe p, bool write, double start, double done,
                const char* api, const Loc& loc) {
    if (cfg.sync_check <= 0 || len == 0) return;
    BlockState& b = rt.blk;
    if (b.cube_gen != hot.gen) {
        b.cube_acc.clear();
        b.cube_gen = hot.gen;
    }
    const double eps = 1e-6;
    uint32_t lo = addr, hi = addr + len;
    for (const CubeAccess& e : b.cube_acc) {
        if (e.mem != mem || e.pipe == p || e.hi <= lo || e.lo >= hi || e.done <= start + eps) continue;
        if (!write && !e.write) continue;
        const char* what = e.write ? (write ? "write after write" : "read after write") : "write after read";
        std::string msg = fmt(
            "%s on pipe %s (%s) touches %s bytes [%u, %u) while pipe %s may still be %s them (%s at %s:%u, until "
            "cycle %.0f; this instruction starts at cycle %.0f): missing synchronisation (EnQue/DeQue, "
            "SetFlag/WaitFlag or PipeBarrier)", api, pipe_name(p), what, mem_str(mem), std::max(lo, e.lo),
            std::min(hi, e.hi), pipe_name(e.pipe), e.write ? "writing" : "reading", e.write ? "written" : "read",
            e.loc.file_name(), unsigned(e.loc.line()), e.done, start);
        if (cfg.sync_check >= 2) fault("pipe_race", loc, "%s", msg.c_str());
        if (!rt.sync_warned) {
            rt.sync_warned = true;
            warn("pipe_race", loc, msg);
        }
        break;
    }
    // Forget what every pipe has finished with: no later instruction starts before that.
    if (b.cube_acc.size() >= 256) {
        double floor = hot.s_time;
        for (Pipe q : {P_MTE1, P_MTE2, P_MTE3, P_M, P_FIX}) floor = std::min(floor, std::max(hot.s_time, b.free_[q]));
        std::erase_if(b.cube_acc, [&](const CubeAccess& e) { return e.done <= floor; });
        if (b.cube_acc.size() >= 1024) b.cube_acc.erase(b.cube_acc.begin(), b.cube_acc.begin() + 512);
    }
    // Consecutive accesses of one pipe to adjacent bytes merge, but only where the merged record is
    // exact: both end at the same time, or the new access covers the old one. Widening an earlier
    // access to a later completion time would report a race on bytes that were already complete
    // (an A1 tile EnQue'd and DeQue'd while the next copy of the same pipe fills the B1 tile behind it).
    if (!b.cube_acc.empty()) {
        CubeAccess& l = b.cube_acc.back();
        if (l.mem == mem && l.pipe == p && l.write == write && lo <= l.hi && hi >= l.lo &&
            (std::abs(l.done - done) <= eps || (lo <= l.lo && hi >= l.hi))) {
            l.lo = std::min(l.lo, lo);
            l.hi = std::max(l.hi, hi);
            l.done = std::max(l.done, done);
            l.loc = loc;
            return;
        }
    }
    b.cube_acc.push_back(CubeAccess{mem, uint8_t(p), uint8_t(write), lo, hi, done, loc});
}

[[noreturn]] void cube_unsupported(const char* what, const Loc& loc) {
    fault("unsupported_api", loc, "%s is not modelled by the simulator", what);
}

// ---- GM -> L1 (or UB) with ND -> NZ ----------------------------------------------------------------
void cube_nd2nz(const TRef& dst, int32_t buf, const void* gm, const TRef* src_ub, DT dt, const CubeNd2Nz& p,
                const Loc& loc) {
    const char* api = "DataCopy(Nd2NzParams)";
    check_in_launch(loc, api);
    tick(loc);
    if (src_ub) cube_unsupported("DataCopy(Nd2NzParams) from a LocalTensor (UB -> L1): Atlas A2 has no UB -> L1 path "
                                 "(AIV and AIC are separate cores); copy GM -> L1", loc);
    if (dst.mem != MEM_L1 && dst.mem != MEM_UB) wrong_position(api, "dst", dst, "A1/B1/C1 (L1) or VECIN (UB)", loc);
    if (dst.mem == MEM_L1) require_aic(api, loc);
    if (p.nd_num == 0 || p.n == 0 || p.d == 0) return;  // documented NOP
    const uint32_t es = dt_size(dt), c0 = 32 / es;
    if (p.dst_c0_stride == 0 || p.dst_n_stride == 0 || p.src_d == 0)
        fault("invalid_argument", loc, "%s: srcDValue, dstNzC0Stride and dstNzNStride must be at least 1 (got %u, %u, %u)",
              api, p.src_d, p.dst_c0_stride, p.dst_n_stride);
    const uint32_t d1 = (p.d + c0 - 1) / c0;  // 32-byte column blocks per row
    uint64_t dst_span = (uint64_t(p.nd_num - 1) * p.dst_matrix_stride +
                         uint64_t(d1 - 1) * p.dst_c0_stride * c0 + uint64_t(p.n - 1) * p.dst_n_stride * c0 + c0) * es;
    operand(dst, dst_span, 32, api, "dst", loc);
    uint64_t src_span = (uint64_t(p.nd_num - 1) * p.src_nd_stride + uint64_t(p.n - 1) * p.src_d + p.d) * es;
    uintptr_t g = reinterpret_cast<uintptr_t>(gm);
    if (g % es) fault("misaligned_copy", loc, "%s: the GM source address is not aligned to the %u-byte element size", api, es);
    gm_check(buf, g, src_span, es, api, "reads", loc);
    // Destination 32-byte blocks must not overlap (the documented constraint: the write order of
    // overlapping blocks is undefined on the NPU).
    std::vector<uint8_t> seen(dst_span / 32 + 1, 0);
    uint8_t* out = mem_ptr(dst.mem, dst.addr);
    uint64_t hbm = 0;
    for (uint32_t i = 0; i < p.nd_num; ++i)
        for (uint32_t r = 0; r < p.n; ++r) {
            const uint8_t* row = reinterpret_cast<const uint8_t*>(g) + (uint64_t(i) * p.src_nd_stride + uint64_t(r) * p.src_d) * es;
            for (uint32_t k = 0; k < d1; ++k) {
                uint64_t blk = (uint64_t(i) * p.dst_matrix_stride + uint64_t(k) * p.dst_c0_stride * c0 +
                                uint64_t(r) * p.dst_n_stride * c0) * es;
                if (blk % 32 == 0) {
                    if (seen[blk / 32])
                        fault("fractal_layout", loc, "%s: destination block at byte %llu is written twice (row %u, "
                              "column block %u of ND matrix %u): dstNzC0Stride %u must be at least nValue * "
                              "dstNzNStride = %u, and the matrices must not overlap", api, (unsigned long long)blk, r,
                              k, i, p.dst_c0_stride, p.n * p.dst_n_stride);
                    seen[blk / 32] = 1;
                }
                uint32_t cnt = std::min(c0, p.d - k * c0);
                std::memcpy(out + blk, row + uint64_t(k) * c0 * es, uint64_t(cnt) * es);
                if (cnt < c0) std::memset(out + blk + uint64_t(cnt) * es, 0, uint64_t(c0 - cnt) * es);  // zero pad
                if (dst.mem == MEM_UB) mark_init_range(dst.mem, dst.addr + uint32_t(blk), 32);
            }
            record_access(reinterpret_cast<uintptr_t>(row), uint64_t(p.d) * es, AK_READ, loc);
            if (dst.mem == MEM_UB) hbm += uint64_t(p.d) * es;
            else hbm += cube_gm_first_touch(reinterpret_cast<uintptr_t>(row), uint64_t(p.d) * es);
        }
    uint64_t bytes = uint64_t(p.nd_num) * p.n * p.d * es;
    if (rt.cur) rt.cur->gm_read += hbm;
    // one burst per source row
    double occ = cfg.dma_issue_cycles + double(p.nd_num) * p.n * cfg.dma_burst_cycles + double(bytes) / cfg.mte2_bytes_per_cycle;
    Span w{dst.addr, uint32_t(dst_span)};
    if (dst.mem == MEM_UB) issue(P_MTE2, occ, cfg.mte2_startup_cycles, nullptr, 0, &w, 1, api, loc);
    else issue_cube(P_MTE2, occ, cfg.mte2_startup_cycles, {{dst.mem, dst.addr, uint32_t(dst_span), true}}, nullptr, 0,
                    nullptr, 0, api, loc);
}

// ---- LoadData 2D: L1 -> L0A/L0B (MTE1), GM -> L1/L0A/L0B (MTE2) -------------------------------------
void cube_load2d(const TRef& dst, const TRef& src, int32_t buf, const void* gm, DT dt, uint32_t start,
                 uint32_t repeat, uint32_t src_stride, uint32_t dst_gap, uint32_t dst_frac_gap, int transpose,
                 const char* api, const Loc& loc) {
    check_in_launch(loc, api);
    tick(loc);
    if (!gm && loop_skip(loc, loop_key(tref_key(dst), tref_key(src), dt, start, repeat, src_stride, dst_gap, dst_frac_gap,
                                       transpose)))
        return;
    require_aic(api, loc);
    const bool from_gm = gm != nullptr;
    if (from_gm ? (dst.mem != MEM_L1 && dst.mem != MEM_L0A && dst.mem != MEM_L0B)
                : (dst.mem != MEM_L0A && dst.mem != MEM_L0B))
        wrong_position(api, "dst", dst, from_gm ? "A1/B1 (L1), A2 (L0A) or B2 (L0B)" : "A2 (L0A) or B2 (L0B)", loc);
    if (!from_gm && src.mem != MEM_L1) wrong_position(api, "src", src, "A1/B1 (L1)", loc);
    if (repeat == 0) return;  // documented NOP
    const uint32_t es = dt_size(dt);
    if (transpose == 1 && (from_gm || es != 2))
        fault("fractal_layout", loc, "%s: ifTranspose needs an L1 -> L0A/L0B load of a 16-bit type (half, "
              "bfloat16_t, int16_t, uint16_t); this is %s%s", api, from_gm ? "a load from GM of " : "", dt_name(dt));
    if (transpose == 2 && es != 1 && es != 2 && es != 4)
        fault("fractal_layout", loc, "%s: no transpose for %s", api, dt_name(dt));
    // Source unit: one fractal, or for LoadDataWithTranspose of b8/b32 a square of two fractals.
    const uint32_t fr_per_rep = transpose == 2 && es != 2 ? 2 : 1;
    const uint64_t unit = uint64_t(kFractalBytes) * fr_per_rep;
    const uint64_t last_src = (uint64_t(start) + uint64_t(repeat - 1) * src_stride) * unit + unit;
    const uint64_t dst_step = kFractalBytes + uint64_t(dst_gap) * kFractalBytes;  // first fractals of iterations
    const uint64_t frac2 = kFractalBytes + uint64_t(dst_frac_gap) * kFractalBytes;  // second fractal of an iteration
    const uint64_t last_dst = uint64_t(repeat - 1) * dst_step + (fr_per_rep == 2 ? frac2 : 0) + kFractalBytes;
    operand(dst, last_dst, align_of(dst.mem), api, "dst", loc);
    const uint8_t* s;
    uintptr_t g = reinterpret_cast<uintptr_t>(gm);
    if (from_gm) {
        gm_check(buf, g, last_src, es, api, "reads", loc);
        s = reinterpret_cast<const uint8_t*>(g);
    } else {
        operand(src, last_src, 32, api, "src", loc);
        s = mem_ptr(src.mem, src.addr);
    }
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    uint64_t hbm = 0;
    for (uint32_t i = 0; i < repeat; ++i) {
        const uint8_t* in = s + (uint64_t(start) + uint64_t(i) * src_stride) * unit;
        uint8_t* o0 = d + uint64_t(i) * dst_step;
        if (from_gm) {
            record_access(reinterpret_cast<uintptr_t>(in), unit, AK_READ, loc);
            hbm += cube_gm_first_touch(reinterpret_cast<uintptr_t>(in), unit);
        }
        if (transpose == 0) {
            std::memmove(o0, in, kFractalBytes);
            continue;
        }
        if (es == 2) {  // one 16 x 16 fractal, transposed
            uint16_t tmp[256];
            std::memcpy(tmp, in, 512);
            for (int r = 0; r < 16; ++r)
                for (int c = 0; c < 16; ++c) std::memcpy(o0 + (c * 16 + r) * 2, &tmp[r * 16 + c], 2);
            continue;
        }
        // b8: two 16 x 32 fractals stacked into a 32 x 32 square; b32: two 16 x 8 side by side into a
        // 16 x 16 square. The square is transposed and split the same way.
        const int R = es == 1 ? 32 : 16;
        uint8_t sq[1024], tr[1024];
        for (int f = 0; f < 2; ++f)
            for (int r = 0; r < 16; ++r)
                for (int c = 0; c < int(32 / es); ++c) {
                    int row = es == 1 ? 16 * f + r : r, col = es == 1 ? c : 8 * f + c;
                    std::memcpy(sq + (row * R + col) * es, in + f * 512 + (r * (32 / es) + c) * es, es);
                }
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < R; ++c) std::memcpy(tr + (c * R + r) * es, sq + (r * R + c) * es, es);
        for (int f = 0; f < 2; ++f) {
            uint8_t* o = f == 0 ? o0 : o0 + frac2;
            for (int r = 0; r < 16; ++r)
                for (int c = 0; c < int(32 / es); ++c) {
                    int row = es == 1 ? 16 * f + r : r, col = es == 1 ? c : 8 * f + c;
                    std::memcpy(o + (r * (32 / es) + c) * es, tr + (row * R + col) * es, es);
                }
        }
    }
    double bytes = double(repeat) * unit;
    if (from_gm) {
        if (rt.cur) rt.cur->gm_read += hbm;
        double occ = cfg.dma_issue_cycles + repeat * cfg.dma_burst_cycles + bytes / cfg.mte2_bytes_per_cycle;
        issue_cube(P_MTE2, occ, cfg.mte2_startup_cycles, {{dst.mem, dst.addr, uint32_t(last_dst), true}}, nullptr, 0,
                   nullptr, 0, api, loc);
        return;
    }
    double rate = dst.mem == MEM_L0A ? cfg.l1_to_l0a_bytes_per_cycle : cfg.l1_to_l0b_bytes_per_cycle;
    double occ = cfg.mte1_issue_cycles + bytes / rate;
    issue_cube(P_MTE1, occ, cfg.mte1_latency_cycles,
               {{src.mem, uint32_t(src.addr + uint64_t(start) * unit),
                 uint32_t(last_src - uint64_t(start) * unit), false},
                {dst.mem, dst.addr, uint32_t(last_dst), true}},
               nullptr, 0, nullptr, 0, api, loc);
}

// ---- Load3D v2: image to column, L1 -> L0A/L0B ------------------------------------------------------
void cube_set_fmatrix(uint16_t l1h, uint16_t l1w, const uint8_t pad[4], int right, const Loc& loc) {
    check_in_launch(loc, "SetFmatrix");
    tick(loc);
    const int f = right ? 1 : 0;
    rt.blk.fm_h[f] = l1h;
    rt.blk.fm_w[f] = l1w;
    for (int i = 0; i < 4; ++i) rt.blk.fm_pad[f][i] = pad[i];
}

void cube_set_pad_value(uint64_t bits, const Loc& loc) {
    check_in_launch(loc, "SetLoadDataPaddingValue");
    tick(loc);
    rt.blk.load3d_pad = bits;
}

// The source is an NC1HWC0 feature map (C1 x H x W x C0, C0 = 32 B of elements). Its image to
// column matrix has Hout x Wout rows (output pixels, row-major) and C1 x Kh x Kw x C0 columns (in
// that order); the [m_start, +m_ext) x [k_start, +k_ext) block X is written, in fractals:
//   L0A:              Zz of X (16 x C0 fractals);
//   L0A, enTranspose: Zz of X^T (b16/b32);
//   L0B:              Zn of X read as B (K = X's rows, N = its columns; b16/b32).
void cube_load3d(const TRef& dst, const TRef& src, DT dt, const CubeLoad3d& p, const char* api, const Loc& loc) {
    check_in_launch(loc, api);
    tick(loc);
    if (loop_skip(loc, loop_key(tref_key(dst), tref_key(src), dt, p.l1h, p.l1w, p.channel, p.k_ext, p.m_ext, p.k_start,
                                p.m_start, p.stride_w, p.stride_h, p.filter_w, p.filter_h, p.dil_w, p.dil_h, p.transpose,
                                p.right_fm, p.set_fm, p.set_pad, p.pad_bits,
                                loop_key(p.pad[0], p.pad[1], p.pad[2], p.pad[3]))))
        return;
    require_aic(api, loc);
    if (dst.mem != MEM_L0A && dst.mem != MEM_L0B) wrong_position(api, "dst", dst, "A2 (L0A) or B2 (L0B)", loc);
    if (src.mem != MEM_L1) wrong_position(api, "src", src, "A1/B1 (L1)", loc);
    BlockState& blk = rt.blk;
    const int f = p.right_fm ? 1 : 0;
    if (p.set_fm) {
        blk.fm_h[f] = p.l1h;
        blk.fm_w[f] = p.l1w;
        for (int i = 0; i < 4; ++i) blk.fm_pad[f][i] = p.pad[i];
    }
    if (p.set_pad) blk.load3d_pad = p.pad_bits;
    const int64_t H = blk.fm_h[f], W = blk.fm_w[f];
    const int64_t pl = blk.fm_pad[f][0], pr = blk.fm_pad[f][1], pt = blk.fm_pad[f][2], pb = blk.fm_pad[f][3];
    // documented NOPs
    if (H == 0 || W == 0 || p.channel == 0 || p.k_ext == 0 || p.m_ext == 0 || p.filter_w == 0 || p.filter_h == 0)
        return;
    const uint32_t es = dt_size(dt), c0n = 32 / es;
    const bool to_b = dst.mem == MEM_L0B, trans = !to_b && p.transpose;
    if (es == 1 && (to_b || trans))
        fault("fractal_layout", loc, "%s: on Atlas A2 the %s path does not take 8-bit data", api,
              to_b ? "L1 -> L0B" : "transposed L1 -> L0A");
    if (p.channel % c0n)
        cube_unsupported("Load3D v2 with channelSize not a multiple of C0 (32 B of elements: the small-channel forms)",
                         loc);
    if (p.k_start % c0n)
        fault("invalid_argument", loc, "%s: kStartPt %u must be a multiple of C0 = %u for %s", api, p.k_start, c0n,
              dt_name(dt));
    if (p.stride_w == 0 || p.stride_h == 0 || p.dil_w == 0 || p.dil_h == 0)
        fault("invalid_argument", loc, "%s: strides and dilations must be at least 1", api);
    const int64_t fw = p.filter_w, fh = p.filter_h, kh_d = (fh - 1) * p.dil_h + 1, kw_d = (fw - 1) * p.dil_w + 1;
    const int64_t h_out = (H + pt + pb - kh_d) / p.stride_h + 1, w_out = (W + pl + pr - kw_d) / p.stride_w + 1;
    if (H + pt + pb < kh_d || W + pl + pr < kw_d || h_out <= 0 || w_out <= 0)
        fault("invalid_argument", loc, "%s: the %lld x %lld filter (dilated) does not fit the padded %lld x %lld feature "
              "map", api, (long long)kh_d, (long long)kw_d, (long long)(H + pt + pb), (long long)(W + pl + pr));
    const int64_t c1n = p.channel / c0n, k_total = c1n * fh * fw * c0n;
    if (int64_t(p.k_start) + p.k_ext > k_total)
        fault("invalid_argument", loc, "%s: kStartPt %u + kExtension %u exceeds the image-to-column width %lld "
              "(channelSize x filterH x filterW)", api, p.k_start, p.k_ext, (long long)k_total);
    const uint64_t src_bytes = uint64_t(c1n) * H * W * 32;
    operand(src, src_bytes, 32, api, "src", loc);
    const uint32_t mf = (p.m_ext + 15) / 16, k1 = (p.k_ext + c0n - 1) / c0n;  // 16-row and C0-column blocks
    const uint32_t rows = mf * 16, cols = k1 * c0n, cols16 = (cols + 15) / 16;
    uint64_t dst_bytes;
    if (to_b) dst_bytes = uint64_t(rows / c0n) * cols16 * kFractalBytes;
    else if (trans) dst_bytes = uint64_t(cols16) * (rows / c0n) * kFractalBytes;
    else dst_bytes = uint64_t(mf) * k1 * kFractalBytes;
    operand(dst, dst_bytes, align_of(dst.mem), api, "dst", loc);
    const uint8_t* S = mem_ptr(MEM_L1, src.addr);
    uint8_t* D = mem_ptr(dst.mem, dst.addr);
    const uint64_t padv = blk.load3d_pad;
    const int64_t khw = fh * fw;
    for (uint32_t r = 0; r < rows; ++r) {
        const int64_t m = int64_t(p.m_start) + r, ho = m / w_out, wo = m % w_out;
        for (uint32_t c = 0; c < cols; ++c) {
            const int64_t k = int64_t(p.k_start) + c, kb = k / c0n, c0 = k % c0n;
            const int64_t c1 = kb / khw, kidx = kb % khw, kh = kidx / fw, kw = kidx % fw;
            const int64_t h = ho * p.stride_h + kh * p.dil_h - pt, w = wo * p.stride_w + kw * p.dil_w - pl;
            const bool inside = m < h_out * w_out && c1 < c1n && h >= 0 && h < H && w >= 0 && w < W;
            uint64_t off;
            if (to_b) off = (uint64_t(r / c0n) * cols16 + c / 16) * 16 * c0n + (c % 16) * c0n + r % c0n;
            else if (trans) off = (uint64_t(c / 16) * (rows / c0n) + r / c0n) * 16 * c0n + (c % 16) * c0n + r % c0n;
            else off = (uint64_t(r / 16) * k1 + c / c0n) * 16 * c0n + (r % 16) * c0n + c % c0n;
            uint8_t* o = D + off * es;
            if (inside) std::memcpy(o, S + (uint64_t((c1 * H + h) * W + w) * c0n + c0) * es, es);
            else std::memcpy(o, &padv, es);
        }
    }
    double rate = dst.mem == MEM_L0A ? cfg.l1_to_l0a_bytes_per_cycle : cfg.l1_to_l0b_bytes_per_cycle;
    double occ = cfg.mte1_issue_cycles + double(dst_bytes) / rate;
    issue_cube(P_MTE1, occ, cfg.mte1_latency_cycles,
               {{src.mem, src.addr, uint32_t(src_bytes), false}, {dst.mem, dst.addr, uint32_t(dst_bytes), true}},
               nullptr, 0, nullptr, 0, api, loc);
}

// ---- local copies that involve a cube memory (DataCopy C1 -> C2 / C2PIPE2GM) ------------------------
void cube_local_copy(const TRef& dst, const TRef& src, const CopyParams& p0, const char* api, const Loc& loc) {
    if (src.mem != MEM_L1 || (dst.mem != MEM_BT && dst.mem != MEM_FB))
        wrong_position(api, dst.mem == MEM_UB ? "src" : "dst", dst.mem == MEM_UB ? src : dst,
                       "a UB -> UB copy, or L1 (C1) -> C2 (bias table) / C2PIPE2GM (fixpipe buffer); Atlas A2 "
                       "has no path between UB and the cube memories", loc);
    require_aic(api, loc);
    CopyParams p = p0;
    if (!p.count_form) {  // DataCopyParams into BT/FB: blockLen and dstGap count 64-byte units on Atlas A2
        p.block_len *= 2;
        p.dst_gap *= 2;
    }
    uint64_t s_step = p.block_len + p.src_gap, d_step = p.block_len + p.dst_gap;
    uint64_t s_span = (p.block_count - 1) * s_step + p.block_len;
    uint64_t d_span = (p.block_count - 1) * d_step + p.block_len;
    operand(src, s_span, 32, api, "src", loc);
    operand(dst, d_span, align_of(dst.mem), api, "dst", loc);
    for (uint32_t i = 0; i < p.block_count; ++i)
        std::memmove(mem_ptr(dst.mem, dst.addr + uint32_t(i * d_step)), mem_ptr(src.mem, src.addr + uint32_t(i * s_step)),
                     p.block_len);
    double bytes = double(p.block_count) * p.block_len;
    issue_cube(P_MTE1, cfg.mte1_issue_cycles + bytes / cfg.l1_to_l0b_bytes_per_cycle, cfg.mte1_latency_cycles,
               {{src.mem, src.addr, uint32_t(s_span), false}, {dst.mem, dst.addr, uint32_t(d_span), true}}, nullptr, 0,
               nullptr, 0, api, loc);
}

// ---- Mmad ------------------------------------------------------------------------------------------
void cube_mmad(const TRef& c, const TRef& a, const TRef& b, const TRef* bias, DT ct, DT at, DT bt, uint32_t m,
               uint32_t n, uint32_t k, int init, uint8_t k_align16, const Loc& loc) {
    const char* api = "Mmad";
    check_in_launch(loc, api);
    tick(loc);
    if (loop_skip(loc, loop_key(tref_key(c), tref_key(a), tref_key(b), bias ? tref_key(*bias) : 0, ct, at, bt, m, n, k, init,
                                k_align16)))
        return;
    if (c.mem != MEM_L0C) wrong_position(api, "dst", c, "CO1 (L0C)", loc);
    if (a.mem != MEM_L0A) wrong_position(api, "fm", a, "A2 (L0A)", loc);
    if (b.mem != MEM_L0B) wrong_position(api, "filter", b, "B2 (L0B)", loc);
    if (bias && bias->mem != MEM_BT && bias->mem != MEM_L0C) wrong_position(api, "bias", *bias, "C2 (bias table)", loc);
    require_aic(api, loc);
    if (m == 0 || n == 0 || k == 0) return;  // documented NOP
    if (m > 4095 || n > 4095 || k > 4095)
        fault("invalid_argument", loc, "Mmad: m, n and k must lie in [0, 4095] (got %u, %u, %u)", m, n, k);
    const uint32_t es = dt_size(at), k0 = 32 / es;
    const uint32_t m1 = (m + 15) / 16, n1 = (n + 15) / 16;
    // float: K is aligned to 8, or to 16 with kDirectionAlign (the L0A/L0B layout of a transposed load)
    const uint32_t k_al = at == DT::F32 && k_align16 ? (k + 15) / 16 * 16 : (k + k0 - 1) / k0 * k0;
    const uint32_t k1 = k_al / k0;
    const bool gemv = m == 1;  // A is read as a plain row of k elements
    const uint64_t a_bytes = gemv ? uint64_t(k) * es : uint64_t(m1) * k1 * kFractalBytes;
    const uint64_t b_bytes = uint64_t(k1) * n1 * kFractalBytes;
    const uint64_t c_bytes = uint64_t(n1) * m1 * 256 * 4;
    operand(a, a_bytes, 512, api, "fm", loc);
    operand(b, b_bytes, 512, api, "filter", loc);
    operand(c, c_bytes, 64, api, "dst", loc);
    // init: 0 zero, 1 accumulate onto L0C, 2 the bias tensor, 3 the bias table from byte 0 (cmatrixSource)
    TRef bt_ref{};
    if (init == 3) {
        bt_ref.addr = 0;
        bt_ref.end = uint32_t(cfg.bt_bytes);
        bt_ref.mem = MEM_BT;
        bt_ref.pos = 6;
        bt_ref.gen = hot.gen;
        bias = &bt_ref;
    }
    if (bias) check_local(*bias, 0, uint64_t(n) * 4, 0, api, "bias", loc);

    const uint8_t* A = mem_ptr(MEM_L0A, a.addr);
    const uint8_t* B = mem_ptr(MEM_L0B, b.addr);
    uint8_t* C = mem_ptr(MEM_L0C, c.addr);
    auto a_off = [&](uint32_t i, uint32_t kk) -> uint64_t {
        return gemv ? kk : (uint64_t(i / 16) * k1 + kk / k0) * 16 * k0 + (i % 16) * k0 + kk % k0;
    };
    auto b_off = [&](uint32_t kk, uint32_t j) -> uint64_t {
        return (uint64_t(kk / k0) * n1 + j / 16) * 16 * k0 + (j % 16) * k0 + kk % k0;
    };
    auto c_off = [&](uint32_t i, uint32_t j) -> uint64_t {
        return (uint64_t(j / 16) * m1 + i / 16) * 256 + (i % 16) * 16 + j % 16;
    };
    if (ct == DT::I32) {  // int8 x int8 -> int32, exact
        std::vector<int32_t> bm(size_t(k) * n), row(n);
        for (uint32_t kk = 0; kk < k; ++kk)
            for (uint32_t j = 0; j < n; ++j) bm[size_t(kk) * n + j] = int8_t(B[b_off(kk, j)]);
        for (uint32_t i = 0; i < m; ++i) {
            for (uint32_t j = 0; j < n; ++j) {
                int32_t v = 0;
                if (init == 1) std::memcpy(&v, C + c_off(i, j) * 4, 4);
                else if (bias) std::memcpy(&v, mem_ptr(bias->mem, bias->addr) + j * 4, 4);
                row[j] = v;
            }
            int32_t* __restrict r = row.data();
            for (uint32_t kk = 0; kk < k; ++kk) {
                int32_t av = int8_t(A[a_off(i, kk)]);
                const int32_t* __restrict bk = &bm[size_t(kk) * n];
                for (uint32_t j = 0; j < n; ++j) r[j] += av * bk[j];
            }
            for (uint32_t j = 0; j < n; ++j) std::memcpy(C + c_off(i, j) * 4, &r[j], 4);
        }
    } else {  // half / bfloat16 / float -> float: products and sums in fp32, K in order
        std::vector<float> bm(size_t(k) * n), row(n);
        for (uint32_t kk = 0; kk < k; ++kk)
            for (uint32_t j = 0; j < n; ++j) bm[size_t(kk) * n + j] = ld_f(bt, B + b_off(kk, j) * es);
        for (uint32_t i = 0; i < m; ++i) {
            for (uint32_t j = 0; j < n; ++j) {
                float v = 0.0f;
                if (init == 1) std::memcpy(&v, C + c_off(i, j) * 4, 4);
                else if (bias) std::memcpy(&v, mem_ptr(bias->mem, bias->addr) + j * 4, 4);
                row[j] = v;
            }
            float* __restrict r = row.data();
            for (uint32_t kk = 0; kk < k; ++kk) {
                float av = ld_f(at, A + a_off(i, kk) * es);
                const float* __restrict bk = &bm[size_t(kk) * n];
                for (uint32_t j = 0; j < n; ++j) r[j] += av * bk[j];
            }
            for (uint32_t j = 0; j < n; ++j) std::memcpy(C + c_off(i, j) * 4, &r[j], 4);
        }
    }
    // One 16 x k0 x 16 fractal product per cycle whatever the type (fp16 16x16x16, fp32 16x16x8,
    // int8 16x16x32), scaled by the profile's fp16 MAC rate.
    double cycles = double(m1) * n1 * k1 * (16.0 * 16 * 16 / std::max(1.0, cfg.cube_fp16_macs_per_cycle));
    issue_cube(P_M, cfg.cube_issue_cycles + cycles, 0,
               {{MEM_L0A, a.addr, uint32_t(a_bytes), false},
                {MEM_L0B, b.addr, uint32_t(b_bytes), false},
                {MEM_L0C, c.addr, uint32_t(c_bytes), init == 1 ? false : true},
                {MEM_L0C, c.addr, init == 1 ? uint32_t(c_bytes) : 0u, true},
                {bias ? bias->mem : uint8_t(MEM_BT), bias ? bias->addr : 0u, bias ? uint32_t(n) * 4 : 0u, false}},
               nullptr, 0, nullptr, 0, api, loc);
    (void)ct;
}

// ---- Fixpipe: L0C -> GM / L1 -------------------------------------------------------------------------
void cube_fixpipe(int32_t buf, void* gm, const TRef* dst_local, DT dt, const TRef& src, DT st, const CubeFixpipe& p,
                  const Loc& loc) {
    const char* api = "Fixpipe";
    check_in_launch(loc, api);
    tick(loc);
    if (src.mem != MEM_L0C) wrong_position(api, "src", src, "CO1 (L0C)", loc);
    if (dst_local && dst_local->mem != MEM_L1)
        wrong_position(api, "dst", *dst_local, "GM or L1 (A1/B1/C1); Atlas A2 has no L0C -> UB path", loc);
    require_aic(api, loc);
    if (p.n == 0 || p.m == 0 || p.nd_num == 0) return;  // documented NOP
    // quantPre must match the types (the docs: it is not derived from them)
    enum { NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8 };
    bool ok = false;
    switch (p.quant) {
        case NoQuant: ok = dt == st; break;
        case F322F16: ok = st == DT::F32 && dt == DT::F16; break;
        case F322BF16: ok = st == DT::F32 && dt == DT::BF16; break;
        case DEQF16: ok = st == DT::I32 && dt == DT::F16; break;
        case QF322B8_PRE: ok = st == DT::F32 && (dt == DT::I8 || dt == DT::U8); break;
        case REQ8: ok = st == DT::I32 && (dt == DT::I8 || dt == DT::U8); break;
        default:
            cube_unsupported("Fixpipe with a tensor quantisation mode (VDEQF16, VQF322B8_PRE, VREQ8)", loc);
    }
    if (!ok)
        fault("invalid_argument", loc, "Fixpipe: quantPre %u does not convert L0C %s to %s (float -> float/int32 -> "
              "int32: NoQuant; float -> half: F322F16; float -> bfloat16_t: F322BF16; int32 -> half: DEQF16; float -> "
              "int8: QF322B8_PRE; int32 -> int8: REQ8)", unsigned(p.quant), dt_name(st), dt_name(dt));
    if (p.channel_split) cube_unsupported("Fixpipe with isChannelSplit", loc);
    if (!p.nz2nd && p.n % 16)
        fault("invalid_argument", loc, "Fixpipe (NZ output): nSize %u must be a multiple of 16", p.n);
    if (p.nz2nd && p.m > 8192) fault("invalid_argument", loc, "Fixpipe (NZ2ND): mSize %u exceeds 8192", p.m);
    if (p.dst_stride == 0) fault("invalid_argument", loc, "Fixpipe: dstStride must not be 0");
    if (p.src_stride < p.m && p.n > 16)
        fault("fractal_layout", loc, "Fixpipe: srcStride %u is less than mSize %u: the L0C column blocks of %u rows "
              "overlap (srcStride is mSize rounded up to 16)", p.src_stride, p.m, p.m);
    const uint32_t ds = dt_size(dt);
    const uint32_t n1 = (p.n + 15) / 16;
    const uint64_t src_nd_bytes = uint64_t(p.src_nd_stride) * 1024;  // units of 16 x C0_SIZE (16 x 16 x 4 B)
    const uint64_t src_span = uint64_t(p.nd_num - 1) * src_nd_bytes +
                              ((uint64_t(n1 - 1) * p.src_stride + p.m - 1) * 16 + 16) * 4;
    operand(src, src_span, 64, api, "src", loc);
    // destination element offset of (nd, i, j)
    auto d_off = [&](uint32_t nd, uint32_t i, uint32_t j) -> uint64_t {
        if (p.nz2nd) return uint64_t(nd) * p.dst_nd_stride + uint64_t(i) * p.dst_stride + j;
        return (uint64_t(j / 16) * p.dst_stride * 32) / ds + uint64_t(i) * 16 + j % 16;
    };
    uint64_t dst_span = (d_off(p.nd_num - 1, p.m - 1, p.n - 1) + 1) * ds;
    if (!p.nz2nd) dst_span = std::max(dst_span, (d_off(0, p.m - 1, (n1 - 1) * 16 + 15) + 1) * ds);
    uint8_t* out;
    uintptr_t g = reinterpret_cast<uintptr_t>(gm);
    if (dst_local) {
        operand(*dst_local, dst_span, 32, api, "dst", loc);
        out = mem_ptr(dst_local->mem, dst_local->addr);
    } else {
        if (!p.nz2nd && g % 32) fault("misaligned_copy", loc, "Fixpipe (NZ output): the GM address must be 32-byte aligned");
        gm_check(buf, g, dst_span, ds, api, "writes", loc);
        out = reinterpret_cast<uint8_t*>(g);
    }
    const float scale = std::bit_cast<float>(uint32_t(p.deq_scalar & 0xffffffffu));
    const int atomic = dst_local ? 0 : rt.blk.atomic;
    const uint8_t* S = mem_ptr(MEM_L0C, src.addr);
    // NZ2ND plain stores to GM are recorded row by row after the row is written (record_store: a row
    // of exactly the bytes another block stored there is not a race)
    const bool plain_rows = !dst_local && !atomic && p.nz2nd;
    std::vector<uint8_t> before(plain_rows ? size_t(p.n) * ds : 0);
    for (uint32_t nd = 0; nd < p.nd_num; ++nd)
        for (uint32_t i = 0; i < p.m; ++i) {
            if (plain_rows) std::memcpy(before.data(), out + d_off(nd, i, 0) * ds, before.size());
            for (uint32_t j = 0; j < p.n; ++j) {
                const uint8_t* sp = S + nd * src_nd_bytes + ((uint64_t(j / 16) * p.src_stride + i) * 16 + j % 16) * 4;
                uint8_t* op = out + d_off(nd, i, j) * ds;
                double v;
                if (st == DT::I32) { int32_t x; std::memcpy(&x, sp, 4); v = x; }
                else { float x; std::memcpy(&x, sp, 4); v = x; }
                if (p.quant == DEQF16 || p.quant == QF322B8_PRE || p.quant == REQ8) v *= scale;
                if (p.relu && v < 0) v = 0;
                switch (dt) {
                    case DT::F32: { float f = float(v); if (atomic) { float o; std::memcpy(&o, op, 4); f += o; } std::memcpy(op, &f, 4); break; }
                    case DT::F16: { float f = float(v); if (atomic) { _Float16 o; std::memcpy(&o, op, 2); f = float(_Float16(f)) + float(o); } _Float16 h = _Float16(f); std::memcpy(op, &h, 2); break; }
                    case DT::BF16: { float f = float(v); if (atomic) { uint16_t o; std::memcpy(&o, op, 2); f = float(bfloat16_t(f)) + std::bit_cast<float>(uint32_t(o) << 16); } uint16_t h = bfloat16_t::from_float(f); std::memcpy(op, &h, 2); break; }
                    case DT::I32: { int32_t x = int32_t(v); if (atomic) { int32_t o; std::memcpy(&o, op, 4); x += o; } std::memcpy(op, &x, 4); break; }
                    case DT::I8: { double r = std::nearbyint(v); int8_t x = int8_t(std::clamp(r, -128.0, 127.0)); std::memcpy(op, &x, 1); break; }
                    case DT::U8: { double r = std::nearbyint(v); uint8_t x = uint8_t(std::clamp(r, 0.0, 255.0)); std::memcpy(op, &x, 1); break; }
                    default: break;
                }
            }
            if (plain_rows)
                record_store(g + d_off(nd, i, 0) * ds, before.size(), before.data(), loc);
            else if (!dst_local)
                record_access(g + d_off(nd, i, 0) * ds, p.nz2nd ? uint64_t(p.n) * ds : uint64_t(16) * ds,
                              atomic ? AK_ATOMIC : AK_WRITE, loc);
        }
    if (!dst_local && !p.nz2nd)  // NZ output: every column block of each row
        for (uint32_t jb = 1; jb < n1; ++jb)
            for (uint32_t i = 0; i < p.m; ++i) record_access(g + d_off(0, i, jb * 16) * ds, 16 * ds, atomic ? AK_ATOMIC : AK_WRITE, loc);
    uint64_t out_bytes = uint64_t(p.nd_num) * p.m * p.n * ds;
    if (!dst_local && rt.cur) rt.cur->gm_write += out_bytes;
    double occ = cfg.dma_issue_cycles + double(p.nd_num) * p.m * p.n * 4 / cfg.fix_bytes_per_cycle;
    double lat = dst_local ? cfg.mte1_latency_cycles : cfg.fix_startup_cycles;
    issue_cube(P_FIX, occ, lat,
               {{MEM_L0C, src.addr, uint32_t(src_span), false},
                {dst_local ? dst_local->mem : uint8_t(MEM_L1), dst_local ? dst_local->addr : 0u,
                 dst_local ? uint32_t(dst_span) : 0u, true}},
               nullptr, 0, nullptr, 0, api, loc);
}

}  // namespace kgsim
