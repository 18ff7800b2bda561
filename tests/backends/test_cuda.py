"""The cuda backend: what needs no GPU runs everywhere (registration, static rules, answer format,
the availability message, nvcc compile-only where nvcc exists); verification, timing and the
exploit answers need an NVIDIA GPU and skip without one."""

from __future__ import annotations

import time

import pytest
import torch

from kernel_gym.backends import BACKENDS, BackendUnavailable, get_backend
from kernel_gym.native.compile import compiler_path
from kernel_gym.verify.static_checks import check_answer_source
from solutions import available_answers, reference_answer
from tests.backends.gpu_checks import check_episode, check_exploit_rejected, check_reference_answer
from tests.backends.gpu_exploits import cuda_exploits

GPU = torch.cuda.is_available()
NO_GPU = "needs an NVIDIA GPU (torch.cuda.is_available() is False)"
NVCC = compiler_path("nvcc") is not None


def test_registered_with_its_env_id():
    import gymnasium as gym

    import kernel_gym  # noqa: F401 - registers the env ids

    assert BACKENDS["cuda"] == "kernel_gym.backends.cuda:CudaBackend"
    backend = get_backend("cuda")
    assert backend.language == "cuda" and backend.device == "cuda" and backend.env_id == "KernelBench-CUDA-v0"
    assert "KernelBench-CUDA-v0" in gym.registry
    assert backend.compile_kinds == ("cuda", "torch_ext") and "nvcc" in backend.compilers
    assert not backend.sandbox.limit_address_space and "/dev/nvidia*" in backend.sandbox.devices


def test_reference_answers_pass_the_static_rules():
    tasks = available_answers("cuda")
    assert len(tasks) >= 5
    for task_id in tasks:
        answer = reference_answer(task_id, "cuda")
        assert answer is not None and "load_cuda" in answer
        assert check_answer_source(answer, "cuda") == [], task_id


def test_answer_format_names_the_loader():
    text = get_backend("cuda").answer_format()
    assert "load_cuda" in text and 'extern "C"' in text and "ModelNew" in text


def test_static_rules_refuse_streams_graphs_and_other_loaders():
    relu = reference_answer("level1/021_relu", "cuda")
    assert relu is not None
    rules = {
        name: {v.rule for v in check_answer_source(answer, "cuda")}
        for name, (_, answer, _, _) in cuda_exploits().items()
    }
    assert "threads_or_streams" in rules["side_stream_api"]  # cudaStreamCreateWithFlags
    assert "threads_or_streams" in rules["cuda_graph"]  # torch.cuda.CUDAGraph
    # the CPU loader is not this backend's
    violations = check_answer_source("from kernel_gym.backends.cpu import load_cpp\n" + relu, "cuda")
    assert "forbidden_import" in {v.rule for v in violations}
    # nvcc flags an answer may pass, and one it may not
    from kernel_gym.verify.static_checks import check_compiler_flags

    assert check_compiler_flags(["--use_fast_math", "-arch=sm_90", "-maxrregcount=64", "-lineinfo"]) == []
    assert check_compiler_flags(["-ccbin=/tmp/evil"])


def test_check_available_names_what_is_missing(monkeypatch):
    backend = get_backend("cuda")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    with pytest.raises(BackendUnavailable) as info:
        backend.check_available()
    message = str(info.value)
    assert "NVIDIA GPU" in message or "CPU-only build" in message
    assert ("compile-only" in message) if NVCC else ("nvcc" in message)


@pytest.mark.skipif(not NVCC, reason="needs nvcc (the CUDA toolkit) for compile-only checks")
def test_compile_only_reports_nvcc_errors_without_a_gpu(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path))
    from kernel_gym.verify.compile_only import compile_only

    answer = reference_answer("level1/021_relu", "cuda")
    assert answer is not None
    t0 = time.perf_counter()
    [cold] = compile_only(answer, arch="sm_90")
    cold_s = time.perf_counter() - t0
    assert cold["ok"], cold
    t0 = time.perf_counter()
    [cached] = compile_only(answer, arch="sm_90")
    assert cached["ok"] and time.perf_counter() - t0 < cold_s
    assert len(list((tmp_path / "cuda").glob("*.so"))) == 1  # cached by content
    broken = answer.replace("fmaxf(v.x, 0.f)", "fmaxf(v.x, undefined_name)")
    [failed] = compile_only(broken, arch="sm_90")
    assert not failed["ok"] and "undefined_name" in failed["log"]


# ------------------------------------------------------------------------------ on a GPU
@pytest.mark.skipif(not GPU, reason=NO_GPU)
@pytest.mark.parametrize("task_id", available_answers("cuda"))
def test_reference_answers_verify_and_are_timed_on_the_gpu(task_id):
    check_reference_answer("cuda", task_id)


@pytest.mark.skipif(not GPU, reason=NO_GPU)
@pytest.mark.parametrize("name", sorted(cuda_exploits()))
def test_exploits_are_rejected_on_the_gpu(name):
    check_exploit_rejected("cuda", name, cuda_exploits()[name])


@pytest.mark.skipif(not GPU, reason=NO_GPU)
def test_an_episode_on_the_cuda_env(tmp_path):
    check_episode("KernelBench-CUDA-v0", "cuda", tmp_path)
