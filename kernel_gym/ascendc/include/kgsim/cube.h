// kgsim: the cube unit's low-level API (Atlas A2 semantics, asc-devkit "矩阵计算（ISASI）").
//
// Memories and positions: L1 (A1, B1, C1, TSCM), L0A (A2), L0B (B2), L0C (CO1), bias table
// (C2), fixpipe buffer (C2PIPE2GM); TQue/TBuf/LocalMemAllocator work on all of them.
// Data movement: DataCopy GM->L1 (plain, and Nd2NzParams: ND to the fractal NZ layout),
// DataCopy UB->L1 / L1->BT; LoadData L1->L0A/L0B (LoadData2DParams, with the b16 fractal
// transpose) and GM->L1; LoadDataWithTranspose (LoadData2dTransposeParams); Fixpipe L0C->GM/L1
// (FixpipeParamsV220, NZ2ND or NZ, ReLU, F322F16/F322BF16 and scalar (de)quantisation).
// Compute: Mmad (MmadParams: m/n/k, cmatrixInitVal, cmatrixSource, isBias; bias in BT).
//
// Layouts, with k0 = 32 B / sizeof(T) (16 half/bf16, 8 float, 32 int8):
//   L1 NZ (Nd2Nz):  element (r, c) at (c / k0) * dstNzC0Stride * k0 + r * dstNzNStride * k0 + c % k0
//   L0A Zz (A2):    M1 x K1 fractals of 16 x k0, row-major fractals, row-major inside (512 B each);
//                   for m == 1 (GEMV) A is read as a plain ND row
//   L0B Zn (B2):    K1 x N1 fractals of k0 x 16, row-major fractals, column-major inside (512 B each)
//   L0C Nz (CO1):   N1 x M1 fractals of 16 x 16 (float/int32), column-major fractals, row-major inside
// Each instruction runs on its pipe (MTE2 GM->L1, MTE3 UB->L1, MTE1 L1->L0/BT, M Mmad, FIX
// Fixpipe) and is checked against the other pipes' unfinished accesses of the same bytes
// (pipe_race), like the vector side's UB check.
#pragma once
#include "kgsim/copy.h"

// Fixpipe quantisation modes (global in CANN).
enum class QuantMode_t : uint8_t { NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8,
                                   VREQ8 };
enum pad_t : uint8_t { PAD_NONE = 0, PAD_MODE1, PAD_MODE2, PAD_MODE3, PAD_MODE4, PAD_MODE5 };

namespace kgsim {
struct CubeNd2Nz {
    uint32_t nd_num, n, d, src_nd_stride, src_d, dst_c0_stride, dst_n_stride, dst_matrix_stride;
};
struct CubeFixpipe {
    uint32_t n, m, src_stride, dst_stride;  // dst_stride: ND row length (elements) or NZ gap (32 B blocks)
    uint32_t nd_num, src_nd_stride, dst_nd_stride;
    uint8_t relu, quant, nz2nd, channel_split;
    uint64_t deq_scalar;
};
// GM -> L1 with the ND -> NZ conversion (src_ub: UB -> L1, then gm is unused).
void cube_nd2nz(const TRef& dst, int32_t buf, const void* gm, const TRef* src_ub, DT dt, const CubeNd2Nz& p,
                const Loc& loc);
// L1 -> L0A/L0B (or GM -> L1 when gm is set): `repeat` 512-byte fractals from fractal `start` of
// src, `src_stride` fractals apart, `dst_gap` fractals left between destination fractals.
// transpose: 1 the LoadData2DParams b16 fractal transpose; 2 LoadDataWithTranspose.
void cube_load2d(const TRef& dst, const TRef& src, int32_t buf, const void* gm, DT dt, uint32_t start,
                 uint32_t repeat, uint32_t src_stride, uint32_t dst_gap, uint32_t dst_frac_gap, int transpose,
                 const char* api, const Loc& loc);
// C (CO1) = A (A2) x B (B2) [+ C | + bias (C2)]; init: 0 zero, 1 accumulate, 2 bias tensor, 3 the
// bias table from byte 0 (cmatrixSource without a bias operand).
void cube_mmad(const TRef& c, const TRef& a, const TRef& b, const TRef* bias, DT ct, DT at, DT bt, uint32_t m,
               uint32_t n, uint32_t k, int init, uint8_t k_align16, const Loc& loc);
// L0C (CO1) -> GM (gm set) or a local tensor (L1).
void cube_fixpipe(int32_t buf, void* gm, const TRef* dst_local, DT dt, const TRef& src, DT st, const CubeFixpipe& p,
                  const Loc& loc);
[[noreturn]] void cube_unsupported(const char* what, const Loc& loc);
// Load3D v2 (image to column) L1 -> L0A/L0B. set_fm: the call's l1H/l1W/padList go to the left
// feature-map register first (isSetFMatrix); set_pad: pad_bits go to the pad register (isSetPadding).
struct CubeLoad3d {
    uint8_t pad[4];  // left, right, top, bottom
    uint16_t l1h, l1w, channel, k_ext, m_ext, k_start, m_start;
    uint16_t stride_w, stride_h, filter_w, filter_h, dil_w, dil_h;  // filter sizes with the +256 applied
    uint8_t transpose, right_fm, set_fm, set_pad;
    uint64_t pad_bits;
};
void cube_load3d(const TRef& dst, const TRef& src, DT dt, const CubeLoad3d& p, const char* api, const Loc& loc);
void cube_set_fmatrix(uint16_t l1h, uint16_t l1w, const uint8_t pad[4], int right, const Loc& loc);
void cube_set_pad_value(uint64_t bits, const Loc& loc);
}  // namespace kgsim

