"""The triton backend: registration, static rules, the answer format and the availability message
run everywhere; the interpreter check needs the triton package; verification, timing and the
exploit answers need an NVIDIA GPU and skip without one."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from kernel_gym.backends import BACKENDS, BackendUnavailable, get_backend
from kernel_gym.tasks import get_task
from kernel_gym.verify.static_checks import check_answer_source
from solutions import available_answers, reference_answer
from tests.backends.gpu_checks import check_episode, check_exploit_rejected, check_reference_answer
from tests.backends.gpu_exploits import triton_exploits

GPU = torch.cuda.is_available()
HAS_TRITON = importlib.util.find_spec("triton") is not None
NO_GPU = "needs an NVIDIA GPU (torch.cuda.is_available() is False)"


def test_registered_with_its_env_id():
    import gymnasium as gym

    import kernel_gym  # noqa: F401 - registers the env ids

    assert BACKENDS["triton"] == "kernel_gym.backends.triton:TritonBackend"
    backend = get_backend("triton")
    assert backend.language == "triton" and backend.env_id == "KernelBench-Triton-v0"
    assert "KernelBench-Triton-v0" in gym.registry
    assert backend.sandbox.runner_exec  # Triton's JIT runs ptxas in the answer's process
    assert backend.compile_kinds == ()  # no compile-service module: a C++ library is refused


def test_reference_answers_pass_the_static_rules():
    tasks = available_answers("triton")
    assert len(tasks) >= 5
    for task_id in tasks:
        answer = reference_answer(task_id, "triton")
        assert answer is not None and "@triton.jit" in answer
        assert check_answer_source(answer, "triton") == [], task_id


def test_answer_format_and_static_rules():
    assert "@triton.jit" in get_backend("triton").answer_format()
    rules = {n: {v.rule for v in check_answer_source(a, "triton")} for n, (_, a, _, _) in triton_exploits().items()}
    assert "threads_or_streams" in rules["side_stream"]
    assert "threads_or_streams" in rules["cuda_graph_stale"]
    assert "monkey_patch" in rules["tf32_flag"]
    relu = reference_answer("level1/021_relu", "triton")
    assert relu is not None
    violations = check_answer_source("from kernel_gym.backends.cuda import load_cuda\n" + relu, "triton")
    assert "forbidden_import" in {v.rule for v in violations}


def test_interpret_mode_is_untimed_and_labelled():
    backend = get_backend("triton")
    assert backend.untimed_reason({}) is None
    assert "TRITON_INTERPRET=1" in (backend.untimed_reason({"interpret": True}) or "")


def test_check_available_names_what_is_missing(monkeypatch):
    backend = get_backend("triton")
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    with pytest.raises(BackendUnavailable) as info:
        backend.check_available()
    message = str(info.value)
    if HAS_TRITON:
        assert "NVIDIA GPU" in message or "CPU-only" in message
        assert "interpret" in message
    else:
        assert "pip install triton" in message


@pytest.mark.skipif(not HAS_TRITON, reason="needs the triton package (pip install triton)")
def test_interpreter_functional_check_on_the_cpu():
    from kernel_gym.verify import verify

    answer = reference_answer("level1/021_relu", "triton")
    assert answer is not None
    result = verify(
        get_task("level1/021_relu"),
        answer,
        backend="triton",
        use_cache=False,
        correctness_trials=2,
        backend_options={"interpret": True},
        memory_limit_mb=16384,
    )
    assert result.correct, (result.error_class, result.message)
    assert result.latency_s is None and "TRITON_INTERPRET=1" in result.details.get("untimed", "")


# ------------------------------------------------------------------------------ on a GPU
@pytest.mark.skipif(not (GPU and HAS_TRITON), reason=NO_GPU + " and triton")
@pytest.mark.parametrize("task_id", available_answers("triton"))
def test_reference_answers_verify_and_are_timed_on_the_gpu(task_id):
    check_reference_answer("triton", task_id)


@pytest.mark.skipif(not (GPU and HAS_TRITON), reason=NO_GPU + " and triton")
@pytest.mark.parametrize("name", sorted(triton_exploits()))
def test_exploits_are_rejected_on_the_gpu(name):
    check_exploit_rejected("triton", name, triton_exploits()[name])


@pytest.mark.skipif(not (GPU and HAS_TRITON), reason=NO_GPU + " and triton")
def test_an_episode_on_the_triton_env(tmp_path):
    check_episode("KernelBench-Triton-v0", "triton", tmp_path)
