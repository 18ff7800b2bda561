"""Direct-launch samples as published: a kernel file, a host ``main`` driving the ACL runtime,
input files in, output files out.

    run = asc.run_sample({"add_custom.cpp": kernel, "main.cpp": main, "data_utils.h": utils},
                         inputs={"input/input_x.bin": x.numpy().tobytes(), ...})
    z = np.frombuffer(run.files["output/output_z.bin"], dtype=np.float32)

The sources are compiled unmodified against the simulator's ACL shim (``include/acl/acl.h``:
host memory, synchronous copies and launches) into one module: every ``.cpp`` is included
into a generated unit, kernel files first, with ``main`` renamed; the ``aclrtlaunch_<kernel>.h``
headers a CANN build generates are provided. The sample then runs in a child process (a
crash, an exit or a hang never reaches the caller) in a fresh working directory holding the
input files; the files it wrote come back, with its output, exit status and launch reports.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kernel_gym.ascendc.core_type_dispatch import rewrite_core_type_dispatch
from kernel_gym.ascendc.loader import compile_module, default_options, rewrite_chevrons, rewrite_kernel_qualifiers
from kernel_gym.ascendc.timing import LaunchReport

__all__ = ["SampleRun", "run_sample"]

_OUTPUT_CAP = 1 << 20  # bytes of stdout/stderr kept
_FILES_CAP = 256 << 20  # bytes of written files read back, in all
_KERNEL = re.compile(
    r"__global__\s+(?:__aicore__|__cube__|__vector__|__mix__\s*\(\s*\d+\s*,\s*\d+\s*\))\s+void\s+(\w+)\s*\("
    r"|__aicore__\s+__global__\s+void\s+(\w+)\s*\("
)
_MAIN_DEF = re.compile(r"\b(?:int|int32_t|signed|auto)\s+main\s*\(")
_MAIN_NO_ARGS = re.compile(r"\b(?:int|int32_t|signed|auto)\s+main\s*\(\s*(void)?\s*\)")
_MAIN_LAUNCHES = re.compile(r"<<<|\bACLRT_LAUNCH_KERNEL\b")  # a main that launches kernels itself
_SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".asc")  # .asc: asc-devkit sources, kernel and host in one
_BINARY_LAUNCH = re.compile(r"\baclrtBinaryGetFunction\b")  # a host that finds its kernels by name


@dataclass
class SampleRun:
    """What a sample did.

    Attributes:
        returncode: exit status of the sample's ``main`` (negative: killed by that signal;
            None: it ran past ``timeout_s``).
        files: every file the sample created or changed in its working directory,
            ``{relative path: bytes}``.
        stdout, stderr: its output (the first MB of each).
        launches: the simulator's report of each kernel launch (simulated latency, faults).
        error: None, or why the run did not complete (timeout, crash, a kernel fault).
    """

    returncode: int | None
    files: dict[str, bytes] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    launches: list[LaunchReport] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    @property
    def total_latency_s(self) -> float:
        return float(sum(r.latency_s for r in self.launches))


def _main_returns_zero(text: str) -> str:
    """main's text with ``return 0;`` before its closing brace, on the same line.

    Renamed, main is an ordinary function, and one that ends without a return is undefined
    behaviour: g++ -O2 lets the code run off its end (samples whose main omits the return crash).
    """
    found = _MAIN_DEF.search(text)
    if not found:
        return text
    at = text.find("{", found.end())
    depth, i, n = 0, at, len(text)
    while 0 <= i < n:
        ch = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i)
            i = end + 2 if end >= 0 else -1
            continue
        if ch in "\"'":  # a string or character literal, escapes skipped
            i += 1
            while i < n and text[i] != ch:
                i += 2 if text[i] == "\\" else 1
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[:i] + " return 0; " + text[i:]
        i += 1
    return text


def _named_kernels(text: str) -> list[str]:
    """The kernels a file defines that can be registered by name: not templates (``&k`` of a
    template names no single function, and a binary holds its instantiations under other names)."""
    names = []
    for m in _KERNEL.finditer(text):
        before = text[: m.start()].rstrip()
        before = re.sub(r'extern\s+"C"\s*$', "", before).rstrip()
        if not before.endswith(">"):
            names.append(m.group(1) or m.group(2))
    return names


def _registrations(names: Sequence[str]) -> str:
    """Static registrations of kernels by name, for aclrtBinaryGetFunction (kgsim/launch.h)."""
    unique = dict.fromkeys(names)  # a kernel declared in main and defined in its own file is one kernel
    return "".join(f'\nstatic const bool kgsim_registered_{k} = ::kgsim::register_kernel("{k}", &{k});' for k in unique)


def _cce_header(text: str) -> str:
    """A header as compiled: chevron launches and per-core-type specialisations rewritten."""
    text = rewrite_core_type_dispatch(text)
    return rewrite_chevrons(text) if "<<<" in text else text


def _unity_source(files: Mapping[str, str], soc_name: str = "Ascend910B2") -> tuple[dict[str, str], list[str]]:
    """The generated unit (kernel files first, ``main`` renamed) and the kernels it defines."""
    cpps = [n for n in files if n.endswith(_SOURCE_SUFFIXES)]
    if not cpps:
        raise ValueError("a sample needs at least one .cpp file (its kernel and its main)")
    mains = [n for n in cpps if _MAIN_DEF.search(files[n])]
    if len(mains) != 1:
        raise ValueError(f"a sample needs exactly one .cpp defining main(); found {mains or 'none'}")
    kernels: list[str] = []
    host_only: list[str] = []  # no kernel, no main (a host tiling .cpp): a translation unit of its own, as built
    for n in cpps:
        found = [m.group(1) or m.group(2) for m in _KERNEL.finditer(files[n])]
        kernels += found
        if not found and n not in mains and n.endswith((".cpp", ".cc", ".cxx")):
            host_only.append(n)
    kernel_files = [n for n in cpps if n not in mains and n not in host_only]
    # A host using the kernel-binary API finds its kernels by name: register each (only then, so that
    # other samples compile exactly as before)
    by_name = any(_BINARY_LAUNCH.search(files[n]) for n in cpps)
    # Several kernel files whose main only calls their host wrappers (no launch of its own): a CANN build
    # compiles each as a unit of its own, so their file-scope names (anonymous-namespace constants) may repeat.
    separate = len(kernel_files) > 1 and not _MAIN_LAUNCHES.search(files[mains[0]])
    order = ([] if separate else kernel_files) + mains
    # headers take the CCE dialect steps too: a template library (catlass) launches kernels and
    # specialises members per core type in its headers
    out = {n: _cce_header(t) for n, t in files.items() if not n.endswith(_SOURCE_SUFFIXES)}
    for n in host_only:  # at its own path: its quoted includes of sibling headers resolve as built
        out[n] = f'#line 1 "{n}"\n{files[n]}'
    for n in kernel_files if separate else []:
        unit = n if n.endswith(".cpp") else f"{n}.cpp"
        body = rewrite_chevrons(rewrite_kernel_qualifiers(files[n]))
        if by_name:
            body += _registrations(_named_kernels(files[n]))
        out[f"kernel_units/{unit}"] = f'#include "kgsim/launch.h"\n#line 1 "{n}"\n{body}'
    # SOC_VERSION: the string a sample's CMake build defines from its --soc option (some mains read it)
    lines = ['#include "kgsim/launch.h"', "#ifndef SOC_VERSION", f'#define SOC_VERSION "{soc_name}"', "#endif"]
    for n in order:
        inc = f"{n}.inc"
        # kernel<<<blocks, l2ctrl, stream>>>(...) and the __cube__ / __mix__(1, 2) kernel qualifiers
        out[inc] = f'#line 1 "{n}"\n' + rewrite_chevrons(
            rewrite_kernel_qualifiers(rewrite_core_type_dispatch(files[n]))
        )
        if n in mains:
            out[inc] = _main_returns_zero(out[inc])
            lines += ["#define main kgsim_sample_main", f'#include "{inc}"', "#undef main"]
        else:
            lines.append(f'#include "{inc}"')
    if by_name and not separate:
        lines.append(_registrations([k for n in kernel_files + mains for k in _named_kernels(files[n])]))
    # main(int, char**), main(int, const char**) or main(int, char const* argv[]): argv as declared
    no_args = _MAIN_NO_ARGS.search(files[mains[0]])
    call = "kgsim_sample_main()" if no_args else "kgsim_call_main(kgsim_sample_main, argc, argv)"
    lines += [
        "#include <cstdlib>",
        "#include <cstring>",
        "#include <string>",
        "#include <type_traits>",
        "#include <vector>",
        "template <class F> int kgsim_call_main(F f, int argc, char** argv) {",
        "    if constexpr (std::is_invocable_v<F, int, char**>) return f(argc, argv);",
        "    else return f(argc, const_cast<const char**>(argv));",
        "}",
        'extern "C" int kgsim_run_sample() {',
        '    const char* packed = std::getenv("KGSIM_SAMPLE_ARGV");',
        '    static std::vector<std::string> words{"sample"};',
        "    if (packed) { std::string s(packed); size_t at = 0;",
        "        while (at <= s.size() && !s.empty()) { size_t e = s.find('\\x1f', at);",
        "            if (e == std::string::npos) e = s.size(); words.push_back(s.substr(at, e - at)); at = e + 1; } }",
        "    static std::vector<char*> argv_store;",
        "    for (auto& w : words) argv_store.push_back(w.data());",
        "    argv_store.push_back(nullptr);",
        "    int argc = int(words.size()); char** argv = argv_store.data(); (void)argc; (void)argv;",
        f"    return {call};",
        "}",
    ]
    for k in kernels:  # a CANN build generates these; the definitions are already included above
        out.setdefault(f"aclrtlaunch_{k}.h", "#pragma once\n")
    out["kgsim_sample.cpp"] = "\n".join(lines) + "\n"
    return out, kernels


def _child_limits(memory_bytes: int) -> None:
    os.setsid()
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}


def _define_flags(defines: Mapping[str, str | int] | None) -> tuple[str, ...]:
    flags = []
    for name, value in (defines or {}).items():
        if not re.fullmatch(r"[A-Za-z_]\w*", str(name)):
            raise ValueError(f"define {name!r} is not a macro name")
        flags.append(f"-D{name}" if value is None else f"-D{name}={value}")
    return tuple(flags)


def run_sample(
    files: Mapping[str, str],
    inputs: Mapping[str, bytes] | None = None,
    argv: Sequence[str] = (),
    *,
    timeout_s: float = 120.0,
    soc: str | None = None,
    memory_bytes: int = 8 << 30,
    defines: Mapping[str, str | int] | None = None,
    cwd: str = "",
    pch: str = "kernel",
) -> SampleRun:
    """Compile a direct-launch sample unmodified, run its ``main`` and return what it wrote.

    Args:
        files: the sample's sources, ``{file name: text}`` (its kernel ``.cpp``, its ``main.cpp``,
            its headers such as ``data_utils.h``; a default ``data_utils.h`` is provided).
        inputs: files placed in the working directory before the run, ``{relative path: bytes}``
            (e.g. ``"input/input_x.bin"``); ``input/`` and ``output/`` always exist.
        argv: arguments after the program name.
        timeout_s: wall-clock limit of the run, seconds.
        soc: the simulated SoC (default: the loader's default).
        memory_bytes: address-space limit of the child process.
        defines: preprocessor definitions the sample's build passes (``-DNAME=value``, as a CMake
            ``target_compile_definitions`` line or ``-DSCENARIO_NUM=1`` on its command line does).
        cwd: the subdirectory of the working directory ``main`` runs in (``"build"``: a program
            that reads ``../input/x.bin``, as CMake-built samples run from their build directory).
        pch: the precompiled header (``"host"``: a sample that also builds an operator project's host side).
    Raises:
        AscendCCompileError: the sample does not compile (with the compiler's log).
        ValueError: not a sample (no ``main``, bad file names).
    """
    for name in [*files, *(inputs or {}), *([cwd] if cwd else [])]:
        if name.startswith("/") or ".." in Path(name).parts:
            raise ValueError(f"file name {name!r} must be relative, without '..'")
    soc_name = soc if soc is not None else str(default_options()["soc"])
    sources, _ = _unity_source(files, soc_name)
    main = "kgsim_sample.cpp"
    ordered = {main: sources.pop(main), **sources}
    flags = _define_flags(defines)
    compile_module(ordered, soc=soc, extra_flags=flags, pch=pch)  # compile errors surface here, in the caller
    with tempfile.TemporaryDirectory(prefix="kgsim-sample-") as tmp:
        work = Path(tmp) / "work"
        for sub in ("input", "output", cwd):
            (work / sub).mkdir(parents=True, exist_ok=True)
        for rel, data in (inputs or {}).items():
            path = work / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        spec = Path(tmp) / "spec.json"
        report = Path(tmp) / "report.json"
        spec.write_text(json.dumps({"sources": ordered, "soc": soc, "report": str(report), "flags": flags, "pch": pch}))
        before = _snapshot(work)
        env = {**os.environ, "KGSIM_SAMPLE_ARGV": "\x1f".join(argv)}
        cmd = [
            sys.executable,
            "-c",
            "import sys; from kernel_gym.ascendc.sample import _child; sys.exit(_child(sys.argv[1]))",
            str(spec),
        ]
        try:
            done = subprocess.run(
                cmd,
                cwd=work / cwd,
                env=env,
                capture_output=True,
                timeout=timeout_s,
                preexec_fn=lambda: _child_limits(memory_bytes),
            )
            returncode, out, err, error = done.returncode, done.stdout, done.stderr, None
        except subprocess.TimeoutExpired as exc:
            returncode, out, err = None, exc.stdout or b"", exc.stderr or b""
            error = f"timeout: the sample ran past {timeout_s:g} s and was killed"
        result = SampleRun(
            returncode,
            stdout=out[:_OUTPUT_CAP].decode(errors="replace"),
            stderr=err[:_OUTPUT_CAP].decode(errors="replace"),
            error=error,
        )
        if report.exists():
            data = json.loads(report.read_text())
            result.launches = [LaunchReport(**d) for d in data["launches"]]
            if data.get("fault") and result.error is None:
                result.error = f"kernel fault: {data['fault']}"
        elif result.error is None:
            how = f"signal {-returncode}" if returncode is not None and returncode < 0 else f"exit status {returncode}"
            result.error = f"crash: the sample's process ended ({how}) before its main returned"
        budget = _FILES_CAP
        for rel, stamp in sorted(_snapshot(work).items()):
            if before.get(rel) != stamp and budget > 0:
                data = (work / rel).read_bytes()[:budget]
                budget -= len(data)
                result.files[rel] = data
    return result


def _child(spec_path: str) -> int:
    """In the child: build (cached), run main, write the report."""
    from kernel_gym.ascendc.errors import AscendCFault

    spec = json.loads(Path(spec_path).read_text())
    module = compile_module(
        spec["sources"], soc=spec["soc"], extra_flags=tuple(spec.get("flags", ())), pch=spec.get("pch", "kernel")
    )
    fault, code = None, 0
    try:
        code = int(module.kgsim_run_sample())
    except AscendCFault as exc:  # a launch faulted; main went on to its end (aclrtSynchronize* said so)
        fault, code = str(exc), int(exc.host_return) if exc.host_return is not None else 1
    sys.stdout.flush()
    runs = module.last_runs
    Path(spec["report"]).write_text(
        json.dumps({"soc": module.soc, "fault": fault, "launches": [dataclasses.asdict(r) for r in runs]})
    )
    return code
