// kgsim: DataCopy, DataCopyPad and their parameter structs.
#pragma once
#include "kgsim/tensor.h"
#include <algorithm>
#include <vector>

namespace AscendC {

struct DataCopyParams {
    DataCopyParams() {}
    DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
    uint16_t blockCount = DEFAULT_DATA_COPY_NBURST;
    uint16_t blockLen = 0;  // 32-byte units (DataCopy) or bytes (DataCopyPad)
    union {
        uint16_t srcGap = 0;
        uint16_t srcStride;
    };
    union {
        uint16_t dstGap = 0;
        uint16_t dstStride;
    };
};

struct DataCopyExtParams {
    DataCopyExtParams() {}
    DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn, const uint32_t dstStrideIn,
                      const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
    uint16_t blockCount = DEFAULT_DATA_COPY_NBURST;
    uint32_t blockLen = 0;  // bytes
    uint32_t srcStride = DEFAULT_DATA_COPY_STRIDE;
    uint32_t dstStride = DEFAULT_DATA_COPY_STRIDE;
    uint32_t rsv = 0;
};

struct DataCopyPadParams {
    DataCopyPadParams() {}
    DataCopyPadParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                      const uint64_t padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

template <class T>
struct DataCopyPadExtParams {
    DataCopyPadExtParams() {}
    DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue, T padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = 0;
};

namespace kgsim_detail {
template <class T> inline uint64_t bits_of(const T& v) {
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof(T) < 8 ? sizeof(T) : 8);
    return b;
}
// the pad-value register SetPadValue writes: DataCopyPad GM -> UB with isPad == false pads with it.
// A core register: it holds for the block that set it (hot.gen changes with every block), so a later
// launch or another block starts without it.
inline bool pad_value_set = false;
inline uint32_t pad_value_gen = 0;
inline uint64_t pad_value_bits = 0;
inline void use_pad_register(kgsim::CopyParams& p) {
    if (!p.is_pad && pad_value_set && pad_value_gen == kgsim::hot.gen) {
        p.is_pad = 1;
        p.pad_bits = pad_value_bits;
    }
}
inline kgsim::CopyParams count_params(uint64_t bytes) {
    kgsim::CopyParams p{};
    p.block_count = 1;
    p.block_len = bytes;
    p.count_form = 1;
    return p;
}
inline kgsim::CopyParams block_params(const DataCopyParams& d) {  // lengths and gaps in 32-byte blocks
    kgsim::CopyParams p{};
    p.block_count = d.blockCount;
    p.block_len = uint64_t(d.blockLen) * 32;
    p.src_gap = uint64_t(d.srcStride) * 32;
    p.dst_gap = uint64_t(d.dstStride) * 32;
    return p;
}
// DataCopyPad: block length in bytes; the GM-side gap in bytes, the UB-side gap in 32-byte blocks.
inline kgsim::CopyParams pad_params(uint32_t count, uint64_t len, uint64_t src_stride, uint64_t dst_stride,
                                    bool gm_is_src) {
    kgsim::CopyParams p{};
    p.block_count = count;
    p.block_len = len;
    p.src_gap = gm_is_src ? src_stride : src_stride * 32;
    p.dst_gap = gm_is_src ? dst_stride * 32 : dst_stride;
    p.pad = 1;
    return p;
}
}  // namespace kgsim_detail

// ---- DataCopy -----------------------------------------------------------------------------
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count,
              kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::copy_gm_to_local(dst.r_, src.buf_, src.ptr_, kgsim::dt_of<T>::v, sizeof(T),
                            kgsim_detail::count_params(uint64_t(count) * sizeof(T)), "DataCopy", loc);
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count,
              kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::copy_local_to_gm(dst.buf_, dst.ptr_, src.r_, kgsim::dt_of<T>::v, sizeof(T),
                            kgsim_detail::count_params(uint64_t(count) * sizeof(T)), "DataCopy", loc);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count,
              kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::copy_local_to_local(dst.r_, src.r_, sizeof(T), kgsim_detail::count_params(uint64_t(count) * sizeof(T)),
                               "DataCopy", loc);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& params,
              kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::copy_gm_to_local(dst.r_, src.buf_, src.ptr_, kgsim::dt_of<T>::v, sizeof(T),
                            kgsim_detail::block_params(params), "DataCopy", loc);
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params,
              kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::copy_local_to_gm(dst.buf_, dst.ptr_, src.r_, kgsim::dt_of<T>::v, sizeof(T),
                            kgsim_detail::block_params(params), "DataCopy", loc);
}
template <class T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params,
              kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::copy_local_to_local(dst.r_, src.r_, sizeof(T), kgsim_detail::block_params(params), "DataCopy", loc);
}

