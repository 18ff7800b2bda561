// kgsim: vector instructions (count form and mask/repeat form), masks, synchronisation,
// atomics and small utilities.
#pragma once
#include "kgsim/copy.h"

namespace AscendC {

struct BinaryRepeatParams {
    BinaryRepeatParams() {}
    BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn, const uint8_t src1BlkStrideIn,
                       const uint8_t dstRepStrideIn, const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct UnaryRepeatParams {
    UnaryRepeatParams() {}
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                      const uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn) {}
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                      const uint8_t srcRepStrideIn, const bool halfBlockIn)
        : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn), halfBlock(halfBlockIn) {}
    uint32_t blockNumber = DEFAULT_BLK_NUM;
    uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
    uint16_t srcBlkStride = DEFAULT_BLK_STRIDE;
    uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
    uint8_t srcRepStride = DEFAULT_REPEAT_STRIDE;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
    bool halfBlock = false;
};

namespace kgsim_detail {
inline kgsim::MaskArg count_mask(int64_t count) { return kgsim::MaskArg{0, 0, 0, count}; }
inline kgsim::MaskArg cont_mask(bool isSetMask, uint64_t mask) { return kgsim::MaskArg{uint8_t(isSetMask ? 1 : 3), mask, 0, 0}; }
inline kgsim::MaskArg bit_mask(bool isSetMask, const uint64_t* mask) {
    return isSetMask ? kgsim::MaskArg{2, mask[0], mask[1], 0} : kgsim::MaskArg{3, 0, 0, 0};
}
inline kgsim::RepArg rep(int32_t repeat, const BinaryRepeatParams& p) {
    return kgsim::RepArg{repeat, p.dstBlkStride, p.src0BlkStride, p.src1BlkStride, p.dstRepStride, p.src0RepStride,
                         p.src1RepStride};
}
inline kgsim::RepArg rep(int32_t repeat, const UnaryRepeatParams& p) {
    return kgsim::RepArg{repeat, p.dstBlkStride, p.srcBlkStride, 0, p.dstRepStride, p.srcRepStride, 0};
}
inline const kgsim::RepArg kNoRep{};
inline const kgsim::TRef kNoRef{};
}  // namespace kgsim_detail

// ---- the vector APIs as function-pointer template arguments ----------------------------------
// Production kernels pass an API itself as a template argument (`template <..., BinaryOp<T>* op>`
// instantiated with `Div` or `Acos<float, false>`), which takes the overload whose type is exactly
// the documented signature. The overloads above carry a trailing source-location parameter, so
// each documented count (and level-0) form also has an overload of exactly that type. Its count
// type is a constrained template parameter: in a call, the overload with the location is the more
// specialised one and is chosen, so messages still name the caller's line; only the conversion to
// a function pointer reaches these (whose messages name this header).
#define KGSIM_ADDRESSABLE_BINARY(NAME)                                                                             \
    template <class T, bool isSetMask = true, class C>                                                             \
    KGSIM_EXACTLY(C, int32_t)                                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const C& count) { \
        NAME<T, isSetMask>(dst, src0, src1, count, kgsim::Loc::current());                                         \
    }                                                                                                              \
    template <class T, bool isSetMask = true, class R>                                                             \
    KGSIM_EXACTLY(R, uint8_t)                                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,    \
              const R repeatTime, const BinaryRepeatParams& repeatParams) {                                        \
        NAME<T, isSetMask>(dst, src0, src1, mask, int32_t(repeatTime), repeatParams, kgsim::Loc::current());       \
    }
#define KGSIM_ADDRESSABLE_SCALAR(NAME)                                                                             \
    template <class T, bool isSetMask = true, class C>                                                             \
    KGSIM_EXACTLY(C, int32_t)                                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::type_identity_t<T>& scalarValue,    \
              const C& count) {                                                                                    \
        NAME<T, isSetMask>(dst, src, scalarValue, count, kgsim::Loc::current());                                   \
    }
#define KGSIM_ADDRESSABLE_UNARY(NAME)                                                                              \
    template <class T, bool isSetMask = true, class C>                                                             \
    KGSIM_EXACTLY(C, int32_t)                                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const C& count) {                              \
        NAME<T, isSetMask>(dst, src, count, kgsim::Loc::current());                                                \
    }

// ---- binary: dst = op(src0, src1) -----------------------------------------------------------
// the mask forms (a continuous mask or a bit mask, with repeats)
#define KGSIM_BINARY_MASKED(NAME, OPC, ...)                                                                        \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,    \
              const int32_t repeatTime, const BinaryRepeatParams& repeatParams,                                    \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_, kgsim::Scalar{},                   \
                      kgsim_detail::cont_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc); \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                   \
              const uint64_t mask[], const int32_t repeatTime, const BinaryRepeatParams& repeatParams,             \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_, kgsim::Scalar{},                   \
                      kgsim_detail::bit_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);  \
    }                                                                                                              \
    KGSIM_ADDRESSABLE_BINARY(NAME)

#define KGSIM_BINARY(NAME, OPC, ...)                                                                               \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                   \
              const int32_t& count, kgsim::Loc loc = kgsim::Loc::current()) {                                      \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_, kgsim::Scalar{},                   \
                      kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);                                 \
    }                                                                                                              \
    KGSIM_BINARY_MASKED(NAME, OPC, __VA_ARGS__)

KGSIM_BINARY(Add, V_ADD, int16_t, half, int32_t, float)
KGSIM_BINARY(Sub, V_SUB, int16_t, half, int32_t, float)
KGSIM_BINARY(Mul, V_MUL, int16_t, half, int32_t, float)
KGSIM_BINARY(Div, V_DIV, half, float)
KGSIM_BINARY(Max, V_MAX, int16_t, half, int32_t, float)
KGSIM_BINARY(Min, V_MIN, int16_t, half, int32_t, float)
// And / Or: the mask forms take int16_t / uint16_t (a static_assert in asc-devkit); the count form
// takes any T and, as asc-devkit does for compatibility with older versions, runs on the bytes as
// `count` int16_t elements (a uint8_t tensor's count then covers 2 x count bytes; for 32-bit types
// asc-devkit warns that half the elements are covered) with only a debug-build type check.
#define KGSIM_BITWISE(NAME, OPC)                                                                                   \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                   \
              const int32_t& count, kgsim::Loc loc = kgsim::Loc::current()) {                                      \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<int16_t>::v, dst.r_, src0.r_, src1.r_, kgsim::Scalar{},             \
                      kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);                                 \
    }                                                                                                              \
    KGSIM_BINARY_MASKED(NAME, OPC, int16_t, uint16_t)

KGSIM_BITWISE(And, V_AND)
KGSIM_BITWISE(Or, V_OR)

// ---- tensor-scalar: dst = op(src, scalar) ---------------------------------------------------
// The scalar converts implicitly to T here (CANN wants it to be of type T already).
#define KGSIM_SCALAR(NAME, OPC, ...)                                                                               \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::type_identity_t<T>& scalarValue,    \
              const int32_t& count, kgsim::Loc loc = kgsim::Loc::current()) {                                      \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,                        \
                      kgsim::scalar_of<T>(scalarValue), kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc); \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::type_identity_t<T>& scalarValue,    \
              uint64_t mask, const int32_t repeatTime, const UnaryRepeatParams& repeatParams,                      \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,                        \
                      kgsim::scalar_of<T>(scalarValue), kgsim_detail::cont_mask(isSetMask, mask),                  \
                      kgsim_detail::rep(repeatTime, repeatParams), loc);                                           \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::type_identity_t<T>& scalarValue,    \
              const uint64_t mask[], const int32_t repeatTime, const UnaryRepeatParams& repeatParams,              \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,                        \
                      kgsim::scalar_of<T>(scalarValue), kgsim_detail::bit_mask(isSetMask, mask),                   \
                      kgsim_detail::rep(repeatTime, repeatParams), loc);                                           \
    }                                                                                                              \
    KGSIM_ADDRESSABLE_SCALAR(NAME)

