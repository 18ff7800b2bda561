// kgsim: the advanced math APIs of Ascend C (Tanh, Sigmoid, Log, Exp<T, level>, Power, Erf, Gelu,
// Silu, Swish, trigonometric, hyperbolic and rounding functions, Lgamma, Digamma, Sign, Clamp, Axpy),
// Sum, and the
// DivCeil/CeilDiv/AlignUp helpers. Each function has the overload with a caller-given
// sharedTmpBuffer (LocalTensor<uint8_t>) and the one where the API takes its temporary space
// from the UB that TPipe left free, as the CANN docs describe.
#pragma once
#include "kgsim/tensor.h"

namespace kgsim {
enum MathFn : uint16_t {
    M_TANH, M_SIGMOID, M_LOG, M_LOG2, M_LOG10, M_EXP, M_POWER_TT, M_POWER_TS, M_POWER_ST, M_ERF, M_ERFC, M_GELU,
    M_FASTER_GELU, M_SILU, M_SWISH, M_SIN, M_COS, M_TAN, M_ASIN, M_ACOS, M_ATAN, M_SINH, M_COSH, M_FLOOR, M_CEIL,
    M_ROUND, M_TRUNC, M_FRAC, M_SIGN, M_CLAMP_MAX, M_CLAMP_MIN, M_AXPY, M_SOFTPLUS, M_ASINH, M_ACOSH, M_ATANH,
    M_LGAMMA, M_DIGAMMA, M_FASTER_GELU_V2, M_GEGLU, M_SWIGLU, M_FMOD, M_XOR, M_COUNT
};
struct MathArgs {
    TRef dst, src0, src1, tmp;
    double s0 = 0;
    int64_t count = 0;
    uint32_t tmp_bytes = 0;
    uint8_t has_tmp = 0;
};
// src_dt differs from dt only for Axpy (half src into a float dst)
void vec_math(MathFn fn, DT dt, DT src_dt, const MathArgs& a, const Loc& loc);
// temporary-buffer bytes of `fn` for n elements of type_size bytes: the minimum or the maximum
uint32_t math_tmp_bytes(MathFn fn, uint32_t type_size, uint64_t n, int want_max);
void vec_sum(DT dt, const TRef& dst, const TRef& src, const TRef& tmp, int has_tmp, uint32_t tmp_bytes,
             uint32_t outter, uint32_t inner, uint32_t n, const Loc& loc);

template <class T>
inline void math_call(MathFn fn, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src0,
                      const AscendC::LocalTensor<T>* src1, const AscendC::LocalTensor<uint8_t>* tmp, double s0,
                      int64_t count, const Loc& loc) {
    MathArgs a;
    a.dst = dst.r_;
    a.src0 = src0.r_;
    if (src1) a.src1 = src1->r_;
    if (tmp) {
        a.tmp = tmp->r_;
        a.tmp_bytes = tmp->GetSize();
        a.has_tmp = 1;
    }
    a.s0 = s0;
    a.count = count;
    vec_math(fn, dt_of<T>::v, dt_of<T>::v, a, loc);
}
}  // namespace kgsim

namespace AscendC {

// ---- integer helpers (kernel and host) -----------------------------------------------------
// DivCeil and AlignUp are plain uint32_t functions in CANN's kernel headers: a kernel's own
// AlignUp template next to `using namespace AscendC` then resolves (the non-template wins an
// exact match) instead of being ambiguous. CeilDiv / CeilAlign are not CANN's: the trailing pack
// makes them lose any tie with a kernel's own template of that name.
constexpr uint32_t DivCeil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
constexpr uint32_t AlignUp(uint32_t a, uint32_t b) { return DivCeil(a, b) * b; }
template <class T, class U, class... NotCanns>
constexpr auto CeilDiv(T a, U b, NotCanns...) { return (a + b - 1) / b; }
template <class T, class U, class... NotCanns>
constexpr auto CeilAlign(T a, U b, NotCanns...) { return (a + b - 1) / b * b; }
// Ceil(a, b) likewise: a plain uint32_t function beside DivCeil in CANN's kernel headers, which
// CANN's own kernels call unqualified under `using namespace AscendC` on any integers (cann-ops
// adaptive_max_pool3d, group_quant); ConstCeil is its constexpr twin.
inline uint32_t Ceil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
constexpr uint32_t ConstCeil(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
// A scalar's bits as an integer (asc-devkit's kernel_utils_struct_norm_sort.h, reachable from
// kernel_operator.h; CANN's kernels fill DataCopyPadParams::paddingValue with it): T's bytes in the
// low end, the rest zero (asc-devkit's union leaves them unset).
template <class T>
inline uint64_t GetScalarBitcodeValue(T scalarValue) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "GetScalarBitcodeValue: a scalar of at most 8 bytes");
    uint64_t bits = 0;
    std::memcpy(&bits, &scalarValue, sizeof(T));
    return bits;
}
template <class T, class U>
inline U GetScalarBitcodeValue(T scalarValue) {
    return static_cast<U>(GetScalarBitcodeValue<T>(scalarValue));
}
// ... and as a half's bits (the low two bytes)
template <class T>
inline half GetScalarBitcodeToHalf(T scalarValue) {
    const uint64_t bits = GetScalarBitcodeValue<T>(scalarValue);
    half h;
    std::memcpy(&h, &bits, sizeof(half));
    return h;
}

