// kgsim runtime: sorting and data-layout vector instructions of Atlas A2 (Sort32, MrgSort, Sort / Concat /
// Extract, Transpose, TransDataTo5HD) and the Scatter stub (not on A2). Semantics follow the CANN /
// asc-devkit API docs; each call is checked (alignment, ranges, bounds, uninitialised reads) and timed
// on the V pipe. Rates that no public document gives are marked "assumed".
#include <unordered_map>

#include "rt.h"

namespace kgsim {
namespace {

// assumed costs (cycles): CANN documents no rates for these instructions
constexpr double kSort32CyclesPerRepeat = 16;     // one 32-element sorting network per repeat
constexpr double kMrgSortStructsPerCycle = 2;     // merged 8-byte structures per cycle
constexpr double kLayoutBytesPerCycle = 256;      // transposes move one 256-byte repeat per cycle

double issue_v(double cycles, uint32_t instrs, const std::vector<Span>& rd, const std::vector<Span>& wr,
               const char* api, const Loc& loc) {
    return issue(P_V, instrs * cfg.vec_issue_cycles + cycles, 0, rd.data(), int(rd.size()), wr.data(),
                 int(wr.size()), api, loc);
}
void check_repeat(int32_t repeat, const char* api, const Loc& loc, int32_t lo = 0) {
    if (repeat < lo || repeat > int32_t(cfg.max_repeat))
        fault("repeat_out_of_range", loc, "%s: repeatTime %d is out of range [%d, %.0f]", api, repeat, lo, cfg.max_repeat);
}
bool overlap(const TRef& a, uint64_t an, const TRef& b, uint64_t bn) {
    return a.mem == b.mem && a.addr < b.addr + bn && b.addr < a.addr + an;
}
float score_at(DT dt, const uint8_t* p) {
    if (dt == DT::F16) { half h; std::memcpy(&h, p, 2); return float(h); }
    float f;
    std::memcpy(&f, p, 4);
    return f;
}
// write one (score, index) structure; half scores keep bytes 2-3 zero (reserved)
void put_struct(DT dt, uint8_t* p, const uint8_t* score, uint32_t index) {
    std::memset(p, 0, 8);
    std::memcpy(p, score, dt == DT::F16 ? 2 : 4);
    std::memcpy(p + 4, &index, 4);
}
// descending by score; equal scores keep their input order (CANN: score[j] before score[i] for j < i)
void sort_structs(DT dt, uint8_t* s, uint32_t n) {
    std::vector<uint32_t> ord(n);
    for (uint32_t i = 0; i < n; ++i) ord[i] = i;
    std::stable_sort(ord.begin(), ord.end(), [&](uint32_t a, uint32_t b) {
        return score_at(dt, s + a * 8) > score_at(dt, s + b * 8);
    });
    std::vector<uint8_t> tmp(size_t(n) * 8);
    for (uint32_t i = 0; i < n; ++i) std::memcpy(tmp.data() + i * 8, s + ord[i] * 8, 8);
    std::memcpy(s, tmp.data(), tmp.size());
}
std::unordered_map<int64_t, std::array<uint16_t, 4>> g_mrg_result;  // per core: the last MrgSort's counts

}  // namespace

void a2_noop(const char* api, const Loc& loc) {
    check_in_launch(loc, api);
    tick(loc);
    warn("unsupported_api", loc,
         fmt("%s is not supported on Atlas A2 (Ascend910B): asc-devkit's A2 build compiles it to nothing, so the "
             "call changed nothing (CANN's CPU debug build aborts here)", api));
}

TRef ub_ref_of_addr(uint64_t host_addr, const char* api, const Loc& loc) {
    uintptr_t base = reinterpret_cast<uintptr_t>(hot.mem[MEM_UB]);
    uint64_t ub = uint64_t(cfg.usable_ub_bytes);
    if (host_addr < base || host_addr >= base + ub)
        fault("invalid_argument", loc, "%s: address 0x%llx is not a Unified Buffer address (pass "
              "LocalTensor::GetPhyAddr() values)", api, (unsigned long long)host_addr);
    TRef t;
    t.addr = uint32_t(host_addr - base);
    t.end = uint32_t(ub);
    t.mem = MEM_UB;
    t.gen = hot.gen;
    return t;
}

// ---- Sort32 ------------------------------------------------------------------------------------------
void sort32(DT dt, const TRef& dst, const TRef& src0, const TRef& src1, int32_t repeat, const Loc& loc) {
    const char* api = "Sort32";
    check_in_launch(loc, api);
    tick(loc);
    check_repeat(repeat, api, loc);
    if (repeat == 0) return;
    uint32_t es = dt_size(dt), n = uint32_t(repeat) * 32;
    check_local(dst, 0, uint64_t(n) * 8, 32, api, "dst", loc);
    check_local(src0, 0, uint64_t(n) * es, 32, api, "src0", loc);
    check_local(src1, 0, uint64_t(n) * 4, 32, api, "src1", loc);
    check_init_range(src0, src0.addr, n * es, api, loc);
    check_init_range(src1, src1.addr, n * 4, api, loc);
    if (overlap(dst, uint64_t(n) * 8, src0, uint64_t(n) * es) || overlap(dst, uint64_t(n) * 8, src1, uint64_t(n) * 4))
        fault("invalid_argument", loc, "%s: dst overlaps a source operand (not supported)", api);
    const uint8_t* a = mem_ptr(src0.mem, src0.addr);
    const uint8_t* b = mem_ptr(src1.mem, src1.addr);
    std::vector<uint8_t> out(size_t(n) * 8);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t idx;
        std::memcpy(&idx, b + i * 4, 4);
        put_struct(dt, out.data() + i * 8, a + i * es, idx);
    }
    for (int32_t r = 0; r < repeat; ++r) sort_structs(dt, out.data() + r * 256, 32);
    std::memcpy(mem_ptr(dst.mem, dst.addr), out.data(), out.size());
    mark_init_range(dst.mem, dst.addr, n * 8);
    issue_v(repeat * kSort32CyclesPerRepeat, 1, {{src0.addr, n * es}, {src1.addr, n * 4}}, {{dst.addr, n * 8}}, api, loc);
}