namespace AscendC {

// Local memory sizes of the Atlas A2 AI Core (__NPU_ARCH__ 2201), as kernel_utils_constants.h names
// them: kernels size Matmul's UB scratch (SetLocalWorkspace) or their own buffers from these.
constexpr int32_t TOTAL_VEC_LOCAL_SIZE = 184 * 1024;  // UB less the 8 KB the library keeps
constexpr uint32_t TOTAL_UB_SIZE = 192 * 1024;
constexpr uint32_t TMP_UB_OFFSET = 184 * 1024;
constexpr uint32_t TMP_UB_SIZE = 8 * 1024;
constexpr uint32_t TOTAL_L1_SIZE = 512 * 1024 - 128;  // less the KFC message reserve
constexpr uint32_t TOTAL_L0A_SIZE = 64 * 1024;
constexpr uint32_t TOTAL_L0B_SIZE = 64 * 1024;
constexpr uint32_t TOTAL_L0C_SIZE = 128 * 1024;

enum class BlockMode : uint8_t { BLOCK_MODE_NORMAL = 0, BLOCK_MODE_MATRIX, BLOCK_MODE_VECTOR,
                                 BLOCK_MODE_SMALL_CHANNEL, BLOCK_MODE_DEPTHWISE };
enum class DeqScale : uint8_t { DEQ_NONE = 0, DEQ, VDEQ, DEQ8, VDEQ8, DEQ16, VDEQ16 };
enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };

