"""One small kernel per fault class: each must raise its own exception naming the offending line."""

import mmap

import pytest
import torch

import kernel_gym.ascendc as asc
from tests.ascendc import kernels

FILE = "faults.cpp"


def line_of(marker):
    for i, text in enumerate(kernels.FAULTS.split("\n"), start=1):
        if f"// @{marker}" in text:
            return i
    raise KeyError(marker)


def own_pages(numel: int) -> torch.Tensor:
    """A zeroed float32 tensor in an anonymous mapping of its own, so nothing real lies just past it.

    A plain 32 MiB torch tensor usually gets glibc's own mapping, but not always: a large free
    chunk of the heap left by earlier tests can serve it, and then an overrun the simulator does not
    stop (a heap buffer is not guarded, rt_gm_alloc.cpp) corrupts the heap (seen as an xdist worker
    aborting with "double free or corruption")."""
    pages = mmap.mmap(-1, numel * 4)
    t = torch.frombuffer(pages, dtype=torch.float32)
    t.pages = pages  # the mapping lives as long as the tensor
    return t


def run(mod, case, blocks=1, n=256):
    x, y = torch.randn(n), torch.zeros(n)
    mod.run_fault(case, blocks, x, y, n)
    return y


CASES = [  # (case, blocks, exception, marker, message fragment)
    (0, 1, asc.UBOverflow, "ub_overflow", "exceeds the usable UB of 196608 B"),
    (1, 1, asc.MisalignedCopy, "misaligned_copy", "40 B"),
    (2, 1, asc.UnalignedLocalTensor, "unaligned_local_tensor", "not 32-byte aligned"),
    (3, 1, asc.RepeatOutOfRange, "repeat_out_of_range", "repeatTime 300"),
    (4, 1, asc.MaskOutOfRange, "mask_out_of_range", "mask 100 is out of range [0, 64]"),
    (5, 1, asc.GMOutOfBounds, "gm_out_of_bounds", "GM buffer 'x'"),
    (6, 1, asc.QueueFull, "queue_full", "full queue"),
    (7, 1, asc.QueueEmpty, "queue_empty", "empty queue"),
    (8, 1, asc.ForeignFree, "foreign_free", "another queue"),
    (10, 1, asc.TooManyTensors, "too_many_tensors", "9 tensors"),
    (12, 2, asc.GMRace, "gm_race", "block 1 writes bytes [0, 256) of GM buffer 'y'"),
    (14, 1, asc.Watchdog, "watchdog", "API calls"),
    (15, 1, asc.Watchdog, "deadlock", "no matching SetFlag"),
    (16, 1, asc.LocalOutOfBounds, "local_out_of_bounds", "256 bytes too far"),
    (19, 1, asc.TooManyTensors, "too_many_buffers", "65 buffers"),
    (20, 2, asc.GMRace, "gm_race_read", "block 1 reads"),
]


@pytest.mark.parametrize("case,blocks,exc,marker,fragment", CASES, ids=[c[3] for c in CASES])
def test_fault_is_reported_with_its_line(faults_mod, case, blocks, exc, marker, fragment):
    with pytest.raises(exc) as info:
        run(faults_mod, case, blocks)
    err = info.value
    assert isinstance(err, asc.AscendCFault) and isinstance(err, RuntimeError)
    assert err.error_class == exc.error_class
    assert fragment in str(err)
    assert (err.file, err.line) == (FILE, line_of(marker)), str(err)
    assert f"{FILE}:{line_of(marker)}" in str(err)
    assert faults_mod.last_run.faults[0]["error_class"] == exc.error_class


def test_a_tensor_still_allocated_at_kernel_end_is_a_warning(faults_mod):
    """The NPU does not check at kernel end (a public asc-devkit sample leaks one and runs): the
    output stands, and the report warns with the AllocTensor's line."""
    run(faults_mod, 9)
    warnings = faults_mod.last_run.warnings
    assert [w["error_class"] for w in warnings] == ["tensor_leak"]
    assert "never freed" in warnings[0]["message"] and warnings[0]["line"] == line_of("tensor_leak")
    assert faults_mod.last_run.faults == []


