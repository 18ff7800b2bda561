"""KernelBench's own CUDA answer format on the cuda backend (``load_inline``, built by the judge).

Without a GPU: the static rules accept a plain answer and refuse the exploits they can see, the
arguments are read from the answer's syntax tree, the flag allow-list, the runner's shim, and
compile-only builds where nvcc exists. On a GPU: the answer verifies and every exploit is refused.
"""

from __future__ import annotations

import sys

import pytest
import torch

from kernel_gym.backends import BackendUnavailable
from kernel_gym.backends.cuda_extension import (
    ExtensionRequest,
    _key,
    check_flags,
    extract_calls,
    light_header_fits,
    render_sources,
)
from kernel_gym.native.compile import compiler_path
from kernel_gym.tasks import get_task
from kernel_gym.verify.pipeline import static_stage, watched_torch_calls
from kernel_gym.verify.static_checks import check_answer_source
from tests.backends.extension_answers import (
    ACCEPTED_BESIDE_KERNEL,
    RELU,
    RELU_BESIDE_TORCH,
    RELU_EXTENSION,
    RELU_WITH_FALLBACK,
    RUNTIME_ONLY,
    TORCH_ONLY_WITH_EXTENSION,
    extension_exploits,
)
from tests.backends.gpu_checks import GPU_SETTINGS

GPU = torch.cuda.is_available()
NO_GPU = "needs an NVIDIA GPU (torch.cuda.is_available() is False)"
NVCC = compiler_path("nvcc") is not None


def test_a_plain_load_inline_answer_passes_the_static_rules_on_cuda_only():
    assert check_answer_source(RELU_EXTENSION, "cuda") == []
    assert static_stage(get_task(RELU), RELU_EXTENSION, "cuda") is None  # goes on to the sandbox
    # another backend's answers may not build torch extensions
    assert "os_access" in {v.rule for v in check_answer_source(RELU_EXTENSION, "cpu")}
    # load (sources from files) is not the inline format
    load = RELU_EXTENSION.replace("import load_inline", "import load_inline, load")
    assert "forbidden_import" in {v.rule for v in check_answer_source(load, "cuda")}


@pytest.mark.parametrize("answer", [RELU_EXTENSION, RELU_WITH_FALLBACK], ids=["plain", "torch_fallback_and_ptx"])
def test_without_a_gpu_verify_says_unavailable_not_hacked(monkeypatch, answer):
    from kernel_gym.verify import verify

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    with pytest.raises(BackendUnavailable) as info:
        verify(get_task(RELU), answer, backend="cuda", use_cache=False)
    assert "GPU" in str(info.value) or "CPU-only" in str(info.value)
    assert "compile_only" in str(info.value) or not NVCC  # the way to its compile errors is named


@pytest.mark.parametrize("name", sorted(set(extension_exploits()) - RUNTIME_ONLY))
def test_exploits_in_load_inline_form_are_refused_statically(name):
    _, answer, accepted = extension_exploits()[name]
    rules = {v.rule for v in check_answer_source(answer, "cuda")}
    assert rules & accepted, (name, rules)


def test_runtime_only_exploits_pass_the_static_rules():
    # these need the runtime checks (GPU tests below): the static rules must not be what refuses them
    for name in RUNTIME_ONLY:
        _, answer, _ = extension_exploits()[name]
        assert static_stage(get_task(RELU), answer, "cuda") is None, name


def test_a_torch_fallback_and_ptx_assembly_pass_the_static_stage_watched():
    # the torch call is not refused from the source: the judge guards every call of this answer
    found = check_answer_source(RELU_WITH_FALLBACK, "cuda")
    assert found and all(v.runtime_checked and v.rule == "torch_compute" for v in found), found
    assert static_stage(get_task(RELU), RELU_WITH_FALLBACK, "cuda") is None
    assert watched_torch_calls(RELU_WITH_FALLBACK, "cuda") and not watched_torch_calls(RELU_EXTENSION, "cuda")


def test_arguments_are_read_from_module_constants():
    answer = '''
from torch.utils.cpp_extension import load_inline
HEADER = "#include <torch/extension.h>\\n"
BODY = r"""torch::Tensor f(torch::Tensor x) { return x; }"""
NAME = "f"
FLAGS = ["-O3", "--use_fast_math"]
lib = load_inline(
    name=f"ext_{NAME}", cpp_sources=HEADER + BODY, cuda_sources=[HEADER + "// cuda\\n"],
    functions=[NAME], extra_cuda_cflags=FLAGS, verbose=False,
)
other = load_inline(name="g", cpp_sources=make_source(), functions=["g"])
'''
    first, second = extract_calls(answer)
    assert isinstance(first, ExtensionRequest)
    assert first.name == "ext_f" and first.functions == {"f": "f"}
    assert first.cpp_sources == ["#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x) { return x; }"]
    assert first.extra_cuda_cflags == ["-O3", "--use_fast_math"] and first.with_cuda
    assert isinstance(second, str) and "not constants" in second
    files = render_sources(first)
    assert files["main.cpp"].startswith("#include <torch/extension.h>")
    assert 'm.def("f", torch::wrap_pybind_function(f), "f");' in files["main.cpp"]
    assert files["cuda.cu"].splitlines()[:3] == [
        "#include <torch/types.h>",
        "#include <cuda.h>",
        "#include <cuda_runtime.h>",
    ]


