// kgsim: the Matmul high-level API (`#include "lib/matmul_intf.h"`). A Matmul object computes
// this core's C (singleCoreM x singleCoreN of the tiling, or SetTail/SetSingleShape) as
// C = A * B (+ bias): IterateAll writes all of it, Iterate + GetTensorC walk it one baseM x
// baseN block at a time (iterateOrder 0: M fastest, 1: N fastest). The cube work runs in the
// runtime (src/rt_matmul.cpp). Configurations (CFG_NORM, CFG_MDL, ...) give the same results and
// are treated alike. A module that includes this header starts its kernels as mixed
// (KERNEL_TYPE_MIX_AIC_1_2) unless ASCENDC_CUBE_ONLY is defined or the kernel declares its type:
// the AIC of a mixed launch returns from REGIST_MATMUL_OBJ (it serves its AIVs' Matmul objects).
#pragma once
#include "kernel_operator.h"
#include "kgsim/matmul_rt.h"
#include "kgsim/matmul_tiling.h"

namespace kgsim {
namespace {
#ifdef ASCENDC_CUBE_ONLY
[[maybe_unused]] const bool matmul_module_type = (module_kernel_type = KERNEL_TYPE_AIC_ONLY, true);
#else
[[maybe_unused]] const bool matmul_module_type = (module_kernel_type = KERNEL_TYPE_MIX_AIC_1_2, true);
#endif
}  // namespace
}  // namespace kgsim

