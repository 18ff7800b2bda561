// kgsim: the Matmul API's tiling. TCubeTiling is one struct for the host (optiling::TCubeTiling,
// a field of a tiling-data class via TILING_DATA_FIELD_DEF_STRUCT) and the kernel (TCubeTiling,
// AscendC::TCubeTiling), so both sides agree on its layout. matmul_tiling::MatmulApiTiling and
// MultiCoreMatmulTiling fill it on the host: the split of the C matrix over cores (SetDim), the
// base block (baseM x baseN x baseK) each cube iteration computes, and the L1 staging depths.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>

#include "kgsim/base.h"
#include "tiling/platform/platform_ascendc.h"

#define KGSIM_CUBE_TILING_FIELDS(X)                                                                       \
    X(usedCoreNum) X(M) X(N) X(Ka) X(Kb) X(singleCoreM) X(singleCoreN) X(singleCoreK) X(baseM) X(baseN)    \
    X(baseK) X(depthA1) X(depthB1) X(stepM) X(stepN) X(isBias) X(transLength) X(iterateOrder) X(shareMode) \
    X(shareL1Size) X(shareL0CSize) X(shareUbSize) X(batchM) X(batchN) X(singleBatchM) X(singleBatchN)      \
    X(stepKa) X(stepKb) X(depthAL1CacheUB) X(depthBL1CacheUB) X(dbL0A) X(dbL0B) X(dbL0C)                  \
    X(ALayoutInfoB) X(ALayoutInfoS) X(ALayoutInfoN) X(ALayoutInfoG) X(ALayoutInfoD) X(BLayoutInfoB)        \
    X(BLayoutInfoS) X(BLayoutInfoN) X(BLayoutInfoG) X(BLayoutInfoD) X(CLayoutInfoB) X(CLayoutInfoS1)       \
    X(CLayoutInfoN) X(CLayoutInfoG) X(CLayoutInfoS2) X(BatchNum) X(mxTypePara)

struct TCubeTiling {
#define KGSIM_X(f) int32_t f = 0;
    KGSIM_CUBE_TILING_FIELDS(KGSIM_X)
#undef KGSIM_X
#define KGSIM_X(f) \
    void set_##f(int32_t v) { f = v; } \
    int32_t get_##f() const { return f; }
    KGSIM_CUBE_TILING_FIELDS(KGSIM_X)
#undef KGSIM_X
    size_t GetDataSize() const { return sizeof(*this); }
    void SaveToBuffer(void* buf, size_t cap) const { std::memcpy(buf, this, std::min(sizeof(*this), cap)); }
};
namespace optiling { using ::TCubeTiling; }
namespace AscendC {
using ::TCubeTiling;
namespace tiling { using ::TCubeTiling; }  // the name newer asc-devkit headers give it
}  // namespace AscendC

// Matrix formats: ND row-major; NZ the cube's fractal layout.
enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };

namespace matmul_tiling {
using AscendC::TPosition;
using ::CubeFormat;
enum class DataType : int32_t {
    DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7,
    DT_UINT32 = 8, DT_INT64 = 9, DT_UINT64 = 10, DT_DOUBLE = 11, DT_BOOL = 12, DT_BF16 = 27, DT_INT4 = 29,
    DT_MAX = 100
};
enum class MatrixTraverse { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };

inline int32_t dtype_bytes(DataType t) {
    switch (t) {
        case DataType::DT_FLOAT: case DataType::DT_INT32: case DataType::DT_UINT32: return 4;
        case DataType::DT_INT8: case DataType::DT_UINT8: case DataType::DT_INT4: case DataType::DT_BOOL: return 1;
        case DataType::DT_INT64: case DataType::DT_UINT64: case DataType::DT_DOUBLE: return 8;
        default: return 2;
    }
}

class MatmulApiTilingBase {
public:
    MatmulApiTilingBase() = default;
    explicit MatmulApiTilingBase(const platform_ascendc::PlatformAscendC& p) : cores_(int32_t(p.GetCoreNumAiv())) {}
    virtual ~MatmulApiTilingBase() = default;