// ---- DataCopy of slices (GM <-> UB) ------------------------------------------------------------
// Each SliceInfo list describes a set of pieces of a dimValue-dimensional tensor (dimension 0
// innermost): along dimension 0, pieces of burstLen 32-byte blocks starting at startIndex, `stride`
// elements apart, up to endIndex; along a higher dimension, indices startIndex, startIndex +
// stride + 1, ... up to endIndex. The source pieces' elements, in order, fill the destination's.
// Each piece is one DMA burst.
constexpr uint32_t K_MAX_DIM = 8;  // the most dimensions a SliceInfo list describes
struct SliceInfo {
    SliceInfo() {}
    SliceInfo(const uint32_t startIndexIn, const uint32_t endIndexIn, const uint32_t strideIn,
              const uint32_t burstLenIn, const uint32_t shapeValueIn = 0)
        : startIndex(startIndexIn), endIndex(endIndexIn), stride(strideIn), burstLen(burstLenIn),
          shapeValue(shapeValueIn) {}
    uint32_t startIndex = 0;
    uint32_t endIndex = ONE_BLK_SIZE - 1;
    uint32_t stride = 0;
    uint32_t burstLen = ONE_BLK_SIZE;
    uint32_t shapeValue = 0;
};

namespace kgsim_detail {
struct SlicePiece {
    uint64_t offset;  // elements
    uint64_t count;   // elements
};
inline std::vector<SlicePiece> slice_pieces(const SliceInfo info[], uint32_t dims, uint32_t elem_bytes) {
    std::vector<SlicePiece> out;
    if (dims == 0) return out;
    std::vector<uint64_t> pitch(dims, 1);
    for (uint32_t d = 1; d < dims; ++d) pitch[d] = pitch[d - 1] * info[d - 1].shapeValue;
    const uint64_t burst = std::max<uint64_t>(1, uint64_t(info[0].burstLen) * 32 / elem_bytes);
    std::vector<uint64_t> idx(dims, 0);
    for (uint32_t d = 1; d < dims; ++d) idx[d] = info[d].startIndex;
    while (true) {
        uint64_t base = 0;
        for (uint32_t d = 1; d < dims; ++d) base += idx[d] * pitch[d];
        for (uint64_t p = info[0].startIndex; p <= info[0].endIndex; p += burst + info[0].stride)
            out.push_back({base + p, std::min<uint64_t>(burst, uint64_t(info[0].endIndex) + 1 - p)});
        uint32_t d = 1;
        for (; d < dims; ++d) {  // next index of the higher dimensions, innermost first
            idx[d] += uint64_t(info[d].stride) + 1;
            if (idx[d] <= info[d].endIndex) break;
            idx[d] = info[d].startIndex;
        }
        if (d >= dims) break;
    }
    return out;
}
// Pair the source pieces with the destination pieces element by element; call f(dstOff, srcOff, count).
template <class F>
inline void slice_walk(const SliceInfo dstInfo[], const SliceInfo srcInfo[], uint32_t dims, uint32_t elem_bytes,
                       F&& f) {
    auto dst = slice_pieces(dstInfo, dims, elem_bytes);
    auto src = slice_pieces(srcInfo, dims, elem_bytes);
    size_t i = 0, j = 0;
    uint64_t di = 0, sj = 0;
    while (i < dst.size() && j < src.size()) {
        uint64_t n = std::min(dst[i].count - di, src[j].count - sj);
        if (n) f(dst[i].offset + di, src[j].offset + sj, n);
        di += n;
        sj += n;
        if (di == dst[i].count) ++i, di = 0;
        if (sj == src[j].count) ++j, sj = 0;
    }
}
}  // namespace kgsim_detail

