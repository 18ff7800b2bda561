"""The synthetic coder's CUDA and Triton templates: CUDA compiles with nvcc (compile-only, sm_90),
Triton parses and passes the static answer checks; missing skills bring back their faults."""

from __future__ import annotations

import ast
import shutil

import pytest
import torch

from kernel_gym.llm.base import GenerationRequest
from kernel_gym.llm.synthetic import SyntheticCoder
from kernel_gym.llm.synthetic.coder import coder_language
from kernel_gym.tasks import get_task, load_suite
from kernel_gym.verify.static_checks import check_answer_source

KNOWS_ALL = dict(prior_scale=10.0, distraction=False)  # every prior >= 1: every skill and tactic
CUDA_TASKS = (
    "level1/023_sigmoid_tail",
    "level1/040_sum_dim",
    "level1/061_softmax",
    "level1/065_softmax_fp16",
    "level1/066_mse_loss",
    "level1/074_matmul_square",
    "level1/087_max_pool_2d",
    "level1/093_cumsum",
)


def gen(task_id: str, backend: str, **kw):
    coder = SyntheticCoder(seed=0, **{**KNOWS_ALL, **kw})
    return coder.generate(GenerationRequest(task=get_task(task_id), backend=backend, memories=[]))


def test_languages():
    assert coder_language("cuda") == "cuda" and coder_language("triton") == "triton"
    assert coder_language("ascend_npu") == "ascendc"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_answers_compile():
    from kernel_gym.verify.compile_only import compile_only

    for task_id in CUDA_TASKS:
        g = gen(task_id, "cuda")
        assert not g.notes["unsupported"] and g.notes["faults"] == [], (task_id, g.notes)
        assert "load_cuda" in g.source and check_answer_source(g.source, "cuda") == []
        results = compile_only(g.source, arch="sm_90")
        assert results and all(r["ok"] for r in results), (task_id, results[0]["message"], results[0]["log"][:2000])


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_missing_activation_compose_does_not_compile():
    from kernel_gym.verify.compile_only import compile_only

    g = gen("level1/025_gelu_tanh", "cuda", priors={"activation_compose": 0.0})
    assert g.notes["faults"] == ["advanced_api"], g.notes
    results = compile_only(g.source, arch="sm_90")
    assert results and not results[0]["ok"] and "gelu" in results[0]["log"]


def test_cuda_faults_of_missing_skills():
    g = gen("level1/065_softmax_fp16", "cuda", prior_scale=0.0)
    assert set(g.notes["faults"]) == {"cuda", "no_tail", "half_as_float", "bad_workspace"}
    assert 'extern "C"' not in g.source.split('CUDA = r"""')[1].split('"""')[0]
    assert "__syncthreads" not in g.source and "const float* x" in g.source
    ok = gen("level1/065_softmax_fp16", "cuda")
    assert 'extern "C" void rows_op(const __half* x' in ok.source and "__syncthreads();" in ok.source


def test_triton_answers_parse_and_pass_static_checks():
    ids = [t.id for t in load_suite("level1")]
    for task_id in ids:
        for kw in ({}, {"prior_scale": 0.0}):
            g = gen(task_id, "triton", **kw)
            ast.parse(g.source)
            assert check_answer_source(g.source, "triton") == [], task_id
            if not g.notes["unsupported"] and not kw:
                assert g.notes["faults"] == [] and "@triton.jit" in g.source, task_id


def test_triton_faults_of_missing_skills():
    g = gen("level1/066_mse_loss", "triton", prior_scale=0.0)
    assert set(g.notes["faults"]) == {"cuda", "no_tail", "bad_workspace"}
    assert "@triton.jit" not in g.source and "mask=" not in g.source and "tl.atomic_add" not in g.source
    g = gen("level1/025_gelu_tanh", "triton", priors={"activation_compose": 0.0})
    assert g.notes["faults"] == ["advanced_api"] and "tl.gelu(" in g.source
    # tl.sigmoid is real: no fault without the skill
    g = gen("level1/023_sigmoid_tail", "triton", priors={"activation_compose": 0.0})
    assert g.notes["faults"] == []


def test_refining_starts_from_parent_knobs():
    from kernel_gym.llm.base import ParentKernel

    for backend in ("cuda", "triton"):
        draft = gen("level1/021_relu", backend)
        parent = ParentKernel(code=draft.source, verifier={"feasible": True})
        coder = SyntheticCoder(seed=0, **KNOWS_ALL)
        req = GenerationRequest(
            task=get_task("level1/021_relu"), backend=backend, memories=[], stage="refining", parent=parent, step=1
        )
        ref = coder.generate(req)
        assert ref.notes["knobs"]["tile"] == 4 * draft.notes["knobs"]["tile"] and ref.source != draft.source


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")
@pytest.mark.parametrize("backend", ["cuda", "triton"])
def test_gpu_answers_are_feasible(backend):
    from kernel_gym.verify import verify

    for task_id in CUDA_TASKS:
        g = gen(task_id, backend)
        r = verify(get_task(task_id), g.source, backend=backend, correctness_trials=2, timing_trials=3)
        assert r.feasible, (task_id, r.error_class, r.message)
