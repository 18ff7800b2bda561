// kgsim: CPU simulator of the Ascend C programming model (kernel-gym).
// base.h: keywords, scalar types, enums and the interface to the simulator runtime
// (libkgsim, built once from ../../src). Everything heavy lives in the runtime so that
// a kernel translation unit stays quick to compile.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cassert>
#include <cstring>
#include <exception>
#include <source_location>
#include <type_traits>

// The simulated AI Core is an Atlas A2 (dav-c220): kernels choose their A2 code paths with
// `#if __NPU_ARCH__ == 2201`, as a bisheng build for that target sees.
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif
// ... and the older spelling of the same target (`#if __CCE_AICORE__ == 220`), which the
// operator library (cann-ops) uses to pick its Atlas A2 specialisations.
#ifndef __CCE_AICORE__
#define __CCE_AICORE__ 220
#endif
// ---- device keywords: no meaning on the CPU --------------------------------------------
#define __global__
#define __aicore__
#define __gm__
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#define __cube__
#define __vector__
#define __inout_pipe__(x)
#define __sync_alias__
#ifndef GM_ADDR
#define GM_ADDR uint8_t*
#endif
#ifndef KGSIM_ACL_TYPES
#define KGSIM_ACL_TYPES
typedef void* aclrtStream;
typedef int aclError;
#endif

// a template parameter that must be exactly TYPE (the function-pointer overloads, vector.h)
#define KGSIM_EXACTLY(C, TYPE) requires std::is_same_v<C, TYPE>

// Kernel types select which cores a launch starts (AIV only, AIC only, or AIC:AIV groups of
// 1:1 / 1:2); see kgsim/cores.h. KERNEL_TASK_TYPE(key, x) applies to one tiling key: ignored.
#define KERNEL_TASK_TYPE_DEFAULT(x) ::kgsim::declare_kernel_type(int(x), ::kgsim::Loc::current())
#define KERNEL_TASK_TYPE(key, x)
enum KernelMetaType { KERNEL_TYPE_AIV_ONLY, KERNEL_TYPE_AIC_ONLY, KERNEL_TYPE_MIX_AIV_1_0, KERNEL_TYPE_MIX_AIC_1_0,
                      KERNEL_TYPE_MIX_AIC_1_1, KERNEL_TYPE_MIX_AIC_1_2, KERNEL_TYPE_AICORE, KERNEL_TYPE_VECTORCORE,
                      KERNEL_TYPE_MIX_AICORE, KERNEL_TYPE_MIX_VECTOR_CORE, KERNEL_TYPE_MAX };

// ---- scalar types ------------------------------------------------------------------------
using half = _Float16;
// The fixed-width names CANN kernels also use for the IEEE types (float16_t is half).
using float16_t = _Float16;
using float32_t = float;

struct bfloat16_t {
    uint16_t bits_ = 0;
    bfloat16_t() = default;
    template <class U, std::enable_if_t<std::is_arithmetic_v<U> || std::is_same_v<U, _Float16>, int> = 0>
    constexpr bfloat16_t(U v) : bits_(from_float(static_cast<float>(v))) {}
    constexpr operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits_) << 16); }
    static constexpr bfloat16_t from_bits(uint16_t b) { bfloat16_t r; r.bits_ = b; return r; }
    static constexpr uint16_t from_float(float f) {  // round to nearest even
        uint32_t u = std::bit_cast<uint32_t>(f);
        if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
        u += 0x7fffu + ((u >> 16) & 1u);
        return static_cast<uint16_t>(u >> 16);
    }
};

// pipes and events (global in CANN: they are compiler builtins there)
enum pipe_t : uint8_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5,
                        PIPE_V2, PIPE_FIX, PIPE_UNASSIGNED };
enum event_t : uint8_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

struct int4b_t;  // 4-bit signed integer (kgsim/rearrange.h)

namespace AscendC {
enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM,
                                 SHM = SPM, TSCM, C2PIPE2GM, C2PIPE2LOCAL, MAX };