template <class T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const SliceInfo dstSliceInfo[],
              const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim_detail::slice_walk(dstSliceInfo, srcSliceInfo, dimValue, sizeof(T), [&](uint64_t d, uint64_t s, uint64_t n) {
        kgsim::CopyParams p = kgsim_detail::count_params(n * sizeof(T));
        p.count_form = 0;
        kgsim::copy_gm_to_local(dst[uint32_t(d)].r_, src.buf_, src.ptr_ + s, kgsim::dt_of<T>::v, sizeof(T), p,
                                "DataCopy", loc);
    });
}
template <class T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const SliceInfo dstSliceInfo[],
              const SliceInfo srcSliceInfo[], const uint32_t dimValue = 1, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim_detail::slice_walk(dstSliceInfo, srcSliceInfo, dimValue, sizeof(T), [&](uint64_t d, uint64_t s, uint64_t n) {
        kgsim::CopyParams p = kgsim_detail::count_params(n * sizeof(T));
        p.count_form = 0;
        kgsim::copy_local_to_gm(dst.buf_, dst.ptr_ + d, src[uint32_t(s)].r_, kgsim::dt_of<T>::v, sizeof(T), p,
                                "DataCopy", loc);
    });
}

// ---- DataCopyPad --------------------------------------------------------------------------
template <class T, PaddingMode mode = PaddingMode::Normal>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& params,
                 const DataCopyPadExtParams<T>& padParams, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::CopyParams p = kgsim_detail::pad_params(params.blockCount, params.blockLen, params.srcStride,
                                                   params.dstStride, true);
    p.is_pad = padParams.isPad;
    p.left_pad = padParams.leftPadding;
    p.right_pad = padParams.rightPadding;
    p.pad_bits = kgsim_detail::bits_of(padParams.paddingValue);
    kgsim_detail::use_pad_register(p);
    kgsim::copy_gm_to_local(dst.r_, src.buf_, src.ptr_, kgsim::dt_of<T>::v, sizeof(T), p, "DataCopyPad", loc);
}
template <class T, PaddingMode mode = PaddingMode::Normal>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& params,
                 const DataCopyPadParams& padParams, kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::CopyParams p = kgsim_detail::pad_params(params.blockCount, params.blockLen, params.srcStride,
                                                   params.dstStride, true);
    p.is_pad = padParams.isPad;
    p.left_pad = padParams.leftPadding;
    p.right_pad = padParams.rightPadding;
    T v = static_cast<T>(padParams.paddingValue);
    p.pad_bits = kgsim_detail::bits_of(v);
    kgsim_detail::use_pad_register(p);
    kgsim::copy_gm_to_local(dst.r_, src.buf_, src.ptr_, kgsim::dt_of<T>::v, sizeof(T), p, "DataCopyPad", loc);
}
template <class T, PaddingMode mode = PaddingMode::Normal>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& params,
                 kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::CopyParams p = kgsim_detail::pad_params(params.blockCount, params.blockLen, params.srcStride,
                                                   params.dstStride, false);
    kgsim::copy_local_to_gm(dst.buf_, dst.ptr_, src.r_, kgsim::dt_of<T>::v, sizeof(T), p, "DataCopyPad", loc);
}
template <class T, PaddingMode mode = PaddingMode::Normal>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params,
                 kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::CopyParams p = kgsim_detail::pad_params(params.blockCount, params.blockLen, params.srcStride,
                                                   params.dstStride, false);
    kgsim::copy_local_to_gm(dst.buf_, dst.ptr_, src.r_, kgsim::dt_of<T>::v, sizeof(T), p, "DataCopyPad", loc);
}

// Fill a GM range with a value (MTE3), e.g. to zero an output before atomic accumulation.
template <class T>
void InitGlobalMemory(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value,
                      kgsim::Loc loc = kgsim::Loc::current()) {
    kgsim::gm_fill(gmWorkspaceAddr.buf_, gmWorkspaceAddr.ptr_, kgsim::dt_of<T>::v, sizeof(T), size,
                   kgsim_detail::bits_of(value), loc);
}

// Fill: the current name of the GM initialisation above (same semantics, same types).
template <class T>
void Fill(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value,
          kgsim::Loc loc = kgsim::Loc::current()) {
    InitGlobalMemory(gmWorkspaceAddr, size, value, loc);
}

// InitOutput: the older name of the same fill, documented as InitOutput(GlobalTensor<T>, uint32_t size,
// T value = 0): the tensor by value, so a view (`y[offset]`) can be passed directly
template <class T>
void InitOutput(GlobalTensor<T> gmWorkspaceAddr, uint32_t size, T value = T(0),
                kgsim::Loc loc = kgsim::Loc::current()) {
    InitGlobalMemory(gmWorkspaceAddr, uint64_t(size), value, loc);
}

}  // namespace AscendC
