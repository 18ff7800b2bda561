// kgsim: gather / sort / transpose vector APIs of Atlas A2: Gather, Gatherb, Scatter (not on A2),
// Sort32, MrgSort (both forms), GetMrgSortResult, Sort / Concat / Extract / GetSortLen / GetSortOffset,
// the region-proposal APIs of older NPUs (ProposalConcat, ProposalExtract, RpSort16, MrgSort4: not on A2),
// Transpose (16 x 16 and NCHW <-> NHWC), TransDataTo5HD (all three address-list forms).
// The bodies are in the runtime library (src/rt_vector.cpp: Gather, Gatherb; src/rt_sort.cpp: the rest).
#pragma once
#include "kgsim/vector.h"

namespace kgsim {
void vec_gather(DT dt, const TRef& dst, const TRef& src, const TRef& offset, uint32_t base, const MaskArg& m,
                int32_t repeat, uint32_t dst_rep, const Loc& loc);
void vec_gatherb(DT dt, const TRef& dst, const TRef& src, const TRef& offset, int32_t repeat, uint32_t dst_blk,
                 uint32_t dst_rep, const Loc& loc);
// an API the A2 build of asc-devkit compiles to nothing (its CPU debug build aborts there): the call
// changes nothing, and the launch report carries an unsupported_api warning naming it
void a2_noop(const char* api, const Loc& loc);
void sort32(DT dt, const TRef& dst, const TRef& src0, const TRef& src1, int32_t repeat, const Loc& loc);
// src: 4 queues; lens in 8-byte (score, index) structures; sorted_num: consumed per queue (may be null)
void mrg_sort(DT dt, const TRef& dst, const TRef* src, const uint16_t* lens, bool exhausted, uint32_t valid,
              int32_t repeat, uint32_t* sorted_num, const char* api, const Loc& loc);
void mrg_sort_result(uint16_t* out4, const Loc& loc);
void sort_full(DT dt, const TRef& dst, const TRef& concat, const TRef& index, const TRef& tmp, int32_t repeat,
               bool full, const Loc& loc);
void sort_concat(DT dt, const TRef& concat, const TRef& src, const TRef& tmp, int32_t repeat, const Loc& loc);
void sort_extract(DT dt, const TRef& value, const TRef& index, const TRef& sorted, int32_t repeat, const Loc& loc);
void transpose16(DT dt, const TRef& dst, const TRef& src, const Loc& loc);
void transpose_ext(DT dt, const TRef& dst, const TRef& src, const TRef& tmp, uint32_t n, uint32_t c, uint32_t h,
                   uint32_t w, int type, const Loc& loc);
void trans_5hd(DT dt, const TRef* dst16, const TRef* src16, bool dst_high, bool src_high, int32_t repeat,
               uint32_t dst_rep, uint32_t src_rep, const Loc& loc);
TRef ub_ref_of_addr(uint64_t host_addr, const char* api, const Loc& loc);  // GetPhyAddr() value -> UB operand
}  // namespace kgsim

namespace AscendC {

// ---- Gather / Gatherb / Scatter -------------------------------------------------------------------
// Gather checks its type with a debug-build assert only and moves elements by width (asc-devkit), so
// another type builds and is refused when the call runs.
#define KGSIM_GATHER_T int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float
template <class T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseAddr, const uint32_t count, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("Gather", T, KGSIM_GATHER_T);
    kgsim::vec_gather(kgsim::dt_of<T>::v, dst.r_, src.r_, srcOffset.r_, srcBaseAddr,
                      kgsim_detail::count_mask(int64_t(count)), 0, 8, loc);
}
template <class T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseAddr, const uint64_t mask, const uint8_t repeatTime, const uint16_t dstRepStride,
            kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("Gather", T, KGSIM_GATHER_T);
    kgsim::vec_gather(kgsim::dt_of<T>::v, dst.r_, src.r_, srcOffset.r_, srcBaseAddr, kgsim_detail::cont_mask(true, mask),
                      repeatTime, dstRepStride, loc);
}
template <class T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
            const uint32_t srcBaseAddr, const uint64_t mask[], const uint8_t repeatTime, const uint16_t dstRepStride,
            kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("Gather", T, KGSIM_GATHER_T);
    kgsim::vec_gather(kgsim::dt_of<T>::v, dst.r_, src.r_, srcOffset.r_, srcBaseAddr, kgsim_detail::bit_mask(true, mask),
                      repeatTime, dstRepStride, loc);
}