def test_flag_allow_list():
    ok = ExtensionRequest(
        extra_cflags=["-O3", "-DUSE_FAST=1", "-std=c++17"],
        extra_cuda_cflags=[
            "-O3", "--use_fast_math", "--extra-device-vectorization", "-lineinfo", "--maxrregcount=64",
            "-maxrregcount=80", "--ptxas-options=-O3", "-Xptxas=-v", "-DLEAKY_RELU_USE_STREAMING_STORES=1",
        ],
    )  # fmt: skip
    assert check_flags(ok) == []
    for bad in (
        ["-I/tmp"], ["-isystem/tmp"], ["-include", "/etc/passwd"], ["-D__CUDA_NO_HALF_OPERATORS__"],
        ["-DTORCH_EXTENSION_NAME=x"], ["-U__CUDA_NO_HALF_OPERATORS__"], ["-ccbin=/tmp/cc"], ["-L/tmp"],
        ["-Xcompiler=-fplugin=/tmp/x.so"], ["--compiler-bindir=/tmp"], ["-lcublas"], ["@/tmp/args"],
    ):  # fmt: skip
        assert check_flags(ExtensionRequest(extra_cuda_cflags=bad)), bad
        assert check_flags(ExtensionRequest(extra_cflags=bad)), bad


def test_refused_arguments():
    for key, value in (("build_directory", "/tmp/x"), ("extra_include_paths", ["/tmp"]), ("extra_ldflags", ["-lm"])):
        with pytest.raises(ValueError, match=key):
            ExtensionRequest.from_call((), {"name": "x", "cpp_sources": "", key: value})
    with pytest.raises(TypeError, match="unexpected"):
        ExtensionRequest.from_call((), {"name": "x", "cpp_sources": "", "sneaky": 1})
    with pytest.raises(ValueError, match="function name"):
        ExtensionRequest.from_call((), {"name": "x", "cpp_sources": "", "functions": ['f); system("x"']})


def test_the_runners_shim_sends_the_call_to_the_judge(monkeypatch):
    import torch.utils

    from kernel_gym.backends.cuda_extension import install_shim

    monkeypatch.setitem(sys.modules, "torch.utils.cpp_extension", sys.modules.get("torch.utils.cpp_extension"))
    monkeypatch.setattr(torch.utils, "cpp_extension", getattr(torch.utils, "cpp_extension", None), raising=False)
    sent = []

    def build(request):
        sent.append(request)
        raise RuntimeError("refused by the test")

    install_shim(build)
    namespace: dict[str, object] = {}
    with pytest.raises(RuntimeError, match="refused by the test"):
        exec(RELU_EXTENSION, namespace)  # noqa: S102 - the answer's module import, as the runner does it
    [request] = sent
    assert request["functions"] == {"relu_forward": "relu_forward"}
    assert request["extra_cuda_cflags"] == ["-O3", "--use_fast_math"]
    assert "relu_kernel" in request["cuda_sources"][0]
    from torch.utils.cpp_extension import load  # the shim's

    with pytest.raises(ValueError, match="load_inline"):
        load(name="x", sources=["x.cu"])


def _relu_request() -> ExtensionRequest:
    [request] = extract_calls(RELU_EXTENSION)
    assert isinstance(request, ExtensionRequest)
    return request


def test_the_cuda_units_light_header_keeps_the_answers_lines():
    request = _relu_request()
    assert light_header_fits(request)
    full, light = render_sources(request)["cuda.cu"], render_sources(request, light_header=True)["cuda.cu"]
    assert "#include <torch/extension.h>" in full and "#include <torch/extension.h>" not in light
    assert "#include <torch/version.h>" in light
    # one line for one line: the compiler's line numbers are the answer's
    assert len(full.splitlines()) == len(light.splitlines())
    assert [a for a, b in zip(full.splitlines(), light.splitlines(), strict=True) if a != b] == [
        "#include <torch/extension.h>"
    ]
    # the host unit keeps torch's header (and its precompiled form)
    assert render_sources(request, light_header=True)["main.cpp"] == render_sources(request)["main.cpp"]
    # the header is part of the cache key
    assert _key(render_sources(request), request, False) != _key(render_sources(request, True), request, False)