namespace AscendC {
constexpr int32_t DEFAULT_C0_SIZE = 32;

using ::CubeFormat;
enum class LayoutMode { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };
enum class IterateOrder { ORDER_M = 0, ORDER_N, UNDEF };
enum class ScheduleType { INNER_PRODUCT = 0, OUTER_PRODUCT };

struct MatmulConfig {
    bool doNorm = true;
    bool doBasicBlock = false;
    bool doMultiDataLoad = false;
    uint32_t basicM = 0, basicN = 0, basicK = 0;
    bool intrinsicsCheck = false;
    bool isNBatch = false;
    bool enVecND2NZ = false;
    bool doSpecialBasicBlock = false;
    uint32_t doMTE2Preload = 0;
    uint32_t singleCoreM = 0, singleCoreN = 0, singleCoreK = 0;
    uint32_t stepM = 0, stepN = 0, baseMN = 0, singleCoreMN = 0;
    bool enUnitFlag = true;
    bool isPerTensor = false, hasAntiQuantOffset = false, doIBShareNorm = false, doSpecialMDL = false;
    bool enableInit = true;
    uint32_t batchMode = 0;
    bool enableEnd = true, enableGetTensorC = true, enableSetOrgShape = true, enableSetBias = true;
    bool enableSetTail = true, enableQuantVector = true, enableSetDefineData = true;
    uint8_t iterateMode = 0;
    bool enableReuse = true, enableUBReuse = false, enableL1CacheUB = false, intraBlockPartSum = false;
    IterateOrder iterateOrder = IterateOrder::UNDEF;
    ScheduleType scheduleType = ScheduleType::INNER_PRODUCT;
    bool enableDoubleCache = false, isBiasBatch = true, enableStaticPadZeros = false, isPartialOutput = false;
    bool enableMixDualMaster = false, isA2B2Shared = false, isEnableChannelSplit = false, enableKdimReorderLoad = false;
};
constexpr MatmulConfig GetNormalConfig(bool intrinsicsLimit = false, bool batchLoop = false, bool isVecND2NZ = false,
                                       uint32_t = 0, bool = false, bool = false, bool = false) {
    MatmulConfig c{};
    c.intrinsicsCheck = intrinsicsLimit;
    c.isNBatch = batchLoop;
    c.enVecND2NZ = isVecND2NZ;
    return c;
}
constexpr MatmulConfig GetMDLConfig(bool intrinsicsLimit = false, bool batchLoop = false, uint32_t preload = 0,
                                    bool isVecND2NZ = false, bool = false, bool = false, bool = false,
                                    bool = true, bool = true, bool = false, bool = false, bool = false, bool = false) {
    MatmulConfig c{};
    c.doNorm = false;
    c.doMultiDataLoad = true;
    c.intrinsicsCheck = intrinsicsLimit;
    c.isNBatch = batchLoop;
    c.doMTE2Preload = preload;
    c.enVecND2NZ = isVecND2NZ;
    return c;
}
constexpr MatmulConfig GetSpecialMDLConfig() { MatmulConfig c = GetMDLConfig(); c.doSpecialMDL = true; return c; }
constexpr MatmulConfig GetIBShareNormConfig() { MatmulConfig c{}; c.doNorm = false; c.doIBShareNorm = true; return c; }
constexpr MatmulConfig GetBasicConfig(uint32_t m, uint32_t n, uint32_t k, bool = false, bool = false) {
    MatmulConfig c{};
    c.doNorm = false; c.doBasicBlock = true; c.basicM = m; c.basicN = n; c.basicK = k;
    return c;
}
// GetMMConfig<mode>(params...): a configuration built from a template and parameter groups (the simulator
// computes alike under every configuration; the fields are kept for kernels that read them).
enum class MatmulConfigMode { CONFIG_NORM, CONFIG_MDL, CONFIG_SPECIALMDL, CONFIG_IBSHARE };
enum class BatchMode { NONE = 0, BATCH_LESS_THAN_L1, BATCH_LARGE_THAN_L1, SINGLE_LARGE_THAN_L1 };
enum class BatchOutMode { SINGLE_BATCH = 0, MULTI_BATCH, DYNAMIC };
struct MatmulShapeParams {
    uint32_t singleCoreM, singleCoreN, singleCoreK, basicM, basicN, basicK;
};
struct MatmulQuantParams {
    bool isPerTensor, hasAntiQuantOffset;
};
struct MatmulBatchParams {
    bool isNBatch;
    BatchMode batchMode;
    bool isBiasBatch = true;
    BatchOutMode bmmOutMode = BatchOutMode::SINGLE_BATCH;
};
struct MatmulFuncParams {
    bool intrinsicsCheck, enVecND2NZ, enableDoubleCache, enableL1CacheUB;
    uint32_t doMTE2Preload;
    IterateOrder iterateOrder;
    ScheduleType scheduleType;
    bool enableReuse = true;
    bool enableUBReuse;
    bool isPartialOutput = false, isA2B2Shared = false, isEnableChannelSplit = false, enableKdimReorderLoad = false;
    bool enableL1BankConflictOptimise = false, enableRelu = false;
};
namespace kgsim_detail {
constexpr void apply_params(MatmulConfig& c, const MatmulShapeParams& p) {
    c.singleCoreM = p.singleCoreM; c.singleCoreN = p.singleCoreN; c.singleCoreK = p.singleCoreK;
    c.basicM = p.basicM; c.basicN = p.basicN; c.basicK = p.basicK;
}
constexpr void apply_params(MatmulConfig& c, const MatmulQuantParams& p) {
    c.isPerTensor = p.isPerTensor; c.hasAntiQuantOffset = p.hasAntiQuantOffset;
}
constexpr void apply_params(MatmulConfig& c, const MatmulBatchParams& p) {
    c.isNBatch = p.isNBatch; c.batchMode = uint32_t(p.batchMode); c.isBiasBatch = p.isBiasBatch;
}
constexpr void apply_params(MatmulConfig& c, const MatmulFuncParams& p) {
    c.intrinsicsCheck = p.intrinsicsCheck; c.enVecND2NZ = p.enVecND2NZ; c.enableDoubleCache = p.enableDoubleCache;
    c.enableL1CacheUB = p.enableL1CacheUB; c.doMTE2Preload = p.doMTE2Preload; c.iterateOrder = p.iterateOrder;
    c.scheduleType = p.scheduleType; c.enableReuse = p.enableReuse; c.enableUBReuse = p.enableUBReuse;
    c.isPartialOutput = p.isPartialOutput; c.isA2B2Shared = p.isA2B2Shared;
    c.isEnableChannelSplit = p.isEnableChannelSplit; c.enableKdimReorderLoad = p.enableKdimReorderLoad;
}
}  // namespace kgsim_detail
template <MatmulConfigMode MODE, class... Params>
constexpr MatmulConfig GetMMConfig(Params&&... params) {
    MatmulConfig c = MODE == MatmulConfigMode::CONFIG_MDL          ? GetMDLConfig()
                     : MODE == MatmulConfigMode::CONFIG_SPECIALMDL ? GetSpecialMDLConfig()
                     : MODE == MatmulConfigMode::CONFIG_IBSHARE    ? GetIBShareNormConfig()
                                                                   : GetNormalConfig();
    (kgsim_detail::apply_params(c, params), ...);
    return c;
}
constexpr MatmulConfig CFG_NORM = GetNormalConfig();
constexpr MatmulConfig CFG_MDL = GetMDLConfig();
constexpr MatmulConfig CFG_IBSHARE_NORM = GetIBShareNormConfig();
constexpr MatmulConfig MM_CFG_BB = GetBasicConfig(128, 128, 128);

template <TPosition POSITION, CubeFormat FORMAT, class TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct MatmulType {
    using T = TYPE;
    constexpr static TPosition pos = POSITION;
    constexpr static CubeFormat format = FORMAT;
    constexpr static bool isTrans = ISTRANS;
    constexpr static LayoutMode layout = LAYOUT;
    constexpr static bool ibShare = IBSHARE;
};

// MatmulApiStaticTiling / GetMatmulApiTiling: tiling made compile-time constants from a MatmulConfig
// (its shape fields). The simulator's Matmul computes from the runtime tiling the kernel registers
// either way; the constant one is carried as the MM_CFG template argument, its fields readable. Fields
// the configuration leaves open are -1, as the documentation's "not constant" marker.
struct MatmulApiStaticTiling {
    int32_t usedCoreNum = -1, M = -1, N = -1, Ka = -1, Kb = -1;
    int32_t singleCoreM = -1, singleCoreN = -1, singleCoreK = -1, baseM = -1, baseN = -1, baseK = -1;
    int32_t depthA1 = -1, depthB1 = -1, stepM = -1, stepN = -1, isBias = -1, transLength = -1, iterateOrder = -1;
    int32_t dbL0A = -1, dbL0B = -1, dbL0C = -1, shareMode = -1, shareL1Size = -1, shareL0CSize = -1;
    int32_t shareUbSize = -1, stepKa = -1, stepKb = -1, depthAL1CacheUB = -1, depthBL1CacheUB = -1;
    int32_t batchM = -1, batchN = -1, singleBatchM = -1, singleBatchN = -1;
    MatmulConfig cfg{};
};
template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE>
constexpr MatmulApiStaticTiling GetMatmulApiTiling(const MatmulConfig& mmCFG, int32_t l1Size = 512 * 1024) {
    (void)l1Size;
    MatmulApiStaticTiling t{};
    t.cfg = mmCFG;
    auto set = [](int32_t& field, uint32_t v) {
        if (v != 0) field = int32_t(v);
    };
    set(t.singleCoreM, mmCFG.singleCoreM);
    set(t.singleCoreN, mmCFG.singleCoreN);
    set(t.singleCoreK, mmCFG.singleCoreK);
    set(t.baseM, mmCFG.basicM);
    set(t.baseN, mmCFG.basicN);
    set(t.baseK, mmCFG.basicK);
    return t;
}

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM,
          class... POLICY>
class Matmul {
    using SrcAT = typename A_TYPE::T;
    using SrcBT = typename B_TYPE::T;
    using DstT = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;
    KGSIM_DTYPES("Matmul A", SrcAT, half, bfloat16_t, float, int8_t);
    static_assert(std::is_same_v<SrcAT, SrcBT>, "[kgsim:unsupported_dtype] Matmul: A and B must have the same type");
    KGSIM_DTYPES("Matmul C", DstT, float, half, bfloat16_t, int32_t);
    KGSIM_DTYPES("Matmul bias", BiasT, float, half, bfloat16_t, int32_t);

public:
    KGSIM_UNINSTRUMENTED void Init(const TCubeTiling* tiling, TPipe* tpipe = nullptr) {
        (void)tpipe;
        if (!tiling) return;
        t_ = *tiling;
        org_m_ = t_.M; org_n_ = t_.N; org_ka_ = t_.Ka; org_kb_ = t_.Kb; org_kc_ = 0;
        single_m_ = t_.singleCoreM; single_n_ = t_.singleCoreN; single_k_ = t_.singleCoreK;
        has_bias_ = t_.isBias != 0;
        Restart();
    }
    void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK); }
    // orgKc: C's N (its row width in GM) where it differs from B's; 0 keeps orgN (documented default)
    void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
        org_m_ = orgM; org_n_ = orgN; org_ka_ = orgKa; org_kb_ = orgKb; org_kc_ = orgKc;
    }
    void SetSingleShape(int singleM, int singleN, int singleK) { SetTail(singleM, singleN, singleK); }
    void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
        if (tailM > 0) single_m_ = tailM;
        if (tailN > 0) single_n_ = tailN;
        if (tailK > 0) single_k_ = tailK;
        Restart();
    }
    void SetTensorA(const GlobalTensor<SrcAT>& gm, bool isTransposeA = false) {
        a_ = Gm(gm.ptr_, gm.buf_, isTransposeA || A_TYPE::isTrans);
    }
    void SetTensorA(const LocalTensor<SrcAT>& local, bool isTransposeA = false) {
        a_ = Local(local, isTransposeA || A_TYPE::isTrans);
    }
    void SetTensorB(const GlobalTensor<SrcBT>& gm, bool isTransposeB = false) {
        b_ = Gm(gm.ptr_, gm.buf_, isTransposeB || B_TYPE::isTrans);
    }
    void SetTensorB(const LocalTensor<SrcBT>& local, bool isTransposeB = false) {
        b_ = Local(local, isTransposeB || B_TYPE::isTrans);
    }
    void SetBias(const GlobalTensor<BiasT>& gm) {
        bias_ = Gm(gm.ptr_, gm.buf_, false);
        bias_.dt = kgsim::dt_of<BiasT>::v;
        has_bias_ = true;
    }
    void SetBias(const LocalTensor<BiasT>& local) {
        bias_ = Local(local, false);
        bias_.dt = kgsim::dt_of<BiasT>::v;
        has_bias_ = true;
    }
    void DisableBias() { has_bias_ = false; }
    void ClearBias() { has_bias_ = false; }
    template <class T>
    void SetLocalWorkspace(const LocalTensor<T>&) {}
    template <class T>
    void SetWorkspace(const GlobalTensor<T>&) {}
    void SetWorkspace(GM_ADDR, int = 0) {}
    void SetHF32(bool = false, int32_t = 0) {}
    void SetSubBlockIdx(uint8_t idx) { sub_idx_ = idx; sub_set_ = true; }
    uint8_t GetSubBlockIdx() const { return sub_set_ ? sub_idx_ : uint8_t(GetSubBlockIdxOf()); }
    void WaitIterateAll() {}
    void End() {
        Restart();
        async_ = false;
    }

    // Compute the next baseM x baseN block; false when this core's C is done. Iterate<false> (asynchronous, MIX
    // kernels): the first call has the AIC compute all of this core's C into the SetWorkspace buffer, one baseM x
    // baseN block after another; each GetTensorC<false> then copies the next block to UB; later calls only count
    // the blocks (true while any is left), so both `Iterate<false>(); for (...) GetTensorC<false>(ub);` and
    // `while (Iterate<false>()) GetTensorC<false>(ub);` walk every block once.
    template <bool sync = true>
    KGSIM_UNINSTRUMENTED bool Iterate(bool enPartialSum = false, kgsim::Loc loc = kgsim::Loc::current()) {
        (void)enPartialSum;
        if constexpr (!sync) {
            if (!async_) {
                Restart();
                async_ = true;
                async_iter_ = 0;
                return true;
            }
            if (++async_iter_ >= Blocks()) {
                async_ = false;
                return false;
            }
            return true;
        }
        async_ = false;
        if (!Next()) return false;
        Compute(loc);
        return true;
    }
    // The current block into UB: cur_m rows of cur_n elements (rows padded to 32 bytes). After Iterate<false>: the
    // next block of the workspace, whose blocks are baseM x baseN with rows of baseN elements.
    template <bool sync = true>
    KGSIM_UNINSTRUMENTED void GetTensorC(const LocalTensor<DstT>& c, uint8_t enAtomic = 0,
                                         bool enSequentialWrite = false, kgsim::Loc loc = kgsim::Loc::current()) {
        (void)enSequentialWrite;
        kgsim::MmOperand o = Local(c, false);
        o.ld = PadRow(cur_n_);
        if (async_) {
            if (!Next()) {
                kgsim::fault("invalid_argument", loc, "Matmul::GetTensorC: every block of this core's C was already "
                             "fetched since Iterate<false>: call it singleCoreM/baseM * singleCoreN/baseN times");
            }
            Compute(loc);
            o.ld = t_.baseN > 0 ? t_.baseN : PadRow(cur_n_);
        }
        kgsim::mm_out(l0c_, cur_m_, cur_n_, o, 0, enAtomic, loc);
    }
    // The current block into GM: at its place in C (row stride orgN), or at the tensor's start.
    template <bool sync = true>
    KGSIM_UNINSTRUMENTED void GetTensorC(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0,
                                         bool enSequentialWrite = false, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::MmOperand o = Gm(gm.ptr_, gm.buf_, false);
        const int64_t c_n = org_kc_ > 0 ? org_kc_ : org_n_;  // C's row width (SetOrgShape's orgKc)
        o.ld = c_n;
        // ND_ALIGN: C's rows in GM are padded to 32 bytes (N rounded up), the padding left as it was
        if constexpr (C_TYPE::format == CubeFormat::ND_ALIGN) o.ld = PadRow(c_n);
        int64_t off = 0;
        if (enSequentialWrite) o.ld = cur_n_;
        else off = int64_t(row0_) * o.ld + col0_;
        kgsim::mm_out(l0c_, cur_m_, cur_n_, o, off, enAtomic, loc);
    }
    template <bool sync = true>
    void GetTensorC(const GlobalTensor<DstT>& gm, const LocalTensor<DstT>& c, uint8_t enAtomic = 0,
                    bool enSequentialWrite = false, kgsim::Loc loc = kgsim::Loc::current()) {
        GetTensorC<true>(gm, enAtomic, enSequentialWrite, loc);
        GetTensorC<true>(c, enAtomic, enSequentialWrite, loc);
    }
    // All of this core's C into GM (row stride orgN).
    template <bool sync = true>
    KGSIM_UNINSTRUMENTED void IterateAll(const GlobalTensor<DstT>& gm, uint8_t enAtomic = 0,
                                         bool enSequentialWrite = false, bool waitIterateAll = false,
                                         bool fakeMsg = false, kgsim::Loc loc = kgsim::Loc::current()) {
        (void)waitIterateAll; (void)fakeMsg;
        Restart();
        // IterateAll<false> only lets the caller go on before C is complete (WaitIterateAll): its blocks are the
        // synchronous Iterate's, not an Iterate<false> workspace pass
        while (Iterate<true>(false, loc)) GetTensorC<true>(gm, enAtomic, enSequentialWrite, loc);
        Restart();
    }
    // All of this core's C into UB: singleM rows of singleN elements (rows padded to 32 bytes).
    template <bool sync = true>
    KGSIM_UNINSTRUMENTED void IterateAll(const LocalTensor<DstT>& c, uint8_t enAtomic = 0,
                                         kgsim::Loc loc = kgsim::Loc::current()) {
        Restart();
        kgsim::MmOperand o = Local(c, false);
        o.ld = PadRow(single_n_);
        while (Iterate<true>(false, loc)) kgsim::mm_out(l0c_, cur_m_, cur_n_, o, int64_t(row0_) * o.ld + col0_,
                                                        enAtomic, loc);
        Restart();
    }

    // Batch Matmul: max(batchA, batchB) products of singleCoreM x singleCoreN, one per batch, each laid out as its
    // MatmulType's LayoutMode says (the axes from the tiling's SetALayout/SetBLayout/SetCLayout): BSNGD and SBNGD
    // hold one S x D matrix per (B, N, G) index with rows N*G*D (B*N*G*D) elements apart, BNGS1S2 and NORMAL hold
    // whole matrices one after another (NORMAL: matrixStride elements apart when given). The operand with fewer
    // batches is broadcast: batch i reads its batch i / (batches / its batches). The bias has one row per batch.
    // enSequentialWrite: C's matrices are packed (singleCoreM x singleCoreN each) from the tensor's start.
    template <bool sync = true, bool waitIterateBatch = false>
    KGSIM_UNINSTRUMENTED void IterateBatch(const GlobalTensor<DstT>& gm, uint32_t batchA, uint32_t batchB,
                                           bool enSequentialWrite, const uint32_t matrixStrideA = 0,
                                           const uint32_t matrixStrideB = 0, const uint32_t matrixStrideC = 0,
                                           const bool enPartialSum = false, const uint8_t enAtomic = 0,
                                           kgsim::Loc loc = kgsim::Loc::current()) {
        (void)enPartialSum;
        RunBatch(Gm(gm.ptr_, gm.buf_, false), false, batchA, batchB, enSequentialWrite, matrixStrideA, matrixStrideB,
                 matrixStrideC, enAtomic, loc);
    }
    // Into UB: the batches' C matrices packed, rows padded to 32 bytes.
    template <bool sync = true>
    KGSIM_UNINSTRUMENTED void IterateBatch(const LocalTensor<DstT>& ubCmatrix, uint32_t batchA, uint32_t batchB,
                                           bool enSequentialWrite, const uint32_t matrixStrideA = 0,
                                           const uint32_t matrixStrideB = 0, const uint32_t matrixStrideC = 0,
                                           const bool enPartialSum = false, const uint8_t enAtomic = 0,
                                           kgsim::Loc loc = kgsim::Loc::current()) {
        (void)enPartialSum;
        RunBatch(Local(ubCmatrix, false), true, batchA, batchB, enSequentialWrite, matrixStrideA, matrixStrideB,
                 matrixStrideC, enAtomic, loc);
    }
    void WaitIterateBatch() {}

