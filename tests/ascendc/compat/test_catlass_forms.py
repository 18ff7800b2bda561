"""The forms CANN's matmul template library (catlass) writes kernels in, run unmodified with
run_sample: a kernel class whose operator() is specialised per core type inside the class
(``template <int32_t CORE_TYPE = g_coreType>``), ``if constexpr (g_coreType == ...)``, a per-core
constant picked with g_coreType, an overloaded kernel template launched with <<<>>>, the
``__forceinline__`` keyword, the cube mode setters, the 7 KB fixpipe buffer, the L1 -> bias
table move with its fp16 -> fp32 conversion, ``aclrtGetHardwareSyncAddr`` and the host types of opdev
(``op::fp16_t``, ``op::bfloat16``). The sample below is written here from the Ascend C
documentation of those APIs (kernel types, g_coreType, GetSubBlockIdx), not taken from catlass."""

from __future__ import annotations

import numpy as np

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.core_type_dispatch import rewrite_core_type_dispatch

KERNEL_CLASS = r"""
template <uint8_t MODE, int32_t CORE_TYPE> struct FlagOf;
template <> struct FlagOf<0, AscendC::AIC> { static constexpr uint16_t ID = 9; };
template <> struct FlagOf<0, AscendC::AIV> { static constexpr uint16_t ID = 8; };

struct Params { GM_ADDR out; uint32_t n; uint32_t zero; };

class TagKernel {
public:
    template <class T>
    struct OffsetOf { static constexpr int32_t value = T::value; };
    template <>
    struct OffsetOf<void> { static constexpr int32_t value = 0; };

    template <int32_t CORE_TYPE = g_coreType>
    __forceinline__ __aicore__ void operator()(Params const& params);

    template <>
    __forceinline__ __aicore__ void operator()<AscendC::AIC>(Params const& params)
    {
        AscendC::SetHF32Mode(false);
        AscendC::SetMMLayoutTransform(true);
        constexpr uint16_t flag = FlagOf<0, g_coreType>::ID;
        // the 7 KB fixpipe buffer CANN's template library allocates whole, and the L1 -> bias
        // table move with its fp16 -> fp32 conversion (64 B of fp16 per burst unit)
        AscendC::TPipe pipe;
        AscendC::TBuf<AscendC::TPosition::C2PIPE2GM> fb;
        pipe.InitBuffer(fb, 7 * 1024);
        AscendC::TBuf<AscendC::TPosition::A1> l1;
        AscendC::TBuf<AscendC::TPosition::C2> bt;
        pipe.InitBuffer(l1, 64 * sizeof(half));
        pipe.InitBuffer(bt, 64 * sizeof(float));
        AscendC::LocalTensor<half> l1h = l1.Get<half>();
        AscendC::LocalTensor<float> btf = bt.Get<float>();
        for (int i = 0; i < 64; ++i) l1h.SetValue(i, half(0.25f * i - 3.0f));
        AscendC::DataCopyParams cp;
        cp.blockCount = 1;
        cp.blockLen = 2;  // 2 x 64 B of fp16: 64 values
        AscendC::DataCopy(btf, l1h, cp);
        float sum = 0.0f;
        for (int i = 0; i < 64; ++i) sum += btf.GetValue(i);  // sum of 0.25 i - 3 = 312
        auto* out = reinterpret_cast<__gm__ int32_t*>(params.out);
        out[AscendC::GetBlockIdx() * 4] = 1000 + flag + OffsetOf<void>::value;
        out[AscendC::GetBlockIdx() * 4 + 3] = int32_t(sum);
    }

    template <>
    __forceinline__ __aicore__ void operator()<AscendC::AIV>(Params const& params)
    {
        // an integer division by zero whose result the kernel does not need (the AI Core raises no
        // exception; the simulator gives 0 instead of killing the process with SIGFPE)
        uint32_t unused = params.n % params.zero;
        int32_t side = int32_t(unused);
        if constexpr (g_coreType == AscendC::AIV) {
            side = 2000;
        }
        constexpr uint16_t flag = FlagOf<0, g_coreType>::ID;
        auto* out = reinterpret_cast<__gm__ int32_t*>(params.out);
        // block index of an AIV in a 1:2 launch: group * 2 + sub-block
        out[(AscendC::GetBlockIdx() / 2) * 4 + 1 + AscendC::GetSubBlockIdx()] = side + flag;
    }
};

template <class Op>
__global__ __aicore__ void Adapter(Params params) { Op op; op(params); }
template <class Op>
__global__ __aicore__ void Adapter(Params params, uint64_t syncAddr)
{
    AscendC::SetSyncBaseAddr(syncAddr);
    Op op;
    op(params);
}
"""

MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "acl/acl.h"
#include "kernel_operator.h"
#include <opdev/fp16_t.h>
#include <opdev/bfloat16.h>
#include "tag_kernel.hpp"