KGSIM_SCALAR(Adds, V_ADDS, int16_t, half, int32_t, float)
KGSIM_SCALAR(Muls, V_MULS, int16_t, half, int32_t, float)
KGSIM_SCALAR(Maxs, V_MAXS, int16_t, half, int32_t, float)
KGSIM_SCALAR(Mins, V_MINS, int16_t, half, int32_t, float)
KGSIM_SCALAR(LeakyRelu, V_LEAKYRELU, half, float)
KGSIM_SCALAR(ShiftLeft, V_SHL, int16_t, uint16_t, int32_t, uint32_t)
KGSIM_SCALAR(ShiftRight, V_SHR, int16_t, uint16_t, int32_t, uint32_t)

// ---- unary: dst = op(src) -------------------------------------------------------------------
#define KGSIM_UNARY(NAME, OPC, ...)                                                                                \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count,                          \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef, kgsim::Scalar{},       \
                      kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);                                 \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, const int32_t repeatTime,       \
              const UnaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {                     \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef, kgsim::Scalar{},       \
                      kgsim_detail::cont_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc); \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                         \
              const int32_t repeatTime, const UnaryRepeatParams& repeatParams,                                     \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_op(kgsim::OPC, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef, kgsim::Scalar{},       \
                      kgsim_detail::bit_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);  \
    }                                                                                                              \
    KGSIM_ADDRESSABLE_UNARY(NAME)

KGSIM_UNARY(Exp, V_EXP, half, float)
KGSIM_UNARY(Ln, V_LN, half, float)
KGSIM_UNARY(Abs, V_ABS, half, float)
KGSIM_UNARY(Sqrt, V_SQRT, half, float)
KGSIM_UNARY(Rsqrt, V_RSQRT, half, float)
KGSIM_UNARY(Reciprocal, V_RECIP, half, float)
KGSIM_UNARY(Relu, V_RELU, half, int32_t, float)
KGSIM_UNARY(Not, V_NOT, int16_t, uint16_t)

// ---- Duplicate ----------------------------------------------------------------------------
#define KGSIM_DUP_TYPES int16_t, uint16_t, half, bfloat16_t, int32_t, uint32_t, float
template <class T>
void Duplicate(const LocalTensor<T>& dst, const std::type_identity_t<T>& scalarValue, const int32_t& count,
               kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Duplicate", T, KGSIM_DUP_TYPES);
    kgsim::vec_op(kgsim::V_DUP, kgsim::dt_of<T>::v, dst.r_, kgsim_detail::kNoRef, kgsim_detail::kNoRef,
                  kgsim::scalar_of<T>(scalarValue), kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);
}
template <class T, bool isSetMask = true>
void Duplicate(const LocalTensor<T>& dst, const std::type_identity_t<T>& scalarValue, uint64_t mask,
               const int32_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride,
               kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Duplicate", T, KGSIM_DUP_TYPES);
    kgsim::vec_op(kgsim::V_DUP, kgsim::dt_of<T>::v, dst.r_, kgsim_detail::kNoRef, kgsim_detail::kNoRef,
                  kgsim::scalar_of<T>(scalarValue), kgsim_detail::cont_mask(isSetMask, mask),
                  kgsim::RepArg{repeatTime, dstBlockStride, 0, 0, dstRepeatStride, 0, 0}, loc);
}
template <class T, bool isSetMask = true>
void Duplicate(const LocalTensor<T>& dst, const std::type_identity_t<T>& scalarValue, const uint64_t mask[],
               const int32_t repeatTime, const uint16_t dstBlockStride, const uint8_t dstRepeatStride,
               kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Duplicate", T, KGSIM_DUP_TYPES);
    kgsim::vec_op(kgsim::V_DUP, kgsim::dt_of<T>::v, dst.r_, kgsim_detail::kNoRef, kgsim_detail::kNoRef,
                  kgsim::scalar_of<T>(scalarValue), kgsim_detail::bit_mask(isSetMask, mask),
                  kgsim::RepArg{repeatTime, dstBlockStride, 0, 0, dstRepeatStride, 0, 0}, loc);
}

// ---- CreateVecIndex -----------------------------------------------------------------------
// dst[i] = firstValue + i for the first `count` elements. Checks, pipe and cost are those of a
// Duplicate over the same elements (one vector instruction writing dst); the values are then
// the index sequence.
// kgsim:partial CreateVecIndex: the count form only (not the mask/repeat forms)
template <class T>
KGSIM_UNINSTRUMENTED void CreateVecIndex(LocalTensor<T> dst, const T& firstValue, uint32_t count,
                                         kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("CreateVecIndex", T, int16_t, half, int32_t, float);
    Duplicate(dst, firstValue, int32_t(count), loc);
    T* out = reinterpret_cast<T*>(dst.GetPhyAddr());
    for (uint32_t i = 0; i < count; ++i) out[i] = static_cast<T>(static_cast<double>(firstValue) + double(i));
}

// ---- Cast ---------------------------------------------------------------------------------
template <class T, class U>
inline constexpr bool kgsim_cast_ok =
    (std::is_same_v<U, ::int4b_t> && std::is_same_v<T, half>) || (std::is_same_v<U, half> && std::is_same_v<T, ::int4b_t>) ||
    (std::is_same_v<U, int8_t> && std::is_same_v<T, half>) || (std::is_same_v<U, uint8_t> && std::is_same_v<T, half>) ||
    (std::is_same_v<U, int16_t> && kgsim::one_of_v<T, half, float>) ||
    (std::is_same_v<U, half> && kgsim::one_of_v<T, int8_t, uint8_t, int16_t, int32_t, float>) ||
    (std::is_same_v<U, bfloat16_t> && kgsim::one_of_v<T, int32_t, float>) ||
    (std::is_same_v<U, int32_t> && kgsim::one_of_v<T, int16_t, half, float, int64_t>) ||
    (std::is_same_v<U, float> && kgsim::one_of_v<T, int16_t, half, bfloat16_t, int32_t, float, int64_t>) ||
    (std::is_same_v<U, int64_t> && kgsim::one_of_v<T, int32_t, float>);
// An unsupported (src, dst) pair is a fault when the Cast runs, not a compile error: asc-devkit checks the pair
// with a debug assert only, so the NPU builds a kernel whose per-dtype branch holds a Cast that its dtype
// never takes (`if (dtype == int8) Cast(halfBuf, x, ...)` compiled for DTYPE_X = half).
#define KGSIM_CAST_ASSERT                                                                                           \
    if constexpr (!kgsim_cast_ok<T, U>) {                                                                           \
        kgsim::fault("unsupported_dtype", loc, "Cast: this (src, dst) data type pair is not supported on Atlas A2 " \
                     "(Ascend910B); see the Cast data type table");                                                  \
    }
template <class T, class U>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint32_t count,
          kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_CAST_ASSERT;
    kgsim::vec_cast(kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, dst.r_, src.r_, int(roundMode),
                    kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);
}
template <class T, class U, bool isSetMask = true>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask,
          const int32_t repeatTime, const UnaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_CAST_ASSERT;
    kgsim::vec_cast(kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, dst.r_, src.r_, int(roundMode),
                    kgsim_detail::cont_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);
}
template <class T, class U, bool isSetMask = true>
void Cast(const LocalTensor<T>& dst, const LocalTensor<U>& src, const RoundMode& roundMode, const uint64_t mask[],
          const int32_t repeatTime, const UnaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_CAST_ASSERT;
    kgsim::vec_cast(kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, dst.r_, src.r_, int(roundMode),
                    kgsim_detail::bit_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);
}
inline void SetDeqScale(half scale, kgsim::Loc loc = kgsim::Loc::current()) { kgsim::set_deq_scale(float(scale), loc); }