private:
    // Where matrix `idx` of an operand starts and its row stride, in elements, for layout `mode` with axes
    // (b, s, n, g, d); `rows` x `cols` is the stored matrix for NORMAL, `stride` its explicit distance.
    struct BatchPlace {
        int64_t offset, ld;
    };
    static BatchPlace Place(LayoutMode mode, int64_t idx, int64_t b, int64_t s, int64_t n, int64_t g, int64_t d,
                            int64_t rows, int64_t cols, int64_t stride) {
        (void)b;
        switch (mode) {
            case LayoutMode::BSNGD: return {(idx / (n * g)) * s * n * g * d + (idx % (n * g)) * d, n * g * d};
            case LayoutMode::SBNGD: return {idx * d, b * n * g * d};
            case LayoutMode::BNGS1S2: return {idx * s * d, d};
            default: return {idx * (stride > 0 ? stride : rows * cols), cols};
        }
    }
    static void CheckLayout(LayoutMode mode, int64_t b, int64_t s, int64_t n, int64_t g, int64_t d, const char* what,
                            const kgsim::Loc& loc) {
        if (mode == LayoutMode::NONE || mode == LayoutMode::NORMAL) return;
        if (b <= 0 || s <= 0 || n <= 0 || g <= 0 || d <= 0)
            kgsim::fault("invalid_argument", loc, "Matmul::IterateBatch: %s has a BSNGD/SBNGD/BNGS1S2 layout but the "
                         "tiling's %sLayoutInfo axes are unset (call Set%sLayout in the host tiling)", what, what, what);
    }
    KGSIM_UNINSTRUMENTED void RunBatch(kgsim::MmOperand c, bool local, uint32_t batchA, uint32_t batchB, bool seq,
                                       uint32_t strideA, uint32_t strideB, uint32_t strideC, uint8_t atomic,
                                       const kgsim::Loc& loc) {
        if (batchA == 0 || batchB == 0 || (batchA % batchB != 0 && batchB % batchA != 0))
            kgsim::fault("invalid_argument", loc, "Matmul::IterateBatch: batchA = %u and batchB = %u: both must be "
                         "positive and one a multiple of the other", batchA, batchB);
        CheckLayout(A_TYPE::layout, t_.ALayoutInfoB, t_.ALayoutInfoS, t_.ALayoutInfoN, t_.ALayoutInfoG,
                    t_.ALayoutInfoD, "A", loc);
        CheckLayout(B_TYPE::layout, t_.BLayoutInfoB, t_.BLayoutInfoS, t_.BLayoutInfoN, t_.BLayoutInfoG,
                    t_.BLayoutInfoD, "B", loc);
        if (!local && !seq)
            CheckLayout(C_TYPE::layout, t_.CLayoutInfoB, t_.CLayoutInfoS1, t_.CLayoutInfoN, t_.CLayoutInfoG,
                        t_.CLayoutInfoS2, "C", loc);
        int64_t batches = std::max(batchA, batchB);
        kgsim::MmOperand a0 = a_, b0 = b_, bias0 = bias_;
        bool a_t = a0.trans, b_t = b0.trans;
        for (int64_t i = 0; i < batches; ++i) {
            int64_t ia = i / (batches / batchA), ib = i / (batches / batchB);
            BatchPlace pa = Place(A_TYPE::layout, ia, t_.ALayoutInfoB, t_.ALayoutInfoS, t_.ALayoutInfoN,
                                  t_.ALayoutInfoG, t_.ALayoutInfoD, a_t ? single_k_ : single_m_,
                                  a_t ? single_m_ : single_k_, strideA);
            BatchPlace pb = Place(B_TYPE::layout, ib, t_.BLayoutInfoB, t_.BLayoutInfoS, t_.BLayoutInfoN,
                                  t_.BLayoutInfoG, t_.BLayoutInfoD, b_t ? single_n_ : single_k_,
                                  b_t ? single_k_ : single_n_, strideB);
            BatchPlace pc{0, 0};
            if (local) pc = {i * single_m_ * PadRow(single_n_), PadRow(single_n_)};
            else if (seq) pc = {i * single_m_ * single_n_, single_n_};
            else
                pc = Place(C_TYPE::layout, i, t_.CLayoutInfoB, t_.CLayoutInfoS1, t_.CLayoutInfoN, t_.CLayoutInfoG,
                           t_.CLayoutInfoS2, single_m_, single_n_, strideC);
            a_ = Shifted(a0, pa.offset, sizeof(SrcAT));
            a_.ld = pa.ld;
            b_ = Shifted(b0, pb.offset, sizeof(SrcBT));
            b_.ld = pb.ld;
            if (has_bias_) bias_ = Shifted(bias0, i * single_n_, sizeof(BiasT));
            kgsim::MmOperand ci = Shifted(c, pc.offset, sizeof(DstT));
            ci.ld = pc.ld;
            batch_strides_ = true;
            Restart();
            while (Next()) {
                Compute(loc);
                kgsim::mm_out(l0c_, cur_m_, cur_n_, ci, row0_ * ci.ld + col0_, atomic, loc);
            }
            batch_strides_ = false;
        }
        a_ = a0;
        b_ = b0;
        bias_ = bias0;
        Restart();
    }
    static kgsim::MmOperand Shifted(kgsim::MmOperand o, int64_t elems, size_t elem_bytes) {
        if (o.is_local) o.local.addr += uint32_t(elems * int64_t(elem_bytes));
        else if (o.gm) o.gm = static_cast<const uint8_t*>(o.gm) + elems * int64_t(elem_bytes);
        return o;
    }
    static int64_t GetSubBlockIdxOf() { return AscendC::GetSubBlockIdx(); }
    static int64_t PadRow(int64_t n) {
        int64_t per = 32 / int64_t(sizeof(DstT));
        return (n + per - 1) / per * per;
    }
    template <class T>
    kgsim::MmOperand Gm(T* p, int32_t buf, bool trans) const {
        kgsim::MmOperand o;
        o.gm = p;
        o.buf = buf;
        o.dt = kgsim::dt_of<std::remove_cv_t<T>>::v;
        o.trans = trans;
        o.ld = org_n_;
        return o;
    }
    template <class T>
    kgsim::MmOperand Local(const LocalTensor<T>& t, bool trans) const {
        kgsim::MmOperand o;
        o.local = t.r_;
        o.is_local = 1;
        o.dt = kgsim::dt_of<T>::v;
        o.trans = trans;
        o.ld = org_n_;
        return o;
    }
    // Row strides in the original matrices: A is M x Ka (Ka x M transposed), B is Kb x N (N x Kb
    // transposed), C has N columns.
    void FixStrides() {
        if (batch_strides_) return;  // IterateBatch placed the operands itself
        a_.ld = a_.trans ? org_m_ : org_ka_;
        b_.ld = b_.trans ? org_kb_ : org_n_;
        // An ND operand in UB holds this core's part only, each row padded to 32 bytes (as DataCopyPad leaves it)
        if (a_.is_local) a_.ld = AlignRow<SrcAT>(a_.trans ? single_m_ : single_k_);
        if (b_.is_local) b_.ld = AlignRow<SrcBT>(b_.trans ? single_k_ : single_n_);
    }
    template <class T>
    static int64_t AlignRow(int64_t n) {
        int64_t per = 32 / int64_t(sizeof(T));
        return (n + per - 1) / per * per;
    }
    void Restart() {
        iter_ = -1;
        cur_m_ = cur_n_ = 0;
    }
    int64_t Blocks() const {
        int64_t bm = t_.baseM > 0 ? t_.baseM : single_m_, bn = t_.baseN > 0 ? t_.baseN : single_n_;
        return ((single_m_ + bm - 1) / bm) * ((single_n_ + bn - 1) / bn);
    }
    bool Next() {
        int64_t bm = t_.baseM > 0 ? t_.baseM : single_m_, bn = t_.baseN > 0 ? t_.baseN : single_n_;
        int64_t mi = (single_m_ + bm - 1) / bm, ni = (single_n_ + bn - 1) / bn;
        if (++iter_ >= mi * ni) {
            Restart();
            return false;
        }
        int64_t im = t_.iterateOrder == 1 ? iter_ / ni : iter_ % mi;
        int64_t in = t_.iterateOrder == 1 ? iter_ % ni : iter_ / mi;
        row0_ = im * bm;
        col0_ = in * bn;
        cur_m_ = std::min<int64_t>(bm, single_m_ - row0_);
        cur_n_ = std::min<int64_t>(bn, single_n_ - col0_);
        return true;
    }
    KGSIM_UNINSTRUMENTED void Compute(const kgsim::Loc& loc) {
        FixStrides();
        if (cur_m_ * cur_n_ > kL0cFloats)
            kgsim::fault("local_memory_overflow", loc, "Matmul: a %lld x %lld base block of fp32 does not fit L0C (%lld "
                         "B): reduce baseM/baseN in the tiling", (long long)cur_m_, (long long)cur_n_,
                         (long long)(kL0cFloats * 4));
        kgsim::mm_block(a_, b_, has_bias_ ? &bias_ : nullptr, row0_, col0_, cur_m_, cur_n_, single_k_, t_.baseK,
                        t_.stepKa, t_.stepKb,
                        l0c_, loc);
    }

    TCubeTiling t_{};
    kgsim::MmOperand a_{}, b_{}, bias_{};
    bool has_bias_ = false;
    int64_t org_m_ = 0, org_n_ = 0, org_ka_ = 0, org_kb_ = 0, org_kc_ = 0;
    int64_t single_m_ = 0, single_n_ = 0, single_k_ = 0;
    int64_t iter_ = -1, row0_ = 0, col0_ = 0, cur_m_ = 0, cur_n_ = 0;
    uint8_t sub_idx_ = 0;
    bool sub_set_ = false;
    bool async_ = false;  // an Iterate<false> pass is under way
    bool batch_strides_ = false;
    int64_t async_iter_ = 0;
    // L0C: written and read only by the runtime (kernel-side heap writes would meet the raw-GM guard)
    static constexpr int64_t kL0cFloats = 128 * 1024 / 4;
    float l0c_[kL0cFloats];
};

