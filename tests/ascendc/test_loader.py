"""The loader API: binding, reports, recorders, source rewriting, options, platform queries."""

import time
from pathlib import Path

import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.loader import rewrite_source
from kernel_gym.native import CompileError

SIMPLE = r'''
#include "kernel_operator.h"
using namespace AscendC;

template <typename T>
__global__ __aicore__ void fill_kernel(GM_ADDR out, uint32_t n, float value)
{
    TPipe pipe;
    TQue<QuePosition::VECOUT, 1> q;
    pipe.InitBuffer(q, 1, n * sizeof(T));
    GlobalTensor<T> g;
    g.SetGlobalBuffer((__gm__ T*)out + GetBlockIdx() * n, n);
    LocalTensor<T> t = q.AllocTensor<T>();
    Duplicate(t, (T)(value + GetBlockIdx()), n);
    q.EnQue(t);
    t = q.DeQue<T>();
    DataCopy(g, t, n);
    q.FreeTensor(t);
}

extern "C" int fill(uint32_t blockDim, aclrtStream stream, float* out, uint32_t n, float value)
{
    /* a comment with fill_kernel<float><<<1, nullptr, stream>>>(x) inside */
    const char* text = "<<<not a launch>>>";
    fill_kernel<float>
        <<<blockDim, nullptr, stream>>>(
            (GM_ADDR)out,
            n, value);
    return (int)blockDim + (text[0] == '<');
}

extern "C" void fill_half_twice(uint8_t* out, uint32_t n)
{
    kgsim::launch(2, fill_kernel<half>, out, n, 1.0f);
    ACLRT_LAUNCH_KERNEL(fill_kernel<half>)(1, nullptr, out, n, 5.0f);
}

extern "C" void platform_info(int64_t* out)
{
    auto* plat = platform_ascendc::PlatformAscendCManager::GetInstance();
    uint64_t ub = 0, l1 = 0;
    plat->GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
    plat->GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1);
    platform_ascendc::PlatformAscendC other(nullptr);
    out[0] = plat->GetCoreNumAiv();
    out[1] = plat->GetCoreNumAic();
    out[2] = (int64_t)ub;
    out[3] = (int64_t)l1;
    out[4] = other.GetCoreNumAiv();
}
'''


@pytest.fixture(scope="module")
def simple():
    return asc.load(SIMPLE, name="simple.cpp")


def test_host_function_binding_and_report(simple):
    out = torch.zeros(4 * 64)
    ret = simple.fill(4, None, out, 64, 2.0)
    assert ret == 5
    assert torch.equal(out.view(4, 64), (torch.arange(4.0) + 2.0)[:, None].expand(4, 64))
    r = simple.last_run
    assert isinstance(r, asc.LaunchReport)
    assert r.kernel == "fill_kernel<float>" and r.num_blocks == 4 and r.waves == 1 and r.cores_used == 4
    assert r.latency_s > 0 and r.latency_cycles == pytest.approx(r.latency_s * 1.85e9)
    assert r.gm_bytes == 4 * 64 * 4 and r.bound in ("pipe", "hbm", "gm_port", "launch")
    assert set(r.per_pipe_busy) >= {"S", "V", "MTE2", "MTE3"} and r.per_pipe_busy["V"] > 0
    assert r.faults == [] and r.soc == "Ascend910B2"
    with pytest.raises(TypeError, match="float\\* but the tensor is torch.float16"):
        simple.fill(1, None, torch.zeros(64, dtype=torch.float16), 64, 1.0)
    with pytest.raises(AttributeError, match="fill, fill_half_twice, platform_info"):
        simple.nope


def test_launch_helper_and_record_launches(simple):
    out = torch.zeros(2 * 128, dtype=torch.float16)
    with asc.record_launches() as outer:
        simple.fill_half_twice(out, 128)
        with asc.record_launches() as inner:
            simple.fill(1, None, torch.zeros(64), 64, 0.0)
    assert [r.kernel for r in outer.launches] == ["kernel", "fill_kernel<half>", "fill_kernel<float>"]
    assert [r.kernel for r in inner.launches] == ["fill_kernel<float>"]
    # launches plus the host code of the kernel file (a few basic blocks of launch wrappers here)
    assert 0 < outer.host_blocks < 200 and outer.host_s == pytest.approx(outer.host_blocks * 1e-9)
    assert outer.total_latency_s == pytest.approx(sum(r.latency_s for r in outer.launches) + outer.host_s)
    assert out[:128].eq(5).all() and out[128:].eq(2).all()  # the second launch rewrote block 0
    assert len(simple.last_runs) == 1


def test_rewrite_keeps_line_numbers():
    text = rewrite_source(SIMPLE, "simple.cpp")
    body = text.split('#line 1 "simple.cpp"\n', 1)[1]
    src_lines, new_lines = SIMPLE.split("\n"), body.split("\n")
    i = next(k for k, ln in enumerate(src_lines) if "fill_kernel<float>" in ln and "/*" not in ln)
    assert "::kgsim::launch_at(__FILE__, __LINE__, \"fill_kernel<float>\"" in new_lines[i]
    j = next(k for k, ln in enumerate(src_lines) if "return (int)blockDim" in ln)
    assert "return (int)blockDim" in new_lines[j]
    assert "<<<not a launch>>>" in body and "fill_kernel<float><<<1, nullptr, stream>>>(x)" in body