    int32_t SetAType(TPosition pos, CubeFormat fmt, DataType dt, bool isTrans = false) {
        a_ = {pos, fmt, dt, isTrans, true};
        return 0;
    }
    int32_t SetBType(TPosition pos, CubeFormat fmt, DataType dt, bool isTrans = false) {
        b_ = {pos, fmt, dt, isTrans, true};
        return 0;
    }
    int32_t SetCType(TPosition pos, CubeFormat fmt, DataType dt) {
        c_ = {pos, fmt, dt, false, true};
        return 0;
    }
    int32_t SetBiasType(TPosition pos, CubeFormat fmt, DataType dt) {
        bias_ = {pos, fmt, dt, false, true};
        return 0;
    }
    int32_t SetShape(int32_t m, int32_t n, int32_t k) {
        m_ = m; n_ = n; k_ = k;
        return 0;
    }
    int32_t SetOrgShape(int32_t orgM, int32_t orgN, int32_t orgK) { return SetOrgShape(orgM, orgN, orgK, orgK); }
    int32_t SetOrgShape(int32_t orgM, int32_t orgN, int32_t orgKa, int32_t orgKb) {
        org_m_ = orgM; org_n_ = orgN; org_ka_ = orgKa; org_kb_ = orgKb;
        return 0;
    }
    int32_t SetBias(bool isBias = false) {
        has_bias_ = isBias;
        return 0;
    }
    int32_t EnableBias(bool isBias = false) { return SetBias(isBias); }
    int32_t SetBufferSpace(int32_t l1 = -1, int32_t l0c = -1, int32_t ub = -1, int32_t bt = -1) {
        l1_ = l1; l0c_ = l0c; ub_ = ub; (void)bt;
        return 0;
    }
    int32_t SetFixSplit(int32_t baseM = -1, int32_t baseN = -1, int32_t baseK = -1) {
        fix_m_ = baseM; fix_n_ = baseN; fix_k_ = baseK;
        return 0;
    }
    int32_t SetTraverse(MatrixTraverse t) {
        order_ = t == MatrixTraverse::FIRSTN ? 1 : 0;
        return 0;
    }
    // Batch Matmul (IterateBatch): the axes of A/B (B, S, N, G, D: one S x D matrix per batch) and C (B, S1, N,
    // G, S2), and the most batches one IterateBatch call computes.
    int32_t SetALayout(int32_t b, int32_t s, int32_t n, int32_t g, int32_t d) {
        a_layout_ = {b, s, n, g, d};
        return 0;
    }
    int32_t SetBLayout(int32_t b, int32_t s, int32_t n, int32_t g, int32_t d) {
        b_layout_ = {b, s, n, g, d};
        return 0;
    }
    int32_t SetCLayout(int32_t b, int32_t s1, int32_t n, int32_t g, int32_t s2) {
        c_layout_ = {b, s1, n, g, s2};
        return 0;
    }
    int32_t SetBatchNum(int32_t batch) {
        batch_num_ = batch;
        return 0;
    }
    // NORMAL layout (batches of whole M x K / K x N / M x N matrices one after another).
    int32_t SetBatchInfoForNormal(int32_t batchA, int32_t batchB, int32_t m, int32_t n, int32_t k) {
        a_layout_ = {batchA, m, 1, 1, k};
        b_layout_ = {batchB, k, 1, 1, n};
        c_layout_ = {std::max(batchA, batchB), m, 1, 1, n};
        batch_num_ = std::max(batchA, batchB);
        if (m_ <= 0 || n_ <= 0 || k_ <= 0) SetShape(m, n, k);
        return 0;
    }
    int32_t GetBaseM() const { return base_m_; }
    int32_t GetBaseN() const { return base_n_; }
    int32_t GetBaseK() const { return base_k_; }