struct FixpipeConfig {
    CO2Layout format;
    bool isToUB = false;
    constexpr FixpipeConfig(CO2Layout f) : format(f) {}
    constexpr FixpipeConfig(CO2Layout f, bool toUb) : format(f), isToUB(toUb) {}
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct Nd2NzParams {
    Nd2NzParams() {}
    Nd2NzParams(uint16_t ndNumIn, uint16_t nValueIn, uint16_t dValueIn, uint16_t srcNdMatrixStrideIn,
                uint16_t srcDValueIn, uint16_t dstNzC0StrideIn, uint16_t dstNzNStrideIn, uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
          srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn) {}
    uint16_t ndNum = 0;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

struct LoadData2DParams {
    LoadData2DParams() {}
    LoadData2DParams(uint16_t startIndexIn, uint8_t repeatTimesIn, uint16_t srcStrideIn, uint8_t sidIn,
                     uint16_t dstGapIn, bool ifTransposeIn, uint8_t addrModeIn)
        : startIndex(startIndexIn), dstGap(dstGapIn), srcStride(srcStrideIn), ifTranspose(ifTransposeIn),
          repeatTimes(repeatTimesIn), sid(sidIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint16_t dstGap = 0;
    uint16_t srcStride = 0;
    bool ifTranspose = false;
    uint8_t repeatTimes = 0;
    uint8_t sid = 0;
    uint8_t addrMode = 0;
};
using LoadData2dParams = LoadData2DParams;

struct LoadData2dTransposeParams {
    LoadData2dTransposeParams() {}
    LoadData2dTransposeParams(uint16_t startIndexIn, uint8_t repeatTimesIn, uint16_t srcStrideIn, uint16_t dstGapIn,
                              uint16_t dstFracGapIn, uint8_t addrModeIn = 0)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstFracGapIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
    uint8_t addrMode = 0;
};
using LoadData2DTransposeParams = LoadData2dTransposeParams;

struct MmadParams {
    MmadParams() {}
    MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, bool isBiasIn, int32_t fmOffsetIn, bool enSsparseIn,
               bool enWinogradAIn, bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}
    MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, uint8_t unitFlagIn, bool cmatrixSourceIn,
               bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn),
          cmatrixInitVal(cmatrixInitValIn) {}
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;
};

struct FixpipeParamsV220 {
    FixpipeParamsV220() {}
    FixpipeParamsV220(uint16_t nSizeIn, uint16_t mSizeIn, uint16_t srcStrideIn, uint32_t dstStrideIn, bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
    FixpipeParamsV220(uint16_t nSizeIn, uint16_t mSizeIn, uint16_t srcStrideIn, uint32_t dstStrideIn, bool reluEnIn,
                      QuantMode_t quantPreIn, int64_t deqScalarIn, uint16_t ndNumIn, uint16_t srcNdStrideIn,
                      uint16_t dstNdStrideIn, uint8_t unitFlagIn, bool isChannelSplitIn = false)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
          deqScalar(uint64_t(deqScalarIn)), ndNum(ndNumIn), srcNdStride(srcNdStrideIn), dstNdStride(dstNdStrideIn),
          reluEn(reluEnIn), unitFlag(unitFlagIn), isChannelSplit(isChannelSplitIn) {}
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};

struct DataCopyEnhancedParams {
    DataCopyEnhancedParams() {}
    DataCopyEnhancedParams(BlockMode blockModeIn, DeqScale deqScaleIn, uint64_t deqValueIn, uint8_t sidStoreModeIn,
                           bool isReluIn, pad_t padModeIn, uint64_t padValueIn)
        : blockMode(blockModeIn), deqScale(deqScaleIn), deqValue(deqValueIn), sidStoreMode(sidStoreModeIn),
          isRelu(isReluIn), padMode(padModeIn), padValue(padValueIn) {}
    BlockMode blockMode = BlockMode::BLOCK_MODE_NORMAL;
    DeqScale deqScale = DeqScale::DEQ_NONE;
    uint64_t deqValue = 0;
    uint8_t sidStoreMode = 0;
    bool isRelu = false;
    pad_t padMode = pad_t::PAD_NONE;
    uint64_t padValue = 0;
    uint64_t deqTensorAddr = 0;
};

// ---- GM / UB -> L1 with the ND -> NZ conversion ----------------------------------------------
// asc-devkit dispatches on the element width and asserts at run time for other types (int4b_t, which
// it moves as int8_t, is not modelled here), so the type is checked when the call runs.
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p,
              kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("DataCopy(Nd2NzParams)", T, half, bfloat16_t, float, int8_t, uint8_t, int16_t, uint16_t, int32_t,
                 uint32_t);
    kgsim::cube_nd2nz(dst.r_, src.buf_, src.ptr_, nullptr, kgsim::dt_of<T>::v,
                      {p.ndNum, p.nValue, p.dValue, p.srcNdMatrixStride, p.srcDValue, p.dstNzC0Stride,
                       p.dstNzNStride, p.dstNzMatrixStride}, loc);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const Nd2NzParams& p,
              kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("DataCopy(Nd2NzParams)", T, half, bfloat16_t, float, int8_t, uint8_t, int16_t, uint16_t, int32_t,
                 uint32_t);
    kgsim::cube_nd2nz(dst.r_, -1, nullptr, &src.r_, kgsim::dt_of<T>::v,
                      {p.ndNum, p.nValue, p.dValue, p.srcNdMatrixStride, p.srcDValue, p.dstNzC0Stride,
                       p.dstNzNStride, p.dstNzMatrixStride}, loc);
}

// ---- L1 -> L0A/L0B, GM -> L1 (LoadData 2D) ----------------------------------------------------
template <class T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p,
              kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("LoadData", T, half, bfloat16_t, float, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t);
    kgsim::cube_load2d(dst.r_, src.r_, -1, nullptr, kgsim::dt_of<T>::v, p.startIndex, p.repeatTimes, p.srcStride,
                       p.dstGap, 0, p.ifTranspose ? 1 : 0, "LoadData", loc);
}
template <class T>
void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const LoadData2DParams& p,
              kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("LoadData", T, half, bfloat16_t, float, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t);
    kgsim::cube_load2d(dst.r_, kgsim::TRef{}, src.buf_, src.ptr_, kgsim::dt_of<T>::v, p.startIndex, p.repeatTimes,
                       p.srcStride, p.dstGap, 0, p.ifTranspose ? 1 : 0, "LoadData", loc);
}
// L1 -> L0A/L0B with the fractal transpose; b16 (one 16x16 fractal per repeat) is modelled, the
// b8/b32 block forms are not yet (unsupported_api).
template <class T>
void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2dTransposeParams& p,
                           kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("LoadDataWithTranspose", T, half, bfloat16_t, float, int8_t, uint8_t, int16_t, uint16_t, int32_t,
                 uint32_t);
    kgsim::cube_load2d(dst.r_, src.r_, -1, nullptr, kgsim::dt_of<T>::v, p.startIndex, p.repeatTimes, p.srcStride,
                       p.dstGap, p.dstFracGap, 2, "LoadDataWithTranspose", loc);
}