using QuePosition = TPosition;
enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD,
                                 UNKNOWN = 0xFF };
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
enum class ReduceType { NONE = -1, SUM = 0, MAX, MIN };
enum class ReduceMode : uint8_t { REDUCE_MAX = 0, REDUCE_MIN, REDUCE_SUM };
enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };
enum class PaddingMode : uint8_t { Normal = 0, Compact };
enum class CacheLine : uint8_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
enum class HardEvent : uint8_t {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3,
    MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S,
    MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};
using TEventID = int8_t;
using TTagType = int32_t;

constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr uint32_t DEFAULT_BLK_NUM = 8;
constexpr uint16_t DEFAULT_BLK_STRIDE = 1;
constexpr uint8_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint32_t MAX_REPEAT_TIMES = 255;
constexpr uint32_t BLOCK_CUBE = 16;
constexpr int32_t MASK_PLACEHOLDER = 0;
constexpr uint16_t DEFAULT_DATA_COPY_NBURST = 1;
constexpr uint16_t DEFAULT_DATA_COPY_STRIDE = 0;
constexpr uint32_t ONE_BLOCK_SIZE = 32;
constexpr uint32_t ONE_BLK_FLOAT_NUM = 8;
constexpr uint32_t ONE_BLK_HALF_NUM = 16;
// Brcb's elements per repeat (one per 32-byte block of the destination) and per call at most
constexpr uint32_t BRCB_BROADCAST_NUMBER = 8;
constexpr uint32_t BRCB_MAX_REPEAT_SIZE = BRCB_BROADCAST_NUMBER * MAX_REPEAT_TIMES;
// type utilities of the kernel API: IsSameType<T, U>::value; PrimT<T>, the element type of T
// (T itself: the simulator has no TensorTrait wrappers)
template <class T, class U> struct IsSameType : std::is_same<T, U> {};
template <class T> using PrimT = T;
}  // namespace AscendC

// ---- the runtime interface ---------------------------------------------------------------
namespace kgsim {
using Loc = std::source_location;

// Kernel code is compiled with basic-block and memory-access instrumentation (src/rt_scalar.cpp)
// so that scalar work costs simulated time. Simulator API code that charges for itself opts out.
#define KGSIM_UNINSTRUMENTED __attribute__((no_sanitize_coverage, no_sanitize("kernel-address")))
// A scalar accessor (GetValue, SetValue, operator()) is one load or store on the NPU, charged by its
// own body. Its bounds and initialisation checks are the simulator's: inlined into the kernel, their
// branches would split the kernel's machine basic blocks and be charged as kernel blocks (a UB
// GetValue then cost 3 blocks on top of its access, operator() 1), so the accessor stays out of line.
// Hidden: the kernel's calls reach it directly, not through the PLT (a scalar loop makes billions).
#define KGSIM_SCALAR_ACCESSOR __attribute__((noinline, visibility("hidden"))) KGSIM_UNINSTRUMENTED

// Loop sampling's hook in a kernel's own counted loops (kernel_gym/ascendc/loop_hooks.py adds
// KGSIM_LOOP_ITER to their update clause: it runs at the start of every iteration but the first).
// Under loop sampling it samples the loop, returning the induction variable moved forward past
// iterations whose cost the last one stands for (src/rt_sampling.cpp, loop_iter); otherwise `i`.
// One out-of-line call in the loop's latch and no branch in kernel code: the kernel's machine basic
// blocks, which time its scalar work, stay those of the loop as written. `cmp`: 0 <, 1 <=, 2 >,
// 3 >=, 4 != (the variable on the left), plus 16 for a while loop's hook (its step the iteration's own: VARIABLE_STEP), plus 8 where the loop's scalar reads of local memory steer
// no work (loop_hooks.py, VALUES_ONLY). The site: one static per loop, through a lambda (the
// macro is an expression).
struct LoopSite {
    void* state = nullptr;  // the runtime's, made at the first call under loop sampling
};
long long loop_iter(LoopSite* site, long long i, long long bound, long long step, int cmp, bool u64) noexcept;
template <class T, class B, class S>
__attribute__((always_inline)) inline T loop_at(LoopSite* site, T i, B bound, S step, int cmp) noexcept {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_integral_v<B> &&
                  std::is_integral_v<S>) {
        return T(loop_iter(site, (long long)i, (long long)bound, (long long)step, cmp,
                           std::is_unsigned_v<T> && sizeof(T) == 8));
    } else {
        return i;
    }
}
// Iterations the last loop_iter call moved its loop past (0: none): KGSIM_LOOP_FOLLOW moves another
// variable of the update clause (`++cur, ++oh`) along by as many of its steps.
long long loop_jumped() noexcept;
#define KGSIM_LOOP_FOLLOW(var, step) ((var) += (step) * ::kgsim::loop_jumped())
#define KGSIM_LOOP_ITER(var, bound, step, cmp)                                                         \
    ((var) = ::kgsim::loop_at([]() noexcept -> ::kgsim::LoopSite* { static ::kgsim::LoopSite site_; return &site_; }(), \
                              (var), (bound), (step), (cmp)))

