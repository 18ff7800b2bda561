// kgsim: the AI Core's raw vector builtins that cann-ops' add_layer_norm kernels call on
// GetPhyAddr() pointers (the layer under the Ascend C API). Each is the instruction under a
// documented API and runs (and is charged) as that API with the mask taken from the mask register:
//   vor -> Or, vector_dup -> Duplicate, copy_ubuf_to_ubuf -> DataCopy UB -> UB (DataCopyParams units),
//   vtranspose -> Transpose (16 x 16, b16), set_va_reg_sb + scatter_vnchwconv_b16 -> TransDataTo5HD on
//   address lists (the VA registers hold the lists: 8 addresses each, a list of 16 is two registers),
//   set_mask_norm / set_mask_count -> SetMaskNorm / SetMaskCount.
#pragma once
#include "kgsim/vector.h"

enum ub_addr8_t { VA0 = 0, VA1, VA2, VA3, VA4, VA5, VA6, VA7 };

namespace kgsim {
constexpr int kRawVaBlocks = 1024;  // per-block VA register files (a launch has at most this many blocks)
inline uint64_t raw_va_regs[kRawVaBlocks][8][8];
inline uint64_t* raw_va(ub_addr8_t reg, const Loc& loc) {
    int64_t b = hot.block_idx;
    if (b < 0 || b >= kRawVaBlocks || int(reg) < 0 || int(reg) > 7)
        fault("invalid_argument", loc, "VA register %d of block %lld: the simulator keeps VA0..VA7 for blocks below %d",
              int(reg), (long long)b, kRawVaBlocks);
    return raw_va_regs[b][int(reg)];
}
template <class T>
inline TRef raw_ub(T* p, const char* api, const Loc& loc) {
    return ub_ref_of_addr(uint64_t(reinterpret_cast<uintptr_t>(p)), api, loc);
}
}  // namespace kgsim

inline void set_va_reg_sb(ub_addr8_t reg, const uint64_t* addrs, kgsim::Loc loc = kgsim::Loc::current()) {
    uint64_t* r = kgsim::raw_va(reg, loc);
    for (int i = 0; i < 8; ++i) r[i] = addrs[i];
}
// dst and src name the first of two VA registers: 16 b16 rows in, 16 out, repeat times, strides in blocks
inline void scatter_vnchwconv_b16(ub_addr8_t dst, ub_addr8_t src, uint8_t repeat, uint16_t dstStride,
                                  uint16_t srcStride, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::TRef d[16], s[16];
    for (int i = 0; i < 16; ++i) {
        d[i] = kgsim::ub_ref_of_addr(kgsim::raw_va(ub_addr8_t(int(dst) + i / 8), loc)[i % 8],
                                     "scatter_vnchwconv_b16", loc);
        s[i] = kgsim::ub_ref_of_addr(kgsim::raw_va(ub_addr8_t(int(src) + i / 8), loc)[i % 8],
                                     "scatter_vnchwconv_b16", loc);
    }
    kgsim::trans_5hd(kgsim::DT::U16, d, s, false, false, repeat, dstStride, srcStride, loc);
}
template <class T>
inline void vor(T* dst, T* src0, T* src1, uint8_t repeat, uint8_t dstBlkStride, uint8_t src0BlkStride,
                uint8_t src1BlkStride, uint8_t dstRepStride, uint8_t src0RepStride, uint8_t src1RepStride,
                kgsim::Loc loc = kgsim::Loc::current()) {
    static_assert(std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t>,
                  "[kgsim:unsupported_dtype] vor: int16_t or uint16_t (as Or)");
    kgsim::vec_op(kgsim::V_OR, kgsim::dt_of<T>::v, kgsim::raw_ub(dst, "vor", loc), kgsim::raw_ub(src0, "vor", loc),
                  kgsim::raw_ub(src1, "vor", loc), kgsim::Scalar{}, kgsim::MaskArg{3, 0, 0, 0},
                  kgsim::RepArg{repeat, dstBlkStride, src0BlkStride, src1BlkStride, dstRepStride, src0RepStride,
                                src1RepStride},
                  loc);
}
template <class T>
inline void vector_dup(T* dst, T value, uint8_t repeat, uint16_t dstBlkStride, uint16_t srcBlkStride,
                       uint8_t dstRepStride, uint8_t srcRepStride, kgsim::Loc loc = kgsim::Loc::current()) {
    (void)srcBlkStride, (void)srcRepStride;  // the source is a scalar
    kgsim::vec_op(kgsim::V_DUP, kgsim::dt_of<T>::v, kgsim::raw_ub(dst, "vector_dup", loc), kgsim::TRef{},
                  kgsim::TRef{}, kgsim::scalar_of<T>(value), kgsim::MaskArg{3, 0, 0, 0},
                  kgsim::RepArg{repeat, dstBlkStride, 0, 0, dstRepStride, 0, 0}, loc);
}
// lengths and gaps in 32-byte blocks, as DataCopyParams; sid is reserved
template <class T>
inline void copy_ubuf_to_ubuf(T* dst, T* src, uint8_t sid, uint16_t nBurst, uint16_t lenBurst, uint16_t srcGap,
                              uint16_t dstGap, kgsim::Loc loc = kgsim::Loc::current()) {
    (void)sid;
    kgsim::CopyParams p{};
    p.block_count = nBurst;
    p.block_len = uint64_t(lenBurst) * 32;
    p.src_gap = uint64_t(srcGap) * 32;
    p.dst_gap = uint64_t(dstGap) * 32;
    kgsim::copy_local_to_local(kgsim::raw_ub(dst, "copy_ubuf_to_ubuf", loc), kgsim::raw_ub(src, "copy_ubuf_to_ubuf", loc),
                               sizeof(T), p, "copy_ubuf_to_ubuf", loc);
}
inline void vtranspose(uint16_t* dst, uint16_t* src, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::transpose16(kgsim::DT::U16, kgsim::raw_ub(dst, "vtranspose", loc), kgsim::raw_ub(src, "vtranspose", loc), loc);
}
// the mask-mode switches under SetMaskNorm / SetMaskCount (flash_attention_score_with_large_head_dim
// starts its kernel with set_mask_norm())
inline void set_mask_norm(kgsim::Loc loc = kgsim::Loc::current()) { AscendC::SetMaskNorm(loc); }
inline void set_mask_count(kgsim::Loc loc = kgsim::Loc::current()) { AscendC::SetMaskCount(loc); }