int main()
{
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    const uint32_t groups = 3;
    size_t bytes = groups * 4 * sizeof(int32_t);
    void* out = nullptr;
    aclrtMalloc(&out, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemset(out, bytes, 0, bytes);
    Params params{static_cast<GM_ADDR>(out), groups, 0};
    Adapter<TagKernel><<<groups, nullptr, stream>>>(params);
    aclrtSynchronizeStream(stream);
    std::vector<int32_t> host(groups * 4);
    aclrtMemcpy(host.data(), bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    FILE* f = std::fopen("output/tags.bin", "wb");
    std::fwrite(host.data(), sizeof(int32_t), host.size(), f);
    std::fclose(f);
    // the two-argument overload of the same kernel template
    aclrtMemset(out, bytes, 0, bytes);
    uint64_t syncAddr = 0;
    if (aclrtGetHardwareSyncAddr(reinterpret_cast<void**>(&syncAddr)) != ACL_SUCCESS || syncAddr == 0) return 3;
    Adapter<TagKernel><<<groups, nullptr, stream>>>(params, syncAddr);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(host.data(), bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    f = std::fopen("output/tags2.bin", "wb");
    std::fwrite(host.data(), sizeof(int32_t), host.size(), f);
    std::fclose(f);
    // host half / bfloat16 values as a host program fills device buffers with them
    const float values[4] = {0.1f, -3.14159f, 65504.0f, 1.0f / 3.0f};
    std::vector<op::fp16_t> h(4);
    std::vector<op::bfloat16> b(4);
    float back[4];
    for (int i = 0; i < 4; ++i) {
        h[i] = static_cast<op::fp16_t>(values[i]);
        b[i] = values[i];
        back[i] = static_cast<float>(h[i]);
    }
    f = std::fopen("output/fp16.bin", "wb");
    std::fwrite(h.data(), 2, 4, f);
    std::fwrite(b.data(), 2, 4, f);
    std::fwrite(back, 4, 4, f);
    std::fclose(f);
    // host code dividing by zero (catlass default-constructs a padding layout: CeilDiv(0, 0)); an
    // Atlas server's aarch64 host gives 0 without a trap
    const char* set = std::getenv("KGSIM_TEST_UNSET_VARIABLE");  // unset: a divisor g++ cannot fold
    const uint32_t zero = static_cast<uint32_t>(std::atoi(set ? set : "0"));
    const uint32_t quotient = 7u / zero;
    f = std::fopen("output/div.bin", "wb");
    std::fwrite(&quotient, sizeof(quotient), 1, f);
    std::fclose(f);
    aclrtFree(out);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
"""


def test_rewrite_keeps_lines_and_turns_specialisations_into_constrained_overloads() -> None:
    out = rewrite_core_type_dispatch(KERNEL_CLASS)
    assert out.count("\n") == KERNEL_CLASS.count("\n")
    assert "template <>\n    __forceinline__" not in out
    assert out.count("requires (KgsimCoreType == AscendC::AIC)") == 1
    assert out.count("requires (KgsimCoreType == AscendC::AIV)") == 1
    assert "if constexpr (g_coreType" not in out
    assert "struct OffsetOf<void, KgsimSpecialisation>" in out  # in-class class specialisation
    assert "::kgsim::core_select" in out
    # a file without g_coreType is left alone, byte for byte
    plain = "template <> struct X<int> { };\n"
    assert rewrite_core_type_dispatch(plain) == plain


def test_catlass_style_kernel_runs_each_core_types_specialisation() -> None:
    run = asc.run_sample(
        {"main.cpp": MAIN, "tag_kernel.hpp": KERNEL_CLASS},
        defines={"KGSIM_KERNEL_TYPE": "KERNEL_TYPE_MIX_AIC_1_2"},
    )
    assert run.ok, (run.error, run.stderr[-2000:])
    want = np.array([[1009, 2008, 2008, 312]] * 3, dtype=np.int32).ravel()
    for name in ("output/tags.bin", "output/tags2.bin"):
        got = np.frombuffer(run.files[name], dtype=np.int32)
        np.testing.assert_array_equal(got, want)
    data = run.files["output/fp16.bin"]
    values = np.array([0.1, -3.14159, 65504.0, 1.0 / 3.0], dtype=np.float32)
    halves = np.frombuffer(data[:8], dtype=np.float16)
    np.testing.assert_array_equal(halves, values.astype(np.float16))
    bf_bits = np.frombuffer(data[8:16], dtype=np.uint16)
    f32_bits = values.view(np.uint32)
    rne = ((f32_bits + 0x7FFF + ((f32_bits >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even
    np.testing.assert_array_equal(bf_bits, rne)
    assert np.frombuffer(run.files["output/div.bin"], dtype=np.uint32).tolist() == [0]
    back = np.frombuffer(data[16:32], dtype=np.float32)
    np.testing.assert_array_equal(back, values.astype(np.float16).astype(np.float32))