enum class DT : uint8_t { F32, F16, BF16, I8, U8, I16, U16, I32, U32, I64, U64, F64, B8, S4 };
template <class T> struct dt_of;
// bits per element: sizeof(T) * 8, except int4b_t (two per byte)
template <class T> inline constexpr uint32_t kBits = uint32_t(sizeof(T) * 8);
template <> inline constexpr uint32_t kBits<::int4b_t> = 4;
template <> struct dt_of<float> { static constexpr DT v = DT::F32; };
template <> struct dt_of<half> { static constexpr DT v = DT::F16; };
template <> struct dt_of<bfloat16_t> { static constexpr DT v = DT::BF16; };
template <> struct dt_of<int8_t> { static constexpr DT v = DT::I8; };
template <> struct dt_of<uint8_t> { static constexpr DT v = DT::U8; };
template <> struct dt_of<int16_t> { static constexpr DT v = DT::I16; };
template <> struct dt_of<uint16_t> { static constexpr DT v = DT::U16; };
template <> struct dt_of<int32_t> { static constexpr DT v = DT::I32; };
template <> struct dt_of<uint32_t> { static constexpr DT v = DT::U32; };
template <> struct dt_of<int64_t> { static constexpr DT v = DT::I64; };
template <> struct dt_of<uint64_t> { static constexpr DT v = DT::U64; };
template <> struct dt_of<double> { static constexpr DT v = DT::F64; };
template <> struct dt_of<bool> { static constexpr DT v = DT::B8; };

template <class T, class... Us> inline constexpr bool one_of_v = (std::is_same_v<T, Us> || ...);

// A data type's name for messages (KGSIM_DTYPES_RUNTIME)
template <class T> constexpr const char* dtype_name() {
    if constexpr (std::is_same_v<T, float>) return "float";
    else if constexpr (std::is_same_v<T, half>) return "half";
    else if constexpr (std::is_same_v<T, bfloat16_t>) return "bfloat16_t";
    else if constexpr (std::is_same_v<T, ::int4b_t>) return "int4b_t";
    else if constexpr (std::is_same_v<T, bool>) return "bool";
    else if constexpr (std::is_same_v<T, int8_t>) return "int8_t";
    else if constexpr (std::is_same_v<T, uint8_t>) return "uint8_t";
    else if constexpr (std::is_same_v<T, int16_t>) return "int16_t";
    else if constexpr (std::is_same_v<T, uint16_t>) return "uint16_t";
    else if constexpr (std::is_same_v<T, int32_t>) return "int32_t";
    else if constexpr (std::is_same_v<T, uint32_t>) return "uint32_t";
    else if constexpr (std::is_same_v<T, int64_t>) return "int64_t";
    else if constexpr (std::is_same_v<T, uint64_t>) return "uint64_t";
    else if constexpr (std::is_same_v<T, double>) return "double";
    else return "this data type";
}