// ---- Compare / Compares / Select ----------------------------------------------------------------
template <class T, class U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             uint32_t count, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Compare", T, half, float, int32_t);
    kgsim::vec_cmp(kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_, 0, kgsim::Scalar{}, int(cmpMode),
                   kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);
}
template <class T, class U, bool isSetMask = true>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             const uint64_t mask, int32_t repeatTime, const BinaryRepeatParams& repeatParams,
             kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Compare", T, half, float, int32_t);
    kgsim::vec_cmp(kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_, 0, kgsim::Scalar{}, int(cmpMode),
                   kgsim_detail::cont_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);
}
template <class T, class U, bool isSetMask = true>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             const uint64_t mask[], int32_t repeatTime, const BinaryRepeatParams& repeatParams,
             kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Compare", T, half, float, int32_t);
    kgsim::vec_cmp(kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_, 0, kgsim::Scalar{}, int(cmpMode),
                   kgsim_detail::bit_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);
}
template <class T, class U>
void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T> src1Scalar,
              CMPMODE cmpMode, uint32_t count, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Compares", T, half, float, int32_t);
    kgsim::vec_cmp(kgsim::dt_of<T>::v, dst.r_, src0.r_, kgsim_detail::kNoRef, 1, kgsim::scalar_of<T>(src1Scalar),
                   int(cmpMode), kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);
}
template <class T, class U, bool isSetMask = true>
void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T> src1Scalar,
              CMPMODE cmpMode, const uint64_t mask, int32_t repeatTime, const UnaryRepeatParams& repeatParams,
              kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Compares", T, half, float, int32_t);
    kgsim::vec_cmp(kgsim::dt_of<T>::v, dst.r_, src0.r_, kgsim_detail::kNoRef, 1, kgsim::scalar_of<T>(src1Scalar),
                   int(cmpMode), kgsim_detail::cont_mask(isSetMask, mask),
                   kgsim_detail::rep(repeatTime, repeatParams), loc);
}
template <class T, class U, bool isSetMask = true>
void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T> src1Scalar,
              CMPMODE cmpMode, const uint64_t mask[], int32_t repeatTime, const UnaryRepeatParams& repeatParams,
              kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Compares", T, half, float, int32_t);
    kgsim::vec_cmp(kgsim::dt_of<T>::v, dst.r_, src0.r_, kgsim_detail::kNoRef, 1, kgsim::scalar_of<T>(src1Scalar),
                   int(cmpMode), kgsim_detail::bit_mask(isSetMask, mask),
                   kgsim_detail::rep(repeatTime, repeatParams), loc);
}
// CompareScalar: the earlier name of Compares (tensor against a scalar, a bit per element), same forms.
template <class T, class U>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T> src1Scalar,
                   CMPMODE cmpMode, uint32_t count, kgsim::Loc loc = kgsim::Loc::current()) {
    Compares(dst, src0, src1Scalar, cmpMode, count, loc);
}
template <class T, class U, bool isSetMask = true>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T> src1Scalar,
                   CMPMODE cmpMode, const uint64_t mask, int32_t repeatTime, const UnaryRepeatParams& repeatParams,
                   kgsim::Loc loc = kgsim::Loc::current()) {
    Compares<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, mask, repeatTime, repeatParams, loc);
}
template <class T, class U, bool isSetMask = true>
void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T> src1Scalar,
                   CMPMODE cmpMode, const uint64_t mask[], int32_t repeatTime, const UnaryRepeatParams& repeatParams,
                   kgsim::Loc loc = kgsim::Loc::current()) {
    Compares<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, mask, repeatTime, repeatParams, loc);
}
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint32_t count, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Select", T, half, float);
    kgsim::vec_select(kgsim::dt_of<T>::v, dst.r_, selMask.r_, src0.r_, src1.r_, 0, kgsim::Scalar{}, int(selMode),
                      kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);
}
template <class T, class U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            std::type_identity_t<T> src1, SELMODE selMode, uint32_t count, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Select", T, half, float);
    kgsim::vec_select(kgsim::dt_of<T>::v, dst.r_, selMask.r_, src0.r_, kgsim_detail::kNoRef, 1,
                      kgsim::scalar_of<T>(src1), int(selMode), kgsim_detail::count_mask(count), kgsim_detail::kNoRep,
                      loc);
}
template <class T, class U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, uint64_t mask, int32_t repeatTime,
            const BinaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Select", T, half, float);
    kgsim::vec_select(kgsim::dt_of<T>::v, dst.r_, selMask.r_, src0.r_, src1.r_, 0, kgsim::Scalar{}, int(selMode),
                      kgsim_detail::cont_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);
}
template <class T, class U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, const uint64_t mask[], int32_t repeatTime,
            const BinaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Select", T, half, float);
    kgsim::vec_select(kgsim::dt_of<T>::v, dst.r_, selMask.r_, src0.r_, src1.r_, 0, kgsim::Scalar{}, int(selMode),
                      kgsim_detail::bit_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);
}
template <class T, class U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            std::type_identity_t<T> src1, SELMODE selMode, uint64_t mask, int32_t repeatTime,
            const BinaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Select", T, half, float);
    kgsim::vec_select(kgsim::dt_of<T>::v, dst.r_, selMask.r_, src0.r_, kgsim_detail::kNoRef, 1,
                      kgsim::scalar_of<T>(src1), int(selMode), kgsim_detail::cont_mask(isSetMask, mask),
                      kgsim_detail::rep(repeatTime, repeatParams), loc);
}

// ---- reductions ---------------------------------------------------------------------------
template <class T, bool isSetMask = true>
void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
               const int32_t count, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("ReduceSum", T, half, float);
    // isSetMask = false (Atlas A2/A3, ReduceSum docs): the API leaves the mask alone and the caller's
    // SetVectorMask decides what is summed (an element count in counter mode, the bits of one repeat
    // in normal mode); count then only has to be nonzero (0 is still a NOP), its value is not used.
    if constexpr (!isSetMask) {
        if (count == 0) return;
        kgsim::vec_reduce(0, 0, kgsim::dt_of<T>::v, dst.r_, src.r_, sharedTmpBuffer.r_,
                          kgsim::MaskArg{3, 0, 0, 0}, 1, 0, 1, 8, 0, 0, loc);
        return;
    }
    kgsim::vec_reduce(0, 0, kgsim::dt_of<T>::v, dst.r_, src.r_, sharedTmpBuffer.r_, kgsim_detail::count_mask(count),
                      0, 0, 0, 0, 0, 0, loc);
}
template <class T>
void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
               const int32_t count, bool calIndex = 0, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("ReduceMax", T, half, float);
    kgsim::vec_reduce(1, 0, kgsim::dt_of<T>::v, dst.r_, src.r_, sharedTmpBuffer.r_, kgsim_detail::count_mask(count),
                      0, 0, 0, 0, 0, calIndex, loc);
}
template <class T>
void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,
               const int32_t count, bool calIndex = 0, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("ReduceMin", T, half, float);
    kgsim::vec_reduce(2, 0, kgsim::dt_of<T>::v, dst.r_, src.r_, sharedTmpBuffer.r_, kgsim_detail::count_mask(count),
                      0, 0, 0, 0, 0, calIndex, loc);
}
// mask/repeat forms of ReduceSum/Max/Min (reduce everything selected to dst[0])
#define KGSIM_REDUCE_MASKED(NAME, KIND, EXTRA_PARAM, EXTRA_ARG)                                                    \
    template <class T>                                                                                             \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,         \
              const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride EXTRA_PARAM,                \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                       \
        kgsim::vec_reduce(KIND, 1, kgsim::dt_of<T>::v, dst.r_, src.r_, sharedTmpBuffer.r_,                         \
                          kgsim_detail::cont_mask(true, uint64_t(mask)), repeatTime, 0, 1, srcRepStride, 0,         \
                          EXTRA_ARG, loc);                                                                         \
    }                                                                                                              \
    template <class T>                                                                                             \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& sharedTmpBuffer,         \
              const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride EXTRA_PARAM,             \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                       \
        kgsim::vec_reduce(KIND, 1, kgsim::dt_of<T>::v, dst.r_, src.r_, sharedTmpBuffer.r_,                         \
                          kgsim_detail::bit_mask(true, mask), repeatTime, 0, 1, srcRepStride, 0, EXTRA_ARG, loc);  \
    }