// ---- MrgSort ---------------------------------------------------------------------------------------------
void mrg_sort(DT dt, const TRef& dst, const TRef* src, const uint16_t* lens, bool exhausted, uint32_t valid,
              int32_t repeat, uint32_t* sorted_num, const char* api, const Loc& loc) {
    check_in_launch(loc, api);
    tick(loc);
    check_repeat(repeat, api, loc);
    uint32_t q = valid == 3 ? 2 : valid == 7 ? 3 : valid == 15 ? 4 : 0;
    if (!q)
        fault("invalid_argument", loc, "%s: validBit %u is not one of 3 (2 queues), 7 (3 queues), 15 (4 queues)", api,
              valid);
    for (uint32_t i = 0; i < q; ++i)
        if (lens[i] > 4095)
            fault("invalid_argument", loc, "%s: elementLengths[%u] = %u exceeds 4095", api, i, lens[i]);
    if (repeat == 0) return;
    if (repeat > 1) {
        bool ok = q == 4 && !exhausted && lens[0] == lens[1] && lens[1] == lens[2] && lens[2] == lens[3];
        for (uint32_t i = 1; ok && i < 4; ++i) ok = src[i].mem == src[0].mem && src[i].addr == src[0].addr + i * lens[0] * 8u;
        if (!ok)
            fault("invalid_argument", loc, "%s: repeatTimes %d > 1 needs 4 valid queues of equal length stored one after "
                  "another and no exhausted suspension (CANN MrgSort docs)", api, repeat);
    }
    uint32_t total = 0;
    for (uint32_t i = 0; i < q; ++i) total += lens[i];
    std::vector<Span> rd, wr;
    uint16_t done[4] = {0, 0, 0, 0};
    uint32_t written_all = 0;
    for (int32_t r = 0; r < repeat; ++r) {
        uint64_t rbase = uint64_t(r) * total * 8;
        const uint8_t* qp[4] = {nullptr, nullptr, nullptr, nullptr};
        for (uint32_t i = 0; i < q; ++i) {
            check_local(src[i], rbase, uint64_t(lens[i]) * 8, 8, api, "src", loc);
            check_init_range(src[i], src[i].addr + uint32_t(rbase), lens[i] * 8u, api, loc);
            qp[i] = mem_ptr(src[i].mem, src[i].addr + uint32_t(rbase));
            rd.push_back({src[i].addr + uint32_t(rbase), lens[i] * 8u});
        }
        std::vector<uint8_t> out;
        out.reserve(size_t(total) * 8);
        uint32_t pos[4] = {0, 0, 0, 0};
        for (;;) {
            int best = -1;
            float bs = 0;
            bool stop = false;
            for (uint32_t i = 0; i < q; ++i) {
                if (pos[i] >= lens[i]) {
                    if (exhausted) stop = true;
                    continue;
                }
                float s = score_at(dt, qp[i] + pos[i] * 8);
                if (best < 0 || s > bs) { best = int(i); bs = s; }
            }
            if (stop || best < 0) break;
            out.insert(out.end(), qp[best] + pos[best] * 8, qp[best] + pos[best] * 8 + 8);
            ++pos[best];
        }
        uint32_t nbytes = uint32_t(out.size());
        check_local(dst, rbase, nbytes, 32, api, "dst", loc);
        for (uint32_t i = 0; i < q; ++i)
            if (overlap(dst, rbase + nbytes, src[i], rbase + lens[i] * 8u) && nbytes)
                fault("invalid_argument", loc, "%s: dst overlaps source queue %u (not supported)", api, i + 1);
        std::memcpy(mem_ptr(dst.mem, dst.addr + uint32_t(rbase)), out.data(), nbytes);
        mark_init_range(dst.mem, dst.addr + uint32_t(rbase), nbytes);
        wr.push_back({dst.addr + uint32_t(rbase), nbytes});
        written_all += nbytes / 8;
        for (uint32_t i = 0; i < 4; ++i) done[i] = uint16_t(i < q ? pos[i] : 0);
    }
    if (sorted_num)
        for (uint32_t i = 0; i < 4; ++i) sorted_num[i] = done[i];
    g_mrg_result[hot.core_uid] = {done[0], done[1], done[2], done[3]};
    issue_v(double(written_all) / kMrgSortStructsPerCycle, 1, rd, wr, api, loc);
}