    // 0 on success, -1 when the types or shapes are missing or invalid.
    int64_t GetTiling(TCubeTiling& t) {
        if (!a_.set || !b_.set || !c_.set || m_ <= 0 || n_ <= 0 || k_ <= 0 || cores_ <= 0) return -1;
        if (has_bias_ && !bias_.set) bias_ = {TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT, false, true};
        int32_t dim = Dim();
        if (dim <= 0) return -1;
        int32_t org_m = org_m_ > 0 ? org_m_ : m_, org_n = org_n_ > 0 ? org_n_ : n_;
        int32_t org_ka = org_ka_ > 0 ? org_ka_ : k_, org_kb = org_kb_ > 0 ? org_kb_ : k_;
        // Split C over at most `dim` cores: the split with the least data per core (its C block
        // plus the A rows and B columns it reads). Candidates go N factor outer, M factor inner, and
        // only a strictly better one replaces the best, as CANN's GetDims enumerates them: of two
        // equal splits the one over M wins.
        int32_t sm = single_m_ > 0 ? single_m_ : 0, sn = single_n_ > 0 ? single_n_ : 0;
        if (sm == 0 || sn == 0) {
            double best = -1;
            for (int32_t nd = 1; nd <= dim; ++nd)
                for (int32_t md = 1; md * nd <= dim; ++md) {
                    int32_t cm = Align(CeilDiv(m_, md), fix_m_ > 0 ? fix_m_ : 16);
                    int32_t cn = Align(CeilDiv(n_, nd), fix_n_ > 0 ? fix_n_ : 16);
                    cm = std::min(cm, m_); cn = std::min(cn, n_);  // an axis left whole keeps its size, as CANN's
                    double load = double(cm) * cn + double(cm + cn) * k_;
                    if (best < 0 || load < best - 1e-9) { best = load; sm = cm; sn = cn; }
                }
        }
        int32_t sk = single_k_ > 0 ? single_k_ : k_;
        int32_t in_bytes = dtype_bytes(a_.dt);
        int32_t bm = fix_m_ > 0 ? fix_m_ : std::min(128, Align(sm, 16));
        int32_t bn = fix_n_ > 0 ? fix_n_ : std::min(256, Align(sn, 16));
        int32_t k0 = 32 / in_bytes;  // elements of K per 32-byte fractal row
        int32_t bk = fix_k_ > 0 ? fix_k_ : std::max(k0, (32768 / (std::max(bm, bn) * in_bytes)) / k0 * k0);
        bk = std::min(bk, Align(sk, k0));
        int32_t k_iters = CeilDiv(sk, bk);
        int32_t step_k = std::min(k_iters, 4);
        t = TCubeTiling{};
        t.usedCoreNum = CeilDiv(m_, sm) * CeilDiv(n_, sn);
        t.M = org_m; t.N = org_n; t.Ka = org_ka; t.Kb = org_kb;
        t.singleCoreM = sm; t.singleCoreN = sn; t.singleCoreK = sk;
        t.baseM = bm; t.baseN = bn; t.baseK = bk;
        t.stepM = 1; t.stepN = 1; t.stepKa = step_k; t.stepKb = step_k;
        t.depthA1 = 2 * step_k; t.depthB1 = 2 * step_k;
        t.isBias = has_bias_ ? 1 : 0;
        t.iterateOrder = order_;
        t.shareL1Size = l1_ > 0 ? l1_ : 512 * 1024;
        t.shareL0CSize = l0c_ > 0 ? l0c_ : 128 * 1024;
        t.shareUbSize = ub_ > 0 ? ub_ : 0;
        t.batchM = t.batchN = t.singleBatchM = t.singleBatchN = 1;
        t.BatchNum = batch_num_ > 0 ? batch_num_ : 1;
        t.ALayoutInfoB = a_layout_[0]; t.ALayoutInfoS = a_layout_[1]; t.ALayoutInfoN = a_layout_[2];
        t.ALayoutInfoG = a_layout_[3]; t.ALayoutInfoD = a_layout_[4];
        t.BLayoutInfoB = b_layout_[0]; t.BLayoutInfoS = b_layout_[1]; t.BLayoutInfoN = b_layout_[2];
        t.BLayoutInfoG = b_layout_[3]; t.BLayoutInfoD = b_layout_[4];
        t.CLayoutInfoB = c_layout_[0]; t.CLayoutInfoS1 = c_layout_[1]; t.CLayoutInfoN = c_layout_[2];
        t.CLayoutInfoG = c_layout_[3]; t.CLayoutInfoS2 = c_layout_[4];
        t.dbL0A = 2; t.dbL0B = 2; t.dbL0C = 1;
        base_m_ = bm; base_n_ = bn; base_k_ = bk;
        return 0;
    }
    int64_t GetTiling(TCubeTiling* t) { return t ? GetTiling(*t) : -1; }

protected:
    struct Operand {
        TPosition pos = TPosition::GM;
        CubeFormat fmt = CubeFormat::ND;
        DataType dt = DataType::DT_FLOAT16;
        bool trans = false;
        bool set = false;
    };
    virtual int32_t Dim() const { return 1; }
    static int32_t CeilDiv(int32_t a, int32_t b) { return b > 0 ? (a + b - 1) / b : 0; }
    static int32_t Align(int32_t a, int32_t b) { return CeilDiv(a, b) * b; }