@pytest.mark.parametrize(
    "case,marker,fragment", [(10, "too_many_tensors", "9 tensors"), (19, "too_many_buffers", "65 buffers")]
)
def test_tensor_and_buffer_limits_warn_by_default(case, marker, fragment):
    """The documented limits (8 tensors per position, 64 buffers) are checked by CANN's CPU debug
    build, not on the NPU: by default the kernel runs and the report warns at the line; the fault
    above is bounds_mode="strict"."""
    mod = asc.load(kernels.FAULTS, name=FILE)
    run(mod, case)
    assert mod.last_run.faults == []
    [warning] = [w for w in mod.last_run.warnings if w["error_class"] == "too_many_tensors"]
    assert fragment in warning["message"] and warning["line"] == line_of(marker)


def test_queue_faults_share_a_category():
    for cls in (asc.QueueFull, asc.QueueEmpty, asc.ForeignFree, asc.TensorLeak, asc.TooManyTensors):
        assert issubclass(cls, asc.QueueMisuse) and cls.category == "queue_misuse"


def test_atomic_add_makes_multiblock_accumulation_legal(faults_mod):
    y = run(faults_mod, 13, blocks=3)
    assert torch.equal(y[:64], torch.full((64,), 3.0))


def test_by_default_a_misaligned_copy_rounds_down_as_the_npu_does():
    """The NPU copies whole 32-byte blocks and raises nothing: a kernel verified on a 910B that
    relies on it must run here, with the rounding reported as a warning."""
    assert asc.default_options()["align_mode"] == "npu"
    mod = asc.load(kernels.FAULTS, name=FILE)
    x, y = torch.randn(256), torch.zeros(256)
    mod.run_fault(1, 1, x, y, 256)
    assert torch.equal(y[:8], x[:8]) and torch.isnan(y[8:16]).all()  # bytes 32..40 were never copied
    [warning] = mod.last_run.warnings
    assert warning["error_class"] == "misaligned_copy" and "copies only 32 B" in warning["message"]


def test_by_default_an_access_past_a_local_tensor_inside_the_ub_is_done_as_the_npu_does():
    """Duplicate of 128 floats into a 256-byte TBuf: the NPU writes 512 bytes of UB (the rest
    belongs to no tensor here) and raises nothing; so does the default mode, with a warning."""
    mod = asc.load(kernels.FAULTS, name=FILE)
    x, y = torch.randn(256), torch.zeros(256)
    mod.run_fault(16, 1, x, y, 256)
    [warning] = mod.last_run.warnings
    assert warning["error_class"] == "local_out_of_bounds" and "bytes [0, 512)" in warning["message"]


def test_an_access_past_the_physical_ub_is_a_fault_in_every_mode():
    src = """
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void past_ub(GM_ADDR x) {
    TPipe pipe;
    TBuf<TPosition::VECCALC> b;
    pipe.InitBuffer(b, 1024);
    LocalTensor<float> t = b.Get<float>();
    t.SetValue(60000, 1.0f);  // byte 240000: past the 192 KB UB
}
extern "C" void run(uint8_t* x) { past_ub<<<1, nullptr, nullptr>>>(x); }
"""
    mod = asc.load(src, name="past_ub.cpp")
    with pytest.raises(asc.LocalOutOfBounds, match="outside the UB itself"):
        mod.run(torch.zeros(8))


def test_uninitialised_ub_is_poisoned_and_optionally_an_error(faults_mod):
    y = run(faults_mod, 11)
    assert torch.isnan(y[:64]).all()  # fresh UB reads as NaN
    strict = asc.load(kernels.FAULTS, name=FILE, check_uninit=True)
    with pytest.raises(asc.UninitializedRead) as info:
        run(strict, 11)
    assert info.value.line == line_of("uninitialized_read")


def test_missing_pipe_synchronisation(faults_mod):
    run(faults_mod, 17)
    warns = faults_mod.last_run.warnings
    assert [w["error_class"] for w in warns] == ["pipe_race"] and warns[0]["line"] == line_of("pipe_race")
    run(faults_mod, 18)
    assert faults_mod.last_run.warnings == []
    strict = asc.load(kernels.FAULTS, name=FILE, sync_check="error")
    with pytest.raises(asc.PipeRace):
        run(strict, 17)
    run(strict, 18)