// ---- unary advanced math: F(dst, src, [sharedTmpBuffer,] [calCount]) ------------------------
#define KGSIM_ADV_UNARY(NAME, FN, TPARAMS, ...)                                                                     \
    template <class T, TPARAMS>                                                                                     \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,    \
              const uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {                                   \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src, nullptr, &sharedTmpBuffer, 0, calCount, loc);                      \
    }                                                                                                               \
    template <class T, TPARAMS>                                                                                     \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t calCount,                        \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                             \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src, nullptr, nullptr, 0, calCount, loc);                               \
    }                                                                                                               \
    template <class T, TPARAMS>                                                                                     \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,    \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                             \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src, nullptr, &sharedTmpBuffer, 0, src.GetSize(), loc);                 \
    }                                                                                                               \
    template <class T, TPARAMS>                                                                                     \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, kgsim::Loc loc = kgsim::Loc::current()) {       \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src, nullptr, nullptr, 0, src.GetSize(), loc);                          \
    }                                                                                                               \
    /* the count form as a function-pointer target (KGSIM_ADDRESSABLE_BINARY in vector.h says why) */               \
    template <class T, TPARAMS, class C>                                                                            \
    KGSIM_EXACTLY(C, uint32_t)                                                                                      \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const C calCount) {                             \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src, nullptr, nullptr, 0, calCount, kgsim::Loc::current());             \
    }

// template parameters after T: isReuseSource and, for some APIs, a config object (accepted, unused)
#define KGSIM_REUSE bool isReuseSource = false
#define KGSIM_REUSE_CFG bool isReuseSource = false, auto config = 0
KGSIM_ADV_UNARY(Tanh, M_TANH, KGSIM_REUSE_CFG, half, float)
KGSIM_ADV_UNARY(Sigmoid, M_SIGMOID, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Log, M_LOG, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Log2, M_LOG2, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Log10, M_LOG10, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Erf, M_ERF, KGSIM_REUSE_CFG, half, float)
KGSIM_ADV_UNARY(Erfc, M_ERFC, KGSIM_REUSE_CFG, half, float)
KGSIM_ADV_UNARY(Sin, M_SIN, KGSIM_REUSE_CFG, half, float)
KGSIM_ADV_UNARY(Cos, M_COS, KGSIM_REUSE_CFG, half, float)
KGSIM_ADV_UNARY(Tan, M_TAN, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Asin, M_ASIN, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Acos, M_ACOS, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Atan, M_ATAN, KGSIM_REUSE_CFG, half, float)
KGSIM_ADV_UNARY(Sinh, M_SINH, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Cosh, M_COSH, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Floor, M_FLOOR, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Ceil, M_CEIL, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Round, M_ROUND, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Trunc, M_TRUNC, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Frac, M_FRAC, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Sign, M_SIGN, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Softplus, M_SOFTPLUS, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Asinh, M_ASINH, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Acosh, M_ACOSH, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Atanh, M_ATANH, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Lgamma, M_LGAMMA, KGSIM_REUSE, half, float)
KGSIM_ADV_UNARY(Digamma, M_DIGAMMA, KGSIM_REUSE, half, float)