#define KGSIM_COMMA ,
KGSIM_REDUCE_MASKED(ReduceSum, 0, , 0)
KGSIM_REDUCE_MASKED(ReduceMax, 1, KGSIM_COMMA bool calIndex = 0, calIndex)
KGSIM_REDUCE_MASKED(ReduceMin, 2, KGSIM_COMMA bool calIndex = 0, calIndex)

// repeat-wise reductions: one result per repeat (Whole*), per 32-byte block (Block*), per pair (Pair*)
#define KGSIM_REDUCE_REPEAT(NAME, KIND, SHAPE, ORDER_PARAM, ORDER_ARG)                                             \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTime,  \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride ORDER_PARAM,       \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                       \
        kgsim::vec_reduce(KIND, SHAPE, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,                   \
                          kgsim_detail::cont_mask(isSetMask, uint64_t(mask)), repeatTime, dstRepStride,            \
                          srcBlkStride, srcRepStride, ORDER_ARG, 0, loc);                                          \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                         \
              const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,                    \
              const int32_t srcRepStride ORDER_PARAM, kgsim::Loc loc = kgsim::Loc::current()) {                    \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                       \
        kgsim::vec_reduce(KIND, SHAPE, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,                   \
                          kgsim_detail::bit_mask(isSetMask, mask), repeatTime, dstRepStride, srcBlkStride,         \
                          srcRepStride, ORDER_ARG, 0, loc);                                                        \
    }
KGSIM_REDUCE_REPEAT(WholeReduceSum, 0, 2, , 0)
KGSIM_REDUCE_REPEAT(WholeReduceMax, 1, 2, KGSIM_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, int(order))
KGSIM_REDUCE_REPEAT(WholeReduceMin, 2, 2, KGSIM_COMMA ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, int(order))


// BlockReduce* and PairReduceSum: note the (repeatTime, mask) argument order of the original API.
#define KGSIM_BLOCK_REDUCE(NAME, KIND, SHAPE)                                                                      \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const int32_t mask,  \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,                  \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                       \
        kgsim::vec_reduce(KIND, SHAPE, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,                   \
                          kgsim_detail::cont_mask(isSetMask, uint64_t(mask)), repeatTime, dstRepStride,            \
                          srcBlkStride, srcRepStride, 0, 0, loc);                                                  \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime,                      \
              const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,                       \
              const int32_t srcRepStride, kgsim::Loc loc = kgsim::Loc::current()) {                                \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                       \
        kgsim::vec_reduce(KIND, SHAPE, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,                   \
                          kgsim_detail::bit_mask(isSetMask, mask), repeatTime, dstRepStride, srcBlkStride,         \
                          srcRepStride, 0, 0, loc);                                                                \
    }
KGSIM_BLOCK_REDUCE(BlockReduceSum, 0, 3)
KGSIM_BLOCK_REDUCE(BlockReduceMax, 1, 3)
KGSIM_BLOCK_REDUCE(BlockReduceMin, 2, 3)
KGSIM_BLOCK_REDUCE(PairReduceSum, 0, 4)

// ReducePairElem<ReduceType::SUM>: the newer name of PairReduceSum, with the mask before the repeat count
// (as ReduceRepeat / ReduceDataBlock take it); SUM is the only pair reduction.
template <ReduceType reduceType, class T, bool isSetMask = true>
void ReducePairElem(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask, const int32_t repeatTime,
                    const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,
                    kgsim::Loc loc = kgsim::Loc::current()) {
    static_assert(reduceType == ReduceType::SUM, "[kgsim:unsupported_dtype] ReducePairElem: only ReduceType::SUM");
    PairReduceSum<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, loc);
}
template <ReduceType reduceType, class T, bool isSetMask = true>
void ReducePairElem(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],
                    const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                    const int32_t srcRepStride, kgsim::Loc loc = kgsim::Loc::current()) {
    static_assert(reduceType == ReduceType::SUM, "[kgsim:unsupported_dtype] ReducePairElem: only ReduceType::SUM");
    PairReduceSum<T, isSetMask>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, loc);
}

// newer names: ReduceRepeat<ReduceType::X> == WholeReduceX, ReduceDataBlock<ReduceType::X> == BlockReduceX
template <ReduceType reduceType, class T, class U = T, bool isSetMask = true>
void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask, const int32_t repeatTime,
                  const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,
                  ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("ReduceRepeat", T, half, float);
    static_assert(std::is_same_v<T, U>, "[kgsim:unsupported_dtype] ReduceRepeat: src and dst types must match on Atlas A2");
    kgsim::vec_reduce(int(reduceType), 2, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,
                      kgsim_detail::cont_mask(isSetMask, uint64_t(mask)), repeatTime, dstRepStride, srcBlkStride,
                      srcRepStride, int(order), 0, loc);
}
template <ReduceType reduceType, class T, class U = T, bool isSetMask = true>
void ReduceRepeat(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[],
                  const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                  const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX,
                  kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("ReduceRepeat", T, half, float);
    static_assert(std::is_same_v<T, U>, "[kgsim:unsupported_dtype] ReduceRepeat: src and dst types must match on Atlas A2");
    kgsim::vec_reduce(int(reduceType), 2, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,
                      kgsim_detail::bit_mask(isSetMask, mask), repeatTime, dstRepStride, srcBlkStride, srcRepStride,
                      int(order), 0, loc);
}
template <ReduceType reduceType, class T, class U = T, bool isSetMask = true>
void ReduceDataBlock(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask,
                     const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                     const int32_t srcRepStride, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("ReduceDataBlock", T, half, float);
    static_assert(std::is_same_v<T, U>, "[kgsim:unsupported_dtype] ReduceDataBlock: src and dst types must match on Atlas A2");
    kgsim::vec_reduce(int(reduceType), 3, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,
                      kgsim_detail::cont_mask(isSetMask, uint64_t(mask)), repeatTime, dstRepStride, srcBlkStride,
                      srcRepStride, 0, 0, loc);
}
template <ReduceType reduceType, class T, class U = T, bool isSetMask = true>
void ReduceDataBlock(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[],
                     const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                     const int32_t srcRepStride, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("ReduceDataBlock", T, half, float);
    static_assert(std::is_same_v<T, U>, "[kgsim:unsupported_dtype] ReduceDataBlock: src and dst types must match on Atlas A2");
    kgsim::vec_reduce(int(reduceType), 3, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,
                      kgsim_detail::bit_mask(isSetMask, mask), repeatTime, dstRepStride, srcBlkStride, srcRepStride,
                      0, 0, loc);
}

// GetReduceRepeatSumSpr / GetReduceRepeatMaxMinSpr: the results of the last count-form ReduceSum, ReduceMax or
// ReduceMin, kept in a special register. asc-devkit reads these registers for any T (an ASCENDC_ASSERT at
// most), so the type is checked when the call runs, as for GetAccVal and GetReduceMaxMinCount.
template <class T>
T GetReduceRepeatSumSpr(kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("GetReduceRepeatSumSpr", T, half, float);
    return T(kgsim::reduce_spr(0, loc));
}
// GetAccVal<T> (ISASI): the result of the last count-form ReduceSum (its first n elements), the
// same register GetReduceRepeatSumSpr reads
template <class T>
T GetAccVal(kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("GetAccVal", T, half, float);
    return T(kgsim::reduce_spr(0, loc));
}
// GetAccVal() without a type (the older CANN form): the raw register, the sum's bit pattern in
// the reduction's own type in its low bits, which callers reinterpret as float or half
inline uint64_t GetAccVal(kgsim::Loc loc = kgsim::Loc::current()) {
    double v = kgsim::reduce_spr(0, loc);
    uint64_t bits = 0;
    if (kgsim::DT(int(kgsim::reduce_spr(3, loc))) == kgsim::DT::F16) {
        half h = half(float(v));
        std::memcpy(&bits, &h, sizeof(h));
    } else {
        float f = float(v);
        std::memcpy(&bits, &f, sizeof(f));
    }
    return bits;
}
template <class T>
void GetReduceRepeatMaxMinSpr(T& maxMinValue, T& maxMinIndex, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("GetReduceRepeatMaxMinSpr", T, half, float);
    maxMinValue = T(kgsim::reduce_spr(1, loc));
    uint32_t idx = uint32_t(kgsim::reduce_spr(2, loc));
    std::memcpy(&maxMinIndex, &idx, sizeof(T));  // the index register holds an integer bit pattern
}
template <class T>
void GetReduceRepeatMaxMinSpr(T& maxMinValue, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("GetReduceRepeatMaxMinSpr", T, half, float);
    maxMinValue = T(kgsim::reduce_spr(1, loc));
}