struct GatherRepeatParams {
    GatherRepeatParams() {}
    GatherRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE, src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE, src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false, strideSizeMode = false;
};
template <class T>
void Gatherb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& offset,
             const uint8_t repeatTime, const GatherRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Gatherb", T, uint16_t, uint32_t);
    kgsim::vec_gatherb(kgsim::dt_of<T>::v, dst.r_, src.r_, offset.r_, repeatTime, repeatParams.dstBlkStride,
                       repeatParams.dstRepStride, loc);
}

// kgsim:partial Scatter: not supported on Atlas A2 (CANN Scatter docs): a call does nothing, with a warning
template <class T>
void Scatter(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<uint32_t>&, const uint32_t,
             const uint32_t, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::a2_noop("Scatter", loc);
}
template <class T>
void Scatter(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<uint32_t>&, const uint32_t,
             const uint64_t, const uint8_t, const uint8_t, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::a2_noop("Scatter", loc);
}
template <class T>
void Scatter(const LocalTensor<T>&, const LocalTensor<T>&, const LocalTensor<uint32_t>&, const uint32_t,
             const uint64_t[], const uint8_t, const uint8_t, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::a2_noop("Scatter", loc);
}

// ---- Sort32 / MrgSort / GetMrgSortResult -----------------------------------------------------------
// (score, index) structures of 8 bytes: float score in bytes 0-3 (half: 0-1, 2-3 reserved), uint32 index in 4-7.
template <class T>
void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
            const int32_t repeatTime, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Sort32", T, half, float);
    kgsim::sort32(kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_, repeatTime, loc);
}

constexpr int32_t MRG_SORT_ELEMENT_LEN = 4;
struct MrgSort4Info {
    MrgSort4Info() {}
    MrgSort4Info(const uint16_t elementLengthsIn[MRG_SORT_ELEMENT_LEN], const bool ifExhaustedSuspensionIn,
                 const uint16_t validBitIn, const uint16_t repeatTimesIn)
        : ifExhaustedSuspension(ifExhaustedSuspensionIn), validBit(validBitIn), repeatTimes(uint8_t(repeatTimesIn)) {
        for (int32_t i = 0; i < MRG_SORT_ELEMENT_LEN; ++i) elementLengths[i] = elementLengthsIn[i];
    }
    uint16_t elementLengths[MRG_SORT_ELEMENT_LEN] = {0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint8_t repeatTimes = 1;
};
template <class T>
struct MrgSortSrcList {
    MrgSortSrcList() {}
    MrgSortSrcList(const LocalTensor<T>& src1In, const LocalTensor<T>& src2In, const LocalTensor<T>& src3In,
                   const LocalTensor<T>& src4In)
        : src1(src1In[0]), src2(src2In[0]), src3(src3In[0]), src4(src4In[0]) {}
    LocalTensor<T> src1, src2, src3, src4;
};
template <class T>
void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params,
             kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("MrgSort", T, half, float);
    const kgsim::TRef s[4] = {src.src1.r_, src.src2.r_, src.src3.r_, src.src4.r_};
    kgsim::mrg_sort(kgsim::dt_of<T>::v, dst.r_, s, params.elementLengths, params.ifExhaustedSuspension,
                    params.validBit, params.repeatTimes, nullptr, "MrgSort", loc);
}
template <class T, bool isExhaustedSuspension = false>
void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& sortList, const uint16_t elementCountList[4],
             uint32_t sortedNum[4], uint16_t validBit, const int32_t repeatTime,
             kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("MrgSort", T, half, float);
    const kgsim::TRef s[4] = {sortList.src1.r_, sortList.src2.r_, sortList.src3.r_, sortList.src4.r_};
    kgsim::mrg_sort(kgsim::dt_of<T>::v, dst.r_, s, elementCountList, isExhaustedSuspension, validBit, repeatTime,
                    sortedNum, "MrgSort", loc);
}
inline void GetMrgSortResult(uint16_t& mrgSortList1, uint16_t& mrgSortList2, uint16_t& mrgSortList3,
                             uint16_t& mrgSortList4, kgsim::Loc loc = kgsim::Loc::current()) {
    uint16_t r[4];
    kgsim::mrg_sort_result(r, loc);
    mrgSortList1 = r[0];
    mrgSortList2 = r[1];
    mrgSortList3 = r[2];
    mrgSortList4 = r[3];
}