def test_masking_blanks_comments_and_literals_only():
    # what the chevron rewrite must not look into: comments, strings, raw strings, char literals;
    # a digit separator is no char literal, and every newline and length is kept
    from kernel_gym.ascendc.loader import _mask

    src = (
        'k<<<1, nullptr, s>>>(x); // a<<<b>>>(c)\n/* multi\nline <<< */ "str\\"<<<" R"d(raw )" <<<)d" '
        "'<' 1'000'000 u8R\"(x)\" tail /* open"
    )
    masked = _mask(src)
    assert len(masked) == len(src) and [i for i, c in enumerate(src) if c == "\n"] == [
        i for i, c in enumerate(masked) if c == "\n"
    ]
    assert masked.startswith("k<<<1, nullptr, s>>>(x); ") and masked.count("<<<") == 1
    assert "1'000'000" in masked and "tail" in masked and "open" not in masked
    assert 'R"' in masked and "raw" not in masked and "str" not in masked


def test_platform_queries_follow_the_soc():
    for soc, aiv, aic in (("Ascend910B2", 48, 24), ("Ascend910B4", 40, 20)):
        mod = asc.load(SIMPLE, soc=soc, name="simple.cpp")
        out = torch.zeros(5, dtype=torch.int64)
        mod.platform_info(out)
        prof = asc.SOC_PROFILES[soc]
        # UB and L1 less the 256 bytes CANN's PlatformAscendC keeps back on an Atlas A2 part
        assert out.tolist() == [aiv, aic, int(prof.usable_ub_bytes) - 256, 512 * 1024 - 256, aiv]
        assert mod.last_run is None


def test_cached_load_is_fast(simple):
    t = time.perf_counter()
    asc.load(SIMPLE, name="simple.cpp")
    assert time.perf_counter() - t < 0.5


def test_cached_load_skips_the_rewrite_but_not_the_signature(simple, monkeypatch):
    # a load of sources built before finds library and host functions in the index, without
    # rewriting; a library whose signature no longer matches is built again, not loaded
    import kernel_gym.ascendc.loader as loader

    def no_rewrite(*args, **kwargs):
        raise AssertionError("rewritten although built before")

    with monkeypatch.context() as m:
        m.setattr(loader, "rewrite_source", no_rewrite)
        again = asc.load(SIMPLE, name="simple.cpp")
    assert again.path == simple.path and set(again.functions) == set(simple.functions)
    assert again.functions["fill"] == simple.functions["fill"]
    out = torch.zeros(2 * 16)
    assert again.fill(2, None, out, 16, 3.0) == 3
    sig = Path(f"{simple.path}.sig")
    good = sig.read_text()
    try:
        sig.write_text("0" * 64)
        with monkeypatch.context() as m:
            m.setattr(loader, "rewrite_source", no_rewrite)
            with pytest.raises(AssertionError, match="rewritten although built before"):
                asc.load(SIMPLE, name="simple.cpp")
    finally:
        sig.write_text(good)


def test_compile_errors():
    with pytest.raises(asc.AscendCCompileError) as info:
        asc.load(SIMPLE.replace("q.FreeTensor(t);", "q.FreeTensor(t)"), name="broken.cpp")
    assert info.value.error_class == "compile_error" and "broken.cpp:" in str(info.value)
    assert isinstance(info.value, CompileError) and info.value.log
    bad = SIMPLE.replace("fill_kernel<half>, out", "fill_kernel<int8_t>, out").replace(
        "ACLRT_LAUNCH_KERNEL(fill_kernel<half>)(1, nullptr, out, n, 5.0f);", "")
    with pytest.raises(asc.UnsupportedDtypeError) as info:
        asc.load(bad, name="dtype.cpp")
    assert info.value.error_class == "unsupported_dtype" and "Duplicate" in str(info.value)


def test_options_and_defaults():
    with pytest.raises(TypeError, match="unknown option"):
        asc.load(SIMPLE, nonsense=1)
    with pytest.raises(ValueError):
        asc.load(SIMPLE, align_mode="loose")
    with pytest.raises(ValueError, match="unknown SoC"):
        asc.load(SIMPLE, soc="Ascend999")
    old = asc.default_options()
    try:
        asc.set_default_options(soc="Ascend910B3")
        assert asc.load(SIMPLE, name="simple.cpp").soc == "Ascend910B3"
    finally:
        asc.set_default_options(soc=old["soc"], align_mode=old["align_mode"])


def test_runtime_and_host_pch_depend_on_every_header_the_host_pch_reaches():
    # the host precompiled header reaches aclnn/acl_meta.h (through kgsim/aclnn_exec.h) and
    # ge/ge_api_error_codes.h (through register/op_def_registry.h): a change there must give a new
    # pch, or a unit including the changed header after the stale pch defines its types twice
    from kernel_gym.ascendc.loader import INCLUDE_DIR, _own_headers

    own = set(_own_headers())
    for rel in ("aclnn/acl_meta.h", "acl/acl.h", "ge/ge_api_error_codes.h", "base/err_msg.h"):
        assert INCLUDE_DIR / rel in own, rel