// Gelu / FasterGelu: template <T, highPrecision, highPerformance>; (dst, src, [tmp,] dataSize)
#define KGSIM_GELU(NAME, FN)                                                                                        \
    template <class T, bool highPrecision = false, bool highPerformance = false>                                    \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,    \
              const uint32_t dataSize, kgsim::Loc loc = kgsim::Loc::current()) {                                   \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src, nullptr, &sharedTmpBuffer, 0, dataSize, loc);                      \
    }                                                                                                               \
    template <class T, bool highPrecision = false, bool highPerformance = false>                                    \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dataSize,                        \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                             \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src, nullptr, nullptr, 0, dataSize, loc);                               \
    }
KGSIM_GELU(Gelu, M_GELU)
KGSIM_GELU(FasterGelu, M_FASTER_GELU)
KGSIM_GELU(FasterGeluV2, M_FASTER_GELU_V2)

// Silu(dst, src, dataSize); Swish(dst, src, dataSize, beta): no temporary buffer
template <class T, bool isReuseSource = false>
void Silu(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t dataSize,
          kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Silu", T, half, float);
    kgsim::math_call<T>(kgsim::M_SILU, dst, src, nullptr, nullptr, 0, dataSize, loc);
}
template <class T, bool isReuseSource = false>
void Swish(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t dataSize,
           const std::type_identity_t<T> scalarValue, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Swish", T, half, float);
    kgsim::math_call<T>(kgsim::M_SWISH, dst, src, nullptr, nullptr, float(scalarValue), dataSize, loc);
}

// Exp<T, taylorExpandLevel, isReuseSource>: the advanced Exp (the basic one is Exp<T, isSetMask>)
// kgsim:partial Exp: the advanced form computes exp in float whatever taylorExpandLevel asks for
template <class T, uint8_t taylorExpandLevel, bool isReuseSource = false>
void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
         const uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Exp", T, half, float);
    kgsim::math_call<T>(kgsim::M_EXP, dst, src, nullptr, &sharedTmpBuffer, 0, calCount, loc);
}
template <class T, uint8_t taylorExpandLevel, bool isReuseSource = false>
void Exp(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t calCount,
         kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Exp", T, half, float);
    kgsim::math_call<T>(kgsim::M_EXP, dst, src, nullptr, nullptr, 0, calCount, loc);
}

// Power: tensor^tensor, tensor^scalar, scalar^tensor
#define KGSIM_POWER_T half, float, int32_t
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
           const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Power", T, KGSIM_POWER_T);
    kgsim::math_call<T>(kgsim::M_POWER_TT, dst, src0, &src1, &sharedTmpBuffer, 0, calCount, loc);
}
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, uint32_t calCount,
           kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Power", T, KGSIM_POWER_T);
    kgsim::math_call<T>(kgsim::M_POWER_TT, dst, src0, &src1, nullptr, 0, calCount, loc);
}
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
           kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Power", T, KGSIM_POWER_T);
    kgsim::math_call<T>(kgsim::M_POWER_TT, dst, src0, &src1, nullptr, 0, src0.GetSize(), loc);
}
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T>& src1Scalar,
           const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Power", T, KGSIM_POWER_T);
    kgsim::math_call<T>(kgsim::M_POWER_TS, dst, src0, nullptr, &sharedTmpBuffer, double(src1Scalar), calCount, loc);
}
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T>& src1Scalar,
           uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Power", T, KGSIM_POWER_T);
    kgsim::math_call<T>(kgsim::M_POWER_TS, dst, src0, nullptr, nullptr, double(src1Scalar), calCount, loc);
}
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const std::type_identity_t<T>& src0Scalar, const LocalTensor<T>& src1,
           const LocalTensor<uint8_t>& sharedTmpBuffer, uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Power", T, KGSIM_POWER_T);
    kgsim::math_call<T>(kgsim::M_POWER_ST, dst, src1, &src1, &sharedTmpBuffer, double(src0Scalar), calCount, loc);
}
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const std::type_identity_t<T>& src0Scalar, const LocalTensor<T>& src1,
           uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Power", T, KGSIM_POWER_T);
    kgsim::math_call<T>(kgsim::M_POWER_ST, dst, src1, &src1, nullptr, double(src0Scalar), calCount, loc);
}