// The region-proposal forms of older NPUs (8-element proposals): asc-devkit declares them for every
// SoC, and its A2 (dav_c220) implementation compiles them to nothing, so a kernel that has them in a
// path for another SoC, or calls them on A2, builds; on A2 a call changes nothing (a2_noop).
// kgsim:partial ProposalConcat: not on Atlas A2 (asc-devkit's A2 build compiles it to nothing): a call does nothing, with a warning
template <class T>
void ProposalConcat(const LocalTensor<T>&, const LocalTensor<T>&, const int32_t, const int32_t,
                    kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::a2_noop("ProposalConcat", loc);
}
// kgsim:partial ProposalExtract: not on Atlas A2 (asc-devkit's A2 build compiles it to nothing): a call does nothing, with a warning
template <class T>
void ProposalExtract(const LocalTensor<T>&, const LocalTensor<T>&, const int32_t, const int32_t,
                     kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::a2_noop("ProposalExtract", loc);
}
// kgsim:partial RpSort16: not on Atlas A2 (asc-devkit's A2 build compiles it to nothing): a call does nothing, with a warning
template <class T>
void RpSort16(const LocalTensor<T>&, const LocalTensor<T>&, const int32_t, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::a2_noop("RpSort16", loc);
}
// kgsim:partial MrgSort4: not on Atlas A2 (asc-devkit's A2 build compiles it to nothing; MrgSort is A2's): a call does nothing, with a warning
template <class T>
void MrgSort4(const LocalTensor<T>&, const MrgSortSrcList<T>&, const MrgSort4Info&,
              kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::a2_noop("MrgSort4", loc);
}

// ---- Sort (high level, Atlas A2 layout: 8-byte (score, index) structures) -----------------------------
template <class T>
inline uint32_t GetSortLen(const uint32_t elemCount) { return elemCount * 8u; }
template <class T>
inline uint32_t GetSortOffset(const uint32_t elemOffset) { return elemOffset * 8u; }
template <class T, bool isFullSort>
void Sort(const LocalTensor<T>& dst, const LocalTensor<T>& concat, const LocalTensor<uint32_t>& index,
          LocalTensor<T>& tmp, const int32_t repeatTime, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Sort", T, half, float);
    kgsim::sort_full(kgsim::dt_of<T>::v, dst.r_, concat.r_, index.r_, tmp.r_, repeatTime, isFullSort, loc);
}
template <class T>
void Concat(LocalTensor<T>& concat, const LocalTensor<T>& src, const LocalTensor<T>& tmp, const int32_t repeatTime,
            kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Concat", T, half, float);
    // On Atlas A2 Sort reads the values as they are: Concat makes `concat` the src tensor itself (no
    // instruction), so a default-constructed `concat` is fine (asc-devkit sort sample)
    (void)tmp;
    if (repeatTime < 0 || repeatTime > 255)
        kgsim::fault("invalid_argument", loc, "Concat: repeatTime %d outside [0, 255]", int(repeatTime));
    concat = src;
}
template <class T>
void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex, const LocalTensor<T>& sorted,
             const int32_t repeatTime, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Extract", T, half, float);
    kgsim::sort_extract(kgsim::dt_of<T>::v, dstValue.r_, dstIndex.r_, sorted.r_, repeatTime, loc);
}

// ---- Transpose -----------------------------------------------------------------------------------
enum class TransposeType : uint8_t {
    TRANSPOSE_TYPE_NONE, TRANSPOSE_NZ2ND_0213, TRANSPOSE_NZ2NZ_0213, TRANSPOSE_NZ2NZ_012_WITH_N,
    TRANSPOSE_NZ2ND_012_WITH_N, TRANSPOSE_NZ2ND_012_WITHOUT_N, TRANSPOSE_NZ2NZ_012_WITHOUT_N, TRANSPOSE_ND2ND_ONLY,
    TRANSPOSE_ND_UB_GM, TRANSPOSE_GRAD_ND_UB_GM, TRANSPOSE_ND2ND_B16, TRANSPOSE_NCHW2NHWC, TRANSPOSE_NHWC2NCHW
};
struct TransposeParamsExt {
    TransposeParamsExt() {}
    TransposeParamsExt(const uint16_t nSizeIn, const uint16_t cSizeIn, const uint16_t hSizeIn, const uint16_t wSizeIn,
                       const TransposeType transposeTypeIn)
        : nSize(nSizeIn), cSize(cSizeIn), hSize(hSizeIn), wSize(wSizeIn), transposeType(transposeTypeIn) {}
    uint16_t nSize = 0, cSize = 0, hSize = 0, wSize = 0;
    TransposeType transposeType = TransposeType::TRANSPOSE_ND2ND_B16;
};
// Transpose: asc-devkit checks the type with ASCENDC_ASSERT (run time) and moves 16-bit words; its
// extended form dispatches on the element width with no type check, so both build for any type here.
template <class T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("Transpose", T, int16_t, uint16_t, half);
    kgsim::transpose16(kgsim::dt_of<T>::v, dst.r_, src.r_, loc);
}
template <class T>
void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
               const TransposeParamsExt& transposeParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("Transpose", T, int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t, float);
    kgsim::transpose_ext(kgsim::dt_of<T>::v, dst.r_, src.r_, sharedTmpBuffer.r_, transposeParams.nSize,
                         transposeParams.cSize, transposeParams.hSize, transposeParams.wSize,
                         int(transposeParams.transposeType), loc);
}

