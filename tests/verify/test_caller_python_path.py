"""The caller's PYTHONPATH reaches the verification server and the sandbox (read-only): dependencies
installed with ``pip install --target DIR`` where the site folder is read-only. A server that cannot
import what it needs says which module and how to fix it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kernel_gym.native import cache_root
from kernel_gym.tasks import get_task
from kernel_gym.verify.sandbox import _startup_failure, caller_python_path, shutdown_zygote
from solutions import reference_answer

PACKAGE_PARENT = Path(__file__).resolve().parent.parent.parent


def test_caller_entries_exclude_the_checkout_and_the_cache(tmp_path, monkeypatch):
    deps = tmp_path / "deps"
    deps.mkdir()
    cache_parent = cache_root().resolve().parent
    entries = [str(deps), str(PACKAGE_PARENT), str(cache_parent), str(tmp_path / "missing")]
    monkeypatch.delenv("KERNEL_GYM_CALLER_PYTHONPATH", raising=False)
    monkeypatch.setenv("PYTHONPATH", ":".join(entries))
    got = caller_python_path()
    # folders this process added to sys.path at run time come too (ray adds its thirdparty_files
    # when some other test imported it first): only the PYTHONPATH entries are checked here
    assert deps.resolve() in got
    assert not {PACKAGE_PARENT.resolve(), cache_parent, (tmp_path / "missing").resolve()} & {p.resolve() for p in got}


def test_a_dependency_only_on_pythonpath_is_importable_in_the_sandbox(tmp_path, monkeypatch):
    from kernel_gym.verify import verify

    deps = tmp_path / "deps"
    deps.mkdir()
    (deps / "kg_probe_dependency.py").write_text("SCALE = 1.0\n")
    answer = reference_answer("level1/021_relu", "cpu")
    assert answer is not None
    answer = "import kg_probe_dependency\n" + answer
    monkeypatch.setenv("PYTHONPATH", f"{deps}:{PACKAGE_PARENT}")
    shutdown_zygote()  # the server starts with the caller's environment of its first use
    try:
        result = verify(get_task("level1/021_relu"), answer, backend="cpu", use_cache=False, timing_trials=3)
    finally:
        shutdown_zygote()
    assert result.correct, (result.error_class, result.message)


def test_a_server_that_cannot_import_names_the_module_and_the_fix(tmp_path):
    # a dependency of the package (gymnasium) whose own dependency is missing where the server looks
    shadow = tmp_path / "gymnasium"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("import kg_missing_dependency\n")
    why = _startup_failure({"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{tmp_path}:{PACKAGE_PARENT}"})
    assert "'kg_missing_dependency'" in why and "PYTHONPATH" in why and "--target" in why and sys.executable in why


def test_a_folder_added_to_sys_path_at_run_time_is_passed_on(tmp_path, monkeypatch):
    import sysconfig

    deps = tmp_path / "deps"
    deps.mkdir()
    monkeypatch.delenv("KERNEL_GYM_CALLER_PYTHONPATH", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE_PARENT))
    monkeypatch.syspath_prepend(str(deps))
    monkeypatch.syspath_prepend(str(tmp_path))  # the working directory: not passed on
    monkeypatch.chdir(tmp_path)
    passed = caller_python_path()
    assert deps.resolve() in passed
    assert tmp_path.resolve() not in passed
    # the interpreter's own site folder: the server has it by itself
    assert Path(sysconfig.get_paths()["purelib"]).resolve() not in passed


def test_a_dependency_added_to_sys_path_is_importable_in_the_sandbox(tmp_path, monkeypatch):
    from kernel_gym.verify import verify

    deps = tmp_path / "deps"
    deps.mkdir()
    (deps / "kg_probe_runtime_path.py").write_text("SCALE = 1.0\n")
    answer = reference_answer("level1/021_relu", "cpu")
    assert answer is not None
    monkeypatch.delenv("KERNEL_GYM_CALLER_PYTHONPATH", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE_PARENT))
    monkeypatch.syspath_prepend(str(deps))
    shutdown_zygote()  # the server starts with the caller's import path of its first use
    try:
        result = verify(
            get_task("level1/021_relu"),
            "import kg_probe_runtime_path\n" + answer,
            backend="cpu",
            use_cache=False,
            timing_trials=3,
        )
    finally:
        shutdown_zygote()
    assert result.correct, (result.error_class, result.message)


@pytest.mark.slow
def test_a_venv_with_every_dependency_on_pythonpath_verifies(tmp_path):
    """Issue 29's report: a fresh venv, the dependencies in a folder on PYTHONPATH (here the
    running interpreter's site folder, as ``pip install --target`` lays one out); before the
    caller's path reached the server, every verification ended in "the verification server failed
    twice" (it could not import gymnasium)."""
    import subprocess
    import sysconfig

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    bare = subprocess.run([python, "-c", "import gymnasium"], capture_output=True, text=True, check=False)
    assert "No module named 'gymnasium'" in bare.stderr  # the venv alone lacks the dependencies
    script = (
        "from kernel_gym.tasks import get_task\n"
        "from kernel_gym.verify import verify\n"
        "from solutions import reference_answer\n"
        "r = verify(get_task('level1/021_relu'), reference_answer('level1/021_relu', 'cpu'), backend='cpu',"
        " use_cache=False, timing_trials=3)\n"
        "print('VERDICT', r.correct, r.error_class, r.message)\n"
    )
    site = sysconfig.get_paths()["purelib"]
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": f"{PACKAGE_PARENT}:{site}",
        "KERNEL_GYM_CACHE": str(tmp_path / "cache"),
    }
    done = subprocess.run([python, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert "VERDICT True" in done.stdout, (done.stdout[-2000:], done.stderr[-2000:])