// the whole-tensor forms with a temporary buffer (no calCount: the source tensor's size)
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
           const LocalTensor<uint8_t>& sharedTmpBuffer, kgsim::Loc loc = kgsim::Loc::current()) {
    Power<T, isReuseSource, config>(dst, src0, src1, sharedTmpBuffer, src0.GetSize(), loc);
}
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const std::type_identity_t<T>& src1Scalar,
           const LocalTensor<uint8_t>& sharedTmpBuffer, kgsim::Loc loc = kgsim::Loc::current()) {
    Power<T, isReuseSource, config>(dst, src0, src1Scalar, sharedTmpBuffer, src0.GetSize(), loc);
}
template <class T, bool isReuseSource = false, auto config = 0>
void Power(const LocalTensor<T>& dst, const std::type_identity_t<T>& src0Scalar, const LocalTensor<T>& src1,
           const LocalTensor<uint8_t>& sharedTmpBuffer, kgsim::Loc loc = kgsim::Loc::current()) {
    Power<T, isReuseSource, config>(dst, src0Scalar, src1, sharedTmpBuffer, src1.GetSize(), loc);
}

// Binary element-wise advanced APIs: F(dst, src0, src1, [sharedTmpBuffer,] [calCount]).
// GeGLU = src0 * Gelu_tanh(src1); Fmod = C fmod (the sign of src0); Xor = bitwise exclusive or.
#define KGSIM_ADV_BINARY(NAME, FN, TPARAMS, ...)                                                                    \
    template <class T, TPARAMS>                                                                                     \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                    \
              const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount,                                 \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                             \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src0, &src1, &sharedTmpBuffer, 0, calCount, loc);                       \
    }                                                                                                               \
    template <class T, TPARAMS>                                                                                     \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                    \
              const LocalTensor<uint8_t>& sharedTmpBuffer, kgsim::Loc loc = kgsim::Loc::current()) {                \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src0, &src1, &sharedTmpBuffer, 0, src0.GetSize(), loc);                 \
    }                                                                                                               \
    template <class T, TPARAMS>                                                                                     \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                    \
              const uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {                                    \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src0, &src1, nullptr, 0, calCount, loc);                                \
    }                                                                                                               \
    template <class T, TPARAMS>                                                                                     \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,                    \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                             \
        KGSIM_DTYPES(#NAME, T, __VA_ARGS__);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src0, &src1, nullptr, 0, src0.GetSize(), loc);                          \
    }

// FmodConfig: only the Ascend 950 reads algo / iterationNum; A2 always uses the normal algorithm
constexpr uint32_t FMOD_ITERATION_NUM_MAX = 11;
enum class FmodAlgo { NORMAL = 0, ITERATION_COMPENSATION = 1 };
struct FmodConfig {
    FmodAlgo algo = FmodAlgo::NORMAL;
    uint32_t iterationNum = FMOD_ITERATION_NUM_MAX;
};
constexpr FmodConfig DEFAULT_FMOD_CONFIG = {};
#define KGSIM_FMOD_CFG bool isReuseSource = false, const FmodConfig& config = DEFAULT_FMOD_CONFIG
KGSIM_ADV_BINARY(GeGLU, M_GEGLU, KGSIM_REUSE, half, float)
KGSIM_ADV_BINARY(Fmod, M_FMOD, KGSIM_FMOD_CFG, half, float)
KGSIM_ADV_BINARY(Xor, M_XOR, KGSIM_REUSE, int16_t, uint16_t)
#undef KGSIM_FMOD_CFG

// SwiGLU(dst, src0, src1, beta, [sharedTmpBuffer,] [calCount]) = src0 * Swish(src1, beta)
template <class T, bool isReuseSource = false>
void SwiGLU(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const float& beta,
            const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount,
            kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("SwiGLU", T, half, float);
    kgsim::math_call<T>(kgsim::M_SWIGLU, dst, src0, &src1, &sharedTmpBuffer, beta, calCount, loc);
}
template <class T, bool isReuseSource = false>
void SwiGLU(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const float& beta,
            const LocalTensor<uint8_t>& sharedTmpBuffer, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("SwiGLU", T, half, float);
    kgsim::math_call<T>(kgsim::M_SWIGLU, dst, src0, &src1, &sharedTmpBuffer, beta, src0.GetSize(), loc);
}
template <class T, bool isReuseSource = false>
void SwiGLU(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const float& beta,
            const uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("SwiGLU", T, half, float);
    kgsim::math_call<T>(kgsim::M_SWIGLU, dst, src0, &src1, nullptr, beta, calCount, loc);
}
template <class T, bool isReuseSource = false>
void SwiGLU(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, const float& beta,
            kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("SwiGLU", T, half, float);
    kgsim::math_call<T>(kgsim::M_SWIGLU, dst, src0, &src1, nullptr, beta, src0.GetSize(), loc);
}

