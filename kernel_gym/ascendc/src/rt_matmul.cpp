// The Matmul API's cube work (include/lib/matmul_intf.h): one baseM x baseN block of C per call,
// accumulated over K in L0C precision (fp32 for half/bfloat16/float inputs, int32 for int8), and
// the write of a block from L0C to GM or UB with its type conversion.
//
// Timing: the operands of a block are staged GM -> L1 on MTE2, L1 -> L0A/L0B on MTE1, multiplied
// on the cube (M pipe), and the block leaves L0C on FIX. The calls are synchronous, as the
// documented Iterate<true>/GetTensorC<true>/IterateAll are: the caller's scalar unit continues
// when the block is out. In mixed kernels the cube work is charged to the AIV block that drives
// the Matmul object (its AIC only serves it).
#pragma GCC optimize("O3")  // the Matmul inner loop: vectorised, it is the simulator's host cost

#include "kgsim/matmul_rt.h"
#include "rt.h"

namespace kgsim {
namespace {

// Cube rates (assumed until the cube model's constants land in soc.py): a 16x16 fractal of C per
// cycle over k0 elements of K (k0 = 32 bytes of the input type), L1 -> L0 at 256 B/cycle, L0C ->
// out at 128 B/cycle.
constexpr double kMte1BytesPerCycle = 256;
constexpr double kFixBytesPerCycle = 128;
constexpr double kFixLatency = 200;

double load(const MmOperand& o, int64_t idx) {
    const uint8_t* base = o.is_local ? mem_ptr(o.local.mem, o.local.addr) : static_cast<const uint8_t*>(o.gm);
    const uint8_t* p = base + idx * int64_t(dt_size(o.dt));
    switch (o.dt) {
        case DT::F32: { float v; std::memcpy(&v, p, 4); return v; }
        case DT::F16: { _Float16 v; std::memcpy(&v, p, 2); return double(v); }
        case DT::BF16: { uint16_t b; std::memcpy(&b, p, 2); return double(std::bit_cast<float>(uint32_t(b) << 16)); }
        case DT::I8: return double(*reinterpret_cast<const int8_t*>(p));
        case DT::I32: { int32_t v; std::memcpy(&v, p, 4); return double(v); }
        default: return 0;
    }
}

// `count` elements of an operand as floats, element i at index first + i * stride: an F32 operand
// straight from its memory (a matrix-vector product loads 4e9 of them at its published shape),
// others through load().
void load_floats(const MmOperand& o, int64_t first, int64_t stride, int64_t count, float* out) {
    if (o.dt != DT::F32) {
        for (int64_t i = 0; i < count; ++i) out[i] = float(load(o, first + i * stride));
        return;
    }
    const uint8_t* base = o.is_local ? mem_ptr(o.local.mem, o.local.addr) : static_cast<const uint8_t*>(o.gm);
    const uint8_t* p = base + first * 4;
    if (stride == 1) {
        std::memcpy(out, p, size_t(count) * 4);
        return;
    }
    for (int64_t i = 0; i < count; ++i) std::memcpy(out + i, p + i * stride * 4, 4);
}

// Check the bytes an operand's rows [r0, r0 + rows) x cols [c0, c0 + cols) cover (row stride ld).
// An atomic write (GetTensorC/IterateAll with enAtomic) is an atomic access for the race detector.
// record = false: the caller records the plain stores itself (record_store, after writing).
void check_operand(const MmOperand& o, int64_t r0, int64_t rows, int64_t c0, int64_t cols, bool write,
                   const char* what, const Loc& loc, bool atomic = false, bool record = true) {
    if (rows <= 0 || cols <= 0) return;
    uint32_t es = dt_size(o.dt);
    uint64_t first = uint64_t(r0 * o.ld + c0) * es;
    uint64_t span = uint64_t((rows - 1) * o.ld + cols) * es;
    if (o.is_local) {
        check_local(o.local, first, span, 32, "Matmul", what, loc);
        return;
    }
    uintptr_t p = reinterpret_cast<uintptr_t>(o.gm) + first;
    gm_check(o.buf, p, span, es, "Matmul", write ? "writes" : "reads", loc);
    for (int64_t r = 0; r < rows && record; ++r)
        record_access(p + uint64_t(r * o.ld) * es, uint64_t(cols) * es,
                      write ? (atomic ? AK_ATOMIC : AK_WRITE) : AK_READ, loc);
}

// The GM bytes of an operand's rows x cols, counted once the call is known not to be skipped by loop
// sampling: its snapshot of the launch's GM bytes is the state before the event, as DataCopy's is.
// Counted before the skip decision, the event that ended a skip had its bytes in the prediction
// too: MatmulWithLargeKDimension's sampled GM bytes were 512 MiB (12.5 %) over the full run's.
void count_operand(const MmOperand& o, int64_t rows, int64_t cols, bool write) {
    if (o.is_local || rows <= 0 || cols <= 0 || !rt.cur) return;
    (write ? rt.cur->gm_write : rt.cur->gm_read) += uint64_t(rows * cols) * dt_size(o.dt);
}

double stage_cycles(int64_t bytes, double rate) { return std::ceil(double(bytes) / rate); }

// MTE2 occupancy of staging one operand GM -> L1 the way CANN's Matmul does (ND source, NZ in L1):
// `chunks` copies of a `rows` x `cols` slab of the stored matrix (row stride `ld` elements). The
// ND2NZ DataCopy (copy_gm_to_cbuf_multi_nd2nz) moves one burst per source row and pads each row to
// 32 bytes in L1; its source row stride (Nd2NzParams::srcDValue) is 16-bit, so CANN's Matmul copies
// an operand whose rows lie 65535 or more elements apart one row per DataCopy instruction
// (copy_cube_in/data_copy_wrapper_nd.h, arch 2201). Rows that do not start on 512 B of GM move at
// mte2_unaligned_efficiency of the rate (CANN best practices, Atlas A2: 32 B-aligned GM reads reach
// as little as 70 % of the 512 B-aligned bandwidth). A UB operand keeps the plain byte count.
double stage_in_cycles(const MmOperand& o, int64_t rows, int64_t cols, int64_t chunks, int64_t chunk_elems) {
    if (rows <= 0 || cols <= 0 || chunks <= 0) return 0;
    int64_t es = int64_t(dt_size(o.dt));
    int64_t row_bytes = (cols * es + 31) / 32 * 32;
    if (o.is_local) return double(chunks) * stage_cycles(rows * row_bytes, cfg.mte2_bytes_per_cycle);
    double copies = o.ld >= 65535 ? double(rows) : 1.0;
    // row starts, from the row stride and the slabs' step (GM buffers themselves start aligned on the NPU)
    bool aligned = (o.ld * es) % 512 == 0 && (chunks == 1 || (chunk_elems * es) % 512 == 0);
    double rate = cfg.mte2_bytes_per_cycle * (aligned || cfg.mte2_unaligned_efficiency <= 0 ? 1.0
                                                                                           : cfg.mte2_unaligned_efficiency);
    double one = copies * cfg.dma_issue_cycles + double(rows) * cfg.dma_burst_cycles + double(rows * row_bytes) / rate;
    return double(chunks) * one;
}

}  // namespace

// An operand in a loop key: its layout and, in local memory, its place (GM addresses left out).
static uint64_t operand_key(const MmOperand& o) {
    return loop_key(o.is_local ? tref_key(o.local) : uint64_t(o.buf), o.is_local, uint64_t(o.dt), o.trans, o.ld);
}

void mm_block(const MmOperand& a, const MmOperand& b, const MmOperand* bias, int64_t row0, int64_t col0, int64_t m,
              int64_t n, int64_t k, int64_t base_k, int64_t step_ka, int64_t step_kb, float* l0c, const Loc& loc) {
    check_in_launch(loc, "Matmul::Iterate");
    tick(loc);
    if (m <= 0 || n <= 0 || k <= 0)
        fault("invalid_argument", loc, "Matmul: empty block (%lld x %lld x %lld): check the shapes of the tiling and "
              "SetTail/SetSingleShape", (long long)m, (long long)n, (long long)k);
    // A is m x k (stored k x m when transposed), B is k x n (stored n x k when transposed)
    if (a.trans) check_operand(a, 0, k, row0, m, false, "A", loc);
    else check_operand(a, row0, m, 0, k, false, "A", loc);
    if (b.trans) check_operand(b, col0, n, 0, k, false, "B", loc);
    else check_operand(b, 0, k, col0, n, false, "B", loc);
    if (bias) check_operand(*bias, 0, 1, col0, n, false, "bias", loc);
    // Each base block is a loop event of its own (the block's place in C and GM addresses left
    // out): IterateAll issues every block from the caller's one call site, so without this the
    // whole block loop was one event and never formed a period.
    if (loop_skip(loc, loop_key(0x6d6d626cu, operand_key(a), operand_key(b), bias ? operand_key(*bias) : 0, m, n, k,
                                base_k, step_ka, step_kb)))
        return;
    count_operand(a, m, k, false);
    count_operand(b, k, n, false);
    if (bias) count_operand(*bias, 1, n, false);

    // B row-major (k x n): the inner loop runs over j, so it vectorises while every C element still
    // sums its products in k order, one partial sum per baseK step (the Mmads into L0C)
    std::vector<float> arow(static_cast<size_t>(k)), brow(static_cast<size_t>(k * n)), part(static_cast<size_t>(n));
    for (int64_t kk = 0; kk < k; ++kk)
        load_floats(b, b.trans ? col0 * b.ld + kk : kk * b.ld + col0, b.trans ? b.ld : 1, n, &brow[size_t(kk * n)]);
    std::vector<float> bias_row(static_cast<size_t>(n), 0.0f);
    if (bias)
        for (int64_t j = 0; j < n; ++j) bias_row[size_t(j)] = float(load(*bias, col0 + j));
    int64_t bk = base_k > 0 ? base_k : k;
    for (int64_t i = 0; i < m; ++i) {
        load_floats(a, a.trans ? row0 + i : (row0 + i) * a.ld, a.trans ? a.ld : 1, k, arow.data());
        float* acc = l0c + i * n;
        std::copy(bias_row.begin(), bias_row.end(), acc);
        for (int64_t k0 = 0; k0 < k; k0 += bk) {
            std::fill(part.begin(), part.end(), 0.0f);
            float* __restrict pp = part.data();
            for (int64_t kk = k0; kk < std::min(k, k0 + bk); ++kk) {
                const float av = arow[size_t(kk)];
                const float* __restrict br = &brow[size_t(kk * n)];
                for (int64_t j = 0; j < n; ++j) pp[j] += av * br[j];
            }
            for (int64_t j = 0; j < n; ++j) acc[j] += pp[j];
        }
    }

    if (g_loop_timing_only) return;  // loop sampling skips this call's timing only (rt_sampling.cpp)
    BlockState& blk = rt.blk;
    int64_t bytes_a = m * k * dt_size(a.dt), bytes_b = k * n * dt_size(b.dt);
    int64_t k0 = std::max<int64_t>(1, 32 / dt_size(a.dt));
    // K reaches L1 stepKa (stepKb) base-K slices at a time, each slab one ND2NZ copy (stage_in_cycles)
    int64_t ka = std::min(k, bk * std::max<int64_t>(1, step_ka)), kb = std::min(k, bk * std::max<int64_t>(1, step_kb));
    int64_t na = (k + ka - 1) / ka, nb = (k + kb - 1) / kb;
    // a slab steps along the stored rows when K is their inner axis (A plain, B transposed), else down them
    double mte2 = a.trans ? stage_in_cycles(a, ka, m, na, ka * a.ld) : stage_in_cycles(a, m, ka, na, ka);
    mte2 += b.trans ? stage_in_cycles(b, n, kb, nb, kb) : stage_in_cycles(b, kb, n, nb, kb * b.ld);
    issue(P_MTE2, std::ceil(mte2), cfg.mte2_startup_cycles, nullptr, 0, nullptr, 0, "Matmul", loc);
    blk.free_[P_MTE1] = std::max(blk.free_[P_MTE1], blk.done_[P_MTE2]);
    issue(P_MTE1, stage_cycles(bytes_a + bytes_b, kMte1BytesPerCycle), 0, nullptr, 0, nullptr, 0, "Matmul", loc);
    blk.free_[P_M] = std::max(blk.free_[P_M], blk.done_[P_MTE1]);
    double cube = double((m + 15) / 16) * double((n + 15) / 16) * double((k + k0 - 1) / k0);
    issue(P_M, cube, 0, nullptr, 0, nullptr, 0, "Matmul", loc);
}

void mm_out(const float* l0c, int64_t m, int64_t n, const MmOperand& c, int64_t offset, int atomic, const Loc& loc) {
    check_in_launch(loc, "Matmul::GetTensorC");
    tick(loc);
    const bool plain_gm = !c.is_local && !atomic;  // plain GM stores: recorded row by row below
    check_operand(c, 0, m, offset, n, true, "C", loc, atomic != 0, !plain_gm);
    // the write-out is an event of its own too; an atomic one accumulates, so its loop is not skipped
    if (loop_skip(loc, loop_key(0x6d6d6f75u, operand_key(c), m, n, atomic), atomic ? 1 : 0)) return;
    count_operand(c, m, n, true);
    uint32_t es = dt_size(c.dt);
    uint8_t* base = c.is_local ? mem_ptr(c.local.mem, c.local.addr) : static_cast<uint8_t*>(const_cast<void*>(c.gm));
    std::vector<uint8_t> before(plain_gm ? size_t(n) * es : 0);
    for (int64_t i = 0; i < m; ++i) {
        uint8_t* row = base + (i * c.ld + offset) * int64_t(es);
        if (plain_gm) std::memcpy(before.data(), row, before.size());
        for (int64_t j = 0; j < n; ++j) {
            uint8_t* p = base + (i * c.ld + offset + j) * int64_t(es);
            float v = l0c[i * n + j];
            if (c.dt == DT::F32) {
                if (atomic) { float o; std::memcpy(&o, p, 4); v += o; }
                std::memcpy(p, &v, 4);
            } else if (c.dt == DT::F16) {
                _Float16 h;
                if (atomic) { std::memcpy(&h, p, 2); v += float(h); }
                h = _Float16(v);
                std::memcpy(p, &h, 2);
            } else if (c.dt == DT::BF16) {
                if (atomic) { uint16_t o; std::memcpy(&o, p, 2); v += std::bit_cast<float>(uint32_t(o) << 16); }
                uint16_t bits = bfloat16_t::from_float(v);
                std::memcpy(p, &bits, 2);
            } else if (c.dt == DT::I32) {
                int32_t o = 0;
                if (atomic) std::memcpy(&o, p, 4);
                int32_t r = o + int32_t(std::lrint(v));
                std::memcpy(p, &r, 4);
            }
        }
        if (plain_gm) record_store(reinterpret_cast<uintptr_t>(row), before.size(), before.data(), loc);
    }
    Span w{c.local.addr, uint32_t(((m - 1) * c.ld + n) * es)};
    if (g_loop_timing_only) {  // loop sampling skips this call's timing only (rt_sampling.cpp)
        if (c.is_local) mark_init_range(c.local.mem, c.local.addr, w.len);
        return;
    }
    BlockState& blk = rt.blk;
    blk.free_[P_FIX] = std::max(blk.free_[P_FIX], blk.done_[P_M]);
    issue(P_FIX, stage_cycles(m * n * es, kFixBytesPerCycle), kFixLatency, nullptr, 0, c.is_local ? &w : nullptr,
          c.is_local ? 1 : 0, "Matmul", loc);
    if (c.is_local) mark_init_range(c.local.mem, c.local.addr, w.len);
    hot.s_time = std::max(hot.s_time, blk.done_[P_FIX]);  // synchronous: the result is there when the call returns
}

}  // namespace kgsim
