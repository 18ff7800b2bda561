// kgsim: GlobalTensor, LocalTensor, TPipe, TQue/TQueBind, TBuf.
#pragma once
#include "kgsim/base.h"

namespace AscendC {

inline int64_t GetBlockIdx() { return kgsim::hot.block_idx; }
inline int64_t GetBlockNum() { return kgsim::hot.block_num; }
// In mixed kernels AIC and AIV blocks are numbered apart (AIV: [0, ratio * numBlocks)); the
// sub-block is an AIV's index within its AI Core (kgsim/cores.h).
inline int64_t GetSubBlockIdx() { return kgsim::hot.sub_block_idx; }
inline int64_t GetSubBlockNum() { return kgsim::hot.sub_block_num; }
inline int64_t GetTaskRatio() { return kgsim::hot.task_ratio; }
inline int64_t GetTaskRation() { return kgsim::hot.task_ratio; }
inline int64_t GetSystemCycle() { return static_cast<int64_t>(kgsim::get_system_cycle()); }
// GetDataBlockSizeInBytes: the bytes of one DataBlock, the unit of a vector instruction's block and
// repeat strides (8 of them per 256-byte repeat): 32 on every SoC the simulator models.
constexpr int16_t GetDataBlockSizeInBytes() { return static_cast<int16_t>(ONE_BLK_SIZE); }
// Trap(): stops the kernel where it is called (the NPU aborts the AI Core; the launch ends with an AI
// Core exception). The simulator ends the launch with a kernel_trap fault (KernelTrap, a KernelAssert).
[[noreturn]] inline void Trap(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::kernel_trap(loc); }
}  // namespace AscendC
// The compiler's own intrinsics under those APIs (global names, as bisheng declares them): the
// AI Core's index and count; an AIV of a mixed launch shares its AI Core's index, and its
// position in the core is get_subblockid().
inline int64_t get_block_idx() { return kgsim::hot.block_idx / kgsim::hot.sub_block_num; }
inline int64_t get_block_num() { return kgsim::hot.block_num; }
inline int64_t get_subblockid() { return kgsim::hot.sub_block_idx; }
inline int64_t get_subblockdim() { return kgsim::hot.sub_block_num; }
namespace AscendC {

// ---- GlobalTensor -------------------------------------------------------------------------
// L2 cache hints: whether a GlobalTensor's traffic is kept in L2 (rwMode is reserved in the docs).
enum class CacheMode : uint8_t { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1 };
enum CacheRwMode { READ = 1, WRITE = 2, RW = 3 };

template <class T>
class GlobalTensor {
public:
    using PrimType = T;
    T* ptr_ = nullptr;
    uint64_t size_ = 0;
    int32_t buf_ = -1;

