"""Answers that crash, hang, exhaust memory, exit or fail to build come back as results.

Each test checks the error class the pipeline produces and that the calling process is
unharmed: it is still running (the test reaches its end) and a correct answer verified
right after the fault is feasible.
"""

from __future__ import annotations

import time

import pytest

from kernel_gym.tasks import get_task
from kernel_gym.verify import VerifySettings, sandbox_stage, verify
from solutions import reference_answer

RELU = get_task("level1/021_relu")
FAST = {"measure_time": False, "use_cache": False, "timeout_s": 60}
GOOD = reference_answer("level1/021_relu", "cpu")


def relu_answer(kernel_body: str, prelude: str = "", forward_extra: str = "") -> str:
    """A ReLU answer whose kernel runs ``kernel_body`` first."""
    return f'''
import torch
import torch.nn as nn
from kernel_gym.backends.cpu import load_cpp

CPP = r"""
#include <cstdint>
#include <cstdlib>
{prelude}
extern "C" void relu_kernel(const float* x, float* y, int64_t n) {{
    {kernel_body}
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
}}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lib = load_cpp(CPP)

    def forward(self, x):
        y = torch.empty_like(x)
        {forward_extra}
        self.lib.relu_kernel(x, y, x.numel())
        return y
'''


@pytest.fixture(autouse=True)
def caller_unharmed():
    """After every fault: a correct answer still verifies in this process."""
    yield
    after = verify(RELU, GOOD, "cpu", **FAST)
    assert after.feasible, after.summary()


def test_segfault_is_a_crash() -> None:
    r = verify(RELU, relu_answer("*(volatile int*)nullptr = 1;"), "cpu", **FAST)
    assert r.error_class == "crash", r.summary()
    assert "SIGSEGV" in r.message and r.compiled


def test_abort_is_a_crash() -> None:
    r = verify(RELU, relu_answer("abort();"), "cpu", **FAST)
    assert r.error_class == "crash", r.summary()
    assert "SIGABRT" in r.message


def test_hang_times_out_quickly() -> None:
    started = time.monotonic()
    r = verify(RELU, relu_answer("volatile int spin = 1; while (spin) {}"), "cpu", **{**FAST, "timeout_s": 10})
    assert r.error_class == "timeout", r.summary()
    assert time.monotonic() - started < 30
    assert r.details.get("stage") == "correctness"


def test_cpp_allocation_over_the_limit_is_memory_limit() -> None:
    # new[] of 16 GiB under a 2 GiB address-space limit throws std::bad_alloc, which cannot
    # cross the C boundary: std::terminate aborts, and the log names bad_alloc
    body = "char* big = new char[16ull << 30]; for (size_t i = 0; i < (16ull << 30); i += 4096) big[i] = 1;"
    r = verify(RELU, relu_answer(body), "cpu", **{**FAST, "memory_limit_mb": 2048})
    assert r.error_class == "memory_limit", r.summary()


def test_python_allocation_over_the_limit_is_memory_limit() -> None:
    answer = relu_answer("", forward_extra="big = torch.empty(1 << 34)")
    r = verify(RELU, answer, "cpu", **{**FAST, "memory_limit_mb": 2048})
    assert r.error_class == "memory_limit", r.summary()
    assert "allocate" in r.message


def test_cpp_exit_cannot_end_the_caller() -> None:
    r = verify(RELU, relu_answer("exit(0);"), "cpu", **FAST)
    assert r.error_class == "crash", r.summary()
    assert "without a result" in r.message


def test_os_exit_and_sys_exit_cannot_end_the_caller() -> None:
    # both are refused statically (os._exit, import sys); the sandbox alone still contains them
    settings = VerifySettings.from_kwargs(**FAST)
    os_exit = "import os\n" + relu_answer("", forward_extra="os._exit(3)")
    r = sandbox_stage(RELU, os_exit, "cpu", settings)
    assert r.error_class == "crash" and "code 3" in r.message, r.summary()
    sys_exit = "import sys\n" + relu_answer("", forward_extra="sys.exit(0)")
    r = sandbox_stage(RELU, sys_exit, "cpu", settings)
    assert r.error_class == "runtime_error" and "SystemExit" in r.message, r.summary()
    static = verify(RELU, os_exit, "cpu", **FAST)
    assert static.hacked and static.hack_rule == "os_access", static.summary()


def test_raise_in_init_is_init_error() -> None:
    answer = GOOD.replace("self.lib = load_cpp(CPP)", "self.lib = load_cpp(CPP)\n        raise ValueError('bad init')")
    r = verify(RELU, answer, "cpu", **FAST)
    assert r.error_class == "init_error", r.summary()
    assert "ValueError: bad init" in r.message and "answer line" in r.message


def test_syntax_error() -> None:
    r = verify(RELU, GOOD.replace("def forward(self, x):", "def forward(self, x)"), "cpu", **FAST)
    assert r.error_class == "syntax_error", r.summary()
    assert r.message.startswith("line ")


def test_no_model_new() -> None:
    r = verify(RELU, GOOD.replace("class ModelNew", "class MyModel"), "cpu", **FAST)
    assert r.error_class == "no_model_new", r.summary()


def test_compile_error_has_the_log() -> None:
    r = verify(RELU, relu_answer("this is not C++;"), "cpu", **FAST)
    assert r.error_class == "compile_error", r.summary()
    assert not r.compiled
    assert "error" in r.compile_log and "kernel.cpp" in r.compile_log