// ---- L1 -> L0A/L0B image to column (LoadData 3D v2), its registers ------------------------------
constexpr int32_t PAD_SIZE = 4;
struct IsResetLoad3dConfig {
    bool isSetFMatrix = true;
    bool isSetPadding = true;
};
constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG = {true, true};
enum class FmatrixMode : uint8_t { FMATRIX_LEFT = 0, FMATRIX_RIGHT = 1 };

template <class T>
struct LoadData3DParamsV2 {
    LoadData3DParamsV2() {}
    LoadData3DParamsV2(const uint8_t padListIn[PAD_SIZE], uint16_t l1HIn, uint16_t l1WIn, uint16_t channelSizeIn,
                       uint16_t kExtensionIn, uint16_t mExtensionIn, uint16_t kStartPtIn, uint16_t mStartPtIn,
                       uint8_t strideWIn, uint8_t strideHIn, uint8_t filterWIn, uint8_t filterHIn,
                       uint8_t dilationFilterWIn, uint8_t dilationFilterHIn, bool enTransposeIn, bool enSmallKIn,
                       T padValueIn, bool filterSizeWIn = false, bool filterSizeHIn = false, bool fMatrixCtrlIn = false)
        : l1H(l1HIn), l1W(l1WIn), channelSize(channelSizeIn), kExtension(kExtensionIn), mExtension(mExtensionIn),
          kStartPt(kStartPtIn), mStartPt(mStartPtIn), strideW(strideWIn), strideH(strideHIn), filterW(filterWIn),
          filterH(filterHIn), dilationFilterW(dilationFilterWIn), dilationFilterH(dilationFilterHIn),
          enTranspose(enTransposeIn), enSmallK(enSmallKIn), padValue(padValueIn), filterSizeW(filterSizeWIn),
          filterSizeH(filterSizeHIn), fMatrixCtrl(fMatrixCtrlIn) {
        for (int32_t i = 0; i < PAD_SIZE; ++i) padList[i] = padListIn[i];
    }
    uint8_t padList[PAD_SIZE] = {0, 0, 0, 0};
    uint16_t l1H = 0;
    uint16_t l1W = 0;
    uint16_t channelSize = 0;
    uint16_t kExtension = 0;
    uint16_t mExtension = 0;
    uint16_t kStartPt = 0;
    uint16_t mStartPt = 0;
    uint8_t strideW = 1;
    uint8_t strideH = 1;
    uint8_t filterW = 1;
    uint8_t filterH = 1;
    uint8_t dilationFilterW = 1;
    uint8_t dilationFilterH = 1;
    bool enTranspose = false;
    bool enSmallK = false;
    T padValue = 0;
    bool filterSizeW = false;
    bool filterSizeH = false;
    bool fMatrixCtrl = false;
};

namespace kgsim_cube {
template <class T>
uint64_t pad_bits(const T& v) {
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T) < 8 ? sizeof(T) : 8);
    return b;
}
}  // namespace kgsim_cube

