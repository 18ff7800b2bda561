// kgsim runtime: data movement (DataCopy, DataCopyPad, GM fill), with checks and timing.
#include "rt.h"

namespace kgsim {
namespace {

uint64_t round32(uint64_t x) { return (x + 31) / 32 * 32; }

template <class T>
void atomic_apply_t(uint8_t* g, const uint8_t* s, uint64_t bytes, int mode) {
    uint64_t n = bytes / sizeof(T);
    for (uint64_t i = 0; i < n; ++i) {
        T a, b;
        std::memcpy(&a, g + i * sizeof(T), sizeof(T));
        std::memcpy(&b, s + i * sizeof(T), sizeof(T));
        T r;
        if constexpr (std::is_same_v<T, half>) {
            float fa = float(a), fb = float(b);
            r = half(mode == 1 ? fa + fb : mode == 2 ? (fa > fb ? fa : fb) : (fa < fb ? fa : fb));
        } else if constexpr (std::is_same_v<T, bfloat16_t>) {
            float fa = float(a), fb = float(b);
            r = bfloat16_t(mode == 1 ? fa + fb : mode == 2 ? (fa > fb ? fa : fb) : (fa < fb ? fa : fb));
        } else if constexpr (std::is_integral_v<T>) {
            int64_t ia = a, ib = b;
            r = T(mode == 1 ? ia + ib : mode == 2 ? std::max(ia, ib) : std::min(ia, ib));
        } else {
            r = mode == 1 ? a + b : mode == 2 ? (a > b ? a : b) : (a < b ? a : b);
        }
        std::memcpy(g + i * sizeof(T), &r, sizeof(T));
    }
}

void atomic_apply(DT dt, uint8_t* g, const uint8_t* s, uint64_t bytes, int mode) {
    switch (dt) {
        case DT::F32: atomic_apply_t<float>(g, s, bytes, mode); break;
        case DT::F16: atomic_apply_t<half>(g, s, bytes, mode); break;
        case DT::BF16: atomic_apply_t<bfloat16_t>(g, s, bytes, mode); break;
        case DT::I8: atomic_apply_t<int8_t>(g, s, bytes, mode); break;
        case DT::I16: atomic_apply_t<int16_t>(g, s, bytes, mode); break;
        case DT::I32: atomic_apply_t<int32_t>(g, s, bytes, mode); break;
        default: atomic_apply_t<float>(g, s, bytes, mode); break;
    }
}

void fill_pattern(uint8_t* dst, uint64_t bytes, uint64_t bits, uint32_t es) {
    for (uint64_t i = 0; i + es <= bytes; i += es) std::memcpy(dst + i, &bits, es);
}

// count form: DataCopy(dst, src, count) needs count*sizeof(T) to be a multiple of 32 bytes
void count_rule(CopyParams& p, uint32_t es, const char* api, const Loc& loc) {
    if (!p.count_form || p.block_len % 32 == 0) return;
    uint64_t n = p.block_len / es;
    if (cfg.align_strict)
        fault("misaligned_copy", loc, "%s of %llu elements = %llu B: the byte count must be a multiple of 32; the NPU "
              "silently copies only %llu B. Copy a 32-byte multiple, or use DataCopyPad for the tail",
              api, (unsigned long long)n, (unsigned long long)p.block_len, (unsigned long long)(p.block_len / 32 * 32));
    if (warn_new("misaligned_copy", loc))
        warn("misaligned_copy", loc,
             fmt("%s of %llu elements = %llu B copies only %llu B, as the NPU does: the count form moves whole 32-byte "
                 "blocks. Copy a 32-byte multiple, or use DataCopyPad for the tail",
                 api, (unsigned long long)n, (unsigned long long)p.block_len, (unsigned long long)(p.block_len / 32 * 32)));
    p.block_len = p.block_len / 32 * 32;
}

// The copy instructions hold the burst count in a 12-bit field: the CCE intrinsic reference's general
// copy parameters give nBurst in [0, 2^12 - 1] (copy_gm_to_ubuf, copy_ubuf_to_gm, copy_ubuf_to_ubuf and
// the *_align forms DataCopyPad issues), and DataCopyParams.blockCount is documented as [1, 4095] on
// Atlas A2. DataCopyParams carries it as a uint16_t, so a larger blockCount compiles and the NPU sees its
// low 12 bits: 4096 bursts are 0 bursts, a copy that moves nothing (EvoKernel's MinReductionOverADimension
// issues exactly that). Strict mode faults; the default does as the NPU and warns.
void burst_rule(CopyParams& p, const char* api, const Loc& loc) {
    if (p.count_form || p.block_count <= 4095) return;
    const uint32_t kept = p.block_count & 0xFFFu;
    if (cfg.align_strict)
        fault("invalid_argument", loc, "%s: blockCount %u is outside [1, 4095]: the copy instruction's burst count "
              "is 12 bits wide, so the NPU would copy %u block(s). Split the copy into calls of at most 4095 blocks",
              api, p.block_count, kept);
    warn("invalid_argument", loc,
         fmt("%s: blockCount %u is outside [1, 4095]; the NPU keeps the low 12 bits of the burst count and copies "
             "%u block(s), as done here. Split the copy into calls of at most 4095 blocks",
             api, p.block_count, kept));
    p.block_count = kept;
}

double dma_occupancy(uint64_t bytes, uint32_t blocks, double rate) {
    return cfg.dma_issue_cycles + blocks * cfg.dma_burst_cycles + double(bytes) / rate;
}

}  // namespace

void copy_gm_to_local(const TRef& dst, int32_t buf, const void* gm, DT dt, uint32_t es, const CopyParams& p0,
                      const char* api, const Loc& loc) {
    check_in_launch(loc, api);
    tick(loc);
    CopyParams p = p0;
    count_rule(p, es, api, loc);
    burst_rule(p, api, loc);
    if (dst.mem != MEM_UB && dst.mem != MEM_L1)
        fault("invalid_argument", loc, "%s GM -> local: the destination must be in UB (VECIN/VECOUT/VECCALC) or L1 "
              "(A1/B1)", api);
    if (dst.mem == MEM_L1) require_aic(api, loc);
    uintptr_t g = reinterpret_cast<uintptr_t>(gm);
    if (g % es)
        fault("misaligned_copy", loc, "%s: the GM source address is not aligned to the %u-byte element size", api, es);
    if (p.pad) {
        if (p.block_len % es)
            fault("invalid_argument", loc, "%s: blockLen %llu B is not a multiple of sizeof(T) = %u", api,
                  (unsigned long long)p.block_len, es);
        if (p.left_pad * es > 32 || p.right_pad * es > 32)
            fault("invalid_argument", loc, "%s: leftPadding/rightPadding (%u, %u elements) may cover at most 32 B each",
                  api, p.left_pad, p.right_pad);
    }
    if (p.block_count == 0 || p.block_len == 0) return;
    uint64_t lpad = uint64_t(p.left_pad) * es, rpad = uint64_t(p.right_pad) * es;
    uint64_t padded = p.pad ? round32(lpad + p.block_len + rpad) : p.block_len;
    uint64_t ub_step = padded + p.dst_gap, gm_step = p.block_len + p.src_gap;
    uint64_t ub_span = (p.block_count - 1) * ub_step + padded;
    uint64_t gm_span = (p.block_count - 1) * gm_step + p.block_len;
    check_local(dst, 0, ub_span, 32, api, "dst", loc);
    const GmClip clip = gm_clip(buf, g, gm_span, es, api, "reads", loc);
    if (loop_skip(loc, loop_key(tref_key(dst), buf, es, copy_key(p)))) return;
    std::vector<uint8_t> shadow;  // a range past the buffer: its bytes, then poison
    uintptr_t from = g;
    if (clip.clipped && !clip.own_pages) {  // (within the buffer's own pages the bytes are read there)
        shadow.assign(gm_span, 0xFF);
        if (clip.hi > clip.lo) std::memcpy(shadow.data() + (clip.lo - g), reinterpret_cast<void*>(clip.lo), clip.hi - clip.lo);
        from = reinterpret_cast<uintptr_t>(shadow.data());
    }
    uint8_t* ub = mem_ptr(dst.mem, dst.addr);
    for (uint32_t i = 0; i < p.block_count; ++i) {
        uint8_t* d = ub + i * ub_step;
        const uint8_t* s = reinterpret_cast<const uint8_t*>(from + i * gm_step);
        std::memcpy(d + lpad, s, p.block_len);
        mark_init_range(dst.mem, dst.addr + uint32_t(i * ub_step + lpad), uint32_t(p.block_len));
        if (p.pad && padded > p.block_len) {
            uint64_t tail = padded - lpad - p.block_len;
            // The dummy elements up to 32 B: with no left or right padding the hardware repeats the
            // block's first element, isPad or not; with padding, isPad fills them with paddingValue
            // (DataCopyPad's padding rules; cann-ops' isamin pads with isPad and paddingValue 0)
            if (lpad == 0 && rpad == 0) {
                uint64_t first = 0;
                std::memcpy(&first, s, es);
                fill_pattern(d + p.block_len, tail, first, es);
                mark_init_range(dst.mem, dst.addr + uint32_t(i * ub_step + p.block_len), uint32_t(tail));
            } else if (p.is_pad) {
                fill_pattern(d, lpad, p.pad_bits, es);
                fill_pattern(d + lpad + p.block_len, tail, p.pad_bits, es);
                mark_init_range(dst.mem, dst.addr + uint32_t(i * ub_step), uint32_t(lpad));
                mark_init_range(dst.mem, dst.addr + uint32_t(i * ub_step + lpad + p.block_len), uint32_t(tail));
            } else {
                std::memset(d, 0xFF, lpad);  // undefined on the NPU
                std::memset(d + lpad + p.block_len, 0xFF, tail);
            }
        }
        if (clip.clipped) continue;  // recorded once below, in bounds
        if (p.src_gap != 0 || i == 0) record_access(g + i * gm_step, p.src_gap == 0 ? gm_span : p.block_len, AK_READ, loc);
    }
    if (clip.clipped && clip.hi > clip.lo) record_access(clip.lo, clip.hi - clip.lo, AK_READ, loc);
    uint64_t bytes = uint64_t(p.block_count) * p.block_len;
    if (rt.cur) {
        uint64_t hbm = bytes;
        if (dst.mem != MEM_UB) {  // cube operands are re-read from L2 (rt_cube.cpp)
            hbm = 0;
            for (uint32_t i = 0; i < p.block_count; ++i) hbm += cube_gm_first_touch(g + i * gm_step, p.block_len);
        }
        rt.cur->gm_read += hbm;
    }
    Span w{dst.addr, uint32_t(ub_span)};
    double occ = dma_occupancy(bytes, p.block_count, cfg.mte2_bytes_per_cycle);
    double start = issue(P_MTE2, occ, cfg.mte2_startup_cycles, nullptr, 0, dst.mem == MEM_UB ? &w : nullptr,
                         dst.mem == MEM_UB ? 1 : 0, api, loc);
    if (dst.mem != MEM_UB)
        cube_track(dst.mem, dst.addr, uint32_t(ub_span), P_MTE2, true, start, start + occ + cfg.mte2_startup_cycles,
                   api, loc);
    (void)dt;
}

void copy_local_to_gm(int32_t buf, void* gm, const TRef& src, DT dt, uint32_t es, const CopyParams& p0,
                      const char* api, const Loc& loc) {
    check_in_launch(loc, api);
    tick(loc);
    CopyParams p = p0;
    count_rule(p, es, api, loc);
    burst_rule(p, api, loc);
    if (src.mem != MEM_UB)
        fault("invalid_argument", loc, "%s local -> GM: the source must be in UB (VECIN/VECOUT/VECCALC)", api);
    uintptr_t g = reinterpret_cast<uintptr_t>(gm);
    if (g % es)
        fault("misaligned_copy", loc, "%s: the GM destination address is not aligned to the %u-byte element size", api,
              es);
    if (p.pad && p.block_len % es)
        fault("invalid_argument", loc, "%s: blockLen %llu B is not a multiple of sizeof(T) = %u", api,
              (unsigned long long)p.block_len, es);
    if (p.block_count == 0 || p.block_len == 0) return;
    uint64_t ub_block = p.pad ? round32(p.block_len) : p.block_len;
    uint64_t ub_step = ub_block + p.src_gap, gm_step = p.block_len + p.dst_gap;
    uint64_t ub_span = (p.block_count - 1) * ub_step + p.block_len;
    uint64_t gm_span = (p.block_count - 1) * gm_step + p.block_len;
    check_local(src, 0, ub_span, 32, api, "src", loc);
    const GmClip clip = gm_clip(buf, g, gm_span, es, api, "writes", loc);
    if (loop_skip(loc, loop_key(tref_key(src), buf, es, copy_key(p)), rt.blk.atomic ? 1 : 0)) return;
    std::vector<uint8_t> shadow;  // a range past the buffer: written here, only its in-bounds part kept
    uintptr_t to = g;
    if (clip.clipped) {
        shadow.assign(gm_span, 0);
        if (clip.own_pages) std::memcpy(shadow.data(), reinterpret_cast<void*>(g), gm_span);  // an atomic reads them
        else if (clip.hi > clip.lo)
            std::memcpy(shadow.data() + (clip.lo - g), reinterpret_cast<void*>(clip.lo), clip.hi - clip.lo);
        to = reinterpret_cast<uintptr_t>(shadow.data());
    }
    const uint8_t* ub = mem_ptr(src.mem, src.addr);
    int atomic = rt.blk.atomic;
    DT adt = atomic && dt_size(rt.blk.atomic_dt) == es ? rt.blk.atomic_dt : dt;
    // An atomic add of zero elements changes nothing, so zeros at either end of a block take no
    // part in races: kernels for unaligned lengths add a zero-padded tail into the next block's
    // range. Only the span between the first and the last non-zero element is recorded.
    uint32_t aes = dt_size(adt);
    auto nonzero = [&](const uint8_t* s, uint64_t k) {
        for (uint32_t b = 0; b < aes; ++b)
            if (s[k * aes + b]) return true;
        return false;
    };
    uint64_t span_lo = UINT64_MAX, span_hi = 0;  // the GM range recorded for contiguous blocks
    for (uint32_t i = 0; i < p.block_count; ++i) {
        const uint8_t* s = ub + i * ub_step;
        uint8_t* d = reinterpret_cast<uint8_t*>(to + i * gm_step);
        if (cfg.check_uninit) check_init_range(src, src.addr + uint32_t(i * ub_step), uint32_t(p.block_len), api, loc);
        // Storing exactly the bytes another block of the launch stored there gives the same result
        // in either order (kernels whose blocks all write the same result to the same place): that
        // write is not recorded. A write equal to memory nobody wrote in this launch still is.
        const bool changes = atomic != 0 || std::memcmp(d, s, p.block_len) != 0 ||
                             clip.clipped || !written_by_another_block(g + i * gm_step, p.block_len);
        if (!atomic && !clip.clipped) preimage_note(g + i * gm_step, p.block_len, d);
        if (atomic) atomic_apply(adt, d, s, p.block_len, atomic);
        else std::memcpy(d, s, p.block_len);
        if (clip.clipped) continue;  // recorded once below, in bounds
        if (!atomic) {
            if (!changes) continue;
            if (p.dst_gap != 0) {
                record_access(g + i * gm_step, p.block_len, AK_WRITE, loc);
            } else {
                span_lo = std::min(span_lo, i * gm_step);
                span_hi = std::max(span_hi, i * gm_step + p.block_len);
            }
        } else if (atomic == 1) {
            uint64_t n = p.block_len / aes, lo = 0, hi = n;
            while (lo < n && !nonzero(s, lo)) ++lo;
            while (hi > lo && !nonzero(s, hi - 1)) --hi;
            if (lo == hi) continue;  // all zeros: a no-op
            if (p.dst_gap != 0) {
                record_access(g + i * gm_step + lo * aes, (hi - lo) * aes, AK_ATOMIC, loc);
            } else {
                span_lo = std::min(span_lo, i * gm_step + lo * aes);
                span_hi = std::max(span_hi, i * gm_step + hi * aes);
            }
        } else if (p.dst_gap != 0 || i == 0) {
            record_access(g + i * gm_step, p.dst_gap == 0 ? gm_span : p.block_len, AK_ATOMIC, loc);
        }
    }
    if (span_hi > span_lo) record_access(g + span_lo, span_hi - span_lo, atomic ? AK_ATOMIC : AK_WRITE, loc);
    if (clip.clipped && clip.own_pages) std::memcpy(reinterpret_cast<void*>(g), shadow.data(), gm_span);
    if (clip.clipped && clip.hi > clip.lo) {
        if (!clip.own_pages) std::memcpy(reinterpret_cast<void*>(clip.lo), shadow.data() + (clip.lo - g), clip.hi - clip.lo);
        record_access(clip.lo, clip.hi - clip.lo, atomic ? AK_ATOMIC : AK_WRITE, loc);
    }
    uint64_t bytes = uint64_t(p.block_count) * p.block_len;
    if (rt.cur) rt.cur->gm_write += bytes;
    Span r{src.addr, uint32_t(ub_span)};
    issue(P_MTE3, dma_occupancy(bytes, p.block_count, cfg.mte3_bytes_per_cycle), cfg.mte3_startup_cycles, &r, 1,
          nullptr, 0, api, loc);
}

void copy_local_to_local(const TRef& dst, const TRef& src, uint32_t es, const CopyParams& p0, const char* api,
                         const Loc& loc) {
    check_in_launch(loc, api);
    tick(loc);
    CopyParams p = p0;
    count_rule(p, es, api, loc);
    burst_rule(p, api, loc);
    if (p.block_count == 0 || p.block_len == 0) return;
    if (loop_skip(loc, loop_key(tref_key(dst), tref_key(src), es, copy_key(p)))) return;
    if (dst.mem != MEM_UB || src.mem != MEM_UB) return cube_local_copy(dst, src, p, api, loc);  // rt_cube.cpp
    uint64_t s_step = p.block_len + p.src_gap, d_step = p.block_len + p.dst_gap;
    uint64_t s_span = (p.block_count - 1) * s_step + p.block_len;
    uint64_t d_span = (p.block_count - 1) * d_step + p.block_len;
    check_local(src, 0, s_span, 32, api, "src", loc);
    check_local(dst, 0, d_span, 32, api, "dst", loc);
    for (uint32_t i = 0; i < p.block_count; ++i) {
        if (cfg.check_uninit) check_init_range(src, src.addr + uint32_t(i * s_step), uint32_t(p.block_len), api, loc);
        std::memmove(mem_ptr(dst.mem, dst.addr + uint32_t(i * d_step)), mem_ptr(src.mem, src.addr + uint32_t(i * s_step)),
                     p.block_len);
        mark_init_range(dst.mem, dst.addr + uint32_t(i * d_step), uint32_t(p.block_len));
    }
    uint64_t bytes = uint64_t(p.block_count) * p.block_len;
    Span r{src.addr, uint32_t(s_span)}, w{dst.addr, uint32_t(d_span)};
    issue(P_V, cfg.vec_issue_cycles + double(bytes) / cfg.ub_copy_bytes_per_cycle, 0, &r, 1, &w, 1, api, loc);
}

void gm_fill(int32_t buf, void* gm, DT dt, uint32_t es, uint64_t count, uint64_t bits, const Loc& loc) {
    const char* api = "InitGlobalMemory";
    check_in_launch(loc, api);
    tick(loc);
    uintptr_t g = reinterpret_cast<uintptr_t>(gm);
    uint64_t bytes = count * es;
    if (bytes == 0) return;
    gm_check(buf, g, bytes, es, api, "writes", loc);
    fill_pattern(reinterpret_cast<uint8_t*>(g), bytes, bits, es);
    record_access(g, bytes, AK_WRITE, loc);
    if (rt.cur) rt.cur->gm_write += bytes;
    issue(P_MTE3, dma_occupancy(bytes, 1, cfg.mte3_bytes_per_cycle), cfg.mte3_startup_cycles, nullptr, 0, nullptr, 0,
          api, loc);
    (void)dt;
}

}  // namespace kgsim