// GetReduceMaxMinCount (the name of the same registers in the ISASI docs): the extremum and its
// index of the last ReduceMax/ReduceMin or WholeReduceMax/WholeReduceMin ("continuous scenario":
// over every element the instruction selected, the index counted from its first element); the
// index is an integer bit pattern stored in a T, read back with reinterpret_cast as documented.
template <class T>
void GetReduceMaxMinCount(T& maxMinValue, T& maxMinIndex, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("GetReduceMaxMinCount", T, half, float);
    maxMinValue = T(kgsim::reduce_spr(1, loc));
    uint32_t idx = uint32_t(kgsim::reduce_spr(2, loc));
    std::memcpy(&maxMinIndex, &idx, sizeof(T));
}
template <class T>
void GetReduceMaxMinCount(T& maxMinValue, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("GetReduceMaxMinCount", T, half, float);
    maxMinValue = T(kgsim::reduce_spr(1, loc));
}

// ---- operator forms: dst = src0 OP src1 over src0's elements --------------------------------------
// The documented symbol overloads of LocalTensor: + - * / | & run Add/Sub/Mul/Div/Or/And, and
// < > <= >= == != run Compare into a bit mask; each over all of src0's elements.
namespace kgsim_detail {
enum class TensorOp { ADD, SUB, MUL, DIV, OR, AND };
template <class T, TensorOp OP>
struct TensorBinaryExpr {
    using kgsim_tensor_expr = void;
    LocalTensor<T> a, b;
    void assign_to(const LocalTensor<T>& dst) const {
        int32_t n = int32_t(a.GetSize());
        if constexpr (OP == TensorOp::ADD) Add(dst, a, b, n);
        else if constexpr (OP == TensorOp::SUB) Sub(dst, a, b, n);
        else if constexpr (OP == TensorOp::MUL) Mul(dst, a, b, n);
        else if constexpr (OP == TensorOp::DIV) Div(dst, a, b, n);
        else if constexpr (OP == TensorOp::OR) Or(dst, a, b, n);
        else And(dst, a, b, n);
    }
};
template <class T>
struct TensorCompareExpr {
    using kgsim_tensor_expr = void;
    LocalTensor<T> a, b;
    CMPMODE mode;
    template <class U>
    void assign_to(const LocalTensor<U>& dst) const {
        Compare(dst, a, b, mode, a.GetSize());
    }
};
}  // namespace kgsim_detail
#define KGSIM_TENSOR_BINARY_OP(SYM, OPV)                                                                           \
    template <class T>                                                                                             \
    kgsim_detail::TensorBinaryExpr<T, kgsim_detail::TensorOp::OPV> operator SYM(const LocalTensor<T>& a,          \
                                                                               const LocalTensor<T>& b) {         \
        return {a, b};                                                                                             \
    }
KGSIM_TENSOR_BINARY_OP(+, ADD)
KGSIM_TENSOR_BINARY_OP(-, SUB)
KGSIM_TENSOR_BINARY_OP(*, MUL)
KGSIM_TENSOR_BINARY_OP(/, DIV)
KGSIM_TENSOR_BINARY_OP(|, OR)
KGSIM_TENSOR_BINARY_OP(&, AND)
#define KGSIM_TENSOR_COMPARE_OP(SYM, MODE)                                                                         \
    template <class T>                                                                                             \
    kgsim_detail::TensorCompareExpr<T> operator SYM(const LocalTensor<T>& a, const LocalTensor<T>& b) {            \
        return {a, b, CMPMODE::MODE};                                                                              \
    }
KGSIM_TENSOR_COMPARE_OP(<, LT)
KGSIM_TENSOR_COMPARE_OP(>, GT)
KGSIM_TENSOR_COMPARE_OP(<=, LE)
KGSIM_TENSOR_COMPARE_OP(>=, GE)
KGSIM_TENSOR_COMPARE_OP(==, EQ)
KGSIM_TENSOR_COMPARE_OP(!=, NE)

// ---- masks ------------------------------------------------------------------------------------
inline void SetMaskCount(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::set_mask_mode(1, loc); }
inline void SetMaskNorm(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::set_mask_mode(0, loc); }
template <class T, MaskMode mode = MaskMode::NORMAL>
void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::set_vector_mask(maskHigh, maskLow, sizeof(T), 0, 0, loc);
}
// The mode argument is how the value is written, not a mode switch (SetMaskCount does that): COUNTER
// writes len to the mask register as it is (maskLow = len, maskHigh = 0) whatever mode is set, as
// asc-devkit does, so a count above one repeat's elements is no error there.
template <class T, MaskMode mode = MaskMode::NORMAL>
void SetVectorMask(int32_t len, kgsim::Loc loc = kgsim::Loc::current()) {
    if constexpr (mode == MaskMode::COUNTER)
        kgsim::set_vector_mask(0, uint64_t(int64_t(len)), sizeof(T), 0, 0, loc);
    else
        kgsim::set_vector_mask(0, 0, sizeof(T), 1, len, loc);
}
inline void ResetMask(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::reset_mask(loc); }

// AscendCUtils::SetOverflow, which the asc-devkit LayerNorm sample brackets its compute with: the simulator
// does not model the overflow-mode register, so the call only has to compile
struct AscendCUtils {
    static void SetOverflow(uint64_t ctrlValue) { (void)ctrlValue; }
    // GetC0Count(typeSize): how many elements of typeSize bytes one 32-byte data block (C0) holds
    static int64_t GetC0Count(const int32_t dtypeSize) { return dtypeSize > 0 ? 32 / dtypeSize : 0; }
    static constexpr int64_t GetC0Size() { return 32; }
    // The mask setters of this utility class (the library's norm kernels use them): SetMask<T>(len)
    // and SetMask<T>(maskHigh, maskLow) are SetVectorMask<T>'s two forms (len elements in the mode
    // set; the bit masks, normal mode), SetMaskCount<T> / SetMaskNorm<T> switch the mode.
    template <class T>
    static void SetMask(int32_t len, kgsim::Loc loc = kgsim::Loc::current()) {
        SetVectorMask<T>(len, loc);
    }
    template <class T>
    static void SetMask(uint64_t maskHigh, uint64_t maskLow, kgsim::Loc loc = kgsim::Loc::current()) {
        SetVectorMask<T>(maskHigh, maskLow, loc);
    }
    template <class T>
    static void SetMaskCount(kgsim::Loc loc = kgsim::Loc::current()) {
        AscendC::SetMaskCount(loc);
    }
    template <class T>
    static void SetMaskNorm(kgsim::Loc loc = kgsim::Loc::current()) {
        AscendC::SetMaskNorm(loc);
    }
};

