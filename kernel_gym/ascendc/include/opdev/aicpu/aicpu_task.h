// opdev/aicpu/aicpu_task.h for the kernel-gym Ascend C simulator: AI CPU tasks are not simulated
// (ADD_TO_LAUNCHER_LIST_AICPU reports so); the framework is opdev/kgsim_opdev.h.
#pragma once
#include "opdev/kgsim_opdev.h"
#include <string>

#include "graph/types.h"

namespace op {
namespace internal {
// the reuse cache of an aclnn layer's AI CPU tasks (one per op type, a static of its l0 op): only
// constructed here, since the task it would hold is never launched
class AicpuTaskSpace {
public:
    explicit AicpuTaskSpace(const std::string& opType, const ge::UnknowShapeOpType unknownType = ge::DEPEND_IN_SHAPE,
                            const bool isTf = false)
        : opType_(opType), unknownType_(unknownType), isTf_(isTf) {}
    void SetRef(const size_t, const bool = true) {}
    void Clear() {}

private:
    std::string opType_;
    ge::UnknowShapeOpType unknownType_;
    bool isTf_;
};
}  // namespace internal
}  // namespace op