    GlobalTensor() = default;
    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
        ptr_ = buffer;
        size_ = bufferSize;
        buf_ = kgsim::gm_lookup(buffer);
    }
    void SetGlobalBuffer(__gm__ T* buffer) { SetGlobalBuffer(buffer, 0); }
    GlobalTensor operator[](uint64_t offset) const {
        GlobalTensor r = *this;
        r.ptr_ = ptr_ + offset;
        r.size_ = size_ > offset ? size_ - offset : 0;
        return r;
    }
    KGSIM_SCALAR_ACCESSOR T GetValue(uint64_t offset, kgsim::Loc loc = kgsim::Loc::current()) const {
        T v;
        if (kgsim::ff_gm(buf_, ptr_ + offset, sizeof(T), 0) || kgsim::gm_scalar(buf_, ptr_ + offset, sizeof(T), 0, loc))
            std::memcpy(&v, ptr_ + offset, sizeof(T));
        else
            std::memset(&v, 0xFF, sizeof(T));
        return v;
    }
    KGSIM_SCALAR_ACCESSOR void SetValue(uint64_t offset, T value, kgsim::Loc loc = kgsim::Loc::current()) const {
        if (kgsim::ff_gm(buf_, ptr_ + offset, sizeof(T), 1) || kgsim::gm_scalar(buf_, ptr_ + offset, sizeof(T), 1, loc))
            std::memcpy(ptr_ + offset, &value, sizeof(T));
    }
    // a reference may be read or written: recorded as a read for the race detector. The body is the
    // simulator's bookkeeping (uninstrumented, as GetValue's): the access costs what gm_scalar charges
    KGSIM_SCALAR_ACCESSOR T& operator()(uint64_t offset, kgsim::Loc loc = kgsim::Loc::current()) const {
        kgsim::gm_scalar(buf_, ptr_ + offset, sizeof(T), 2, loc);
        return ptr_[offset];
    }
    template <class U>
    GlobalTensor<U> ReinterpretCast() const {
        GlobalTensor<U> r;
        r.ptr_ = reinterpret_cast<U*>(ptr_);
        r.size_ = size_ * sizeof(T) / sizeof(U);
        r.buf_ = buf_;
        return r;
    }
    __gm__ T* GetPhyAddr() const { return ptr_; }
    __gm__ T* GetPhyAddr(uint64_t offset) const { return ptr_ + offset; }
    uint64_t GetSize() const { return size_; }
    // kgsim:partial SetL2CacheHint: accepted; the timing model does not separate L2-bypassing traffic
    template <CacheRwMode rwMode = CacheRwMode::RW>
    void SetL2CacheHint(CacheMode) {}
};

// Tensor data formats, as the advanced APIs' template flags and ShapeInfo name them.
enum class DataFormat : uint8_t { ND = 0, NZ, NCHW, NC1HWC0, NHWC, NCDHW, NDC1HWC0, FRACTAL_Z_3D };

// ShapeInfo: the shape a LocalTensor carries for the advanced APIs (SetShapeInfo / GetShapeInfo)
constexpr int32_t K_MAX_SHAPE_DIM = 8;
struct ShapeInfo {
    ShapeInfo() = default;
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const uint8_t inputOriginalShapeDim,
              const uint32_t inputOriginalShape[], const DataFormat inputFormat)
        : shapeDim(inputShapeDim), originalShapeDim(inputOriginalShapeDim), dataFormat(inputFormat) {
        for (int i = 0; i < shapeDim && i < K_MAX_SHAPE_DIM; ++i) shape[i] = inputShape[i];
        for (int i = 0; i < originalShapeDim && i < K_MAX_SHAPE_DIM; ++i) originalShape[i] = inputOriginalShape[i];
    }
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[], const DataFormat inputFormat)
        : ShapeInfo(inputShapeDim, inputShape, inputShapeDim, inputShape, inputFormat) {}
    ShapeInfo(const uint8_t inputShapeDim, const uint32_t inputShape[])
        : ShapeInfo(inputShapeDim, inputShape, inputShapeDim, inputShape, DataFormat::ND) {}
    uint8_t shapeDim = 0;
    uint8_t originalShapeDim = 0;
    uint32_t shape[K_MAX_SHAPE_DIM] = {};
    uint32_t originalShape[K_MAX_SHAPE_DIM] = {};
    DataFormat dataFormat = DataFormat::ND;
};

// ---- LocalTensor --------------------------------------------------------------------------
template <class T>
class LocalTensor {
public:
    using PrimType = T;
    kgsim::TRef r_{};
    uint32_t size_ = 0;  // elements
    int32_t tag_ = 0;
    ShapeInfo shape_info_{};