// ---- synchronisation ----------------------------------------------------------------------------
namespace kgsim_detail {
constexpr int pipe_of(pipe_t p) {
    switch (p) {
        case PIPE_S: return kgsim::P_S;
        case PIPE_V: return kgsim::P_V;
        case PIPE_M: return kgsim::P_M;
        case PIPE_MTE1: return kgsim::P_MTE1;
        case PIPE_MTE2: return kgsim::P_MTE2;
        case PIPE_MTE3: return kgsim::P_MTE3;
        case PIPE_FIX: return kgsim::P_FIX;
        case PIPE_ALL: return -1;
        default: return -2;
    }
}
struct EvPipes {
    int src, dst;
};
constexpr EvPipes event_pipes(HardEvent e) {
    using kgsim::P_S, kgsim::P_V, kgsim::P_M, kgsim::P_MTE1, kgsim::P_MTE2, kgsim::P_MTE3, kgsim::P_FIX;
    switch (e) {
        case HardEvent::MTE2_MTE1: return {P_MTE2, P_MTE1};
        case HardEvent::MTE1_MTE2: return {P_MTE1, P_MTE2};
        case HardEvent::MTE1_M: return {P_MTE1, P_M};
        case HardEvent::M_MTE1: return {P_M, P_MTE1};
        case HardEvent::MTE2_V: return {P_MTE2, P_V};
        case HardEvent::V_MTE2: return {P_V, P_MTE2};
        case HardEvent::MTE3_V: return {P_MTE3, P_V};
        case HardEvent::V_MTE3: return {P_V, P_MTE3};
        case HardEvent::M_V: return {P_M, P_V};
        case HardEvent::V_M: return {P_V, P_M};
        case HardEvent::V_V: return {P_V, P_V};
        case HardEvent::MTE3_MTE1: return {P_MTE3, P_MTE1};
        case HardEvent::MTE1_MTE3: return {P_MTE1, P_MTE3};
        case HardEvent::MTE1_V: return {P_MTE1, P_V};
        case HardEvent::MTE2_M: return {P_MTE2, P_M};
        case HardEvent::M_MTE2: return {P_M, P_MTE2};
        case HardEvent::V_MTE1: return {P_V, P_MTE1};
        case HardEvent::M_FIX: return {P_M, P_FIX};
        case HardEvent::FIX_M: return {P_FIX, P_M};
        case HardEvent::MTE3_MTE2: return {P_MTE3, P_MTE2};
        case HardEvent::MTE2_MTE3: return {P_MTE2, P_MTE3};
        case HardEvent::S_V: return {P_S, P_V};
        case HardEvent::V_S: return {P_V, P_S};
        case HardEvent::S_MTE2: return {P_S, P_MTE2};
        case HardEvent::MTE2_S: return {P_MTE2, P_S};
        case HardEvent::S_MTE3: return {P_S, P_MTE3};
        case HardEvent::MTE3_S: return {P_MTE3, P_S};
        case HardEvent::MTE2_FIX: return {P_MTE2, P_FIX};
        case HardEvent::FIX_MTE2: return {P_FIX, P_MTE2};
        case HardEvent::FIX_S: return {P_FIX, P_S};
        case HardEvent::M_S: return {P_M, P_S};
        case HardEvent::FIX_MTE3: return {P_FIX, P_MTE3};
        case HardEvent::MTE1_FIX: return {P_MTE1, P_FIX};
        case HardEvent::FIX_MTE1: return {P_FIX, P_MTE1};
        case HardEvent::FIX_FIX: return {P_FIX, P_FIX};
        default: return {-1, -1};
    }
}
}  // namespace kgsim_detail

template <pipe_t pipe>
void PipeBarrier(kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::pipe_barrier(kgsim_detail::pipe_of(pipe), loc);
}
template <HardEvent event>
void SetFlag(int32_t eventID, kgsim::Loc loc = kgsim::Loc::current()) {
    constexpr kgsim_detail::EvPipes p = kgsim_detail::event_pipes(event);
    static_assert(p.src >= 0, "SetFlag: unknown HardEvent");
    kgsim::set_flag(p.src, p.dst, int(event), eventID, loc);
}
template <HardEvent event>
void WaitFlag(int32_t eventID, kgsim::Loc loc = kgsim::Loc::current()) {
    constexpr kgsim_detail::EvPipes p = kgsim_detail::event_pipes(event);
    static_assert(p.src >= 0, "WaitFlag: unknown HardEvent");
    kgsim::wait_flag(p.src, p.dst, int(event), eventID, loc);
}
template <pipe_t src, pipe_t dst>
class TQueSync {
public:
    void SetFlag(TEventID id, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::set_flag(kgsim_detail::pipe_of(src), kgsim_detail::pipe_of(dst), 64 + src * 16 + dst, id, loc);
    }
    void WaitFlag(TEventID id, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::wait_flag(kgsim_detail::pipe_of(src), kgsim_detail::pipe_of(dst), 64 + src * 16 + dst, id, loc);
    }
};
// SyncAll: a barrier across every AIV block of the launch, or with isAIVOnly=false every AIC and
// AIV block (all blocks must be resident: at most one per core). The workspace forms behave
// alike; their buffers are not needed here.
inline void SyncAll(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::sync_all(loc, true); }
template <bool isAIVOnly = true>
void SyncAll(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::sync_all(loc, isAIVOnly); }
template <bool isAIVOnly = true>
void SyncAll(const GlobalTensor<int32_t>& /*gmWorkspace*/, const LocalTensor<int32_t>& /*ubWorkspace*/,
             const int32_t /*usedCores*/ = 0, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::sync_all(loc, isAIVOnly);
}

// ---- atomics, caches ----------------------------------------------------------------------------
// The atomic types Atlas A2 supports. asc-devkit checks them with a run-time assert (ASCENDC_ASSERT,
// not a static_assert), so an unsupported type compiles, as a TILING_KEY branch written for another
// dtype needs (cann-ops scatter_add_with_sorted's uint8_t branch); calling it is an unsupported_dtype
// fault.
#define KGSIM_ATOMIC_T half, float, int16_t, int32_t, int8_t, bfloat16_t
template <class T>
void SetAtomicAdd(kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("SetAtomicAdd", T, KGSIM_ATOMIC_T);
    kgsim::set_atomic(1, kgsim::dt_of<T>::v, loc);
}
template <class T>
void SetAtomicMax(kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("SetAtomicMax", T, KGSIM_ATOMIC_T);
    kgsim::set_atomic(2, kgsim::dt_of<T>::v, loc);
}
template <class T>
void SetAtomicMin(kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES_RUNTIME("SetAtomicMin", T, KGSIM_ATOMIC_T);
    kgsim::set_atomic(3, kgsim::dt_of<T>::v, loc);
}
template <class T>
void SetAtomicType(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::set_atomic(-1, kgsim::dt_of<T>::v, loc); }
inline void SetAtomicNone(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::set_atomic(0, kgsim::DT::F32, loc); }
template <class T, CacheLine entire = CacheLine::SINGLE_CACHE_LINE, DcciDst dst = DcciDst::CACHELINE_OUT>
void DataCacheCleanAndInvalid(const GlobalTensor<T>&) {}
template <class T, CacheLine entire = CacheLine::SINGLE_CACHE_LINE, DcciDst dst = DcciDst::CACHELINE_OUT>
void DataCacheCleanAndInvalid(const LocalTensor<T>&) {}

// Scalar GM access around the data cache (the simulator has none) and the scalar memory barrier:
// a GM read/write through a raw pointer (bounds-checked and timed like one; as the documented way for
// cores to hand flags to each other, not recorded by the race detector), a no-op barrier.
template <class T>
KGSIM_UNINSTRUMENTED T ReadGmByPassDCache(__gm__ T* addr, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::gm_scalar(kgsim::gm_lookup(addr), reinterpret_cast<uint8_t*>(addr), sizeof(T), 3, loc);
    T v;
    std::memcpy(&v, addr, sizeof(T));
    return v;
}
template <class T>
KGSIM_UNINSTRUMENTED void WriteGmByPassDCache(__gm__ T* addr, T value, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::gm_scalar(kgsim::gm_lookup(addr), reinterpret_cast<uint8_t*>(addr), sizeof(T), 4, loc);
    std::memcpy(addr, &value, sizeof(T));
}
enum class MemDsbT : uint8_t { ALL = 0, DDR, UB, SEQ };
template <MemDsbT arg0>
inline void DataSyncBarrier() {}