// Image to column of an NC1HWC0 feature map in L1 (C0 = 32 B of elements), then the
// [mStartPt, +mExtension) x [kStartPt, +kExtension) block into L0A (Zz; enTranspose: the block's
// transpose, b16/b32) or L0B (always transposed into its Zn layout; b16/b32). With a 1 x 1 filter,
// stride 1 and no padding this loads an NZ matrix of l1W rows and channelSize columns.
template <class T, const IsResetLoad3dConfig& defaultConfig = IS_RESER_LOAD3D_DEFAULT_CONFIG, class U = PrimT<T>,
          typename std::enable_if<IsSameType<PrimT<T>, U>::value, bool>::type = true>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<U>& p,
              kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("LoadData(LoadData3DParamsV2)", T, half, bfloat16_t, float, int8_t, uint8_t, int32_t, uint32_t);
    kgsim::CubeLoad3d a{};
    for (int i = 0; i < 4; ++i) a.pad[i] = p.padList[i];
    a.l1h = p.l1H;
    a.l1w = p.l1W;
    a.channel = p.channelSize;
    a.k_ext = p.kExtension;
    a.m_ext = p.mExtension;
    a.k_start = p.kStartPt;
    a.m_start = p.mStartPt;
    a.stride_w = p.strideW;
    a.stride_h = p.strideH;
    a.filter_w = uint16_t(p.filterW + (p.filterSizeW ? 256 : 0));
    a.filter_h = uint16_t(p.filterH + (p.filterSizeH ? 256 : 0));
    a.dil_w = p.dilationFilterW;
    a.dil_h = p.dilationFilterH;
    a.transpose = p.enTranspose;
    a.right_fm = p.fMatrixCtrl;
    a.set_fm = defaultConfig.isSetFMatrix;
    a.set_pad = defaultConfig.isSetPadding;
    a.pad_bits = kgsim_cube::pad_bits(p.padValue);
    kgsim::cube_load3d(dst.r_, src.r_, kgsim::dt_of<T>::v, a, "LoadData(LoadData3DParamsV2)", loc);
}
inline void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], const FmatrixMode& fmatrixMode,
                       kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::cube_set_fmatrix(l1H, l1W, padList, fmatrixMode == FmatrixMode::FMATRIX_RIGHT, loc);
}
template <class T>
void SetLoadDataPaddingValue(const T padValue, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::cube_set_pad_value(kgsim_cube::pad_bits(padValue), loc);
}

// ---- Mmad ------------------------------------------------------------------------------------
namespace kgsim_cube {
template <class Dst, class Src>
constexpr bool mmad_types_ok = (std::is_same_v<Src, half> && std::is_same_v<Dst, float>) ||
                               (std::is_same_v<Src, bfloat16_t> && std::is_same_v<Dst, float>) ||
                               (std::is_same_v<Src, float> && std::is_same_v<Dst, float>) ||
                               (std::is_same_v<Src, int8_t> && std::is_same_v<Dst, int32_t>);
}  // namespace kgsim_cube

template <class Dst, class Src0, class Src1>
void Mmad(const LocalTensor<Dst>& dst, const LocalTensor<Src0>& fm, const LocalTensor<Src1>& filter,
          const MmadParams& p, kgsim::Loc loc = kgsim::Loc::current()) {
    static_assert(std::is_same_v<Src0, Src1> && kgsim_cube::mmad_types_ok<Dst, Src0>,
                  "[kgsim:unsupported_dtype] Mmad: on Atlas A2 the (A, B, C) types are (half, half, float), "
                  "(bfloat16_t, bfloat16_t, float), (float, float, float) or (int8_t, int8_t, int32_t)");
    // isBias (deprecated): accumulate; else cmatrixInitVal: zero; else cmatrixSource: the bias
    // table (its first n values); else accumulate onto L0C.
    int init = p.isBias ? 1 : p.cmatrixInitVal ? 0 : p.cmatrixSource ? 3 : 1;
    kgsim::cube_mmad(dst.r_, fm.r_, filter.r_, nullptr, kgsim::dt_of<Dst>::v, kgsim::dt_of<Src0>::v,
                     kgsim::dt_of<Src1>::v, p.m, p.n, p.k, init, p.kDirectionAlign, loc);
}
template <class Dst, class Src0, class Src1, class BiasT>
void Mmad(const LocalTensor<Dst>& dst, const LocalTensor<Src0>& fm, const LocalTensor<Src1>& filter,
          const LocalTensor<BiasT>& bias, const MmadParams& p, kgsim::Loc loc = kgsim::Loc::current()) {
    static_assert(std::is_same_v<Src0, Src1> && kgsim_cube::mmad_types_ok<Dst, Src0> && std::is_same_v<BiasT, Dst>,
                  "[kgsim:unsupported_dtype] Mmad with bias: on Atlas A2 the (A, B, bias, C) types are (half, half, "
                  "float, float), (bfloat16_t, bfloat16_t, float, float), (float x 4) or (int8_t, int8_t, int32_t, "
                  "int32_t)");
    kgsim::cube_mmad(dst.r_, fm.r_, filter.r_, &bias.r_, kgsim::dt_of<Dst>::v, kgsim::dt_of<Src0>::v,
                     kgsim::dt_of<Src1>::v, p.m, p.n, p.k, 2, p.kDirectionAlign, loc);
}

