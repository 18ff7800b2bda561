// kgsim: Ops::Base::TilingBaseClass of CANN's operator base library (opbase,
// op_common/op_host/tiling_base_class.h), the frame an op's tiling class derives from. DoTiling()
// runs the steps in their documented order: GetShapeAttrsInfo, GetPlatformInfo, IsCapable (false:
// GRAPH_PARAM_INVALID, "another tiling class may take it"), DoOpTiling, DoLibApiTiling,
// GetWorkspaceSize, PostTiling, then sets the context's tiling key from GetTilingKey(); the first
// step that fails ends it with its status. The debug helpers render shapes, tensors and the raw
// tiling data as text.
#pragma once
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "exe_graph/runtime/tiling_context.h"
#include "graph/utils/type_utils.h"
#include "log/log.h"
#include "platform/soc_spec.h"
#include "tiling/platform/platform_ascendc.h"

#ifndef ASCENDC_EXTERN_C
#ifdef ASCENDC_OP_TEST
#define ASCENDC_EXTERN_C extern "C"
#else
#define ASCENDC_EXTERN_C
#endif
#endif

namespace Ops {
namespace Base {
struct AiCoreParams {
    uint64_t ubSize = 0;
    uint64_t numBlocks = 0;
    uint64_t aicNum = 0;
    uint64_t l1Size = 0;
    uint64_t l0aSize = 0;
    uint64_t l0bSize = 0;
    uint64_t l0cSize = 0;
};

struct CompileInfoCommon {
    uint32_t aivNum;
    uint32_t aicNum;
    uint64_t ubSize;
    uint64_t l1Size;
    uint64_t l0aSize;
    uint64_t l0bSize;
    uint64_t l0cSize;
    uint64_t l2CacheSize;
    int64_t coreNum;
    int32_t socVersion;
    uint32_t rsvd;
};

class TilingBaseClass {
public:
    explicit TilingBaseClass(gert::TilingContext* context) : context_(context) {}
    virtual ~TilingBaseClass() = default;

    ge::graphStatus DoTiling() {
        if (context_ == nullptr) {
            OP_LOGE("TilingBaseClass", "context_ cannot be null");
            return ge::GRAPH_FAILED;
        }
        ge::graphStatus ret = GetShapeAttrsInfo();
        if (ret != ge::GRAPH_SUCCESS) return ret;
        if ((ret = GetPlatformInfo()) != ge::GRAPH_SUCCESS) return ret;
        if (!IsCapable()) return ge::GRAPH_PARAM_INVALID;
        if ((ret = DoOpTiling()) != ge::GRAPH_SUCCESS) return ret;
        if ((ret = DoLibApiTiling()) != ge::GRAPH_SUCCESS) return ret;
        if ((ret = GetWorkspaceSize()) != ge::GRAPH_SUCCESS) return ret;
        if ((ret = PostTiling()) != ge::GRAPH_SUCCESS) return ret;
        context_->SetTilingKey(GetTilingKey());
        DumpTilingInfo();
        return ge::GRAPH_SUCCESS;
    }
    virtual void Reset(gert::TilingContext* context) { context_ = context; }

protected:
    virtual bool IsCapable() = 0;
    virtual ge::graphStatus GetPlatformInfo() = 0;
    virtual ge::graphStatus GetShapeAttrsInfo() = 0;
    virtual ge::graphStatus DoOpTiling() = 0;
    virtual ge::graphStatus DoLibApiTiling() = 0;
    [[nodiscard]] virtual uint64_t GetTilingKey() const = 0;
    virtual ge::graphStatus GetWorkspaceSize() = 0;
    virtual ge::graphStatus PostTiling() = 0;
    virtual void DumpTilingInfo() {}
    int64_t DefaultTilingInfoDump() { return 0; }

    static uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) {
        if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) return sliceNum;
        uint32_t ratio = aivCoreNum / aicCoreNum;
        return (sliceNum + ratio - 1) / ratio;
    }
    template <typename T>
    [[nodiscard]] std::string GetShapeDebugStr(const T& shape) const {
        std::ostringstream oss;
        oss << "[";
        for (size_t i = 0; i < shape.GetDimNum(); ++i) oss << (i ? ", " : "") << shape.GetDim(i);
        oss << "]";
        return oss.str();
    }
    [[nodiscard]] std::string GetTensorDebugStr(const gert::StorageShape* shape, const gert::CompileTimeTensorDesc* tensor) {
        if (shape == nullptr || tensor == nullptr) return "nil ";
        std::ostringstream oss;
        oss << "(dtype: " << ge::TypeUtils::DataTypeToSerialString(tensor->GetDataType()) << "),"
            << "(shape:" << GetShapeDebugStr(shape->GetStorageShape()) << "),"
            << "(ori_shape:" << GetShapeDebugStr(shape->GetOriginShape()) << ") ";
        return oss.str();
    }
    [[nodiscard]] std::string GetTilingContextDebugStr() {
        std::ostringstream oss;
        for (size_t i = 0; i < context_->GetComputeNodeInfo()->GetInputsNum(); ++i)
            oss << "input" << i << ": " << GetTensorDebugStr(context_->GetInputShape(i), context_->GetInputDesc(i));
        for (size_t i = 0; i < context_->GetComputeNodeInfo()->GetOutputsNum(); ++i)
            oss << "output" << i << ": " << GetTensorDebugStr(context_->GetOutputShape(i), context_->GetOutputDesc(i));
        return oss.str();
    }
    [[nodiscard]] std::string GetTilingDataDebugStr() const {
        auto raw = context_->GetRawTilingData();
        if (raw == nullptr) return "nil ";
        auto data = reinterpret_cast<const int32_t*>(raw->GetData());
        std::ostringstream oss;
        for (size_t i = 0; i < raw->GetDataSize() / sizeof(int32_t); ++i) oss << data[i] << ", ";
        return oss.str();
    }

    gert::TilingContext* context_ = nullptr;
    std::unique_ptr<platform_ascendc::PlatformAscendC> ascendcPlatform_{nullptr};
    uint32_t blockDim_{0};
    uint64_t workspaceSize_{0};
    uint64_t tilingKey_{0};
    AiCoreParams aicoreParams_;
};
}  // namespace Base
}  // namespace Ops
