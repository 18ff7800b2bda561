"""Six-string answers of our own, in the MultiKernelBench format, for the compatibility tests."""

from pathlib import Path

_EXAMPLES = Path(__file__).resolve().parents[3] / "solutions" / "ascend_op_projects"


def _six_text(strings: dict[str, str]) -> str:
    """The answer as an LLM writes it: Python assigning the six strings."""
    return "\n".join(f'{k} = """{v}"""\n' for k, v in strings.items())


# ---- leaky ReLU: an attribute passed through EXEC_NPU_CMD as a double ------------------------
_LR = _EXAMPLES / "leaky_relu_custom"
LEAKY_RELU = {
    "project_json_src": """[{"op": "LeakyReluCustom", "language": "cpp",
  "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["float"]}],
  "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["float"]}],
  "attr": [{"name": "negative_slope", "param_type": "optional", "type": "float", "default_value": "0.01"}]}]""",
    "host_tiling_src": (_LR / "op_host" / "leaky_relu_custom_tiling.h").read_text(),
    "host_operator_src": (_LR / "op_host" / "leaky_relu_custom.cpp").read_text(),
    "kernel_src": (_LR / "op_kernel" / "leaky_relu_custom.cpp").read_text(),
    "python_bind_src": r"""
#include <torch/library.h>
#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"

at::Tensor leaky_relu_custom_impl_npu(const at::Tensor& x, double negative_slope)
{
    TORCH_CHECK(x.scalar_type() == at::kFloat, "x must be float32");
    at::Tensor result = at::empty_like(x);
    EXEC_NPU_CMD(aclnnLeakyReluCustom, x, negative_slope, result);
    return result;
}

TORCH_LIBRARY_IMPL(myops, PrivateUse1, m) {
    m.impl("leaky_relu_custom", &leaky_relu_custom_impl_npu);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("leaky_relu_custom", &leaky_relu_custom_impl_npu, "leaky relu");
}
""",
    "model_src": """
import torch
import torch_npu
import custom_ops_lib


class ModelNew(torch.nn.Module):
    def __init__(self, negative_slope: float = 0.01) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return custom_ops_lib.leaky_relu_custom(x, self.negative_slope)
""",
}

# ---- MSE loss: a 0-d output the binding allocates with at::empty({}) --------------------------
MSE_LOSS = {
    "project_json_src": """[{"op": "MseLossCustom", "language": "cpp",
  "input_desc": [{"name": "predictions", "param_type": "required", "format": ["ND"], "type": ["float"]},
                 {"name": "targets", "param_type": "required", "format": ["ND"], "type": ["float"]}],
  "output_desc": [{"name": "loss", "param_type": "required", "format": ["ND"], "type": ["float"]}]}]""",
    "host_tiling_src": r"""
#include "register/tilingdata_base.h"
namespace optiling {
BEGIN_TILING_DATA_DEF(MseLossCustomTilingData)
  TILING_DATA_FIELD_DEF(uint32_t, totalLength);
  TILING_DATA_FIELD_DEF(uint32_t, tileLength);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(MseLossCustom, MseLossCustomTilingData)
}
""",
    "host_operator_src": r"""
#include "mse_loss_custom_tiling.h"
#include "register/op_def_registry.h"

namespace optiling {
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{
    MseLossCustomTilingData tiling;
    uint32_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    uint32_t tile = total < 2048 ? total : 2048;
    context->SetBlockDim(1);
    tiling.set_totalLength(total);
    tiling.set_tileLength(tile);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}
}

namespace ge {
static graphStatus InferShape(gert::InferShapeContext* context)
{
    gert::Shape* y = context->GetOutputShape(0);
    y->SetDimNum(0);
    return GRAPH_SUCCESS;
}
}

namespace ops {
class MseLossCustom : public OpDef {
public:
    explicit MseLossCustom(const char* name) : OpDef(name)
    {
        this->Input("predictions").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("targets").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("loss").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->SetInferShape(ge::InferShape);
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(MseLossCustom);
}
""",
    "kernel_src": r"""
#include "kernel_operator.h"
using namespace AscendC;

class KernelMseLoss {
public:
    __aicore__ inline void Init(GM_ADDR p, GM_ADDR t, GM_ADDR loss, uint32_t total, uint32_t tile)
    {
        this->total = total;
        this->tile = tile;
        pGm.SetGlobalBuffer((__gm__ float*)p, total);
        tGm.SetGlobalBuffer((__gm__ float*)t, total);
        lossGm.SetGlobalBuffer((__gm__ float*)loss, 1);
        pipe.InitBuffer(inP, 1, tile * sizeof(float));
        pipe.InitBuffer(inT, 1, tile * sizeof(float));
        pipe.InitBuffer(work, tile * sizeof(float));
        pipe.InitBuffer(sumBuf, 32);
    }
    __aicore__ inline void Process()
    {
        float acc = 0.0f;
        LocalTensor<float> w = work.Get<float>();
        LocalTensor<float> s = sumBuf.Get<float>();
        for (uint32_t off = 0; off < total; off += tile) {
            LocalTensor<float> a = inP.AllocTensor<float>();
            LocalTensor<float> b = inT.AllocTensor<float>();
            DataCopy(a, pGm[off], tile);
            DataCopy(b, tGm[off], tile);
            inP.EnQue(a);
            inT.EnQue(b);
            a = inP.DeQue<float>();
            b = inT.DeQue<float>();
            Sub(a, a, b, tile);
            Mul(a, a, a, tile);
            ReduceSum(s, a, w, tile);
            inP.FreeTensor(a);
            inT.FreeTensor(b);
            event_t ev = static_cast<event_t>(pipe.FetchEventID(HardEvent::V_S));
            SetFlag<HardEvent::V_S>(ev);
            WaitFlag<HardEvent::V_S>(ev);
            acc += s.GetValue(0);
        }
        lossGm.SetValue(0, acc / float(total));
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inP, inT;
    TBuf<QuePosition::VECCALC> work, sumBuf;
    GlobalTensor<float> pGm, tGm, lossGm;
    uint32_t total, tile;
};

extern "C" __global__ __aicore__ void mse_loss_custom(GM_ADDR predictions, GM_ADDR targets, GM_ADDR loss,
                                                       GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelMseLoss op;
    op.Init(predictions, targets, loss, tilingData.totalLength, tilingData.tileLength);
    op.Process();
}
""",
    "python_bind_src": r"""
#include <torch/library.h>
#include <torch/csrc/autograd/custom_function.h>
#include "pytorch_npu_helper.hpp"
#include <torch/extension.h>

at::Tensor mse_loss_custom_impl_npu(const at::Tensor& predictions, const at::Tensor& targets)
{
    TORCH_CHECK(predictions.sizes() == targets.sizes(), "predictions and targets must have the same shape");
    at::Tensor result = at::empty({}, predictions.options());
    EXEC_NPU_CMD(aclnnMseLossCustom, predictions, targets, result);
    return result;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("mse_loss_custom", &mse_loss_custom_impl_npu, "mean squared error");
}
""",
    "model_src": """
import torch
import torch_npu
import custom_ops_lib


class ModelNew(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, predictions, targets):
        return custom_ops_lib.mse_loss_custom(predictions, targets)
""",
}

LEAKY_RELU_TEXT = _six_text(LEAKY_RELU)
MSE_LOSS_TEXT = _six_text(MSE_LOSS)