    LocalTensor() = default;
    // A static tensor at byte `addr` of the position's memory, `tileSize` elements (no TPipe).
    LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize, kgsim::Loc loc = kgsim::Loc::current()) {
        *this = from(kgsim::static_tensor(static_cast<uint8_t>(pos), addr, uint64_t(tileSize) * sizeof(T), loc), 0,
                     tileSize * static_cast<uint32_t>(sizeof(T)));
    }
    static LocalTensor from(const kgsim::BufInfo& b, uint32_t offset_bytes, uint32_t nbytes) {
        LocalTensor t;
        t.r_.addr = b.addr + offset_bytes;
        t.r_.end = b.addr + b.len;
        t.r_.mem = b.mem;
        t.r_.pos = b.pos;
        t.r_.que = b.que;
        t.r_.slot = b.slot;
        t.r_.gen = b.gen;
        t.size_ = static_cast<uint32_t>(uint64_t(nbytes) * 8 / kgsim::kBits<T>);
        return t;
    }
    // `dst = src0 + src1`, `mask = src0 < src1`: the operator forms of the vector APIs (vector.h)
    template <class E, class = typename E::kgsim_tensor_expr>
    LocalTensor& operator=(const E& expr) {
        expr.assign_to(*this);
        return *this;
    }
    LocalTensor& operator=(const LocalTensor&) = default;
    LocalTensor(const LocalTensor&) = default;
    LocalTensor operator[](uint32_t offset) const {
        LocalTensor t = *this;
        t.r_.addr += static_cast<uint32_t>(uint64_t(offset) * kgsim::kBits<T> / 8);
        t.size_ = offset <= size_ ? size_ - offset : 0;
        return t;
    }
    template <class U>
    LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> t;
        t.r_ = r_;
        t.size_ = static_cast<uint32_t>(static_cast<uint64_t>(size_) * kgsim::kBits<T> / kgsim::kBits<U>);
        t.tag_ = tag_;
        return t;
    }
    KGSIM_UNINSTRUMENTED T* host_ptr(uint32_t index) const {
        return reinterpret_cast<T*>(kgsim::hot.mem[r_.mem] + r_.addr) + index;
    }
    KGSIM_SCALAR_ACCESSOR T GetValue(uint32_t index, kgsim::Loc loc = kgsim::Loc::current()) const {
        if (index >= size_) kgsim::local_oob(r_, uint64_t(index) * sizeof(T), sizeof(T), "GetValue", loc);
        kgsim::tick(loc);
        kgsim::hot.s_time += kgsim::hot.scalar_ub_cycles;
        ++kgsim::hot.local_reads;
        if (r_.mem == kgsim::MEM_UB) kgsim::ub_scalar_order(false);
        if (kgsim::hot.check_uninit)
            kgsim::uninit_check(r_, r_.addr + index * uint32_t(sizeof(T)), sizeof(T), "GetValue", loc);
        T v;
        std::memcpy(&v, host_ptr(index), sizeof(T));
        return v;
    }
    KGSIM_SCALAR_ACCESSOR void SetValue(uint32_t index, T value, kgsim::Loc loc = kgsim::Loc::current()) const {
        if (index >= size_) kgsim::local_oob(r_, uint64_t(index) * sizeof(T), sizeof(T), "SetValue", loc);
        kgsim::tick(loc);
        kgsim::hot.s_time += kgsim::hot.scalar_ub_cycles;
        if (r_.mem == kgsim::MEM_UB) kgsim::ub_scalar_order(true);
        if (kgsim::hot.check_uninit) kgsim::mark_init(r_.mem, r_.addr + index * uint32_t(sizeof(T)), sizeof(T));
        std::memcpy(host_ptr(index), &value, sizeof(T));
    }
    // the bounds and initialisation checks are the simulator's, not kernel code: out of line and
    // uninstrumented, so a UB scalar access costs scalar_ub_access_cycles and no basic block of its own.
    // Whether the reference is read or written shows in the kernel's own (instrumented) access through
    // it: rt_scalar.cpp passes that to ub_scalar_order
    KGSIM_SCALAR_ACCESSOR T& operator()(uint32_t index, kgsim::Loc loc = kgsim::Loc::current()) const {
        if (index >= size_) kgsim::local_oob(r_, uint64_t(index) * sizeof(T), sizeof(T), "operator()", loc);
        kgsim::hot.s_time += kgsim::hot.scalar_ub_cycles;
        ++kgsim::hot.local_reads;
        if (kgsim::hot.check_uninit) kgsim::mark_init(r_.mem, r_.addr + index * uint32_t(sizeof(T)), sizeof(T));
        return *host_ptr(index);
    }
    uint32_t GetSize() const { return size_; }
    void SetShapeInfo(const ShapeInfo& shapeInfo) { shape_info_ = shapeInfo; }
    ShapeInfo GetShapeInfo() const { return shape_info_; }
    uint32_t GetLength() const { return static_cast<uint32_t>(uint64_t(size_) * kgsim::kBits<T> / 8); }
    void SetSize(uint32_t size) { size_ = size; }
    uint64_t GetPhyAddr() const { return reinterpret_cast<uint64_t>(host_ptr(0)); }
    uint64_t GetPhyAddr(uint32_t offset) const { return reinterpret_cast<uint64_t>(host_ptr(offset)); }
    TPosition GetPosition() const { return static_cast<TPosition>(r_.pos); }
    void SetUserTag(int32_t tag) { tag_ = tag; }
    int32_t GetUserTag() const { return tag_; }
    void SetAddrWithOffset(const LocalTensor& src, uint32_t offset) { *this = src[offset]; }
    // The tensor's address record (CANN: TBuffAddr address_), for SetAddr: re-point a tensor.
    kgsim::TRef GetAddr() const { return r_; }
    void SetAddr(const kgsim::TRef& addr) {
        r_ = addr;
        size_ = static_cast<uint32_t>(uint64_t(addr.end - addr.addr) * 8 / kgsim::kBits<T>);
    }
};

