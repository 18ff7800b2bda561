"""CANN's operator library (cann-ops) on the Ascend C simulator: every operator project's own
example, unmodified: its ``gen_data.py``, the build (the project with its generated aclnn pair,
kernel_gym.ascendc.aclnn), its ``main`` and its ``verify_result.py``, each in a fresh working
directory with a time limit. Writes the table of docs/ascendc_compat.md.

    python -m experiments.cann_ops_corpus --corpus <cann-ops checkout> [--only math/abs ...] [--write-doc]

The corpus is kept outside the repository; the table names the commit it was read at
(``--commit``, or the checkout's own ``git rev-parse HEAD``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from experiments.catlass_corpus import kept_catlass_section  # the catlass section shares the doc

DOC = Path(__file__).resolve().parent.parent / "docs" / "ascendc_compat.md"
# `ret=\`python3 verify_result.py a b\`` (pass: it prints exactly "test pass") or a plain call (pass: exit 0)
_VERIFY = re.compile(r"^[^#\n]*?(`?)python3?\s+(verify_\w*\.py)([^`\n]*)", re.M)
_OTHER_LIBS = re.compile(r'#\s*include\s*[<"](aclnnop/|hccl/|acl/acl_op_compiler)')
_OWN_CALL = re.compile(r"\b(aclnn\w+?)GetWorkspaceSize\s*\(")
_OPDEV = re.compile(r'#\s*include\s*[<"](opdev/|aclnnop/|aclnn_kernels/)')
_INCLUDE = re.compile(r'#\s*include\s*["<]([\w./+-]+)[">]')
# The SoC the examples run on: an Atlas A2 part with 20 AI Cores / 40 vector cores. The library's
# BLAS kernels (scopy, snrm2, icamax, ...) size their per-core tiling arrays for 40 vector cores
# (`totalVecCoreNum = 40`), so on a 48-core Ascend910B2 blocks 40..47 really read past them (the
# simulator faults there, rightly); the authors' device has 40.
SOC = "Ascend910B3"
# the pyproject extra holding the Python packages the examples' gen_data.py import (TensorFlow, SciPy, ONNX)
EXTRA = "cann-ops-corpus"


def _needs_package(module: str) -> str:
    return f"gen_data.py imports {module} (pip install -e '.[{EXTRA}]')"


def _npu_smi(soc: str) -> str:
    """A stand-in ``npu-smi`` for the scripts of an example (add_rms_norm's gen_data.py reads the
    SoC name from ``npu-smi info -m``): that query's table for one device of ``soc``, in the tool's
    documented layout (NPU ID, Chip ID, Chip Logic ID, Chip Name, the chip name as "Ascend 910B3",
    then the device's MCU row); any other query says it is not simulated."""
    row = "        {:<31}{:<31}{:<31}{}"
    table = "\n".join(
        [
            row.format("NPU ID", "Chip ID", "Chip Logic ID", "Chip Name"),
            row.format("0", "0", "0", "Ascend " + soc.removeprefix("Ascend")),
            row.format("0", "1", "-", "Mcu"),
        ]
    )
    return (
        "#!/bin/sh\n"
        'if [ "$1 $2" = "info -m" ]; then\ncat <<\'EOF\'\n' + table + "\nEOF\nexit 0\nfi\n"
        "echo \"npu-smi: only 'info -m' is simulated (kernel-gym cann-ops harness)\" >&2\nexit 2\n"
    )


@dataclass
class ProjectResult:
    project: str
    status: str  # pass | fail | needs_cann_library | needs_python_package | no_example
    blocker: str = ""
    owner: str = ""  # who fixes it: simulator | aclnn generator | corpus (the project itself) | out of scope
    seconds: float = 0.0
    detail: dict = field(default_factory=dict)


def projects(corpus: Path) -> list[Path]:
    return sorted(p.parent for p in (corpus / "src").glob("*/*/op_host") if p.is_dir())


def _read_tree(root: Path, sub: str) -> dict[str, str]:
    out = {}
    d = root / sub
    for p in sorted(d.rglob("*")) if d.is_dir() else []:
        if p.is_file() and p.suffix in (".cpp", ".cc", ".h", ".hpp", ".json"):
            out[f"{sub}/{p.relative_to(d)}"] = p.read_text(errors="replace")
    return out


# a directory of the library a project's CMakeLists puts on its include path: `${CMAKE_SOURCE_DIR}/src/...`
_CMAKE_SRC_DIR = re.compile(r"\$\{CMAKE_SOURCE_DIR\}/(src/[\w./-]+)")


def _cmake_include_dirs(corpus: Path, cmake: str) -> list[Path]:
    """The library's directories a project's own CMakeLists adds to its include path
    (target_include_directories): conv2d_backprop_input_v2's tiling header includes
    conv3d_backprop_input_v2's, found because the build lists that project's op_host."""
    dirs: list[Path] = []
    for block in re.findall(r"target_include_directories\s*\(([^)]*)\)", cmake):
        for rel in _CMAKE_SRC_DIR.findall(block):
            d = corpus / rel
            if d.is_dir() and d not in dirs and rel.rstrip("/") != "src/common/inc":
                dirs.append(d)
    return dirs


def _common_headers(corpus: Path, texts: list[str], include_dirs: list[Path] | None = None) -> dict[str, str]:
    """The library's shared headers the sources reach: src/common/inc is on the build's include
    path, and so are its subdirectories of kernel and tiling headers (a kernel includes
    "foreach_triangle.h" from inc/foreach/op_kernel), found by the path's tail; then the
    directories the project's CMakeLists adds (`include_dirs`), searched by the name as written."""
    inc = corpus / "src" / "common" / "inc"
    every = [p for p in inc.rglob("*") if p.is_file()] if inc.is_dir() else []
    found: dict[str, str] = {}
    todo = list(texts)
    while todo:
        for name in _INCLUDE.findall(todo.pop()):
            if name in found:
                continue
            sibling = re.fullmatch(r"\.\./\.\./(\w+/op_host/[\w./]+)", name)
            if sibling and sibling.group(1) not in found:
                # a project's header reaching into another project's op_host, by its path from op_host/
                # (`#include "../../circular_pad/op_host/circular_pad_common.h"`): that project's file
                hits = [p for p in (corpus / "src").glob(f"*/{sibling.group(1)}") if p.is_file()]
                if hits:
                    found[sibling.group(1)] = hits[0].read_text(errors="replace")
                    todo.append(found[sibling.group(1)])
                continue
            direct = inc / name
            tail = [p for p in every if str(p).endswith("/" + name)]
            listed = [d / name for d in include_dirs or [] if (d / name).is_file()]
            if direct.is_file():
                found[name] = direct.read_text(errors="replace")
                todo.append(found[name])
            elif listed:  # the first listed directory that has it, as the compiler searches
                found[name] = listed[0].read_text(errors="replace")
                todo.append(found[name])
            elif len(tail) == 1:  # one file under two names would be two headers: forward to its path
                rel = str(tail[0].relative_to(inc))
                found[name] = f'#include "{rel}"\n'
                todo.append(found[name])
    return found


def _sibling_sources(corpus: Path, headers: dict[str, str]) -> dict[str, str]:
    """The sources beside another project's op_host header this one includes (circular_pad_grad's
    tiling reaches ../../circular_pad/op_host/circular_pad_common.h, whose functions circular_pad's
    circular_pad_common.cc defines): the library builds every project into one host library, so the
    symbols are there. Each source goes beside its header (into ``headers``, by the same path) and a
    host unit of this project includes it from there."""
    units: dict[str, str] = {}
    for name in sorted(headers):
        sibling = re.fullmatch(r"(\w+)/op_host/([\w./]+)\.(?:h|hpp)", name)
        if not sibling:
            continue
        for ext in (".cc", ".cpp"):
            rel = f"{sibling.group(1)}/op_host/{sibling.group(2)}{ext}"
            hits = [p for p in (corpus / "src").glob(f"*/{rel}") if p.is_file()]
            if hits and rel not in headers:
                headers[rel] = hits[0].read_text(errors="replace")
                units[f"op_host/kgsim_sibling_{rel.replace('/', '_')}"] = f'#include "../../{rel}"\n'
    return units


# `export NAME=value` lines of a run.sh whose value is literal (the toolkit paths read other variables)
_EXPORT = re.compile(r"^\s*export\s+(\w+)=([^\s$`;#]+)\s*$", re.M)
# `ret=\`python3 gen_data.py\``: what gen_data.py prints lands in a variable ...
_GEN_CAPTURE = re.compile(r"^\s*(\w+)=`python3?\s+gen_data\.py")
# ... which the line running the example's binary may pass on: `./execute_radius_op $ret`
_MAIN_CALL = re.compile(r"^[^#\n]*?\./execute_\w+([^\n;&|>]*)", re.M)


def _run_env(run_sh: str) -> dict[str, str]:
    """The variables a run.sh exports with literal values (gen_data.py and verify_result.py may read them)."""
    return {name: value.strip("'\"") for name, value in _EXPORT.findall(run_sh)}


def _shell_variables(run_sh: str) -> dict[str, str]:
    """A run.sh's plain variables as it runs without arguments: ``case_name=${1:-"case1"}`` (the
    first argument's default), ``name=value`` and ``export name=value``; what it computes (`...`,
    $(...)) is left out."""
    out: dict[str, str] = {}
    for name, default in re.findall(r'^\s*(\w+)=\$\{1:-["\']?([^"\'}]*)["\']?\}', run_sh, re.M):
        out.setdefault(name, default)
    for name, value in re.findall(r'^\s*(?:export\s+)?(\w+)=["\']?([\w.+-]+)["\']?\s*(?:#.*)?$', run_sh, re.M):
        out.setdefault(name, value)
    return out


def _expand(args: str, variables: dict[str, str]) -> list[str]:
    """Shell words with the run.sh's variables substituted; a word naming one it does not set is dropped."""
    words = [re.sub(r"\$\{?(\w+)\}?", lambda m: variables.get(m.group(1), "\0"), a) for a in args.split()]
    return [w.strip("'\"") for w in words if "\0" not in w]


def _main_args(run_sh: str, gen_stdout: str) -> list[str]:
    """The arguments a run.sh gives the example's binary (``./execute_x_op $case_name``): its
    variables substituted, and the words gen_data.py printed where the call names the variable that
    captured them (``./execute_radius_op $ret``)."""
    call = _MAIN_CALL.search(run_sh)
    if not call:
        return []
    captured = next((m.group(1) for ln in run_sh.splitlines() if (m := _GEN_CAPTURE.match(ln))), None)
    variables = _shell_variables(run_sh)
    out: list[str] = []
    for word in call.group(1).split():
        if captured and word.strip('"') in (f"${captured}", f"${{{captured}}}"):
            out += gen_stdout.split()
        else:
            out += _expand(word, variables)
    return out


def _example_script(argv: list[str], work: Path, env: dict[str, str], timeout_s: float):
    """One of the example's Python scripts (gen_data.py, verify_result.py) in its working directory;
    None when it ran past the step's time."""
    try:
        return subprocess.run(
            [sys.executable, *argv], cwd=work, capture_output=True, text=True, timeout=timeout_s, check=False, env=env
        )
    except subprocess.TimeoutExpired:
        return None


def _verify_commands(run_sh: str) -> list[tuple[bool, list[str]]]:
    """(checks the printed "test pass", argv) of each verify call of a run.sh."""
    variables = _shell_variables(run_sh)
    return [(tick == "`", [script, *_expand(args, variables)]) for tick, script, args in _VERIFY.findall(run_sh)]


# Examples whose own check fails on exact per-instruction fp16 arithmetic (what the NPU's vector
# unit computes), found by emulating the kernel's instruction sequence with numpy float16: the
# project, not the simulator, is what fails (blocker named, owner "corpus").
CORPUS_NUMERICS = {
    "math/fast_gelu": (
        "its fp16 kernel computes |x|/(1+exp(-1.702|x|)) + min(x, 0), its golden"
        " x*exp(0.851(x-|x|))/(1+exp(-1.702|x|)): rounded per instruction in fp16, the cancellation for x < 0"
        " leaves ~70 of 1024 elements beyond the"
        " example's 1e-3 tolerance"
    ),
}


# Examples whose kernel breaks an API's documented contract in a way that fails on the NPU too, so
# the project, not the simulator, is what fails (blocker named, owner "corpus").
CORPUS_DEFECTS = {
    "math/mul_sigmoid_mul_add_custom": (
        "its kernel takes its second work buffer as GetWithOffset<T>(tileLen, tileLen), an offset of tileLen"
        " bytes (the API's unit) where tileLen elements were meant: the Sigmoid's destination overlaps its"
        " source 512 elements on, so the tile's second half is computed from already overwritten data"
    ),
    "math/inplace_attn_softmax": (
        "its fp32 tiling takes 16384 columns per pass (a third of the 192 KiB UB), and its kernel passes"
        " (uint16_t)(basicColLen * sizeof(float)) = (uint16_t)65536 = 0 as DataCopyParams.blockLen (a uint16_t"
        " in bytes): its DataCopyPad calls copy nothing for every full pass of the example's 50000-column rows"
    ),
    "norm/layer_norm_grad_v3": (
        "its transpose template (the example's 2 columns) sets a counter mask of 16 and calls ReduceSum with the"
        " default isSetMask = true and a count of 64, which sets the mask from the count (the ReduceSum docs;"
        " asc-devkit's A2 ReduceSumImpl): each column's sum takes in the next column, and the result lands on"
        " dy[0], which dx and dw read later (db [14, 8] for [6, 8]); with ReduceSum<float, false> the example passes"
    ),
}


# headers of the third-party libraries cann-ops' build_third_party.sh downloads (not CANN's, not Ascend C's)
_THIRD_PARTY_HEADERS = ("nlohmann/",)


def _classify(message: str) -> tuple[str, str]:
    """(blocker, owner) from an error message."""
    l0 = re.search(r"undefined symbol: _ZN4l0op(\d+)(\w+)", message)
    if l0:  # an l0 op of CANN's own library that the opdev stand-in does not provide
        name = l0.group(2)[: int(l0.group(1))]
        return f"needs CANN's built-in l0 op {name} (not simulated)", "simulator"
    m = re.search(r"missing_api: ([^\s(]+) \(([^)]*)\)", message)
    if m and m.group(1).startswith(_THIRD_PARTY_HEADERS):  # what the library's build fetches itself
        return f"needs a third-party header: {m.group(1)} ({m.group(2)})", "environment"
    if m:
        return f"missing_api: {m.group(1)} ({m.group(2)})", "simulator"
    first = message.strip().splitlines()[0] if message.strip() else "unknown"
    return first[:240], "simulator"


def _selected(name: str, only: str) -> bool:
    only = only.rstrip("/")
    return name == only or name.startswith(only + "/")


def uses_opdev(project: Path) -> bool:
    """Whether the project's op_host holds its own aclnn layer on CANN's op-API framework (opdev)."""
    return any(p.startswith("op_host/") and _OPDEV.search(t) for p, t in _read_tree(project, "op_host").items())


def triage(project: Path, corpus: Path) -> ProjectResult | None:
    """What the sources alone say, before any build: no runnable example, an example on other CANN
    libraries, a gen_data.py importing a package this machine lacks. None: the project must run."""
    name = str(project.relative_to(corpus / "src"))
    ex = project / "examples" / "AclNNInvocationNaive"
    main = ex / "main.cpp"
    if not main.is_file():
        return ProjectResult(name, "no_example", "no examples/AclNNInvocationNaive/main.cpp", "corpus")
    other = _OTHER_LIBS.search(main.read_text(errors="replace"))
    if other:
        lib = other.group(1).rstrip("/")
        return ProjectResult(name, "needs_cann_library", f"its example includes {lib}", "out of scope")
    run_sh = (ex / "run.sh").read_text(errors="replace") if (ex / "run.sh").is_file() else ""
    if not _verify_commands(run_sh):
        return ProjectResult(name, "no_example", "no verify_result.py call in run.sh", "corpus")
    # (a project whose own aclnn layer is written on CANN's op-API framework, opdev/ and l0 ops,
    # runs: the simulator models the framework, kernel_gym/ascendc/include/opdev/kgsim_opdev.h)
    gen = ex / "gen_data.py"
    imports = re.findall(r"^\s*(?:import|from)\s+(\w+)", gen.read_text(errors="replace"), re.M) if gen.is_file() else []
    local = {p.stem for p in ex.iterdir()}  # the example's own modules
    missing = next((m for m in imports if m not in local and importlib.util.find_spec(m) is None), None)
    if missing:  # the reference side needs a framework this machine lacks (TensorFlow, SciPy)
        return ProjectResult(name, "needs_python_package", _needs_package(missing), "environment")
    return None


def run_one(project: Path, corpus: Path, timeout_s: float) -> ProjectResult:
    from kernel_gym.ascendc.aclnn import AclnnOp, run_aclnn_example
    from kernel_gym.ascendc.errors import AscendCCompileError

    early = triage(project, corpus)
    if early is not None:
        return early
    name = str(project.relative_to(corpus / "src"))
    ex = project / "examples" / "AclNNInvocationNaive"
    main_text = (ex / "main.cpp").read_text(errors="replace")
    run_sh = (ex / "run.sh").read_text(errors="replace")
    verifies = _verify_commands(run_sh)
    files = {**_read_tree(project, "op_host"), **_read_tree(project, "op_kernel")}
    cmake = (project / "CMakeLists.txt").read_text(errors="replace") if (project / "CMakeLists.txt").is_file() else ""
    include_dirs = _cmake_include_dirs(corpus, cmake)
    headers = _common_headers(corpus, list(files.values()), include_dirs)
    if cmake:  # which host library each host source is built into
        files["CMakeLists.txt"] = cmake
    # the library's shared host sources of a family whose headers the project uses (the foreach
    # tiling functions in src/common/src/foreach), compiled into the op's host side as the build does
    common_src = corpus / "src" / "common" / "src"
    # (and the family the project's category names: foreach_copy's tiling function and tiling
    # class live only there, registered for its op type, as the library's build links them)
    families = {h.split("/", 1)[0] for h in headers if "/" in h} | {project.parent.name}
    for family in sorted(families):
        for p in sorted((common_src / family).rglob("*.cpp")) if (common_src / family).is_dir() else []:
            files[f"common_src/{p.relative_to(common_src)}"] = p.read_text(errors="replace")
    headers = {
        **headers,
        **_common_headers(corpus, [t for k, t in files.items() if k.startswith("common_src/")], include_dirs),
    }
    files.update(_sibling_sources(corpus, headers))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cann-ops-") as tmp:
        work = Path(tmp) / "ex"
        shutil.copytree(ex, work)
        for sub in ("input", "output"):
            (work / sub).mkdir(exist_ok=True)
        tools = Path(tmp) / "bin"  # the device tools the example's scripts call
        tools.mkdir()
        (tools / "npu-smi").write_text(_npu_smi(SOC))
        (tools / "npu-smi").chmod(0o755)
        env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"}
        gen_args = re.search(r"^\s*(?:\w+=`)?python3?\s+gen_data\.py([^`\n]*)", run_sh, re.M)
        args = _expand(gen_args.group(1), _shell_variables(run_sh)) if gen_args else []
        env.update(_run_env(run_sh))
        gen = _example_script(["gen_data.py", *args], work, env, timeout_s)
        if gen is None:  # the reference side alone took the step's time (a big golden)
            return ProjectResult(
                name, "fail", f"gen_data.py took more than {timeout_s:g} s (--timeout)", "corpus", timeout_s
            )
        if gen.returncode != 0:
            tail = (gen.stderr or gen.stdout).strip().splitlines()[-1:] or ["?"]
            missing = re.search(r"No module named '(\w+)'", tail[0])
            if missing:  # the reference side needs a framework this machine lacks (TensorFlow)
                return ProjectResult(name, "needs_python_package", _needs_package(missing.group(1)), "environment")
            return ProjectResult(name, "fail", f"gen_data.py failed: {tail[0][:200]}", "corpus")
        inputs = {
            str(p.relative_to(work)): p.read_bytes()
            for sub in ("input", "output")
            for p in (work / sub).rglob("*")
            if p.is_file()
        }
        example = {p.name: p.read_text(errors="replace") for p in ex.iterdir() if p.suffix in (".cpp", ".h", ".hpp")}
        try:
            op = AclnnOp(files, soc=SOC, headers=headers)
            calls = {c for c in _OWN_CALL.findall(main_text)} - {f"aclnn{op.meta['op']}", *op.defined_apis}
            if calls:
                return ProjectResult(
                    name, "needs_cann_library", f"its example calls {', '.join(sorted(calls))}", "out of scope"
                )
            run = run_aclnn_example(
                files,
                example,
                inputs,
                cwd="build",
                soc=SOC,
                headers=headers,
                timeout_s=timeout_s,
                argv=_main_args(run_sh, gen.stdout),
            )
        except AscendCCompileError as exc:
            blocker, owner = _classify(str(exc))
            return ProjectResult(name, "fail", blocker, owner, time.perf_counter() - t0)
        except OSError as exc:  # the host side built alone does not load (an l0 op it lacks)
            blocker, owner = _classify(str(exc))
            return ProjectResult(name, "fail", blocker, owner, time.perf_counter() - t0)
        except (ValueError, TypeError, RuntimeError) as exc:
            return ProjectResult(name, "fail", f"{type(exc).__name__}: {exc}"[:240], "aclnn generator")
        for rel, data in run.files.items():
            dst = work / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
        outs = []
        ok = run.returncode == 0 and run.error is None
        for printed, cmd in verifies:
            v = _example_script(cmd, work, env, timeout_s)
            if v is None:
                outs.append(f"{cmd[0]} took more than {timeout_s:g} s (--timeout)")
                ok = False
                continue
            outs.append((v.stdout + v.stderr).strip())
            ok = ok and (v.stdout.strip() == "test pass" if printed else v.returncode == 0)
        detail = {"stdout": run.stdout[-600:], "stderr": run.stderr[-600:], "verify": [o[-300:] for o in outs]}
        secs = time.perf_counter() - t0
        if ok:
            return ProjectResult(name, "pass", "", "", secs, detail)
        stand_in = re.search(r"(?:l0op|op)::(\w+): CANN's built-in l0 op is not simulated", run.stderr) or re.search(
            r"ADD_TO_LAUNCHER_LIST_AICORE\((\w+)\): no kernel of this program implements that op type", run.stderr
        )
        if stand_in:  # the project's aclnn layer took a path through one of CANN's own kernels
            blocker, owner = f"needs CANN's built-in l0 op {stand_in.group(1)} (not simulated)", "simulator"
        elif re.search(r"aclnn error \d+: l0op::\w+", run.stderr):  # a built-in l0 op the stand-in cannot do
            what = re.search(r"aclnn error \d+: (l0op::[^\n]*)", run.stderr)
            blocker, owner = f"the simulator's {what.group(1)[:160] if what else 'l0 op'}", "simulator"
        elif "TilingFunc returned a failure" in run.stderr:  # the project's own host code rejects its example
            blocker, owner = "the project's TilingFunc rejects its example's input", "corpus"
        elif run.error:
            blocker, owner = _classify(run.error)
        elif run.returncode != 0:
            err = [ln for ln in run.stderr.splitlines() if ln.strip()][-1:] or run.stdout.splitlines()[-1:] or ["?"]
            blocker, owner = f"main exited {run.returncode}: {err[0][:200]}", "simulator"
        else:
            blocker, owner = f"verify_result: {(outs[-1].splitlines() or ['?'])[-1][:200]}", "simulator"
            if name in CORPUS_NUMERICS:
                blocker, owner = f"verify_result fails on exact fp16 arithmetic: {CORPUS_NUMERICS[name]}", "corpus"
            elif name in CORPUS_DEFECTS:
                blocker, owner = f"verify_result fails on a kernel defect: {CORPUS_DEFECTS[name]}", "corpus"
        return ProjectResult(name, "fail", blocker, owner, secs, detail)


def _child(project: str, corpus: str, timeout_s: float, out: str) -> int:
    res = run_one(Path(project), Path(corpus), timeout_s)
    Path(out).write_text(json.dumps(asdict(res)))
    return 0


def run_in_child(module: str, name: str, args: list[str], timeout_s: float) -> ProjectResult:
    """``python -m <module> --child ... --out <file>`` in a child process, its result read back: a crash
    or hang of a project's build or run never reaches the harness (this runner's and ops_math_corpus')."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [sys.executable, "-m", module, "--child", *args, "--timeout", str(timeout_s), "--out", f.name]
        t0 = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s * 4, check=False)
        except subprocess.TimeoutExpired:
            return ProjectResult(name, "fail", f"timeout: more than {timeout_s * 4:g} s", "simulator", timeout_s * 4)
        text = Path(f.name).read_text()
        if not text:
            tail = (done.stderr.strip().splitlines() or ["?"])[-1]
            return ProjectResult(
                name, "fail", f"harness child died: {tail[:200]}", "simulator", time.perf_counter() - t0
            )
        return ProjectResult(**json.loads(text))


def run_isolated(project: Path, corpus: Path, timeout_s: float) -> ProjectResult:
    """One project in a child process (run_in_child)."""
    name = str(project.relative_to(corpus / "src"))
    return run_in_child("experiments.cann_ops_corpus", name, [str(project), "--corpus", str(corpus)], timeout_s)


def _corpus_commit(corpus: Path, given: str | None) -> str:
    if given:
        return given
    try:
        return subprocess.run(
            ["git", "-C", str(corpus), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def _no_paths(text: str) -> str:
    """A message without the directories of this machine (a header's or a buffer's absolute path)."""
    return re.sub(r"(?<![\w.])/(?:[\w.+-]+/)+", "", text).replace("|", "/")


def render(
    results: list[ProjectResult], commit: str, command: str, made_by: str = "", clean: frozenset[str] = frozenset()
) -> str:
    """The doc's tables; ``clean``: projects whose blocker is already as the doc prints it (no paths)."""
    results = [
        ProjectResult(r.project, r.status, r.blocker if r.project in clean else _no_paths(r.blocker), r.owner)
        for r in results
    ]
    counts = Counter(r.status for r in results)
    runnable = [r for r in results if r.status in ("pass", "fail")]
    passed = counts["pass"]
    pct = 100.0 * passed / len(runnable) if runnable else 0.0
    blockers = Counter(r.blocker.split(" (")[0] for r in results if r.status == "fail")
    lines = [
        "# Ascend C compatibility: CANN's operator library (cann-ops)",
        "",
        "Each operator project's own example, unmodified (`examples/AclNNInvocationNaive`): its `gen_data.py`,",
        "the build (the project compiled with the aclnn pair `kernel_gym/ascendc/aclnn.py` generates from its",
        "OpDef), its `main` and its `verify_result.py` (pass: every verify call of its `run.sh` prints `test pass`).",
        "",
        f"SoC: {SOC} (20 AI Cores, 40 vector cores: the count the library's BLAS kernels are written for).",
        "",
        f"Corpus: cann-ops as vendored in KernelHive/ascendc-skill, commit `{commit}`",
        "(`skills/ascend-kernel-generator/reference/ref_repositories/cann-ops`), kept outside the repository.",
        f"Regenerate: `{command}`",
        "",
        f"**{passed} of {len(runnable)} projects whose example runs without other CANN libraries pass "
        f"({pct:.1f} %)**; {counts['needs_cann_library']} need other CANN libraries (aclnn of other ops, HCCL), "
        f"{counts['no_example']} have no runnable example, "
        f"{counts['needs_python_package']} need a Python package this machine lacks for their `gen_data.py`"
        + (f"; {counts['not_run']} were not run in this pass." if counts["not_run"] else "."),
        "",
        *([f"**How this table was made:** {made_by}", ""] if made_by else []),
        "## Blockers by frequency",
        "",
        "| blocker | projects |",
        "|---|---|",
    ]
    lines += [f"| {b.replace('|', '/')} | {n} |" for b, n in blockers.most_common()]
    lines += ["", "## Projects", "", "| project | status | blocker | owner |", "|---|---|---|---|"]
    for r in sorted(results, key=lambda r: r.project):
        lines.append(f"| {r.project} | {r.status} | {r.blocker.replace('|', '/')} | {r.owner} |")
    return "\n".join(lines) + "\n"


OPDEV_BEGIN = "<!-- opdev pass: begin (python -m experiments.cann_ops_corpus --opdev --merge-doc <json>) -->"
OPDEV_END = "<!-- opdev pass: end -->"


def _doc_rows(text: str) -> list[ProjectResult]:
    """The rows of the doc's project table (the part before the catlass section)."""
    head = text.split("<!-- catlass corpus: begin", 1)[0]
    rows = []
    for line in head.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and "/" in cells[0] and cells[1] in _STATUSES:
            rows.append(ProjectResult(cells[0], cells[1], cells[2], cells[3]))
    return rows


_STATUSES = ("pass", "fail", "needs_cann_library", "needs_python_package", "no_example", "not_run")


def section_tables(results: list[ProjectResult], plural: str, singular: str) -> list[str]:
    """A section's two tables (this runner's opdev section, ops_math_corpus'): the failures' blockers by
    frequency, then a row per project."""
    blockers = Counter(_no_paths(r.blocker).split(" (")[0] for r in results if r.status == "fail")
    lines = [f"| blocker | {plural} |", "|---|---|"]
    lines += [f"| {b.replace('|', '/')} | {n} |" for b, n in blockers.most_common()]
    lines += ["", f"| {singular} | status | blocker | owner |", "|---|---|---|---|"]
    for r in sorted(results, key=lambda r: r.project):
        lines.append(f"| {r.project} | {r.status} | {_no_paths(r.blocker).replace('|', '/')} | {r.owner} |")
    return lines


def render_opdev_section(results: list[ProjectResult], command: str, made_by: str) -> str:
    """The section on the projects whose own aclnn layer is written on CANN's op-API framework."""
    counts = Counter(r.status for r in results)
    lines = [
        OPDEV_BEGIN,
        f"## CANN's op-API framework (opdev): the {len(results)} projects with their own aclnn layer",
        "",
        "Projects whose op_host holds their own aclnn layer (`aclnn_<op>.cpp` on l0 ops, `<op>_l0.cpp`",
        "launching the kernel with `ADD_TO_LAUNCHER_LIST_AICORE`), built as written against the simulator's",
        "stand-in of the framework (`include/opdev/kgsim_opdev.h`; docs/ascendc_simulator.md, \"A project's own",
        'aclnn layer"). Until this pass they were classed `needs_cann_library` (out of scope).',
        "",
        f"Run: `{command}`",
        "",
        f"**{counts['pass']} of {counts['pass'] + counts['fail']} that run pass**; "
        f"{counts['needs_python_package']} need a Python package this machine lacks for their `gen_data.py`"
        + (f"; {counts['not_run']} were not run in this pass (not_run)." if counts["not_run"] else "."),
        "",
        *([f"**How these rows were made:** {made_by}", ""] if made_by else []),
        *section_tables(results, "projects", "project"),
    ]
    return "\n".join([*lines, OPDEV_END]) + "\n"


OPS_MATH_BEGIN = "<!-- ops-math corpus: begin (python -m experiments.ops_math_corpus --write-doc <json>) -->"
OPS_MATH_END = "<!-- ops-math corpus: end -->"


def kept_ops_math_section() -> str:
    """The doc's ops-math section (experiments.ops_math_corpus; with a leading blank line), for a
    writer regenerating the rest."""
    text = DOC.read_text() if DOC.exists() else ""
    if OPS_MATH_BEGIN not in text or OPS_MATH_END not in text:
        return ""
    return "\n" + text[text.index(OPS_MATH_BEGIN) : text.index(OPS_MATH_END) + len(OPS_MATH_END)] + "\n"


def _kept_opdev() -> str:
    """The doc's opdev section (with a leading blank line), for a writer regenerating the rest."""
    text = DOC.read_text() if DOC.exists() else ""
    if OPDEV_BEGIN not in text or OPDEV_END not in text:
        return ""
    return "\n" + text[text.index(OPDEV_BEGIN) : text.index(OPDEV_END) + len(OPDEV_END)] + "\n"


def merge_doc(opdev: list[ProjectResult], commit: str, made_by: str, opdev_command: str) -> None:
    """docs/ascendc_compat.md with the rows of an opdev pass merged into its project table (the
    counts and blockers recomputed), the opdev section written, and everything from the catlass
    section on kept as it is."""
    text = DOC.read_text()
    rows = {r.project: r for r in _doc_rows(text)}
    clean = frozenset(rows) - {r.project for r in opdev}
    for r in opdev:
        rows[r.project] = r
    cmd = "python -m experiments.cann_ops_corpus --corpus <cann-ops checkout> --commit <commit> --write-doc"
    tail = text[text.index("<!-- catlass corpus: begin") :] if "<!-- catlass corpus: begin" in text else ""
    section = render_opdev_section(opdev, opdev_command, made_by)
    DOC.write_text(render(list(rows.values()), commit, cmd, made_by, clean) + "\n" + section + "\n" + tail)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="a cann-ops checkout (its src/ holds the projects)")
    ap.add_argument("--only", nargs="*", default=None, help="projects (category/name) or categories to run")
    ap.add_argument(
        "--opdev",
        action="store_true",
        help="only the projects whose own aclnn layer is written on CANN's op-API framework (opdev)",
    )
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per step of a project")
    ap.add_argument("--commit", default=None, help="the corpus commit to name (default: git rev-parse HEAD)")
    ap.add_argument("--json", default=None, help="write the results as JSON here")
    ap.add_argument("--write-doc", action="store_true", help="regenerate docs/ascendc_compat.md")
    ap.add_argument(
        "--rerun-from",
        default=None,
        help="a --json file of an earlier run: keep its passes, run the other projects again, merge",
    )
    ap.add_argument("--render", default=None, help="only write docs/ascendc_compat.md from this --json file")
    ap.add_argument(
        "--triage-rest",
        action="store_true",
        help="with --render: give the projects the file lacks their source-only status (triage) instead of not_run",
    )
    ap.add_argument(
        "--made-by",
        default="",
        help="with --write-doc or --render: a sentence on how the rows were made (the revision, the pass)",
    )
    ap.add_argument(
        "--merge-doc",
        default=None,
        help="a --json file of an --opdev pass: merge its rows into docs/ascendc_compat.md and write its section",
    )
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        return _child(a.child, a.corpus, a.timeout, a.out)
    corpus = Path(a.corpus).resolve()
    if a.merge_doc:
        done = [ProjectResult(**d) for d in json.loads(Path(a.merge_doc).read_text())]
        cmd = "python -m experiments.cann_ops_corpus --corpus <cann-ops checkout> --opdev --timeout 180 --json <file>"
        merge_doc(done, _corpus_commit(corpus, a.commit), a.made_by, cmd)
        return 0
    if a.render:  # the table from a --json file (projects it lacks are listed as not run)
        done = [ProjectResult(**d) for d in json.loads(Path(a.render).read_text())]
        have = {r.project for r in done}
        for p in projects(corpus):
            name = str(p.relative_to(corpus / "src"))
            if name not in have:
                early = triage(p, corpus) if a.triage_rest else None
                done.append(early or ProjectResult(name, "not_run", "not run in this pass", ""))
        cmd = "python -m experiments.cann_ops_corpus --corpus <cann-ops checkout> --commit <commit> --write-doc"
        DOC.write_text(
            render(done, _corpus_commit(corpus, a.commit), cmd, a.made_by)
            + _kept_opdev()
            + kept_catlass_section(DOC)
            + kept_ops_math_section()
        )
        return 0
    todo = projects(corpus)
    if a.only:
        # a project by its name exactly (math/pows is not math/pows_grad), or a whole category
        todo = [p for p in todo if any(_selected(str(p.relative_to(corpus / "src")), o) for o in a.only)]
    if a.opdev:
        todo = [p for p in todo if uses_opdev(p)]
    earlier = (
        {d["project"]: ProjectResult(**d) for d in json.loads(Path(a.rerun_from).read_text())} if a.rerun_from else {}
    )
    results = []
    for p in todo:  # one at a time: builds are the cost, on few shared cores
        name = str(p.relative_to(corpus / "src"))
        r = (
            earlier[name]
            if earlier.get(name) and earlier[name].status == "pass"
            else run_isolated(p, corpus, a.timeout)
        )
        results.append(r)
        print(f"{r.status:20s} {r.seconds:6.1f}s {r.project:45s} {r.blocker[:110]}", flush=True)
        if a.json:  # after each project: a run cut short still leaves its results
            Path(a.json).write_text(json.dumps([asdict(x) for x in results], indent=1))
    counts = Counter(r.status for r in results)
    runnable = counts["pass"] + counts["fail"]
    print(f"\npass {counts['pass']} / {runnable} runnable; {dict(counts)}")
    if a.json:
        Path(a.json).write_text(json.dumps([asdict(r) for r in results], indent=1))
    if a.write_doc:
        cmd = "python -m experiments.cann_ops_corpus --corpus <cann-ops checkout> --commit <commit> --write-doc"
        text = render(results, _corpus_commit(corpus, a.commit), cmd, a.made_by)
        DOC.write_text(text + _kept_opdev() + kept_catlass_section(DOC) + kept_ops_math_section())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
