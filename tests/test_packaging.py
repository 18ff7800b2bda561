"""The installed package: what a wheel built from the repository contains."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_has_the_package_data_and_no_reference_answers(tmp_path: Path) -> None:
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
                            "-q", "-w", str(tmp_path)], capture_output=True, text=True, timeout=300,
                           cwd=tmp_path)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(tmp_path.glob("kernel_gym-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    # what the package needs at run time is there ...
    assert "kernel_gym/tasks/level1/021_relu.py" in names
    assert "kernel_gym/ascendc/include/kernel_operator.h" in names
    assert any(n.startswith("kernel_gym/ascendc/src/") and n.endswith(".cpp") for n in names)
    # the assembler wrapper kernels are built with (gcc -B) must stay executable
    wrapper = zipfile.ZipFile(wheel).getinfo("kernel_gym/ascendc/toolchain/as")
    assert (wrapper.external_attr >> 16) & 0o111
    # ... and no answer to a task: those are test fixtures and benchmark inputs (solutions/)
    assert not [n for n in names if n.startswith(("solutions/", "tests/"))]
    answers = sorted(p.name for p in (ROOT / "solutions").rglob("*.py") if p.name != "__init__.py")
    assert answers and not [n for n in names if n.rsplit("/", 1)[-1] in answers and "/tasks/" not in n]
    assert not [n for n in names if "op_project" in n and n.endswith(".cpp")]