// ClampMax(dst, src, [tmp,] scalar, calCount) = min(src, scalar); ClampMin = max(src, scalar)
#define KGSIM_CLAMP(NAME, FN)                                                                                       \
    template <class T, bool isReuseSource = false>                                                                  \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,    \
              const std::type_identity_t<T> scalar, const uint32_t calCount,                                      \
              kgsim::Loc loc = kgsim::Loc::current()) {                                                             \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src, nullptr, &sharedTmpBuffer, float(scalar), calCount, loc);          \
    }                                                                                                               \
    template <class T, bool isReuseSource = false>                                                                  \
    void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::type_identity_t<T> scalar,           \
              const uint32_t calCount, kgsim::Loc loc = kgsim::Loc::current()) {                                    \
        KGSIM_DTYPES(#NAME, T, half, float);                                                                        \
        kgsim::math_call<T>(kgsim::FN, dst, src, nullptr, nullptr, float(scalar), calCount, loc);                   \
    }
KGSIM_CLAMP(ClampMax, M_CLAMP_MAX)
KGSIM_CLAMP(ClampMin, M_CLAMP_MIN)

// Axpy(dst, src, scalar, sharedTmpBuffer, calCount): dst = src * scalar + dst; T = U, or float dst with half src
template <class T, class U, bool isReuseSource = false>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const std::type_identity_t<U> scalarValue,
          const LocalTensor<uint8_t>& sharedTmpBuffer, const uint32_t calCount,
          kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Axpy", T, half, float);
    static_assert(std::is_same_v<T, U> || (std::is_same_v<T, float> && std::is_same_v<U, half>),
                  "[kgsim:unsupported_dtype] Axpy: (dst, src) must be (half, half), (float, float) or (float, half)");
    kgsim::MathArgs a;
    a.dst = dst.r_;
    a.src0 = src.r_;
    a.tmp = sharedTmpBuffer.r_;
    a.tmp_bytes = sharedTmpBuffer.GetSize();
    a.has_tmp = 1;
    a.s0 = float(scalarValue);
    a.count = calCount;
    kgsim::vec_math(kgsim::M_AXPY, kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, a, loc);
}

// Axpy(dst, src, scalar, calCount): the basic vector instruction (count form, no temporary buffer).
template <class T, class U>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<U>& src, const std::type_identity_t<U> scalarValue,
          const int32_t& calCount, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Axpy", T, half, float);
    static_assert(std::is_same_v<T, U> || (std::is_same_v<T, float> && std::is_same_v<U, half>),
                  "[kgsim:unsupported_dtype] Axpy: (dst, src) must be (half, half), (float, float) or (float, half)");
    kgsim::MathArgs a;
    a.dst = dst.r_;
    a.src0 = src.r_;
    a.s0 = float(scalarValue);
    a.count = uint32_t(calCount);
    kgsim::vec_math(kgsim::M_AXPY, kgsim::dt_of<T>::v, kgsim::dt_of<U>::v, a, loc);
}

// ---- Sum: the sum of each of `outter` rows of n elements (rows `inner` elements apart) -------------
struct SumParams {
    uint32_t outter = 1;
    uint32_t inner;  // n rounded up to 32 bytes
    uint32_t n;
};
template <class T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
void Sum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
         const SumParams& sumParams, kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Sum", T, half, float);
    kgsim::vec_sum(kgsim::dt_of<T>::v, dst.r_, src.r_, sharedTmpBuffer.r_, 1, sharedTmpBuffer.GetSize(),
                   sumParams.outter, sumParams.inner, sumParams.n, loc);
}
template <class T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
void Sum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const SumParams& sumParams,
         kgsim::Loc loc = kgsim::Loc::current()) {
    KGSIM_DTYPES("Sum", T, half, float);
    kgsim::vec_sum(kgsim::dt_of<T>::v, dst.r_, src.r_, kgsim::TRef{}, 0, 0, sumParams.outter, sumParams.inner,
                   sumParams.n, loc);
}

}  // namespace AscendC

// SoftMax, LayerNorm, RmsNorm, CumSum, Mean, Clamp, Pad and their tiling structs
#include "kgsim/adv_api.h"
