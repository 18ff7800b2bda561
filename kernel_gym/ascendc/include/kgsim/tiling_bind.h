// kgsim: tiling-data objects bound to a raw tiling buffer. CANN's TilingDef::SetDataPtr(p) makes the
// object's fields live in p (the context's raw tiling data), so a host class that only calls
// tilingData.SetDataPtr(context->GetRawTilingData()->GetData()) and set_x(...) leaves its values in
// the buffer the kernel reads, without SaveToBuffer. Here the object keeps its own fields (the same
// plain struct is the kernel's), and a bound object's setters, and GetDataSize (what a tiling
// function calls when it is done: SetDataSize(tilingData.GetDataSize())), copy them into p.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>

namespace kgsim_tiling {
struct Bound {
    uintptr_t hi;
    uint8_t* buf;
};
// object [lo, hi) -> the buffer it is bound to
inline std::map<uintptr_t, Bound>& bound() {
    static std::map<uintptr_t, Bound> m;
    return m;
}
// Bind [obj, obj + n) to buf (nullptr: unbind); an earlier binding overlapping it ends (a dead object's).
inline void bind(const void* obj, size_t n, void* buf) {
    auto& m = bound();
    const uintptr_t lo = reinterpret_cast<uintptr_t>(obj), hi = lo + n;
    auto it = m.upper_bound(lo);
    if (it != m.begin() && std::prev(it)->second.hi > lo) --it;
    while (it != m.end() && it->first < hi) it = m.erase(it);
    if (buf) m.emplace(lo, Bound{hi, static_cast<uint8_t*>(buf)});
}
// A field of a bound object (or of a struct field inside one) changed: copy it into the buffer.
inline void write_through(const void* field, size_t n) {
    auto& m = bound();
    if (m.empty()) return;
    const uintptr_t a = reinterpret_cast<uintptr_t>(field);
    auto it = m.upper_bound(a);
    if (it == m.begin()) return;
    --it;
    if (a + n > it->second.hi) return;
    std::memcpy(it->second.buf + (a - it->first), field, n);
}
// The whole bound object (fields a library call filled directly, like a matmul tiling) into its buffer.
inline void flush(const void* obj, size_t n) {
    auto& m = bound();
    auto it = m.find(reinterpret_cast<uintptr_t>(obj));
    if (it != m.end() && it->second.hi == it->first + n) std::memcpy(it->second.buf, obj, n);
}
// A new tiling call: the objects bound in earlier ones are gone, and so may be their buffers.
inline void clear() { bound().clear(); }
}  // namespace kgsim_tiling