// ---- TQue / TQueBind / TBuf -----------------------------------------------------------------
template <TPosition src, TPosition dst, int32_t depth = 1, auto mask = 0>
class TQueBind {
public:
    int32_t h_ = -1;
    uint32_t gen_ = 0;

    bool view_ = false;  // a copy: names the same queue, which its original alone releases

    TQueBind() = default;
    // CANN's queue is copyable (kernels pass one by value to a helper) and its buffers live in the
    // pipe, so a copy allocates from and frees to the same buffers: here, the same queue handle
    TQueBind(const TQueBind& o) : h_(o.h_), gen_(o.gen_), view_(true) {}
    TQueBind& operator=(const TQueBind& o) {
        if (this != &o) {
            if (h_ >= 0 && !view_) kgsim::que_release(h_, gen_);
            h_ = o.h_;
            gen_ = o.gen_;
            view_ = true;
        }
        return *this;
    }
    ~TQueBind() {
        if (h_ >= 0 && !view_) kgsim::que_release(h_, gen_);
    }
    void kgsim_init(uint32_t num, uint32_t len, const kgsim::Loc& loc) {
        if (h_ >= 0 && !view_) kgsim::que_release(h_, gen_);
        view_ = false;
        h_ = kgsim::que_init(static_cast<uint8_t>(src), static_cast<uint8_t>(dst), depth, num, len, loc);
        gen_ = kgsim::hot.gen;
    }
    template <class T>
    LocalTensor<T> AllocTensor(kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::BufInfo b = kgsim::que_alloc(h_, gen_, loc);
        return LocalTensor<T>::from(b, 0, b.len);
    }
    template <class T>
    bool EnQue(const LocalTensor<T>& tensor, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::que_enque(h_, gen_, tensor.r_, loc);
        return true;
    }
    template <class T>
    LocalTensor<T> DeQue(kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::BufInfo b = kgsim::que_deque(h_, gen_, loc);
        return LocalTensor<T>::from(b, 0, b.len);
    }
    // The position-naming forms (a VECIN/VECOUT-bound queue reused for vector compute): the user
    // positions only pick the synchronisation CANN inserts, which the simulator's queue already orders
    template <TPosition srcUserPos, TPosition dstUserPos, class T>
    bool EnQue(const LocalTensor<T>& tensor, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::que_enque(h_, gen_, tensor.r_, loc);
        return true;
    }
    template <TPosition srcUserPos, TPosition dstUserPos, class T>
    LocalTensor<T> DeQue(kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::BufInfo b = kgsim::que_deque(h_, gen_, loc);
        return LocalTensor<T>::from(b, 0, b.len);
    }
    // DeQue() with no type: dequeues and drops the tensor (a kernel waiting only for the data to land)
    void DeQue(kgsim::Loc loc = kgsim::Loc::current()) { (void)kgsim::que_deque(h_, gen_, loc); }
    template <class T>
    void FreeTensor(LocalTensor<T>& tensor, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::que_free(h_, gen_, tensor.r_, loc);
    }
    template <class T>
    void FreeTensor(LocalTensor<T>&& tensor, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::que_free(h_, gen_, tensor.r_, loc);
    }
    int32_t GetTensorCountInQue() { return kgsim::que_query(h_, gen_, 0); }
    bool HasTensorInQue() { return GetTensorCountInQue() > 0; }
    bool VacantInQue() { return GetTensorCountInQue() < (depth > 0 ? depth : 1); }
    bool HasIdleBuffer() { return kgsim::que_query(h_, gen_, 1) > 0; }
    void FreeAllEvent() {}
    // custom TBufPool hooks (EXTERN_IMPL_BUFPOOL, kgsim/bufpool.h): the pool places each buffer itself
    template <class H>
    void InitStartBufHandle(H handle, uint8_t num, uint32_t len, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim_pool_que_start(*this, handle, num, len, loc);
    }
    template <class P, class H>
    void InitBufHandle(P* pool, uint32_t index, H handle, uint32_t addr, uint32_t len,
                       kgsim::Loc loc = kgsim::Loc::current()) {
        (void)pool;
        kgsim_pool_que_slot(*this, handle, index, addr, len, loc);
    }
};