void mrg_sort_result(uint16_t* out4, const Loc& loc) {
    check_in_launch(loc, "GetMrgSortResult");
    tick(loc);
    auto it = g_mrg_result.find(hot.core_uid);
    for (int i = 0; i < 4; ++i) out4[i] = it == g_mrg_result.end() ? 0 : it->second[i];
}

// ---- Sort / Concat / Extract (high level, Atlas A2 layout) -------------------------------------------------
void sort_full(DT dt, const TRef& dst, const TRef& concat, const TRef& index, const TRef& tmp, int32_t repeat,
               bool full, const Loc& loc) {
    const char* api = "Sort";
    check_in_launch(loc, api);
    tick(loc);
    check_repeat(repeat, api, loc);
    if (repeat == 0) return;
    uint32_t es = dt_size(dt), n = uint32_t(repeat) * 32;
    check_local(dst, 0, uint64_t(n) * 8, 32, api, "dst", loc);
    check_local(concat, 0, uint64_t(n) * es, 32, api, "concat", loc);
    check_local(index, 0, uint64_t(n) * 4, 32, api, "index", loc);
    check_local(tmp, 0, 0, 32, api, "tmp", loc);
    check_init_range(concat, concat.addr, n * es, api, loc);
    check_init_range(index, index.addr, n * 4, api, loc);
    const uint8_t* a = mem_ptr(concat.mem, concat.addr);
    const uint8_t* b = mem_ptr(index.mem, index.addr);
    std::vector<uint8_t> out(size_t(n) * 8);
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t idx;
        std::memcpy(&idx, b + i * 4, 4);
        put_struct(dt, out.data() + i * 8, a + i * es, idx);
    }
    double cycles = repeat * kSort32CyclesPerRepeat;
    if (full) {
        sort_structs(dt, out.data(), n);
        // Sort32 then rounds of 4-way merges (log4 of the number of 32-element runs)
        for (uint32_t runs = uint32_t(repeat); runs > 1; runs = (runs + 3) / 4) cycles += n / kMrgSortStructsPerCycle;
    } else {
        for (int32_t r = 0; r < repeat; ++r) sort_structs(dt, out.data() + r * 256, 32);
    }
    std::memcpy(mem_ptr(dst.mem, dst.addr), out.data(), out.size());
    mark_init_range(dst.mem, dst.addr, n * 8);
    issue_v(cycles, 1, {{concat.addr, n * es}, {index.addr, n * 4}}, {{dst.addr, n * 8}}, api, loc);
}

void sort_concat(DT dt, const TRef& concat, const TRef& src, const TRef& tmp, int32_t repeat, const Loc& loc) {
    const char* api = "Concat";
    check_in_launch(loc, api);
    tick(loc);
    check_repeat(repeat, api, loc);
    if (repeat == 0) return;
    uint32_t es = dt_size(dt), n = uint32_t(repeat) * 16;  // 16 elements per repeat
    check_local(concat, 0, uint64_t(n) * es, 32, api, "concat", loc);
    check_local(src, 0, uint64_t(n) * es, 32, api, "src", loc);
    check_local(tmp, 0, 0, 32, api, "tmp", loc);
    check_init_range(src, src.addr, n * es, api, loc);
    std::memmove(mem_ptr(concat.mem, concat.addr), mem_ptr(src.mem, src.addr), size_t(n) * es);
    mark_init_range(concat.mem, concat.addr, n * es);
    issue_v(std::ceil(double(n) * es / kLayoutBytesPerCycle), 1, {{src.addr, n * es}}, {{concat.addr, n * es}}, api, loc);
}

