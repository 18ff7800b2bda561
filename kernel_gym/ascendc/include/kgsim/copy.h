// kgsim: DataCopy, DataCopyPad and their parameter structs.
#pragma once
#include "kgsim/tensor.h"

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

}  // namespace AscendC
