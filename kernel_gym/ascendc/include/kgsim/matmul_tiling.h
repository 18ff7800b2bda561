// kgsim: the Matmul API's tiling. TCubeTiling is one struct for the host (optiling::TCubeTiling,
// a field of a tiling-data class via TILING_DATA_FIELD_DEF_STRUCT) and the kernel (TCubeTiling,
// AscendC::TCubeTiling), so both sides agree on its layout. matmul_tiling::MatmulApiTiling and
// MultiCoreMatmulTiling fill it on the host: the split of the C matrix over cores (SetDim), the
// base block (baseM x baseN x baseK) each cube iteration computes, and the L1 staging depths.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>
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

// The buffer capacities a host tiling passes instead of a PlatformAscendC (asc-devkit's
// matmul_tiling_base.h): the SoC and its L1, L0C, UB, L0A and L0B sizes in bytes.
struct PlatformInfo {
    platform_ascendc::SocVersion socVersion = platform_ascendc::SocVersion::ASCEND910B;
    uint64_t l1Size = 0;
    uint64_t l0CSize = 0;
    uint64_t ubSize = 0;
    uint64_t l0ASize = 0;
    uint64_t l0BSize = 0;
};

class MatmulApiTilingBase {
public:
    MatmulApiTilingBase() = default;
    explicit MatmulApiTilingBase(const platform_ascendc::PlatformAscendC& p) : cores_(int32_t(p.GetCoreNumAiv())) {}
    // sizes of 0 keep the defaults, as an unset SetBufferSpace does
    explicit MatmulApiTilingBase(const PlatformInfo& p)
        : l1_(p.l1Size ? int32_t(p.l1Size) : -1), l0c_(p.l0CSize ? int32_t(p.l0CSize) : -1),
          ub_(p.ubSize ? int32_t(p.ubSize) : -1) {}
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
    // Split K over the cores as well (MultiCoreMatmulTiling); the partial products are summed by the kernel.
    int32_t EnableMultiCoreSplitK(bool flag) {
        split_k_ = flag;
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
            auto core_shape = [&](int32_t md, int32_t nd, int32_t& cm, int32_t& cn) {
                // whole 16-row fractals per core (CANN counts the axes in them); an axis left whole keeps its size
                cm = std::min(Align(CeilDiv(m_, md), 16), m_);
                cn = std::min(Align(CeilDiv(n_, nd), 16), n_);
            };
            int32_t md = 0, nd = 0;
            if (!split_k_ && GetDimsSplit(dim, md, nd)) {
                core_shape(md, nd, sm, sn);
            } else {
                double best = -1;
                for (int32_t n_f = 1; n_f <= dim; ++n_f)
                    for (int32_t m_f = 1; m_f * n_f <= dim; ++m_f) {
                        int32_t cm = 0, cn = 0;
                        core_shape(m_f, n_f, cm, cn);
                        double load = double(cm) * cn + double(cm + cn) * k_;
                        if (best < 0 || load < best - 1e-9) { best = load; sm = cm; sn = cn; }
                    }
            }
        }
        int32_t sk = single_k_ > 0 ? single_k_ : k_;
        if (split_k_ && single_k_ <= 0) {
            // EnableMultiCoreSplitK: the cores the M x N split leaves idle share K, each a contiguous chunk
            // (equal, whole 32-byte fractal rows); the kernel accumulates the partial C (atomic add)
            int32_t spare = dim / std::max(1, CeilDiv(m_, sm) * CeilDiv(n_, sn));
            int32_t k_unit = 32 / dtype_bytes(a_.dt);
            // the most cores that cut K into equal whole-fractal chunks (no K tail on any core)
            for (int32_t kd = std::min(spare, k_ / k_unit); kd > 1; --kd)
                if (k_ % kd == 0 && (k_ / kd) % k_unit == 0) { sk = k_ / kd; break; }
        }
        int32_t in_bytes = dtype_bytes(a_.dt);
        // a fixed base block larger than the core's share is cut down to it
        int32_t bm = std::min(fix_m_ > 0 ? fix_m_ : 128, Align(sm, 16));
        int32_t bn = std::min(fix_n_ > 0 ? fix_n_ : 256, Align(sn, 16));
        int32_t k0 = 32 / in_bytes;  // elements of K per 32-byte fractal row
        int32_t bk = fix_k_ > 0 ? fix_k_ : std::max(k0, (32768 / (std::max(bm, bn) * in_bytes)) / k0 * k0);
        bk = std::min(bk, Align(sk, k0));
        int32_t k_iters = CeilDiv(sk, bk);
        int32_t step_k = std::min(k_iters, 4);
        t = TCubeTiling{};
        t.usedCoreNum = CeilDiv(m_, sm) * CeilDiv(n_, sn) * CeilDiv(k_, sk);
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
    // How CANN's multi-core tiling splits C (its GetDims pass, one batch, K whole): candidate core counts
    // per axis, ascending, N outer and M inner, each a divisor of the axis (in 16-row fractals), of its
    // power-of-two rounding or of the core count, or the square-root balance point. A candidate replaces
    // the best while no split with big packages (B's per-core columns at least 16 fractals when B has that
    // many; likewise A's rows for a transposed A) has been found and this one keeps them (the later such
    // candidate wins), or, once one has, when it needs fewer L0 passes, or as many on more cores, or moves
    // less data on as many cores. False when dim < 2 (one core).
    bool GetDimsSplit(int32_t dim, int32_t& md, int32_t& nd) const {
        if (dim <= 1) return false;
        int32_t m32 = CeilDiv(m_, 16), n32 = CeilDiv(n_, 16), k32 = CeilDiv(k_, 32 / dtype_bytes(a_.dt));
        auto pow2 = [](int32_t v) {
            if (v < 32) return v;
            int32_t seed = 32;
            while (seed < 1024 && !(seed < v && 2 * seed >= v)) seed *= 2;
            return seed * 2;
        };
        auto factors = [&](int32_t units) {
            std::vector<int32_t> f;
            int32_t mapped = pow2(units);
            for (int32_t i = 1; i <= std::min(dim, units); ++i)
                if (units % i == 0 || mapped % i == 0 || dim % i == 0) f.push_back(i);
            return f;
        };
        std::vector<int32_t> mf = factors(m32), nf = factors(n32);
        {  // the balance point between the axes, as CANN adds it
            double opt = std::sqrt(double(m32) / double(n32) * dim);
            int32_t mo = int32_t(std::ceil(opt)), no = int32_t(std::ceil(dim / opt));
            auto add = [](std::vector<int32_t>& v, int32_t x) {
                if (x > 0 && std::find(v.begin(), v.end(), x) == v.end()) { v.push_back(x); std::sort(v.begin(), v.end()); }
            };
            add(mf, mo); add(mf, no == 0 ? 1 : dim / no);
            add(nf, no); add(nf, mo == 0 ? 1 : dim / mo);
        }
        auto l0_loops = [&](int32_t cm, int32_t cn) {
            int32_t n0 = std::min(std::min(16, cn), 64);
            int32_t m0 = n0 ? std::min(std::min(cm, 128 / n0), 64) : 0;
            n0 = m0 ? std::min(std::min(cn, 128 / m0), 64) : 0;
            m0 = n0 ? std::min(std::min(cm, 128 / n0), 64) : 0;
            int32_t k0 = (m0 && n0) ? std::min(std::min(64 / m0, 64 / n0), k32) : k32;
            return CeilDiv(cm, m0) * CeilDiv(cn, n0) * CeilDiv(k32, std::max(k0, 1));
        };
        int32_t best_m = 1, best_n = 1, best_use = 1, best_loops = 1;
        int64_t best_load = 1;
        bool big = false;
        for (int32_t f_n : nf) {
            if (f_n > dim) continue;
            for (int32_t f_m : mf) {
                if (f_m * f_n > dim) continue;
                int32_t cm = CeilDiv(m32, f_m), cn = CeilDiv(n32, f_n);
                bool keeps = !(!b_.trans && n32 >= 16 && cn < 16) && !(a_.trans && m32 >= 16 && cm < 16);
                int flag = !big ? (keeps ? 2 : 0) : (keeps ? 0 : 1);
                int32_t loops = l0_loops(cm, cn), use = f_m * f_n;
                int64_t load = int64_t(m32) * f_n + int64_t(n32) * f_m;
                bool by_cores = flag == 0 && (loops < best_loops || (use > best_use && loops == best_loops));
                bool by_load = !by_cores && use == best_use && load < best_load;
                bool by_n = !by_cores && use == best_use && load == best_load && best_n * best_m < f_m * f_n;
                if ((flag == 2 || by_cores || by_load || by_n) && flag != 1) {
                    best_m = f_m; best_n = f_n; best_use = use; best_loops = loops; best_load = load;
                    big = (!b_.trans ? cn >= 16 : true) && (a_.trans ? cm >= 16 : true) && use > 1;
                }
            }
        }
        md = best_m; nd = best_n;
        return true;
    }
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
    bool split_k_ = false;
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
