// Static-tensor programming (the current asc-devkit style): LocalTensors placed by the kernel
// itself, without TPipe/TQue, through LocalMemAllocator or the LocalTensor(pos, addr, size)
// constructor, with synchronisation written by hand (SetFlag/WaitFlag). The simulator checks
// the memory's capacity and alignment and, as for queue tensors, unsynchronised pipe hazards.
#pragma once
#include "kgsim/tensor.h"
#include "kgsim/vector.h"

namespace AscendC {

enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

namespace kgsim_static {
// The position a tensor of each physical memory gets when Alloc names none.
constexpr TPosition default_position(Hardware h) {
    switch (h) {
        case Hardware::L1: return TPosition::A1;
        case Hardware::L0A: return TPosition::A2;
        case Hardware::L0B: return TPosition::B2;
        case Hardware::L0C: return TPosition::CO1;
        case Hardware::BIAS: return TPosition::C2;
        case Hardware::FIXBUF: return TPosition::C2PIPE2GM;
        default: return TPosition::VECCALC;
    }
}
}  // namespace kgsim_static

// A bump allocator over one physical memory, from address 0 (not to be mixed with TPipe).
template <Hardware hard = Hardware::UB>
class LocalMemAllocator {
public:
    LocalMemAllocator() = default;
    uint32_t GetCurAddr() const { return cur_; }

    template <class T, uint32_t tileSize>
    LocalTensor<T> Alloc(kgsim::Loc loc = kgsim::Loc::current()) {
        return take<T>(kgsim_static::default_position(hard), tileSize, loc);
    }
    template <TPosition pos, class T, uint32_t tileSize>
    LocalTensor<T> Alloc(kgsim::Loc loc = kgsim::Loc::current()) {
        return take<T>(pos, tileSize, loc);
    }
    template <class T>
    LocalTensor<T> Alloc(uint32_t tileSize, kgsim::Loc loc = kgsim::Loc::current()) {
        return take<T>(kgsim_static::default_position(hard), tileSize, loc);
    }
    template <TPosition pos, class T>
    LocalTensor<T> Alloc(uint32_t tileSize, kgsim::Loc loc = kgsim::Loc::current()) {
        return take<T>(pos, tileSize, loc);
    }

private:
    template <class T>
    LocalTensor<T> take(TPosition pos, uint32_t elements, const kgsim::Loc& loc) {
        uint64_t bytes = uint64_t(elements) * sizeof(T);
        kgsim::BufInfo b = kgsim::static_tensor(static_cast<uint8_t>(pos), cur_, bytes, loc);
        cur_ += uint32_t((bytes + 31) / 32 * 32);
        return LocalTensor<T>::from(b, 0, uint32_t(bytes));
    }
    uint32_t cur_ = 0;
};

// Resets the core's vector state at kernel entry (normal mask mode, full mask, no atomics).
inline void InitSocState(kgsim::Loc loc = kgsim::Loc::current()) {
    SetMaskNorm(loc);
    ResetMask(loc);
    SetAtomicNone(loc);
}

}  // namespace AscendC