@pytest.mark.parametrize(
    "uses",
    ["py::object o;", "PYBIND11_MODULE(m, x) {}", "torch::nn::Linear l(1, 1);", "auto r = torch::kMean;",
     "torch::NoGradGuard g;", "torch::autograd::Function<F> f;", "auto n = torch::cuda::device_count();"],
)  # fmt: skip
def test_sources_that_need_more_than_the_light_header_keep_torchs(uses):
    request = _relu_request()
    request.cuda_sources = [request.cuda_sources[0] + "\n" + uses]
    assert not light_header_fits(request)
    # the dtypes and factories are in torch/types.h: no reason for the full header
    request.cuda_sources = [_relu_request().cuda_sources[0] + "\nauto t = torch::zeros({1}, torch::kFloat16);"]
    assert light_header_fits(request)
    request.no_implicit_headers = True  # the light form relies on load_inline's torch/types.h
    assert not light_header_fits(request)


def test_a_light_build_missing_a_declaration_is_built_again_with_torchs_header(tmp_path, monkeypatch):
    from kernel_gym.backends import cuda_extension
    from kernel_gym.native import CompileError

    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path))
    monkeypatch.setenv("KERNEL_GYM_CUDA_ARCH", "sm_90")
    built: list[bool] = []
    errors = {"light": "", "full": ""}

    def fake_build(files, request, objects_only, pch_dir, env, wrap, timeout_s):
        light = "#include <torch/extension.h>" not in files["cuda.cu"]
        built.append(light)
        if errors["light" if light else "full"]:
            raise CompileError("extension build failed", errors["light" if light else "full"])
        return tmp_path / ("light.o" if light else "full.o"), ""

    monkeypatch.setattr(cuda_extension, "_build_files", fake_build)
    build = lambda: cuda_extension.build_extension(_relu_request(), objects_only=True, use_pch=False)  # noqa: E731
    assert build().header == "light" and built == [True]
    built.clear()
    errors["light"] = 'cuda.cu(30): error: namespace "torch" has no member "OrderedDict"'
    result = build()
    assert result.header.startswith("full") and result.path.name == "full.o" and built == [True, False]
    built.clear()
    # the answer's own error (not a missing name) is reported from the light build, not built twice
    errors["light"] = 'cuda.cu(12): error: expected a ";"'
    with pytest.raises(CompileError, match="failed"):
        build()
    assert built == [True]
    built.clear()
    # switched off: one build with torch's header
    monkeypatch.setenv("KERNEL_GYM_TORCH_LIGHT_HEADER", "0")
    errors["light"] = ""
    assert build().header == "full" and built == [False]


@pytest.mark.slow
@pytest.mark.skipif(not NVCC, reason="needs nvcc (the CUDA toolkit) for compile-only checks")
def test_compile_only_builds_a_load_inline_answer_and_reports_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNEL_GYM_CACHE", str(tmp_path))
    monkeypatch.setenv("KERNEL_GYM_TORCH_PCH", "0")  # the header alone is 0.8 GB
    from kernel_gym.verify.compile_only import compile_only

    # c10's stream header, not ATen's CUDA context (which needs the toolkit's cuSPARSE/cuBLAS headers,
    # absent from a compiler-only toolkit)
    answer = RELU_EXTENSION.replace("#include <ATen/cuda/CUDAContext.h>", "#include <c10/cuda/CUDAStream.h>")
    answer = answer.replace("at::cuda::getCurrentCUDAStream()", "c10::cuda::getCurrentCUDAStream()")
    [ok] = compile_only(answer, arch="sm_90")
    assert ok["ok"], ok["log"][-2000:]
    assert ok["header"] == "light"
    broken = answer.replace("y[i] = v > 0.f ? v : 0.f;", "y[i] = v > 0.f ? v : undefined_name;")
    [failed] = compile_only(broken, arch="sm_90")
    assert not failed["ok"] and "undefined_name" in failed["log"]


# ------------------------------------------------------------------------------ on a GPU
@pytest.mark.skipif(not GPU, reason=NO_GPU)
def test_a_load_inline_answer_verifies_on_the_gpu():
    from kernel_gym.verify import verify

    result = verify(get_task(RELU), RELU_EXTENSION, backend="cuda", use_cache=False, **GPU_SETTINGS)
    assert result.correct, (result.error_class, result.message, result.details.get("compile_log", "")[-2000:])
    assert "device_median_s" in result.details["answer_timing"]


@pytest.mark.skipif(not GPU, reason=NO_GPU)
def test_an_answer_with_a_torch_fallback_verifies_with_every_call_guarded():
    from kernel_gym.verify import verify

    result = verify(get_task(RELU), RELU_WITH_FALLBACK, backend="cuda", use_cache=False, **GPU_SETTINGS)
    assert result.correct, (result.error_class, result.message, result.details.get("compile_log", "")[-2000:])
    assert result.details["torch_calls_guarded"], result.details


