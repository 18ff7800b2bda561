#pragma once
#include <cstdint>
#include <vector>
#include "graph/types.h"

namespace ge {
// ge::Shape: the dimensions of a tensor, as host tiling helpers (Get*MaxMinTmpSize) take them.
class Shape {
public:
    Shape() = default;
    explicit Shape(const std::vector<int64_t>& dims) : dims_(dims) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    std::vector<int64_t> GetDims() const { return dims_; }
    int64_t GetShapeSize() const {
        if (dims_.empty()) return 0;
        int64_t s = 1;
        for (int64_t d : dims_) s *= d;
        return s;
    }
private:
    std::vector<int64_t> dims_;
};
}  // namespace ge
