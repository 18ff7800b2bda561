#include "kernel_operator.h"

class KernelLeakyRelu {
public:
    __aicore__ inline KernelLeakyRelu() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t totalLength, uint32_t tileLength, float slope)
    {
        blockLength = totalLength / AscendC::GetBlockNum();
        this->tileLength = tileLength;
        this->slope = slope;
        xGm.SetGlobalBuffer((__gm__ float*)x + blockLength * AscendC::GetBlockIdx(), blockLength);
        yGm.SetGlobalBuffer((__gm__ float*)y + blockLength * AscendC::GetBlockIdx(), blockLength);
        pipe.InitBuffer(inQ, 2, tileLength * sizeof(float));
        pipe.InitBuffer(outQ, 2, tileLength * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t off = 0; off < blockLength; off += tileLength) {
            AscendC::LocalTensor<float> in = inQ.AllocTensor<float>();
            AscendC::DataCopy(in, xGm[off], tileLength);
            inQ.EnQue(in);
            AscendC::LocalTensor<float> a = inQ.DeQue<float>();
            AscendC::LocalTensor<float> b = outQ.AllocTensor<float>();
            AscendC::LeakyRelu(b, a, slope, tileLength);
            outQ.EnQue(b);
            inQ.FreeTensor(a);
            AscendC::LocalTensor<float> c = outQ.DeQue<float>();
            AscendC::DataCopy(yGm[off], c, tileLength);
            outQ.FreeTensor(c);
        }
    }
private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::VECIN, 2> inQ;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 2> outQ;
    AscendC::GlobalTensor<float> xGm, yGm;
    uint32_t blockLength, tileLength;
    float slope;
};

extern "C" __global__ __aicore__ void leaky_relu_custom(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelLeakyRelu op;
    op.Init(x, y, tilingData.totalLength, tilingData.tileLength, tilingData.negativeSlope);
    op.Process();
}