namespace kgsim_detail {
inline void regist_matmul(TPipe*) {}
// an object with no tiling after it: the kernel calls its Init later
template <class MM>
void regist_matmul(TPipe*, MM&) {}
// the tiling may come as any pointer to the TCubeTiling (a `(void*)&tiling`, as cann-ops' rfft1_d
// passes it): asc-devkit's registration takes the argument after an object as its tiling by its size
template <class MM, class TP, class... Rest>
void regist_matmul(TPipe* pipe, MM& mm, TP* tiling, Rest&&... rest) {
    mm.Init(static_cast<const TCubeTiling*>(static_cast<const void*>(tiling)), pipe);
    regist_matmul(pipe, rest...);
}
template <class MM, class... Rest>
void regist_matmul(TPipe* pipe, MM& mm, std::nullptr_t, Rest&&... rest) {
    regist_matmul(pipe, rest...);
}
}  // namespace kgsim_detail
}  // namespace AscendC

using AscendC::GetSysWorkSpacePtr;
// The configurations live in the global namespace in CANN's matmul/tiling.h; kernels name them
// unqualified beside AscendC::Matmul.
using AscendC::MatmulConfig;
using AscendC::MatmulApiStaticTiling;
using AscendC::GetMatmulApiTiling;
using AscendC::LayoutMode;
using AscendC::IterateOrder;
using AscendC::ScheduleType;
using AscendC::MatmulConfigMode;
using AscendC::MatmulShapeParams;
using AscendC::MatmulQuantParams;
using AscendC::MatmulBatchParams;
using AscendC::MatmulFuncParams;
using AscendC::BatchMode;
using AscendC::BatchOutMode;
using AscendC::GetMMConfig;
using AscendC::CFG_NORM;
using AscendC::CFG_MDL;
using AscendC::CFG_IBSHARE_NORM;
using AscendC::MM_CFG_BB;
using AscendC::GetNormalConfig;
using AscendC::GetMDLConfig;
using AscendC::GetSpecialMDLConfig;
using AscendC::GetIBShareNormConfig;
using AscendC::GetBasicConfig;
using AscendC::SetSysWorkspace;

namespace matmul {
using namespace AscendC;
}

// Registers (and initialises) Matmul objects: REGIST_MATMUL_OBJ(&pipe, workspace, mm, &tiling, ...).
// On the AIC of a mixed launch the kernel returns here: it only serves its AIVs.
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...)                                                   \
    do {                                                                                           \
        (void)(workspace);                                                                         \
        if (::kgsim::matmul_server_core()) return;                                                 \
        ::AscendC::kgsim_detail::regist_matmul(tpipe, __VA_ARGS__);                                \
    } while (0)