void sort_extract(DT dt, const TRef& value, const TRef& index, const TRef& sorted, int32_t repeat, const Loc& loc) {
    const char* api = "Extract";
    check_in_launch(loc, api);
    tick(loc);
    check_repeat(repeat, api, loc);
    if (repeat == 0) return;
    uint32_t es = dt_size(dt), n = uint32_t(repeat) * 32;  // 32 structures (256 bytes) per repeat
    check_local(value, 0, uint64_t(n) * es, 32, api, "dstValue", loc);
    check_local(index, 0, uint64_t(n) * 4, 32, api, "dstIndex", loc);
    check_local(sorted, 0, uint64_t(n) * 8, 32, api, "sorted", loc);
    check_init_range(sorted, sorted.addr, n * 8, api, loc);
    std::vector<uint8_t> s(mem_ptr(sorted.mem, sorted.addr), mem_ptr(sorted.mem, sorted.addr) + size_t(n) * 8);
    uint8_t* v = mem_ptr(value.mem, value.addr);
    uint8_t* ix = mem_ptr(index.mem, index.addr);
    for (uint32_t i = 0; i < n; ++i) {
        std::memcpy(v + i * es, s.data() + i * 8, es);
        std::memcpy(ix + i * 4, s.data() + i * 8 + 4, 4);
    }
    mark_init_range(value.mem, value.addr, n * es);
    mark_init_range(index.mem, index.addr, n * 4);
    issue_v(2.0 * repeat, 1, {{sorted.addr, n * 8}}, {{value.addr, n * es}, {index.addr, n * 4}}, api, loc);
}

// ---- Transpose ------------------------------------------------------------------------------------------------
void transpose16(DT dt, const TRef& dst, const TRef& src, const Loc& loc) {
    const char* api = "Transpose";
    check_in_launch(loc, api);
    tick(loc);
    check_local(dst, 0, 512, 32, api, "dst", loc);
    check_local(src, 0, 512, 32, api, "src", loc);
    check_init_range(src, src.addr, 512, api, loc);
    uint16_t in[256];
    std::memcpy(in, mem_ptr(src.mem, src.addr), 512);
    uint16_t* out = reinterpret_cast<uint16_t*>(mem_ptr(dst.mem, dst.addr));
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) out[j * 16 + i] = in[i * 16 + j];
    mark_init_range(dst.mem, dst.addr, 512);
    (void)dt;
    issue_v(512 / kLayoutBytesPerCycle, 1, {{src.addr, 512}}, {{dst.addr, 512}}, api, loc);
}