    int32_t cores_ = 48;
    Operand a_, b_, c_, bias_;
    int32_t m_ = 0, n_ = 0, k_ = 0, org_m_ = 0, org_n_ = 0, org_ka_ = 0, org_kb_ = 0;
    int32_t single_m_ = 0, single_n_ = 0, single_k_ = 0;
    int32_t fix_m_ = -1, fix_n_ = -1, fix_k_ = -1, l1_ = -1, l0c_ = -1, ub_ = -1, order_ = 0;
    int32_t base_m_ = 0, base_n_ = 0, base_k_ = 0;
    std::array<int32_t, 5> a_layout_{}, b_layout_{}, c_layout_{};
    int32_t batch_num_ = 0;
    bool has_bias_ = false;
};

// One core computes the whole C.
class MatmulApiTiling : public MatmulApiTilingBase {
public:
    using MatmulApiTilingBase::MatmulApiTilingBase;
};

// C split over SetDim(n) cores (for a mixed kernel: the number of AIVs that call the Matmul).
class MultiCoreMatmulTiling : public MatmulApiTilingBase {
public:
    using MatmulApiTilingBase::MatmulApiTilingBase;
    int32_t SetDim(int32_t dim) {
        dim_ = dim;
        return 0;
    }
    int32_t SetSingleShape(int32_t singleM = -1, int32_t singleN = -1, int32_t singleK = -1) {
        single_m_ = singleM; single_n_ = singleN; single_k_ = singleK;
        return 0;
    }
    int32_t SetSingleRange(int32_t maxM = -1, int32_t maxN = -1, int32_t maxK = -1, int32_t minM = -1,
                           int32_t minN = -1, int32_t minK = -1) {
        (void)maxM; (void)maxN; (void)maxK; (void)minM; (void)minN; (void)minK;
        return 0;
    }
    int32_t SetAlignSplit(int32_t alignM, int32_t alignN, int32_t alignK) {
        (void)alignM; (void)alignN; (void)alignK;
        return 0;
    }
    int32_t GetSingleShape(int32_t& m, int32_t& n, int32_t& k) const {
        m = last_.singleCoreM; n = last_.singleCoreN; k = last_.singleCoreK;
        return 0;
    }
    int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) const {
        mDim = last_.singleCoreM > 0 ? CeilDiv(m_, last_.singleCoreM) : 0;
        nDim = last_.singleCoreN > 0 ? CeilDiv(n_, last_.singleCoreN) : 0;
        dim = mDim * nDim;
        return 0;
    }
    int64_t GetTiling(TCubeTiling& t) {
        int64_t r = MatmulApiTilingBase::GetTiling(t);
        if (r == 0) last_ = t;
        return r;
    }
    int64_t GetTiling(TCubeTiling* t) { return t ? GetTiling(*t) : -1; }

protected:
    int32_t Dim() const override { return dim_ > 0 ? dim_ : cores_; }
    int32_t dim_ = 0;
    TCubeTiling last_{};
};
}  // namespace matmul_tiling