// ---- debugging helpers ----------------------------------------------------------------------------
template <class... Args>
void printf(const char* fmt, Args... args) { kgsim::kernel_printf(fmt, args...); }
template <class... Args>
void PRINTF(const char* fmt, Args... args) { kgsim::kernel_printf(fmt, args...); }
template <class T>
void DumpTensor(const LocalTensor<T>&, uint32_t, uint32_t) {}
template <class T>
void DumpTensor(const GlobalTensor<T>&, uint32_t, uint32_t) {}
template <class T>
void DumpTensor(const LocalTensor<T>&, uint32_t, uint32_t, const ShapeInfo&) {}
// DumpAccChkPoint(tensor, index, countOff, dumpSize): a debug dump from an element offset
template <class T>
void DumpAccChkPoint(const LocalTensor<T>&, uint32_t, uint32_t, uint32_t) {}
template <class T>
void DumpAccChkPoint(const GlobalTensor<T>&, uint32_t, uint32_t, uint32_t) {}
template <class T>
void DumpTensor(const GlobalTensor<T>&, uint32_t, uint32_t, const ShapeInfo&) {}

}  // namespace AscendC

// ---- fused element-wise ops, RepeatReduceSum, CastDeq, Ands/Ors (simF1) ------------------------
namespace kgsim {
// op: 0 AddRelu relu(a+b), 1 SubRelu relu(a-b), 2 FusedMulAdd dst = a*dst + b, 3 MulAddDst dst = a*b + dst.
// dt: dst type, st: source type (differs only for MulAddDst half -> float).
void vec_fused(int op, DT dt, DT st, const TRef& dst, const TRef& src0, const TRef& src1, const MaskArg& m,
               const RepArg& r, const Loc& loc);
void vec_cast_deq(DT dt, DT st, const TRef& dst, const TRef& src, const MaskArg& m, const RepArg& r, const Loc& loc);
}  // namespace kgsim

namespace AscendC {
#define KGSIM_FUSED(NAME, OPN, ...)                                                                                \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                   \
              const int32_t& count, kgsim::Loc loc = kgsim::Loc::current()) {                                      \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_fused(OPN, kgsim::dt_of<T>::v, kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_,                    \
                         kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);                              \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint64_t mask,    \
              const int32_t repeatTime, const BinaryRepeatParams& repeatParams,                                    \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_fused(OPN, kgsim::dt_of<T>::v, kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_,                    \
                         kgsim_detail::cont_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc); \
    }                                                                                                              \
    template <class T, bool isSetMask = true>                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                   \
              const uint64_t mask[], const int32_t repeatTime, const BinaryRepeatParams& repeatParams,             \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                       \
        kgsim::vec_fused(OPN, kgsim::dt_of<T>::v, kgsim::dt_of<T>::v, dst.r_, src0.r_, src1.r_,                    \
                         kgsim_detail::bit_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc); \
    }
KGSIM_FUSED(AddRelu, 0, int16_t, half, float)
KGSIM_FUSED(SubRelu, 1, int16_t, half, float)
KGSIM_FUSED(FusedMulAdd, 2, half, float)

// MulAddDst: dst = src0 * src1 + dst; (dst, src) in {(half, half), (float, float), (float, half)} on Atlas A2.
template <class T, class U>
inline constexpr bool kgsim_muladddst_ok = (std::is_same_v<T, U> && kgsim::one_of_v<T, half, float>) ||
                                           (std::is_same_v<T, float> && std::is_same_v<U, half>);
#define KGSIM_MULADDDST_ASSERT                                                                                     \
    static_assert(kgsim_muladddst_ok<T, U>, "[kgsim:unsupported_dtype] MulAddDst: supported (dst, src) types on "  \
                                            "Atlas A2: (half, half), (float, float), (float, half)")
template <class T, class U, bool isSetMask = true>
void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1, const int32_t& count,
               kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_MULADDDST_ASSERT;
    kgsim::vec_fused(3, kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, dst.r_, src0.r_, src1.r_,
                     kgsim_detail::count_mask(count), kgsim_detail::kNoRep, loc);
}
template <class T, class U, bool isSetMask = true>
void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1, uint64_t mask,
               const int32_t repeatTime, const BinaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_MULADDDST_ASSERT;
    kgsim::vec_fused(3, kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, dst.r_, src0.r_, src1.r_,
                     kgsim_detail::cont_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);
}
template <class T, class U, bool isSetMask = true>
void MulAddDst(const LocalTensor<T>& dst, const LocalTensor<U>& src0, const LocalTensor<U>& src1, const uint64_t mask[],
               const int32_t repeatTime, const BinaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_MULADDDST_ASSERT;
    kgsim::vec_fused(3, kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, dst.r_, src0.r_, src1.r_,
                     kgsim_detail::bit_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams), loc);
}

// RepeatReduceSum: WholeReduceSum with a continuous mask; dstBlkStride has no effect (CANN docs),
// dstRepStride counts reduced elements.
template <class T, bool isSetMask = true>
void RepeatReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTime, const int32_t mask,
                     const int32_t dstBlkStride, const int32_t srcBlkStride, const int32_t dstRepStride,
                     const int32_t srcRepStride, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("RepeatReduceSum", T, half, float);
    (void)dstBlkStride;
    kgsim::vec_reduce(0, 2, kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim_detail::kNoRef,
                      kgsim_detail::cont_mask(isSetMask, uint64_t(mask)), repeatTime, dstRepStride, srcBlkStride,
                      srcRepStride, 0, 0, loc);
}

// CastDeq / CastDequant: on Atlas A2 only int32_t -> half, dst = half(src * scale) with the scale of
// SetDeqScale (CANN CastDequant docs: the int16_t -> int8_t/uint8_t forms are not on A2).
#define KGSIM_CASTDEQ_ASSERT(NAME)                                                                                 \
    static_assert(std::is_same_v<T, half> && std::is_same_v<U, int32_t>, "[kgsim:unsupported_dtype] " NAME         \
                  ": Atlas A2 supports only int32_t -> half (int16_t -> int8_t/uint8_t is not available on A2)")
#define KGSIM_CASTDEQ(NAME)                                                                                        \
    template <class T, class U, bool isSetMask = true, bool isVecDeq = true, bool halfBlock = true>                \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint32_t count,                          \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                            \
        KGSIM_CASTDEQ_ASSERT(#NAME);                                                                               \
        kgsim::vec_cast_deq(kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, dst.r_, src.r_, kgsim_detail::count_mask(count), \
                            kgsim_detail::kNoRep, loc);                                                            \
    }                                                                                                              \
    template <class T, class U, bool isSetMask = true, bool isVecDeq = true, bool halfBlock = true>                \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src, const int32_t mask, uint8_t repeatTime,        \
              const UnaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {                     \
        KGSIM_CASTDEQ_ASSERT(#NAME);                                                                               \
        kgsim::vec_cast_deq(kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, dst.r_, src.r_,                                \
                            kgsim_detail::cont_mask(isSetMask, uint64_t(mask)),                                    \
                            kgsim_detail::rep(repeatTime, repeatParams), loc);                                     \
    }                                                                                                              \
    template <class T, class U, bool isSetMask = true, bool isVecDeq = true, bool halfBlock = true>                \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<U>& src, const uint64_t mask[], uint8_t repeatTime,     \
              const UnaryRepeatParams& repeatParams, kgsim::Loc loc = kgsim::Loc::current()) {                     \
        KGSIM_CASTDEQ_ASSERT(#NAME);                                                                               \
        kgsim::vec_cast_deq(kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, dst.r_, src.r_,                                \
                            kgsim_detail::bit_mask(isSetMask, mask), kgsim_detail::rep(repeatTime, repeatParams),  \
                            loc);                                                                                  \
    }
KGSIM_CASTDEQ(CastDeq)
KGSIM_CASTDEQ(CastDequant)

// Ands / Ors exist only on Ascend 950 / Atlas 350 (CANN Ands/Ors docs: "Atlas A2: not supported"; the
// A2 build of CANN has no implementation), so on the A2 profiles every call is a compile error.
// kgsim:partial Ands: Atlas 350 only; on the simulated Atlas A2 SoCs a call is a compile error, as with CANN
// kgsim:partial Ors: Atlas 350 only; on the simulated Atlas A2 SoCs a call is a compile error, as with CANN
struct BinaryDefaultType {};
struct BinaryConfig {
    int8_t scalarTensorIndex = 1;
};
constexpr BinaryConfig DEFAULT_BINARY_CONFIG = {1};
template <class U> inline constexpr bool kgsim_not_on_a2 = false;
#define KGSIM_NOT_ON_A2(NAME)                                                                                      \
    template <class T = BinaryDefaultType, bool isSetMask = true, const BinaryConfig& config = DEFAULT_BINARY_CONFIG, \
              class U, class S, class V>                                                                           \
    void NAME(const U&, const S&, const V&, const int32_t&) {                                                      \
        static_assert(kgsim_not_on_a2<U>, "[kgsim:unsupported_dtype] " #NAME ": not available on Atlas A2 "        \
                      "(Ascend910B): the CANN docs list it for Atlas 350 / Ascend 950 only; use Duplicate + "      \
                      "And/Or on int16_t/uint16_t");                                                               \
    }                                                                                                              \
    template <class T = BinaryDefaultType, bool isSetMask = true, const BinaryConfig& config = DEFAULT_BINARY_CONFIG, \
              class U, class S, class V, class M>                                                                  \
    void NAME(const U&, const S&, const V&, M, const uint8_t, const UnaryRepeatParams&) {                          \
        static_assert(kgsim_not_on_a2<U>, "[kgsim:unsupported_dtype] " #NAME ": not available on Atlas A2 "        \
                      "(Ascend910B): the CANN docs list it for Atlas 350 / Ascend 950 only; use Duplicate + "      \
                      "And/Or on int16_t/uint16_t");                                                               \
    }
KGSIM_NOT_ON_A2(Ands)
KGSIM_NOT_ON_A2(Ors)
}  // namespace AscendC