@pytest.mark.skipif(not GPU, reason=NO_GPU)
@pytest.mark.parametrize(
    ("name", "torch_ops"),
    [(n, "refuse") for n in sorted(extension_exploits())]
    # KernelBench's rule too, except what it accepts by design (at::relu from the answer's C++)
    + [(n, "beside_kernel") for n in sorted(set(extension_exploits()) - ACCEPTED_BESIDE_KERNEL)],
)
def test_exploits_in_load_inline_form_are_rejected_on_the_gpu(name, torch_ops):
    from kernel_gym.verify import verify

    task_id, answer, accepted = extension_exploits()[name]
    result = verify(get_task(task_id), answer, backend="cuda", use_cache=False, torch_ops=torch_ops, **GPU_SETTINGS)
    assert not result.correct, name
    assert {result.error_class, result.hack_rule} & accepted, (
        name,
        result.error_class,
        result.hack_rule,
        result.message,
    )


def test_the_torch_ops_policy_is_checked_before_anything_runs():
    from kernel_gym.verify import verify
    from kernel_gym.verify.settings import VerifySettings

    with pytest.raises(ValueError, match="beside_kernel"):
        VerifySettings(torch_ops="allow")
    # a backend that cannot tell the answer's own code ran cannot take KernelBench's rule
    with pytest.raises(ValueError, match="cuda"):
        verify(get_task(RELU), RELU_EXTENSION, backend="cpu", torch_ops="beside_kernel", use_cache=False)


def test_the_built_module_counts_calls_into_the_answers_code():
    import types

    from kernel_gym.backends.base import OwnCodeCalls
    from kernel_gym.backends.cuda_extension import _counting

    built = types.ModuleType("ext")
    built.twice = lambda v: 2 * v
    built.SIZE = 4
    built.Kind = type("Kind", (), {})
    view = _counting(built)
    before = OwnCodeCalls.count
    assert view.twice(3) == 6 and view.twice(1) == 2
    assert OwnCodeCalls.count - before == 2
    assert view.SIZE == 4 and view.Kind is built.Kind  # constants and classes pass through unwrapped


@pytest.mark.skipif(not GPU, reason=NO_GPU)
def test_torch_beside_the_answers_kernel_follows_the_torch_ops_policy():
    from kernel_gym.verify import verify

    task = get_task(RELU)
    refused = verify(task, RELU_BESIDE_TORCH, backend="cuda", use_cache=False, **GPU_SETTINGS)
    assert refused.hack_rule == "torch_compute" and "beside_kernel" in (refused.message or ""), refused.summary()
    accepted = verify(
        task, RELU_BESIDE_TORCH, backend="cuda", use_cache=False, torch_ops="beside_kernel", **GPU_SETTINGS
    )
    assert accepted.correct, accepted.summary()
    assert "aten.maximum" in accepted.details.get("torch_ops", []), accepted.details
    # torch alone, the extension never called, is no answer under either rule
    alone = verify(
        task, TORCH_ONLY_WITH_EXTENSION, backend="cuda", use_cache=False, torch_ops="beside_kernel", **GPU_SETTINGS
    )
    assert alone.hack_rule == "torch_compute" and "none of the answer's own" in (alone.message or ""), alone.message


def test_the_compile_service_rechecks_what_the_runner_sends():
    from kernel_gym.backends import get_backend
    from kernel_gym.verify.compile_service import CompileService

    [request] = extract_calls(RELU_EXTENSION)
    assert isinstance(request, ExtensionRequest)
    service = CompileService(sandboxed=False, backend=get_backend("cuda"))

    def ask(**changes: object) -> dict:
        return service.handle(
            {"op": "compile", "kind": "torch_extension", "extension": {**request.to_json(), **changes}}
        )

    # a runner past the static rules (it is untrusted): the judge refuses before building anything
    refused = ask(extra_cuda_cflags=["-I/etc"])
    assert refused["error_class"] == "hacked" and refused["hack_rule"] == "os_access"
    refused = ask(cuda_sources=["#include <fstream>\n" + request.cuda_sources[0]])
    assert refused["error_class"] == "hacked" and refused["hack_rule"] == "os_access"
    refused = ask(cuda_sources=[request.cuda_sources[0].replace("getCurrentCUDAStream", "getStreamFromPool")])
    assert refused["hack_rule"] == "threads_or_streams"
    assert ask(build_directory="/tmp/x")["error_class"] == "compile_error"
    # a backend that does not build torch extensions
    other = CompileService(sandboxed=False, backend=get_backend("cpu"))
    assert other.handle({"kind": "torch_extension", "extension": request.to_json()})["error_class"] == "hacked"
