"""A backend added from outside the package: one module written here, registered at run time,
and a whole episode run on it through the sandboxed verifier. Nothing inside kernel_gym names it."""

from __future__ import annotations

import sys
import textwrap

import gymnasium as gym
import pytest

import kernel_gym
from kernel_gym.backends import BACKENDS, get_backend, sandbox_policy
from kernel_gym.envs.registration import env_ids
from kernel_gym.llm.fixed import FixedGenerator
from kernel_gym.tasks import get_task
from kernel_gym.verify import verify
from kernel_gym.verify.static_checks import check_answer_source
from solutions import reference_answer

RELU = "level1/021_relu"

# A host-C++ backend of its own: same loader as cpu, its own timing (a plain best-of-N wall clock),
# its own env id and seed knowledge. The module lives in a directory of the test's, not in kernel_gym.
TOY_MODULE = """
from __future__ import annotations

import time

from kernel_gym.backends.base import Backend


class ToyBackend(Backend):
    name = "toy_cpp"
    language = "cpp"
    compile_kinds = ("cpp",)
    env_id = "KernelBench-ToyCpp-v0"
    answer_imports = {"kernel_gym.backends.cpu": frozenset({"load_cpp"})}

    def seed_items(self):
        return [{"slug": "toy-tip", "kind": "experience_success", "title": "toy tip",
                 "text": "Fuse elementwise ops into one loop.", "category": "toy", "tags": ["toy"]}]

    def _best_of(self, run, trials):
        best = float("inf")
        for _ in range(max(1, int(trials))):
            t0 = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - t0)
        return best, {"timer": "toy best-of"}

    def time_answer(self, run, settings):
        return self._best_of(run, settings.timing_trials)

    def time_reference(self, run, model, inputs, settings):
        return self._best_of(run, settings.timing_trials)

    def answer_format(self):
        return "A Python module defining ModelNew that builds its kernel with load_cpp."
"""


@pytest.fixture(scope="module")
def toy_backend(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugin")
    package = root / "kg_toy_backend"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(TOY_MODULE))
    sys.path.insert(0, str(root))
    kernel_gym.register_backend("toy_cpp", "kg_toy_backend:ToyBackend")
    yield "toy_cpp"
    sys.path.remove(str(root))
    BACKENDS.pop("toy_cpp", None)
    gym.registry.pop("KernelBench-ToyCpp-v0", None)


def test_registration_adds_the_env_id_and_the_sandbox_import_root(toy_backend):
    assert env_ids()["KernelBench-ToyCpp-v0"] == {"backend": "toy_cpp"}
    assert "KernelBench-ToyCpp-v0" in gym.registry
    roots = sandbox_policy().import_roots
    assert any(r.endswith("kg_toy_backend") for r in roots), roots
    # the same name with another class is refused; re-registering the same target is a no-op
    kernel_gym.register_backend("toy_cpp", "kg_toy_backend:ToyBackend")
    with pytest.raises(ValueError, match="already registered"):
        kernel_gym.register_backend("toy_cpp", "kernel_gym.backends.cpu:CpuBackend")


def test_bad_registrations_name_the_fix():
    with pytest.raises(ValueError, match="lower-case"):
        kernel_gym.register_backend("Toy", "kg_toy_backend:ToyBackend")
    with pytest.raises(ValueError, match="module:Class|ClassName"):
        kernel_gym.register_backend("toy_x", "no_colon_here")
    with pytest.raises(ValueError, match="has name"):  # the class says it is "cpu"
        kernel_gym.register_backend("toy_y", "kernel_gym.backends.cpu:CpuBackend")
    assert "toy_y" not in BACKENDS
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        get_backend("nope")


def test_answer_imports_follow_the_backend(toy_backend):
    answer = reference_answer(RELU, "cpu")
    assert answer is not None and "load_cpp" in answer
    assert check_answer_source(answer, "toy_cpp") == []
    # the Ascend loader is not this backend's: an answer importing it breaks a static rule
    violations = check_answer_source("import kernel_gym.ascendc as asc\n" + answer, "toy_cpp")
    assert [v.rule for v in violations] == ["forbidden_import"]


def test_verify_and_an_episode_on_the_toy_backend(toy_backend, tmp_path):
    answer = reference_answer(RELU, "cpu")
    settings = {"correctness_trials": 2, "timing_trials": 3}
    task = get_task(RELU)
    result = verify(task, answer, backend="toy_cpp", use_cache=False, **settings)
    assert result.correct, result.message
    assert result.backend == "toy_cpp" and result.latency_s is not None and result.latency_s > 0
    # a backend without host_clock keeps the fixed trial count, and still reports its interval
    assert result.details["answer_timing"]["trials"] == 3 and "paired" not in result.details["answer_timing"]
    assert result.speedup_ci is not None and result.speedup_ci[0] <= result.speedup <= result.speedup_ci[1]
    assert result.timing_converged is None and result.latency_iqr_s is not None
    assert "samples_s" not in result.details["answer_timing"]

    broken = answer.replace("x[i] > 0.f ?", "x[i] < 0.f ?")
    assert broken != answer
    wrong = verify(task, broken, backend="toy_cpp", use_cache=False, **settings)
    assert not wrong.correct and wrong.error_class == "numerical_mismatch", wrong.message

    env = gym.make(
        "KernelBench-ToyCpp-v0",
        tasks=[RELU],
        budget=2,
        memory=str(tmp_path / "mem.db"),
        generator=FixedGenerator([answer]),
        verify_settings=settings,
    )
    obs, info = env.reset(seed=0)
    store = env.unwrapped.memory
    assert store.count("experience_success") >= 1  # the toy's seed knowledge is in M0
    _, reward, _, _, info = env.step(env.action_space.sample())
    assert reward == 1.0 and info["stage"] == "refining" and info["best_speedup"] > 0  # a feasible draft
    env.close()