def test_bad_launch():
    src = kernels.FAULTS + '\nextern "C" void launch_n(int64_t nb, uint8_t* x, uint8_t* y) ' \
                           '{ fault_kernel<13><<<nb, nullptr, nullptr>>>(x, y, 64); }\n'
    mod = asc.load(src, name=FILE)
    for nb in (0, -3, 65536):
        with pytest.raises(asc.BadLaunch, match=r"\[1, 65535\]"):
            mod.launch_n(nb, torch.zeros(64), torch.zeros(64))
    mod.launch_n(65535 // 4096, torch.zeros(64), torch.zeros(64))


def test_unsupported_dtype_is_a_compile_error():
    src = kernels.ELEMENTWISE.replace('extern "C" void ew_f16', 'extern "C" void ew_bf16(int op, uint8_t* a, '
                                      'uint8_t* b, uint8_t* c, uint32_t n, float s) '
                                      '{ dispatch<bfloat16_t, 0>(op, a, b, c, n, s); }\nextern "C" void ew_f16')
    with pytest.raises(asc.UnsupportedDtypeError) as info:
        asc.load(src, name="bf16.cpp")
    assert info.value.error_class == "unsupported_dtype"
    assert "not supported by the API on Atlas A2" in str(info.value)


def test_a_fault_stops_later_launches_of_the_call(faults_mod):
    with asc.record_launches() as rec:
        with pytest.raises(asc.QueueEmpty):
            run(faults_mod, 7, blocks=4)
    assert len(rec.launches) == 1 and rec.launches[0].blocks_run == 1


def test_enque_beyond_the_queue_depth():
    mod = asc.load(kernels.DEPTH, name="depth.cpp")
    with pytest.raises(asc.QueueFull, match="depth") as info:
        mod.run(torch.zeros(64))
    assert info.value.line == next(i for i, t in enumerate(kernels.DEPTH.split("\n"), 1) if "// @depth" in t)


RAW_GM_OVERRUN = r'''
#include "kernel_operator.h"
// The overrun happens in a destructor (implicitly noexcept) and in a loop: the fault is found
// inside the compiler's access callback, where no C++ exception may pass.
struct Closer {
    __gm__ float* p;
    int n;
    __aicore__ ~Closer() { p[n + 4] = 2.0f; }
};
extern "C" __global__ __aicore__ void overrun(GM_ADDR x, int n, int in_dtor) {
    __gm__ float* p = (__gm__ float*)x;
    if (in_dtor) {
        if (AscendC::GetBlockIdx() == 1) Closer c{p, n};
        return;
    }
    for (int i = 0; i < n + 8; ++i) p[i] = 1.0f;
}
extern "C" void run(uint8_t* x, int n, int in_dtor, int blocks) { overrun<<<blocks, nullptr, nullptr>>>(x, n, in_dtor); }
'''


@pytest.mark.parametrize("in_dtor, blocks", [(0, 1), (1, 2)])
def test_raw_gm_overrun_found_in_an_access_callback_stops_the_block(in_dtor, blocks):
    mod = asc.load(RAW_GM_OVERRUN, name="overrun.cpp")
    # pages of its own: the bytes after it are guarded (a heap block's neighbours are not)
    x = own_pages(1 << 23)
    with pytest.raises(asc.GMOutOfBounds, match="outside the buffer"):
        mod.run(x, x.numel(), in_dtor, blocks)
    # the process and the module survive: the next launch runs normally
    y = own_pages(1 << 23)
    mod.run(y, y.numel() - 8, 0, 1)
    assert bool((y[:-8] == 1).all())


SCALAR_PAST_END = r"""
#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void past_end(GM_ADDR x, GM_ADDR y, uint32_t n) {
    GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, n);
    yGm.SetGlobalBuffer((__gm__ float*)y, n);
    float past = xGm.GetValue(n);         // one element past x: a sliding window's last preload
    yGm.SetValue(0, past);
    yGm.SetValue(1, xGm.GetValue(n - 1));
    yGm.SetValue(n, 7.0f);                // one element past y: dropped
}
extern "C" void run(uint8_t* x, uint8_t* y, uint32_t n) { past_end<<<1, nullptr, nullptr>>>(x, y, n); }
"""


def test_a_scalar_access_just_past_its_buffer_acts_as_on_the_npu():
    """GetValue/SetValue one element past the buffer: the NPU's 2 MiB device page holds it, so by
    default it reads 0xFF bytes and the store is dropped, with a warning (as a DataCopy there);
    bounds_mode="strict" makes it the fault."""
    n = 1 << 23
    x, y = own_pages(n), own_pages(n)
    x.copy_(torch.randn(n))
    mod = asc.load(SCALAR_PAST_END, name="past_end.cpp")
    mod.run(x, y, n)  # the store past y is dropped (its page is unmapped here: a store would crash)
    assert torch.isnan(y[0]) and y[1] == x[-1]  # the 0xFF read is a NaN
    warned = [w["message"] for w in mod.last_run.warnings if w["error_class"] == "gm_out_of_bounds"]
    assert any("GetValue reads" in m and "2 MiB pages" in m for m in warned), warned
    assert any("SetValue writes" in m for m in warned), warned
    strict = asc.load(SCALAR_PAST_END, name="past_end.cpp", bounds_mode="strict")
    with pytest.raises(asc.GMOutOfBounds, match="GetValue reads bytes"):
        strict.run(x, y, n)


PIPE_PER_CALL = r'''
#include "kernel_operator.h"
using namespace AscendC;

// exp of one float through a TPipe and two queues built per call (as EvoKernel's scalar
// GemmLogSumExp... helpers do, 8192 calls a row): every call's queues are released at its end
__aicore__ inline float ExpOne(float v)
{
    TPipe pipe;
    TQue<TPosition::VECOUT, 1> q0, q1;
    pipe.InitBuffer(q0, 1, sizeof(float));
    pipe.InitBuffer(q1, 1, sizeof(float));
    LocalTensor<float> t0 = q0.AllocTensor<float>();
    LocalTensor<float> t1 = q1.AllocTensor<float>();
    t0(0) = v;
    Exp(t1, t0, 1);
    float out = t1(0);
    q1.FreeTensor(t1);
    q0.FreeTensor(t0);
    return out;
}

extern "C" __global__ __aicore__ void exp_each_kernel(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    GlobalTensor<float> gx, gy;
    gx.SetGlobalBuffer((__gm__ float*)x, n);
    gy.SetGlobalBuffer((__gm__ float*)y, n);
    for (uint32_t i = 0; i < n; ++i) gy.SetValue(i, ExpOne(gx.GetValue(i)));
}

extern "C" void exp_each(uint8_t* x, uint8_t* y, uint32_t n) { exp_each_kernel<<<1, nullptr, nullptr>>>(x, y, n); }
'''


def test_queues_built_per_call_can_be_built_more_times_than_a_tensor_field_counts():
    """40,000 calls each build a TPipe and two queues (80,000 queues in one block): the handles
    of released queues are reused, so a tensor's queue never reads as "not from a queue"
    (foreign_free, which a 910B does not raise: this kernel pattern passed on one)."""
    mod = asc.load(PIPE_PER_CALL, name="pipe_per_call.cpp")
    x = torch.randn(40_000)
    y = torch.empty_like(x)
    mod.exp_each(x, y, x.numel())
    assert torch.allclose(y, torch.exp(x), rtol=1e-5, atol=1e-6)
    assert not mod.last_run.faults


OOB_READS = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void oob_reads(GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256 * sizeof(float));
    LocalTensor<float> all = buf.Get<float>();
    for (uint32_t i = 0; i < 256; ++i) all.SetValue(i, 2.0f);
    LocalTensor<float> head = buf.Get<float>(8);  // 8 of the buffer's 256 floats
    float sum = 0.0f;
    for (uint32_t i = 8; i < 256; ++i) sum += head.GetValue(i);  // past the tensor, inside the UB
    GlobalTensor<float> yGm;
    yGm.SetGlobalBuffer((__gm__ float*)y, 1);
    yGm.SetValue(0, sum);
}

extern "C" void oob_reads_do(uint8_t* y) { oob_reads<<<1, nullptr, nullptr>>>(y); }
"""


def test_a_warning_repeated_by_every_access_is_recorded_once_as_the_first_access_saw_it():
    """248 GetValues past an 8-float tensor: each is done as the NPU does, and the warning is
    recorded once, with the first access's bytes (the message is formatted only when recorded)."""
    mod = asc.load(OOB_READS, name="oob_reads.cpp")
    y = torch.zeros(1)
    mod.oob_reads_do(y)
    assert float(y[0]) == 248 * 2.0
    [warning] = mod.last_run.warnings
    assert warning["error_class"] == "local_out_of_bounds" and "element bytes [32, 36)" in warning["message"]