void transpose_ext(DT dt, const TRef& dst, const TRef& src, const TRef& tmp, uint32_t n, uint32_t c, uint32_t h,
                   uint32_t w, int type, const Loc& loc) {
    const char* api = "Transpose";
    enum { ND2ND_B16 = 10, NCHW2NHWC = 11, NHWC2NCHW = 12 };
    if (type == ND2ND_B16) {
        if (dt != DT::U16)
            fault("unsupported_dtype", loc, "%s with TRANSPOSE_ND2ND_B16 supports only uint16_t on Atlas A2", api);
        transpose16(dt, dst, src, loc);
        return;
    }
    check_in_launch(loc, api);
    tick(loc);
    if (type == 0) return;  // TRANSPOSE_TYPE_NONE: no operation
    if (type != NCHW2NHWC && type != NHWC2NCHW)
        fault("unsupported_api", loc, "%s: this TransposeType is documented as not supported", api);
    uint32_t es = dt_size(dt), hw = h * w;
    if (c > 4095 || hw > 4095)
        fault("invalid_argument", loc, "%s: cSize %u and hSize*wSize %u must each be at most 4095", api, c, hw);
    if ((uint64_t(hw) * es) % 32)
        fault("invalid_argument", loc, "%s: hSize*wSize*sizeof(T) = %llu bytes must be a multiple of 32 (CANN Transpose "
              "docs)", api, (unsigned long long)(uint64_t(hw) * es));
    uint64_t bytes = uint64_t(n) * c * hw * es;
    uint32_t h0 = es == 1 ? 32 : 16, w0 = 32 / es;
    uint64_t need = uint64_t(type == NCHW2NHWC ? c + 2 : 2 * c + 1) * h0 * w0 * es;
    check_local(dst, 0, bytes, 32, api, "dst", loc);
    check_local(src, 0, bytes, 32, api, "src", loc);
    if (uint64_t(tmp.end) - tmp.addr < need)
        fault("local_out_of_bounds", loc, "%s: sharedTmpBuffer holds %u bytes but this transpose needs %llu (CANN "
              "Transpose docs: %s)", api, tmp.end - tmp.addr, (unsigned long long)need,
              type == NCHW2NHWC ? "(cSize + 2) * h0 * w0 * sizeof(T)" : "(cSize * 2 + 1) * h0 * w0 * sizeof(T)");
    check_local(tmp, 0, need, 32, api, "sharedTmpBuffer", loc);
    if (overlap(dst, bytes, src, bytes) && bytes)
        fault("invalid_argument", loc, "%s: NCHW <-> NHWC does not support src and dst sharing memory", api);
    check_init_range(src, src.addr, uint32_t(bytes), api, loc);
    const uint8_t* s = mem_ptr(src.mem, src.addr);
    uint8_t* d = mem_ptr(dst.mem, dst.addr);
    for (uint32_t b = 0; b < n; ++b)
        for (uint32_t ci = 0; ci < c; ++ci)
            for (uint32_t p = 0; p < hw; ++p) {
                uint64_t nchw = (uint64_t(b) * c + ci) * hw + p, nhwc = (uint64_t(b) * hw + p) * c + ci;
                if (type == NCHW2NHWC) std::memcpy(d + nhwc * es, s + nchw * es, es);
                else std::memcpy(d + nchw * es, s + nhwc * es, es);
            }
    mark_init_range(dst.mem, dst.addr, uint32_t(bytes));
    // built from TransDataTo5HD passes: about two passes over the data (assumed)
    issue_v(std::ceil(2.0 * double(bytes) / kLayoutBytesPerCycle), uint32_t(std::max<uint64_t>(1, n * 2)),
            {{src.addr, uint32_t(bytes)}}, {{dst.addr, uint32_t(bytes)}, {tmp.addr, uint32_t(need)}}, api, loc);
}

// ---- TransDataTo5HD ------------------------------------------------------------------------------------------
void trans_5hd(DT dt, const TRef* dst16, const TRef* src16, bool dst_high, bool src_high, int32_t repeat,
               uint32_t dst_rep, uint32_t src_rep, const Loc& loc) {
    const char* api = "TransDataTo5HD";
    check_in_launch(loc, api);
    tick(loc);
    check_repeat(repeat, api, loc);
    if (repeat == 0) return;
    uint32_t es = dt_size(dt);
    std::vector<Span> rd, wr;
    for (int32_t r = 0; r < repeat; ++r) {
        // CANN: with repeatTimes == 1 the operands start at the list address plus one stride
        uint64_t k = repeat == 1 ? 1 : uint64_t(r);
        uint64_t so = k * src_rep * 32, dof = k * dst_rep * 32;
        uint8_t in[16][32];
        for (int i = 0; i < 16; ++i) {
            check_local(src16[i], so, 32, 32, api, "srcList", loc);
            check_init_range(src16[i], src16[i].addr + uint32_t(so), 32, api, loc);
            std::memcpy(in[i], mem_ptr(src16[i].mem, src16[i].addr + uint32_t(so)), 32);
            rd.push_back({src16[i].addr + uint32_t(so), 32});
        }
        for (int j = 0; j < 16; ++j) {
            check_local(dst16[j], dof, 32, 32, api, "dstList", loc);
            uint8_t* d = mem_ptr(dst16[j].mem, dst16[j].addr + uint32_t(dof));
            if (es == 2) {
                for (int i = 0; i < 16; ++i) std::memcpy(d + i * 2, in[i] + j * 2, 2);
            } else if (es == 4) {  // dst blocks 2k and 2k+1 hold element k of src blocks 0-7 and 8-15
                int kk = j / 2, part = j % 2;
                for (int i = 0; i < 8; ++i) std::memcpy(d + i * 4, in[part * 8 + i] + kk * 4, 4);
            } else {  // b8: half a block per dst address
                for (int i = 0; i < 16; ++i) d[(dst_high ? 16 : 0) + i] = in[i][(src_high ? 16 : 0) + j];
            }
            uint32_t wlo = es == 1 && dst_high ? 16 : 0, wlen = es == 1 ? 16 : 32;
            mark_init_range(dst16[j].mem, dst16[j].addr + uint32_t(dof) + wlo, wlen);
            wr.push_back({dst16[j].addr + uint32_t(dof) + wlo, wlen});
        }
    }
    issue_v(repeat * 512 / kLayoutBytesPerCycle, 1, rd, wr, api, loc);
}

}  // namespace kgsim
