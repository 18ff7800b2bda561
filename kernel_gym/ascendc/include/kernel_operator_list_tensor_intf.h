// kernel_operator_list_tensor_intf.h for the kgsim simulator: ListTensorDesc and TensorDesc, the kernel-side
// view of a dynamic list of GM tensors (CANN "ListTensorDesc" docs). Layout of the list in GM, 64-bit words:
//   word 0                : byte offset from the list start to the data-pointer array
//   then per tensor i     : a descriptor of 1 + dim words: (dim | i << 32), then dim shape values
//                           (pointer-only lists: dim 0, one descriptor (0, 0xffffffff) and offset 24)
//   then                  : one data pointer per tensor
// Every word is read through the simulator's checked GM access (bounds, cost of a scalar GM read).
// kernel_gym.ascendc.list_tensor.pack_list_tensor builds such a list on the host.
#pragma once
#include "kernel_operator.h"

namespace kgsim {
KGSIM_UNINSTRUMENTED inline uint64_t list_word(const uint64_t* p, const Loc& loc) {
    gm_scalar(gm_lookup(p), p, 8, 0, loc);
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
}  // namespace kgsim

namespace AscendC {
class ListTensorDesc;

template <class T>
class TensorDesc {
public:
    TensorDesc() {}
    ~TensorDesc() {}
    void SetShapeAddr(uint64_t* shapePtr) { shape_ = shapePtr; }
    uint64_t GetDim() { return dim_; }
    uint64_t GetIndex() { return index_; }
    uint64_t GetShape(uint32_t offset, kgsim::Loc loc = kgsim::Loc::current()) {
        if (offset >= dim_ || shape_ == nullptr)
            kgsim::fault("invalid_argument", loc, "TensorDesc::GetShape(%u): the tensor has %u dimensions%s", offset,
                         dim_, shape_ ? "" : " and no shape buffer (SetShapeAddr before GetDesc)");
        return shape_[offset];
    }
    __gm__ T* GetDataPtr() { return ptr_; }
    GlobalTensor<T> GetDataObj() {
        uint64_t n = 1;
        for (uint32_t i = 0; i < dim_; ++i) n *= shape_[i];
        GlobalTensor<T> g;
        g.SetGlobalBuffer(ptr_, n);
        return g;
    }

private:
    friend class ListTensorDesc;
    uint32_t dim_ = 0, index_ = 0;
    uint64_t* shape_ = nullptr;
    __gm__ T* ptr_ = nullptr;
};

class ListTensorDesc {
public:
    ListTensorDesc() {}
    ~ListTensorDesc() {}
    ListTensorDesc(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff,
                   kgsim::Loc loc = kgsim::Loc::current()) {
        Init(data, length, shapeSize, loc);
    }
    void Init(__gm__ void* data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff,
              kgsim::Loc loc = kgsim::Loc::current()) {
        if (data == nullptr) kgsim::fault("invalid_argument", loc, "ListTensorDesc: null list address");
        head_ = reinterpret_cast<const uint64_t*>(data);
        uint64_t ptr_off = kgsim::list_word(head_, loc);
        uint64_t first = kgsim::list_word(head_ + 1, loc);
        dim_ = uint32_t(first & 0xffffffffu);
        desc_words_ = dim_ == 0 ? 2 : 1 + dim_;
        if (ptr_off % 8 || ptr_off < 8 + 8ull * desc_words_)
            kgsim::fault("invalid_argument", loc, "ListTensorDesc: data-pointer offset %llu is not a valid list layout",
                         (unsigned long long)ptr_off);
        ptrs_ = head_ + ptr_off / 8;
        uint32_t hi = uint32_t(first >> 32);
        count_ = hi != 0 ? hi : uint32_t(kgsim::list_word(ptrs_ - desc_words_, loc) >> 32) + 1;
        bool ok = dim_ != 0 ? count_ == (ptr_off - 8) / (8ull * desc_words_)
                            : (ptr_off == 24 && kgsim::list_word(head_ + 2, loc) == 0xffffffffu);
        if (!ok)
            kgsim::fault("invalid_argument", loc, "ListTensorDesc: inconsistent list layout (dim %u, %u tensors, "
                         "pointer offset %llu)", dim_, count_, (unsigned long long)ptr_off);
        if (length != 0xffffffffu && shapeSize != 0xffffffffu &&
            (count_ != shapeSize || length != ptr_off + 8ull * count_))
            kgsim::fault("invalid_argument", loc, "ListTensorDesc: length %u / shapeSize %u do not match the list "
                         "(%u tensors, %llu bytes)", length, shapeSize, count_,
                         (unsigned long long)(ptr_off + 8ull * count_));
    }
    template <class T>
    void GetDesc(TensorDesc<T>& desc, uint32_t index, kgsim::Loc loc = kgsim::Loc::current()) {
        check(index, "GetDesc", loc);
        if (dim_ == 0)
            kgsim::fault("invalid_argument", loc, "ListTensorDesc::GetDesc: the list carries no shapes (pointer-only)");
        if (desc.shape_ == nullptr)
            kgsim::fault("invalid_argument", loc, "ListTensorDesc::GetDesc: call TensorDesc::SetShapeAddr first");
        desc.dim_ = dim_;
        desc.index_ = index;
        desc.ptr_ = reinterpret_cast<__gm__ T*>(kgsim::list_word(ptrs_ + index, loc));
        const uint64_t* d = head_ + 1 + uint64_t(index) * desc_words_ + 1;
        for (uint32_t i = 0; i < dim_; ++i) desc.shape_[i] = kgsim::list_word(d + i, loc);
    }
    template <class T>
    __gm__ T* GetDataPtr(uint32_t index, kgsim::Loc loc = kgsim::Loc::current()) {
        check(index, "GetDataPtr", loc);
        return reinterpret_cast<__gm__ T*>(kgsim::list_word(ptrs_ + index, loc));
    }
    uint32_t GetSize() { return count_; }

private:
    void check(uint32_t index, const char* what, const kgsim::Loc& loc) {
        if (head_ == nullptr) kgsim::fault("invalid_argument", loc, "ListTensorDesc::%s before Init", what);
        if (index >= count_)
            kgsim::fault("invalid_argument", loc, "ListTensorDesc::%s(%u): the list holds %u tensors", what, index,
                         count_);
    }
    const uint64_t* head_ = nullptr;
    const uint64_t* ptrs_ = nullptr;
    uint32_t dim_ = 0, desc_words_ = 0, count_ = 0;
};
}  // namespace AscendC