template <TPosition pos, int32_t depth = 1, auto mask = 0>
class TQue : public TQueBind<pos, pos, depth, mask> {};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
public:
    kgsim::BufInfo b_{};
    bool init_ = false;

    void kgsim_init(uint32_t len, const kgsim::Loc& loc) {
        b_ = kgsim::tbuf_init(static_cast<uint8_t>(pos), len, loc);
        init_ = true;
    }
    template <class T>
    LocalTensor<T> Get(kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::tbuf_check(b_, 0, 0, loc);
        return LocalTensor<T>::from(b_, 0, b_.len);
    }
    template <class T>
    LocalTensor<T> Get(uint32_t len, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::tbuf_check(b_, 0, uint64_t(len) * sizeof(T), loc);
        return LocalTensor<T>::from(b_, 0, len * uint32_t(sizeof(T)));
    }
    template <class T>
    LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim::tbuf_check(b_, bufOffset, uint64_t(size) * sizeof(T), loc);
        return LocalTensor<T>::from(b_, bufOffset, size * uint32_t(sizeof(T)));
    }
    // TBuf::AllocTensor returns the whole buffer like Get; TBuf::FreeTensor is a no-op on the NPU.
    template <class T>
    LocalTensor<T> AllocTensor(kgsim::Loc loc = kgsim::Loc::current()) { return Get<T>(loc); }
    template <class T>
    void FreeTensor(const LocalTensor<T>&) {}
    // custom TBufPool hooks, as for TQueBind
    template <class H>
    void InitStartBufHandle(H handle, uint8_t num, uint32_t len, kgsim::Loc loc = kgsim::Loc::current()) {
        kgsim_pool_que_start(*this, handle, num, len, loc);
    }
    template <class P, class H>
    void InitBufHandle(P* pool, uint32_t index, H handle, uint32_t addr, uint32_t len,
                       kgsim::Loc loc = kgsim::Loc::current()) {
        (void)pool;
        kgsim_pool_que_slot(*this, handle, index, addr, len, loc);
    }
};