// A static_assert whose message the Python loader recognises as an unsupported dtype. For an API
// whose asc-devkit (Atlas A2) implementation refuses the type at build: a static_assert, or no
// overload (a typed intrinsic or helper) for it. The extra level expands a type-list macro before
// it is quoted in the message.
#define KGSIM_DTYPES(OPNAME, T, ...) KGSIM_DTYPES_(OPNAME, T, __VA_ARGS__)
#define KGSIM_DTYPES_(OPNAME, T, ...)                                                                \
    static_assert(::kgsim::one_of_v<T, __VA_ARGS__>, "[kgsim:unsupported_dtype] " OPNAME             \
                  ": this data type is not supported by the API on Atlas A2 (Ascend910B); supported: " #__VA_ARGS__)

// The same refusal when the call runs (an unsupported_dtype fault), for an API whose asc-devkit
// implementation checks the type only at run time (ASCENDC_ASSERT, a debug-build assert) or not at
// all: the NPU toolchain builds such a call, so a kernel that holds one in a branch its dtype never
// takes (a template instantiated for several types) must build here too. Needs `loc` in scope.
#define KGSIM_DTYPES_RUNTIME(OPNAME, T, ...) KGSIM_DTYPES_RUNTIME_(OPNAME, T, __VA_ARGS__)
#define KGSIM_DTYPES_RUNTIME_(OPNAME, T, ...)                                                        \
    if constexpr (!::kgsim::one_of_v<T, __VA_ARGS__>)                                                \
    ::kgsim::dtype_unsupported(OPNAME, ::kgsim::dtype_name<T>(), #__VA_ARGS__, loc)

enum Pipe : uint8_t { P_S = 0, P_V, P_MTE1, P_MTE2, P_MTE3, P_M, P_FIX, P_COUNT };
enum Mem : uint8_t { MEM_UB = 0, MEM_L1, MEM_L0A, MEM_L0B, MEM_L0C, MEM_BT, MEM_FB, MEM_COUNT };

// A LocalTensor as the runtime sees it: byte address in its memory, end of its buffer.
struct TRef {
    uint32_t addr = 0;
    uint32_t end = 0;
    uint8_t mem = MEM_UB;
    uint8_t pos = 0;
    int16_t que = -1;   // owning queue handle, -1 for TBuf tensors
    int16_t slot = -1;  // buffer index within the queue
    uint32_t gen = 0;   // block generation the tensor was created in
};

// State read by inline code in the headers (defined in the runtime library).
struct Hot {
    uint8_t* mem[MEM_COUNT];
    uint64_t api_calls;
    uint64_t next_check;
    int64_t block_idx;
    int64_t block_num;
    double s_time;             // scalar-unit issue time of the current block, cycles
    double scalar_ub_cycles;   // cost of one scalar UB access
    double scalar_gm_cycles;   // cost of one scalar GM access
    uint32_t gen;              // incremented for every block
    uint8_t check_uninit;
    uint8_t in_launch;
    void* tpipe;               // the most recently constructed TPipe of this block
    int64_t core_uid;          // unique per core of a launch (AIC and AIV blocks share GetBlockIdx values)
    uint8_t core_type;         // CORE_AIV or CORE_AIC
    uint8_t sub_block_idx;     // AIV index within its AIC:AIV group
    uint8_t sub_block_num;     // AIVs per group (GetSubBlockNum), 1 on an AIC
    uint8_t task_ratio;        // GetTaskRatio
    uint64_t local_reads;      // scalar reads of local memory (GetValue, operator()): loop sampling's data check
    double scalar_ub_store_load_cycles;  // wait of a scalar UB load right after a scalar UB store
    uint8_t ub_store_pending;  // the block's last scalar UB access was a store
    uint64_t ub_store_loads;   // scalar UB loads that waited for a store (this call, all blocks)
};
enum CoreType : uint8_t { CORE_AIV = 0, CORE_AIC = 1 };
extern Hot hot;

// Scalar fast-forward's state (sampled simulation only; the fast path is below, with the GM accessors)
struct ScalarFastForward {
    static constexpr uint32_t kBufs = 16;  // launch buffers cached by index (gm_lookup's)
    uint64_t left;                // accesses left in the running fast stretch; 0: none (always 0 when off,
                                  // and while loop sampling skips: its own bounds-only path applies)
    uint64_t paused_left;         // `left` while loop sampling skips
    uint64_t flushed[2];          // fast[] already added to hot.s_time (ff_flush)
    double cycles[2];             // charged per read / write in the stretch
    uint64_t* gm_bytes[2];        // the launch's GM read / write byte counts
    uint64_t fast[2];             // the running block's fast-forwarded reads / writes (cycles[] each;
                                  // scalar GM accesses for loop sampling's count: scalar_gm_ops())
    uint32_t nbufs;
    uintptr_t lo[kBufs];
    uint64_t size[kBufs];
    bool skipping;                // loop sampling skips API calls: accesses are bounds-checked and counted only
    uint64_t skip_ops;            // those accesses, taken inline (scalar_gm_ops() counts them)
};
extern ScalarFastForward ff;
// The fast accesses' cycles reach hot.s_time here, not one by one: an add per access made the
// stretch a chain of dependent floating-point read-modify-writes (the fast path's longest). Every
// reader of the scalar time flushes first: API calls (tick), the runtime's issue and check_in_launch,
// the block's end, the scalar watchdog; the kernel's own adds to it (basic blocks, UB accesses) commute.
KGSIM_UNINSTRUMENTED inline void ff_flush() {
    const uint64_t r = ff.fast[0] - ff.flushed[0], w = ff.fast[1] - ff.flushed[1];
    if ((r | w) == 0) return;
    hot.s_time += double(r) * ff.cycles[0] + double(w) * ff.cycles[1];
    ff.flushed[0] = ff.fast[0], ff.flushed[1] = ff.fast[1];
}

struct Fault {};  // thrown by fault(); the details are already recorded by the runtime

[[noreturn]] void fault(const char* cls, const Loc& loc, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
void slow_tick(const Loc& loc);
// the simulator's watchdog count, not kernel work: uninstrumented (GCC does not inline an instrumented
// function into an uninstrumented one, so an out-of-line copy would be charged as kernel blocks)
KGSIM_UNINSTRUMENTED inline void tick(const Loc& loc) {
    ff_flush();
    if (++hot.api_calls >= hot.next_check) slow_tick(loc);
}
// The scalar unit's UB accesses through the LocalTensor API in program order (GetValue/SetValue, a
// reference from operator()). A load issued right after a store to UB waits for that store to complete
// (scalar_ub_store_load_cycles): an in-place scan (load x[i], combine, store x[i], load x[i+1], ...)
// pays it per element, a loop that loads a group of elements before it stores pays it once a group.
KGSIM_UNINSTRUMENTED inline void ub_scalar_order(bool write) {
    if (write) {
        hot.ub_store_pending = 1;
    } else if (hot.ub_store_pending) {
        hot.ub_store_pending = 0;
        hot.s_time += hot.scalar_ub_store_load_cycles;
        ++hot.ub_store_loads;
    }
}
// past a LocalTensor's end: a warning inside the physical memory (bounds_mode="npu"), else a fault
void local_oob(const TRef& r, uint64_t first_byte, uint64_t nbytes, const char* what, const Loc& loc);
void uninit_check(const TRef& r, uint32_t addr, uint32_t nbytes, const char* what, const Loc& loc);
void mark_init(uint8_t mem, uint32_t addr, uint32_t nbytes);

// GM
int32_t gm_lookup(const void* p);
// false: a GetValue/SetValue past its buffer but within the NPU's 2 MiB page of it (bounds_mode="npu",
// a warning): the caller reads 0xFF bytes and drops the write, as DataCopy does there
bool gm_scalar(int32_t buf, const void* p, uint32_t nbytes, int write, const Loc& loc);

// Scalar fast-forward (sampled simulation only; src/rt_scalar.cpp): inside a fast stretch a scalar GM
// access that lies wholly inside a launch buffer keeps its bounds check, its real read or write and its
// GM bytes, and is charged the mean cycles per access of the block's detailed windows, skipping the
// data-cache model and the race detector. Inline here so that the stretch costs the host a few
// instructions per access instead of gm_scalar's checks, the cache model and record_access.
extern bool g_track_writes;     // sampled simulation's written-span tracking (stores only)
void track_write(uintptr_t lo, uint64_t n);
// the stretch's accounting of one access already known to lie inside a buffer
KGSIM_UNINSTRUMENTED inline void ff_charge(uintptr_t a, uint32_t n, int write) {
    --ff.left;
    if (write && g_track_writes) track_write(a, n);  // the sampled check compares the stored spans
    *ff.gm_bytes[write] += n;
    ++ff.fast[write];  // its cycles: ff_flush
}
// GetValue (write 0) / SetValue (1) through buffer `buf`: true when the fast stretch took it (the
// caller then reads or writes the bytes), false for gm_scalar's full path
// (while loop sampling skips API calls, an access inside its buffer is gm_scalar's bounds-only path,
// inline: a timing-only skip around a scalar convolution's per-output vector calls sent every one of
// its 10^9 accesses through gm_scalar, 44 % of its host time)
KGSIM_UNINSTRUMENTED inline bool ff_gm(int32_t buf, const void* p, uint32_t n, int write) {
    if ((ff.left == 0 && !ff.skipping) || uint32_t(buf) >= ff.nbufs) return false;
    const uint64_t off = uintptr_t(p) - ff.lo[buf];
    if (off >= ff.size[buf] || ff.size[buf] - off < n) return false;  // out of bounds: the full path faults
    if (hot.api_calls + 1 >= hot.next_check) return false;  // the watchdog's turn: the full path ticks
    ++hot.api_calls;  // tick()'s count
    if (ff.skipping) {  // bounds only: the skip's prediction times it; a store still lands for the check
        ++ff.skip_ops;
        ff.paused_left -= ff.paused_left != 0;  // the paused stretch runs on with the block's work (ff_window_open)
        if (write && g_track_writes) track_write(uintptr_t(p), n);
        return true;
    }
    ff_charge(uintptr_t(p), n, write);
    return true;
}

// pipes, queues, buffers
struct BufInfo {
    uint32_t addr, len;
    int16_t que, slot;
    uint8_t mem, pos;
    uint32_t gen;
};
BufInfo static_tensor(uint8_t pos, uint32_t addr, uint64_t bytes, const Loc& loc);
BufInfo stack_buffer(uint8_t pos, const Loc& loc);
void tpipe_init(void* self, const Loc& loc);
void tpipe_reset(void* self, const Loc& loc);
void tpipe_release(void* self);
int32_t que_init(uint8_t src_pos, uint8_t dst_pos, int32_t depth, uint32_t num, uint32_t len, const Loc& loc);
BufInfo que_alloc(int32_t h, uint32_t gen, const Loc& loc);
void que_enque(int32_t h, uint32_t gen, const TRef& t, const Loc& loc);
BufInfo que_deque(int32_t h, uint32_t gen, const Loc& loc);
void que_free(int32_t h, uint32_t gen, const TRef& t, const Loc& loc);
int32_t que_query(int32_t h, uint32_t gen, int what);  // 0 queued count, 1 free buffers, 2 num
void que_release(int32_t h, uint32_t gen);
BufInfo tbuf_init(uint8_t pos, uint32_t len, const Loc& loc);
void tbuf_check(const BufInfo& b, uint64_t offset_bytes, uint64_t nbytes, const Loc& loc);

// synchronisation, masks, atomics, misc
void pipe_barrier(int pipe, const Loc& loc);
void set_flag(int src, int dst, int event, int id, const Loc& loc);
void wait_flag(int src, int dst, int event, int id, const Loc& loc);
int32_t fetch_event_id(int event);
void set_mask_mode(int counter, const Loc& loc);
void set_vector_mask(uint64_t hi, uint64_t lo, int dtype_bytes, int by_len, int64_t len, const Loc& loc);
void reset_mask(const Loc& loc);
void set_atomic(int mode, DT dt, const Loc& loc);  // 0 none, 1 add, 2 max, 3 min
void set_deq_scale(double scale, const Loc& loc);
void sync_all(const Loc& loc, bool aiv_only = true);
// cores.h: kernel types, cross-core flags, IBSet/IBWait (rt_blocks.cpp)
void declare_kernel_type(int type, const Loc& loc);
struct KernelTypeRestart {};  // thrown by declare_kernel_type to restart a launch with the declared cores
void cross_core_set(int mode, int pipe, int flag, const Loc& loc);
void cross_core_wait(int flag, const Loc& loc);
void ib_set(int64_t block, int32_t event, const Loc& loc);
void ib_wait(int64_t block, int32_t event, const Loc& loc);
// GroupBarrier (cores.h): one barrier per GM workspace, sizes as its constructor received them
void group_barrier_init(uintptr_t ws, uint32_t arrive_size, uint32_t wait_size, const Loc& loc);
void group_barrier_arrive(uintptr_t ws, uint32_t arrive_size, uint32_t wait_size, uint32_t index, const Loc& loc);
void group_barrier_wait(uintptr_t ws, uint32_t arrive_size, uint32_t wait_size, uint32_t index, const Loc& loc);
void kernel_printf(const char* fmt, ...);
void kernel_assert_fail(const char* expr, const Loc& loc);
[[noreturn]] void kernel_trap(const Loc& loc);  // AscendC::Trap (tensor.h)
// KGSIM_DTYPES_RUNTIME: the unsupported_dtype fault of an API called with a type it lacks
[[noreturn]] void dtype_unsupported(const char* api, const char* type, const char* supported, const Loc& loc);
double get_system_cycle();

// data movement
struct CopyParams {  // one DataCopy/DataCopyPad request, in the units of the call
    uint32_t block_count;
    uint64_t block_len;    // bytes
    uint64_t src_gap;      // bytes
    uint64_t dst_gap;      // bytes
    uint8_t pad;           // DataCopyPad: 1
    uint8_t is_pad;        // padding value given
    uint8_t left_pad, right_pad;  // elements
    uint64_t pad_bits;     // padding value, raw bits
    uint8_t count_form;    // DataCopy(dst, src, count): subject to the 32-byte rule
};
void copy_gm_to_local(const TRef& dst, int32_t buf, const void* gm, DT dt, uint32_t es, const CopyParams& p,
                      const char* api, const Loc& loc);
void copy_local_to_gm(int32_t buf, void* gm, const TRef& src, DT dt, uint32_t es, const CopyParams& p,
                      const char* api, const Loc& loc);
void copy_local_to_local(const TRef& dst, const TRef& src, uint32_t es, const CopyParams& p, const char* api,
                         const Loc& loc);
void gm_fill(int32_t buf, void* gm, DT dt, uint32_t es, uint64_t count, uint64_t value_bits, const Loc& loc);

// vector instructions
enum VOp : uint16_t {
    V_ADD, V_SUB, V_MUL, V_DIV, V_MAX, V_MIN, V_AND, V_OR,                        // binary
    V_ADDS, V_MULS, V_MAXS, V_MINS, V_LEAKYRELU, V_SHL, V_SHR,                    // tensor-scalar
    V_EXP, V_LN, V_ABS, V_SQRT, V_RSQRT, V_RECIP, V_RELU, V_NOT, V_COPY, V_DUP,   // unary (DUP: scalar only)
    V_COUNT
};
struct MaskArg {
    uint8_t kind;  // 0: count form, 1: continuous mask, 2: bit mask, 3: mask register (isSetMask=false)
    uint64_t lo, hi;
    int64_t count;
};
struct RepArg {
    int32_t repeat;
    uint32_t dst_blk, src0_blk, src1_blk;
    uint32_t dst_rep, src0_rep, src1_rep;
};
struct Scalar {
    double f;
    int64_t i;
};
template <class T> inline Scalar scalar_of(T v) {
    if constexpr (std::is_integral_v<T>) return Scalar{static_cast<double>(v), static_cast<int64_t>(v)};
    else return Scalar{static_cast<double>(static_cast<float>(v)), static_cast<int64_t>(static_cast<float>(v))};
}
void vec_op(VOp op, DT dt, const TRef& dst, const TRef& src0, const TRef& src1, Scalar s, const MaskArg& m,
            const RepArg& r, const Loc& loc);
void vec_cast(DT dt, DT st, const TRef& dst, const TRef& src, int round_mode, const MaskArg& m, const RepArg& r,
              const Loc& loc);
void vec_cmp(DT dt, const TRef& dst, const TRef& src0, const TRef& src1, int scalar_form, Scalar s, int mode,
             const MaskArg& m, const RepArg& r, const Loc& loc);
void vec_select(DT dt, const TRef& dst, const TRef& sel, const TRef& src0, const TRef& src1, int scalar_form,
                Scalar s, int mode, const MaskArg& m, const RepArg& r, const Loc& loc);
// kind: 0 sum 1 max 2 min. shape: 0 count-form Reduce*, 1 ReduceX mask form, 2 WholeReduce, 3 BlockReduce,
// 4 PairReduce.
void vec_reduce(int kind, int shape, DT dt, const TRef& dst, const TRef& src, const TRef& work, const MaskArg& m,
                uint32_t repeat, int32_t dst_rep, int32_t src_blk, int32_t src_rep, int order, int cal_index,
                const Loc& loc);
// the result registers of the last ReduceSum (which 0) and ReduceMax/ReduceMin (1 value, 2 index)
double reduce_spr(int which, const Loc& loc);
// that register as get_max_min_cnt() returns it: the value's bits low, the index in the high 32 bits
uint64_t max_min_cnt(const Loc& loc);

// launches
bool launch_begin(const char* name, int64_t num_blocks, const char* file, int line);
// The kernel type of a launch: declared by KERNEL_TASK_TYPE_DEFAULT, else the module's default
// (mixed when the Matmul API is included), remembered per kernel function.
int launch_kernel_type(const void* fn, int module_default);
void block_begin(int64_t b);
// Run `body(ctx)` once per block, each block on a stack of its own so that SyncAll can suspend
// it until every block has reached the barrier (src/rt_blocks.cpp).
void run_blocks(int64_t num_blocks, void (*body)(void*), void* ctx, const void* fn = nullptr, int kernel_type = 0);
// Kernel type a module's kernels get without KERNEL_TASK_TYPE_DEFAULT (lib/matmul_intf.h: mixed).
// Internal linkage: each module (one translation unit) has its own, never the runtime library's.
// KGSIM_KERNEL_TYPE: the type a build gives kernels that declare none (a catlass example's CMake
// target says cube, mix or vec; the bisheng compiler derives it from the code per core type).
#ifdef KGSIM_KERNEL_TYPE
static int module_kernel_type = KGSIM_KERNEL_TYPE;
#else
static int module_kernel_type = KERNEL_TYPE_AIV_ONLY;
#endif
void block_exception(const char* what);
bool block_end(int64_t b);
void launch_end();
void host_exception(const char* what);
int config_int(const char* name);  // a SoC constant, for platform_ascendc
}  // namespace kgsim
