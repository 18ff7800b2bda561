// GM memory the simulator allocates, and which registered GM buffers have no neighbours.
//
// The scalar bounds check (rt_scalar.cpp) calls an access just outside a GM buffer a fault only
// where those bytes can belong to nothing else. A buffer on the C heap (small torch tensors,
// anything below glibc's mmap threshold, which grows up to 32 MiB as large blocks are freed)
// sits between unrelated heap objects, some of which inline API code compiled into the kernel
// reads legitimately: a near miss there proves nothing. The simulator's own GM (binding
// outputs, tiling and workspace buffers, aclrtMalloc) is therefore mapped pages with a padding
// page either side, and a buffer mapped outside the heap is isolated too.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "rt.h"

namespace kgsim {
namespace {

constexpr uint64_t kPad = 4096;  // >= the scalar check's reach either side of a buffer

struct Allocs {
    std::mutex mu;
    std::unordered_map<uintptr_t, uint64_t> mapped;  // buffer start -> mapping length
};
Allocs& allocs() {
    static Allocs* a = new Allocs;  // never destroyed: buffers may outlive static destruction
    return *a;
}

uint64_t page_round(uint64_t n) { return (n + kPad - 1) / kPad * kPad; }

// Start of the brk heap, read once from /proc/self/maps (0 when there is none).
uintptr_t heap_start() {
    static const uintptr_t lo = [] {
        uintptr_t start = 0;
        if (FILE* f = std::fopen("/proc/self/maps", "r")) {
            char line[512];
            while (std::fgets(line, sizeof line, f)) {
                if (std::strstr(line, "[heap]")) {
                    unsigned long long a = 0;
                    if (std::sscanf(line, "%llx-", &a) == 1) start = uintptr_t(a);
                    break;
                }
            }
            std::fclose(f);
        }
        return start;
    }();
    return lo;
}

}  // namespace

void* gm_alloc(uint64_t bytes) {
    uint64_t len = page_round(bytes ? bytes : 1) + 2 * kPad;
    void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    auto base = reinterpret_cast<uintptr_t>(m) + kPad;  // zero-filled, 4096-aligned (NPU: 512)
    // the rest of the buffer's last page holds no data yet: poison, as reads there find it (gm_slack)
    if (bytes % kPad) std::memset(reinterpret_cast<void*>(base + bytes), 0xFF, kPad - bytes % kPad);
    std::lock_guard<std::mutex> g(allocs().mu);
    allocs().mapped[base] = len;
    return reinterpret_cast<void*>(base);
}

bool gm_free(void* p) {
    uint64_t len = 0;
    {
        std::lock_guard<std::mutex> g(allocs().mu);
        auto it = allocs().mapped.find(reinterpret_cast<uintptr_t>(p));
        if (it == allocs().mapped.end()) return false;
        len = it->second;
        allocs().mapped.erase(it);
    }
    // a freed buffer is no longer GM of the launch: a later allocation may reuse its addresses
    auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + len;
    rt.gm.erase(std::remove_if(rt.gm.begin(), rt.gm.end(), [&](const GmBuf& g) { return g.base >= lo && g.base < hi; }),
                rt.gm.end());
    ++g_gm_gen;
    munmap(static_cast<uint8_t*>(p) - kPad, len);
    return true;
}

uint64_t gm_pages(uintptr_t base) {
    std::lock_guard<std::mutex> g(allocs().mu);
    auto it = allocs().mapped.find(base);
    return it == allocs().mapped.end() ? 0 : it->second - 2 * kPad;
}

bool gm_is_isolated(uintptr_t base, uint64_t size) {
    {
        std::lock_guard<std::mutex> g(allocs().mu);
        auto it = allocs().mapped.find(base);
        if (it != allocs().mapped.end()) return size <= it->second - 2 * kPad;
    }
    // Outside the brk heap: glibc's own mapping of a large block (or a lazy GM region), where
    // the bytes around it are the block's page slack. Small ones may share a page with heap
    // objects of a non-main arena, so only large ones count.
    uintptr_t lo = heap_start();
    auto hi = reinterpret_cast<uintptr_t>(sbrk(0));
    bool in_heap = lo != 0 && base >= lo && base < hi;
    return !in_heap && size >= 64 * 1024;
}

}  // namespace kgsim