// legacy C-style intrinsics used by older samples
inline void pipe_barrier(pipe_t pipe, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::pipe_barrier(AscendC::kgsim_detail::pipe_of(pipe), loc);
}
inline void set_flag(pipe_t src, pipe_t dst, event_t id, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::set_flag(AscendC::kgsim_detail::pipe_of(src), AscendC::kgsim_detail::pipe_of(dst), 64 + src * 16 + dst,
                    id, loc);
}
inline void wait_flag(pipe_t src, pipe_t dst, event_t id, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::wait_flag(AscendC::kgsim_detail::pipe_of(src), AscendC::kgsim_detail::pipe_of(dst), 64 + src * 16 + dst,
                     id, loc);
}

// vcadd: the vector instruction under WholeReduceSum (the c_api's repeat_reduce_sum calls it with the
// same operands), which the library's norm kernels call directly on GetPhyAddr() pointers. Each repeat
// sums the elements the mask register selects into one result; dstRepStride counts results, the
// source strides count 32-byte blocks, as WholeReduceSum documents. The dav_c220 form adds a last
// flag that the library always passes as false (plain sum); any other value is refused.
namespace kgsim {
TRef ub_ref_of_addr(uint64_t host_addr, const char* api, const Loc& loc);
template <class T>
inline void raw_vcadd(T* dst, T* src, uint8_t repeat, uint16_t dstRepStride, uint16_t srcBlkStride,
                      uint16_t srcRepStride, const kgsim::Loc& loc) {
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>, "[kgsim:unsupported_dtype] vcadd: half or float");
    kgsim::vec_reduce(0, 2, kgsim::dt_of<T>::v, kgsim::ub_ref_of_addr(reinterpret_cast<uint64_t>(dst), "vcadd", loc),
                      kgsim::ub_ref_of_addr(reinterpret_cast<uint64_t>(src), "vcadd", loc), AscendC::kgsim_detail::kNoRef,
                      kgsim::MaskArg{3, 0, 0, 0}, repeat, dstRepStride, srcBlkStride, srcRepStride, 0, 0, loc);
}
}  // namespace kgsim
#define KGSIM_RAW_VCADD(T)                                                                                         \
    inline void vcadd(T* dst, T* src, uint8_t repeat, uint16_t dstRepStride, uint16_t srcBlkStride,               \
                      uint16_t srcRepStride, kgsim::Loc loc = kgsim::Loc::current()) {                             \
        kgsim::raw_vcadd(dst, src, repeat, dstRepStride, srcBlkStride, srcRepStride, loc);                 \
    }                                                                                                              \
    inline void vcadd(T* dst, T* src, uint8_t repeat, uint16_t dstRepStride, uint16_t srcBlkStride,               \
                      uint16_t srcRepStride, bool mode, kgsim::Loc loc = kgsim::Loc::current()) {                  \
        if (mode)                                                                                                  \
            kgsim::fault("missing_api", loc, "vcadd with its last flag true is not modelled (the simulator has "   \
                         "the plain per-repeat sum only: pass false, or call WholeReduceSum)");                    \
        kgsim::raw_vcadd(dst, src, repeat, dstRepStride, srcBlkStride, srcRepStride, loc);                 \
    }
KGSIM_RAW_VCADD(half)
KGSIM_RAW_VCADD(float)

// get_max_min_cnt: the register GetReduceMaxMinCount reads (the last ReduceMax/ReduceMin or
// WholeReduceMax/WholeReduceMin): the value's bit pattern in the low 32 bits (low 16 for half), its
// index in the high 32 bits; kernels reinterpret the low bits as the value type.
inline int64_t get_max_min_cnt(kgsim::Loc loc = kgsim::Loc::current()) { return int64_t(kgsim::max_min_cnt(loc)); }

// ASSERT is compiled out in NPU builds (CANN kernel_macros.h: it is assert() only under
// ASCENDC_CPU_DEBUG), so the expression is not even evaluated. ascendc_assert traps on the NPU.
// It expands to nothing at all: production code writes `this->n = n ASSERT(n != 0);`, which the
// NPU build reads as `this->n = n;` (a `((void)0)` expansion would make that a call of n).
#ifndef ASSERT
#define ASSERT(x)
#endif
// ASSERT_MSG(cond, "message"): the same debug-build check with a message; nothing in an NPU build
#ifndef ASSERT_MSG
#define ASSERT_MSG(x, ...)
#endif
// ASCENDC_ASSERT(cond, { KERNEL_LOG(KERNEL_ERROR, ...); }) and KERNEL_LOG are debug-build checks
// and logs too (active with ASCENDC_CPU_DEBUG / ASCENDC_DEBUG only): nothing in an NPU build.
#ifndef ASCENDC_ASSERT
#define ASCENDC_ASSERT(cond, ...) ((void)0)
#endif
#ifndef KERNEL_LOG
#define KERNEL_LOG(level, ...) ((void)0)
#endif
#ifndef ascendc_assert
#define ascendc_assert(x, ...) ((x) ? (void)0 : ::kgsim::kernel_assert_fail(#x, ::kgsim::Loc::current()))
#endif
// assert(expr) and assert(expr, fmt, args...): Ascend C's kernel assert (asc-devkit
// utils/debug/asc_assert.h), on by default in NPU builds too: a false expr stops the kernel (here a
// kernel_assert fault naming expr; the formatted message is not printed). It replaces <cassert>'s
// one-argument macro, which would abort the whole process; a later #include <cassert> restores that.
#undef assert
#define assert(expr, ...) ((expr) ? (void)0 : ::kgsim::kernel_assert_fail(#expr, ::kgsim::Loc::current()))

namespace AscendC {
// Conditional<cond, A, B>::type: Ascend C's own std::conditional, for kernels that pick a type.
template <bool cond, class A, class B>
struct Conditional {
    using type = A;
};
template <class A, class B>
struct Conditional<false, A, B> {
    using type = B;
};

// AscendC::Std: the few <algorithm>-style helpers kernels call on the scalar unit.
namespace Std {
template <class T>
constexpr const T& min(const T& a, const T& b) { return b < a ? b : a; }
template <class T>
constexpr const T& max(const T& a, const T& b) { return a < b ? b : a; }
}  // namespace Std

}  // namespace AscendC

#include "kgsim/sort.h"  // Gather/Sort/Transpose family (needs the whole of this header)