// ---- Fixpipe: L0C -> GM / L1 -------------------------------------------------------------------
namespace kgsim_cube {
template <class T, class U>
void fixpipe_types() {
    static_assert((std::is_same_v<U, float> &&
                   kgsim::one_of_v<T, float, half, bfloat16_t, int8_t, uint8_t>) ||
                  (std::is_same_v<U, int32_t> && kgsim::one_of_v<T, int32_t, half, int8_t, uint8_t>),
                  "[kgsim:unsupported_dtype] Fixpipe: on Atlas A2 an L0C float goes to float, half, bfloat16_t, "
                  "int8_t or uint8_t; an L0C int32_t to int32_t, half, int8_t or uint8_t");
}
inline kgsim::CubeFixpipe fixpipe_args(const FixpipeParamsV220& p, bool nz2nd) {
    return kgsim::CubeFixpipe{p.nSize, p.mSize, p.srcStride, p.dstStride, p.ndNum, p.srcNdStride, p.dstNdStride,
                              uint8_t(p.reluEn), uint8_t(p.quantPre), uint8_t(nz2nd), uint8_t(p.isChannelSplit),
                              p.deqScalar};
}
}  // namespace kgsim_cube

namespace kgsim_cube {
// unitFlag 2/3 (Mmad and Fixpipe): the hardware moves each L0C fractal out once the cube has
// computed it, so the Fixpipe needs no SetFlag/WaitFlag<M_FIX>. Modelled as the Fixpipe waiting
// for the cube pipe (an internal event, never a user's), which keeps the values exact and the
// time an upper bound (the fractal-wise overlap is not modelled).
inline void unit_flag_wait(uint8_t unitFlag, const kgsim::Loc& loc) {
    if (unitFlag < 2) return;
    constexpr int kUnitFlagEvent = 250;
    kgsim::set_flag(kgsim::P_M, kgsim::P_FIX, kUnitFlagEvent, 0, loc);
    kgsim::wait_flag(kgsim::P_M, kgsim::P_FIX, kUnitFlagEvent, 0, loc);
}
}  // namespace kgsim_cube

template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
             kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim_cube::fixpipe_types<T, U>();
    kgsim_cube::unit_flag_wait(p.unitFlag, loc);
    static_assert(config.format != CO2Layout::COLUMN_MAJOR, "Fixpipe: NZ2DN is not available on Atlas A2");
    kgsim::cube_fixpipe(dst.buf_, dst.ptr_, nullptr, kgsim::dt_of<T>::v, src.r_, kgsim::dt_of<U>::v,
                        kgsim_cube::fixpipe_args(p, config.format == CO2Layout::ROW_MAJOR), loc);
}
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
void Fixpipe(const LocalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
             kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim_cube::fixpipe_types<T, U>();
    kgsim_cube::unit_flag_wait(p.unitFlag, loc);
    static_assert(config.format != CO2Layout::COLUMN_MAJOR, "Fixpipe: NZ2DN is not available on Atlas A2");
    kgsim::cube_fixpipe(-1, nullptr, &dst.r_, kgsim::dt_of<T>::v, src.r_, kgsim::dt_of<U>::v,
                        kgsim_cube::fixpipe_args(p, config.format == CO2Layout::ROW_MAJOR), loc);
}
// The tensor-quantisation forms (VDEQF16, VQF322B8_PRE, VREQ8: per-channel parameters in L1).
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR, class S>
void Fixpipe(const GlobalTensor<T>&, const LocalTensor<U>&, const LocalTensor<S>&, const FixpipeParamsV220&,
             kgsim::Loc loc = kgsim::Loc::current()) {
    static_assert(std::is_same_v<S, uint64_t>, "Fixpipe: the quantisation tensor must be uint64_t");
    kgsim::cube_unsupported("Fixpipe with a quantisation tensor (cbufWorkspace)", loc);
}

// ---- the classic L0C -> CO2 path (Atlas training series only) ---------------------------------
template <class T, class U>
void DataCopy(const LocalTensor<T>&, const LocalTensor<U>&, const DataCopyParams&, const DataCopyEnhancedParams&,
              kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::cube_unsupported("DataCopy with DataCopyEnhancedParams (CO1 -> CO2): Atlas A2 has no L0C -> UB path; "
                            "move L0C results with Fixpipe to GM", loc);
}

}  // namespace AscendC
