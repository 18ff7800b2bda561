// kgsim: the shape helpers of CANN's operator base library (opbase, op_common/op_host/util/shape_util.h;
// ops-math includes it as "util/shape_util.h"). An unknown rank is the one-dim shape [-2], an
// unknown dimension -1 (GE's conventions); CheckAxisBounds: an axis in [-rank, rank - 1] (0 for a scalar).
#pragma once
#include <cstdint>

#include "exe_graph/runtime/shape.h"

namespace Ops {
namespace Base {
template <typename T1, typename T2>
bool CheckAxisBounds(const T1 dimNum, const T2 axis) {
    const int64_t rank = static_cast<int64_t>(dimNum);
    if (rank == 0) return static_cast<int64_t>(axis) == 0;
    return static_cast<int64_t>(axis) >= -rank && static_cast<int64_t>(axis) < rank;
}
inline void SetUnknownRank(gert::Shape& shape) {
    shape.SetDimNum(0);
    shape.AppendDim(-2);
}
inline bool IsUnknownRank(const gert::Shape& shape) { return shape.GetDimNum() == 1 && shape.GetDim(0) == -2; }
inline void SetUnknownShape(int64_t rank, gert::Shape& shape) {
    if (rank < 0) return;
    shape.SetDimNum(static_cast<size_t>(rank));
    for (size_t i = 0; i < static_cast<size_t>(rank); ++i) shape.SetDim(i, -1);
}
inline bool IsUnknownShape(const gert::Shape& shape) {
    for (size_t i = 0; i < shape.GetDimNum(); ++i)
        if (shape.GetDim(i) == -1) return true;
    return false;
}
}  // namespace Base
}  // namespace Ops