// ---- TPipe --------------------------------------------------------------------------------
template <class Q>
struct kgsim_is_tbuf : std::false_type {};
template <TPosition pos>
struct kgsim_is_tbuf<TBuf<pos>> : std::true_type {};

class TPipe {
public:
    TPipe(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::tpipe_init(this, loc); }
    ~TPipe() { kgsim::tpipe_release(this); }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;
    void Init() {}
    template <class Q>
    bool InitBuffer(Q& que, uint8_t num, uint32_t len, kgsim::Loc loc = kgsim::Loc::current()) {
        static_assert(!kgsim_is_tbuf<Q>::value, "TPipe::InitBuffer(que, num, len) takes a TQue; a TBuf is "
                                                "initialised with InitBuffer(buf, len)");
        que.kgsim_init(num, len, loc);
        return true;
    }
    template <TPosition pos>
    bool InitBuffer(TBuf<pos>& buf, uint32_t len, kgsim::Loc loc = kgsim::Loc::current()) {
        buf.kgsim_init(len, loc);
        return true;
    }
    // TBufPool (kgsim/bufpool.h): a block of the pool's position, or the block of another pool (shared)
    template <class T>
    bool InitBufPool(T& bufPool, uint32_t len, kgsim::Loc loc = kgsim::Loc::current()) {
        return bufPool.kgsim_pool_from_pipe(len, loc);
    }
    template <class T, class U>
    bool InitBufPool(T& bufPool, uint32_t len, U& shareBuf, kgsim::Loc loc = kgsim::Loc::current()) {
        return bufPool.kgsim_place(shareBuf.kgsim_pool_start(), len < shareBuf.kgsim_pool_len() ? len : shareBuf.kgsim_pool_len());
    }
    void Reset(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::tpipe_reset(this, loc); }
    void Destroy(kgsim::Loc loc = kgsim::Loc::current()) { kgsim::tpipe_reset(this, loc); }
    TEventID FetchEventID(HardEvent evt) { return static_cast<TEventID>(kgsim::fetch_event_id(static_cast<int>(evt))); }
    template <HardEvent evt>
    TEventID FetchEventID() { return FetchEventID(evt); }
    template <HardEvent evt>
    TEventID AllocEventID() { return FetchEventID(evt); }
    template <HardEvent evt>
    void ReleaseEventID(TEventID) {}
};

inline TPipe* GetTPipePtr() { return static_cast<TPipe*>(kgsim::hot.tpipe); }

// PopStackBuffer<T, pos>(popLocal): popLocal becomes the whole rest of the position's memory after what TPipe
// allocated; false when nothing is left
template <class T, TPosition pos>
bool PopStackBuffer(LocalTensor<T>& popLocal, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::BufInfo b = kgsim::stack_buffer(static_cast<uint8_t>(pos), loc);
    if (b.len < sizeof(T)) return false;
    popLocal = LocalTensor<T>::from(b, 0, b.len / uint32_t(sizeof(T)) * uint32_t(sizeof(T)));
    return true;
}
}  // namespace AscendC

// Ascend C declares GetTPipePtr at global scope too; kernels call it unqualified.
using AscendC::GetTPipePtr;

// The asc language's built-in `block_idx` / `block_num` (what GetBlockIdx / GetBlockNum
// return), read at the point of use: each block sees its own index.
struct KgsimBlockIdxVar {
    operator int64_t() const { return AscendC::GetBlockIdx(); }  // NOLINT: implicit, as the built-in
};
struct KgsimBlockNumVar {
    operator int64_t() const { return AscendC::GetBlockNum(); }  // NOLINT: implicit, as the built-in
};
[[maybe_unused]] inline constexpr KgsimBlockIdxVar block_idx{};
[[maybe_unused]] inline constexpr KgsimBlockNumVar block_num{};