// ---- TransDataTo5HD ----------------------------------------------------------------------------------
constexpr uint32_t NCHW_CONV_ADDR_LIST_SIZE = 16;
struct TransDataTo5HDParams {
    TransDataTo5HDParams() {}
    TransDataTo5HDParams(const bool dstHighHalfIn, const bool srcHighHalfIn, const uint8_t repeatTimesIn,
                         const uint16_t dstRepStrideIn, const uint16_t srcRepStrideIn)
        : dstHighHalf(dstHighHalfIn), srcHighHalf(srcHighHalfIn), repeatTimes(repeatTimesIn),
          dstRepStride(dstRepStrideIn), srcRepStride(srcRepStrideIn) {}
    bool dstHighHalf = false;
    bool srcHighHalf = false;
    uint8_t repeatTimes = 1;
    uint16_t dstRepStride = 0;
    uint16_t srcRepStride = 0;
};
#define KGSIM_5HD_T int8_t, uint8_t, int16_t, uint16_t, half, int32_t, uint32_t, float
// The tensor-list form refuses another type at build (asc-devkit overloads its intrinsic per pointer
// type); the address-list forms (uint64_t lists, LocalTensor<uint64_t>) reach a template whose
// generic case asserts at run time, so there the type is checked when the call runs.
template <class T>
void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                    const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE], const TransDataTo5HDParams& p,
                    kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("TransDataTo5HD", T, KGSIM_5HD_T);
    kgsim::TRef d[16], s[16];
    for (int i = 0; i < 16; ++i) { d[i] = dstList[i].r_; s[i] = srcList[i].r_; }
    kgsim::trans_5hd(kgsim::dt_of<T>::v, d, s, p.dstHighHalf, p.srcHighHalf, p.repeatTimes, p.dstRepStride,
                     p.srcRepStride, loc);
}
template <class T>
void TransDataTo5HD(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                    const TransDataTo5HDParams& p, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("TransDataTo5HD", T, KGSIM_5HD_T);
    kgsim::TRef d[16], s[16];
    for (int i = 0; i < 16; ++i) {
        d[i] = kgsim::ub_ref_of_addr(dstList[i], "TransDataTo5HD", loc);
        s[i] = kgsim::ub_ref_of_addr(srcList[i], "TransDataTo5HD", loc);
    }
    kgsim::trans_5hd(kgsim::dt_of<T>::v, d, s, p.dstHighHalf, p.srcHighHalf, p.repeatTimes, p.dstRepStride,
                     p.srcRepStride, loc);
}
// TransDataTo5HDImpl: the form under the API, on lists of UB pointers (`__ubuf__ T* list[16]`), which
// kernels call directly with pointers taken from LocalTensor::GetPhyAddr()
template <class T>
void TransDataTo5HDImpl(T* dstList[NCHW_CONV_ADDR_LIST_SIZE], T* srcList[NCHW_CONV_ADDR_LIST_SIZE],
                        const TransDataTo5HDParams& p, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("TransDataTo5HD", std::remove_cv_t<T>, KGSIM_5HD_T);  // pointer lists: per-type overloads only
    uint64_t da[16], sa[16];
    for (uint32_t i = 0; i < 16; ++i) {
        da[i] = uint64_t(reinterpret_cast<uintptr_t>(dstList[i]));
        sa[i] = uint64_t(reinterpret_cast<uintptr_t>(srcList[i]));
    }
    TransDataTo5HD<std::remove_cv_t<T>>(da, sa, p, loc);
}
template <class T>
void TransDataTo5HD(const LocalTensor<uint64_t>& dst, const LocalTensor<uint64_t>& src, const TransDataTo5HDParams& p,
                    kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("TransDataTo5HD", T, KGSIM_5HD_T);
    uint64_t da[16], sa[16];
    for (uint32_t i = 0; i < 16; ++i) {
        da[i] = dst.GetValue(i, loc);
        sa[i] = src.GetValue(i, loc);
    }
    TransDataTo5HD<T>(da, sa, p, loc);
}

}  // namespace AscendC
