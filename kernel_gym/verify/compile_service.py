"""Compiling for the answer runner: the judge's side of the runner's ``compile`` requests.

The runner (in the sandbox) cannot run the compiler nor write the compile cache. It sends
the sources and flags here; the judge checks them (the kernel-source and flag rules), runs
g++ inside a sandbox of its own (read-only system and package, no network, only the build
directory writable), stores the library in the cache with its signature, and answers with
the path, which the runner's view has read-only.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kernel_gym.backends import Backend, compile_cache_dirs
from kernel_gym.native import CompileError, cache_root
from kernel_gym.native.compile import _compile_local
from kernel_gym.verify.static_checks import RULES, SOURCE_RULE_SETS, check_compiler_flags

__all__ = ["CompileService", "prebuild_extensions"]

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/]{0,200}")
_CACHE_NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")
# flags the package's own loaders add beyond the answer-visible optimisation flags
_LOADER_FLAGS = re.compile(
    r"-fsanitize-coverage=trace-pc|-fsanitize=kernel-address|--param=asan-[a-z-]+=0|-fno-plt|"
    r"-fopenmp|-fPIC|-Wl,--no-as-needed|-x|c\+\+-header|-w|-g0|-DNDEBUG|-D[A-Za-z_]\w*(=[\w.]*)?"
)


def _refused(rule: str, message: str) -> dict[str, Any]:
    return {"error_class": "hacked", "hack_rule": rule, "message": f"{RULES.get(rule, rule)}: {message}"}


class CompileService:
    """Answers a runner's compile requests for ``backend``; ``sandboxed`` runs g++ under bubblewrap.

    The backend names the compile caches its answers may build into (an ascend_sim answer that
    built a plain C++ module could compute outside the simulator's clock), the static rule set
    each cache's sources are checked with, flags added to every build, and its own trusted sources."""

    def __init__(self, sandboxed: bool, backend: Backend) -> None:
        self.sandboxed = sandboxed
        self.backend = backend
        self.kinds = tuple(backend.compile_kinds)

    def _allowed_path(self, value: str) -> bool:
        path = Path(value)
        if not path.is_absolute() or ".." in path.parts:
            return False
        return any(root == path or root in path.parents for root in (_PACKAGE_DIR, cache_root()))

    def _check_flags(self, flags: list[str], subdir: str) -> str | None:
        path_next = False
        for flag in flags:
            if path_next:
                if not self._allowed_path(flag):
                    return f"compiler flag path {flag!r} is outside the package and its caches"
                path_next = False
                continue
            if flag in ("-I", "-include"):
                path_next = True
                continue
            if flag.startswith("-Wl,-rpath,") and self._allowed_path(flag.removeprefix("-Wl,-rpath,")):
                continue
            if flag.startswith("-I") and self._allowed_path(flag[2:]):
                continue
            if flag.startswith("-B") and flag in self.backend.compile_flags(subdir):
                continue  # the backend's own tool folder (the simulator's assembler wrapper), no other
            if not flag.startswith("-") and flag.endswith(".so") and self._allowed_path(flag):
                continue  # the simulator runtime the kernel links against
            if _LOADER_FLAGS.fullmatch(flag) or not check_compiler_flags([flag]):
                continue
            return f"compiler flag {flag!r} is not allowed"
        return None

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("kind") == "torch_extension":
            return self.handle_extension(request)
        sources, flags = request.get("sources"), request.get("flags")
        subdir, compiler = request.get("cache_subdir"), request.get("compiler")
        if not (
            isinstance(sources, dict)
            and sources
            and all(
                isinstance(k, str) and _NAME.fullmatch(k) and ".." not in k and isinstance(v, str)
                for k, v in sources.items()
            )
        ):
            return _refused("protocol", "malformed compile request (sources)")
        if not (isinstance(flags, list) and all(isinstance(f, str) for f in flags)):
            return _refused("protocol", "malformed compile request (flags)")
        if (
            not isinstance(subdir, str)
            or not re.fullmatch(r"[a-z][a-z0-9_]{0,40}", subdir)
            or compiler not in ("g++", "gcc", "nvcc")
            or compiler not in self.backend.compilers
        ):
            return _refused("protocol", f"compile request for cache {subdir!r} with compiler {compiler!r}")
        if subdir not in self.kinds:
            return _refused(
                "timing_forgery",
                f"this backend compiles only {', '.join(self.kinds)} code; a "
                f"{subdir!r} module would run outside its clock",
            )
        depends = [str(p) for p in request.get("depends_on", [])]
        if not all(self._allowed_path(p) and Path(p).is_file() for p in depends):
            return _refused("protocol", "compile dependencies outside the package")
        bad_flag = self._check_flags(flags, subdir)
        if bad_flag:
            return _refused("os_access", bad_flag)
        trusted = self.backend.trusted_compile_sources(subdir)
        check = SOURCE_RULE_SETS[self.backend.compile_source_rules.get(subdir, "kernel")]
        answer_code = False
        for name, text in sources.items():
            if hashlib.sha256(text.encode()).hexdigest() in trusted:
                continue  # the backend's own runtime, sent back verbatim
            answer_code = True
            found = check(text)
            if found:
                return {**_refused(found[0].rule, f"{found[0]} (in {name}, checked at compile time)")}
        if answer_code:
            # e.g. the simulator's scalar instrumentation: added whatever the runner asked for
            flags = [*flags, *(f for f in self.backend.compile_flags(subdir) if f not in flags)]
        timeout = float(request.get("timeout_s", 120.0))
        timeout = min(max(timeout, 1.0), 600.0)
        try:
            path = _compile_local(
                sources,
                flags=flags,
                compiler=compiler,
                cache_subdir=subdir,
                depends_on=[Path(p) for p in depends],
                timeout_s=timeout,
                wrap=self._wrap if self.sandboxed else None,
            )
        except CompileError as exc:
            return {"error_class": "compile_error", "message": str(exc), "log": exc.log[-8000:]}
        return {"path": str(path)}

    def handle_extension(self, request: dict[str, Any]) -> dict[str, Any]:
        """A ``load_inline`` of the answer (``kernel_gym.backends.cuda_extension``): the same source
        rules as every kernel, the flag allow-list, then torch's build in the compile sandbox."""
        from kernel_gym.backends.cuda_extension import CACHE_SUBDIR, ExtensionRequest, build_extension, check_flags

        if CACHE_SUBDIR not in self.kinds:
            return _refused("os_access", f"backend {self.backend.name!r} does not build torch extensions (load_inline)")
        try:
            spec = ExtensionRequest.from_json(request.get("extension"))  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            return {"error_class": "compile_error", "message": f"load_inline: {exc}", "log": ""}
        bad = check_flags(spec)
        if bad:
            return _refused("os_access", bad[0])
        check = SOURCE_RULE_SETS[self.backend.compile_source_rules.get(CACHE_SUBDIR, "kernel")]
        for what, texts in (("cpp_sources", spec.cpp_sources), ("cuda_sources", spec.cuda_sources)):
            for text in texts:
                found = check(text)
                if found:
                    return _refused(found[0].rule, f"{found[0]} (in load_inline {what}, checked at compile time)")
        timeout = min(max(float(request.get("timeout_s", 600.0)), 1.0), 900.0)
        try:
            built = build_extension(spec, wrap=self._wrap_extension if self.sandboxed else None, timeout_s=timeout)
        except CompileError as exc:
            return {"error_class": "compile_error", "message": str(exc), "log": exc.log[-8000:]}
        return {
            "path": str(built.path),
            "seconds": built.seconds,
            "cached": built.cached,
            "pch": built.pch,
            "header": built.header,
        }

    @staticmethod
    def _wrap_extension(cmd: list[str], read_only: list[Path], writable: list[Path]) -> list[str]:
        import os

        from kernel_gym.backends.cuda_extension import build_environment
        from kernel_gym.verify.isolation import RUNNER_UID, _run_as_nobody, sandbox_command

        if _run_as_nobody():
            for path in writable:
                os.chown(path, RUNNER_UID, RUNNER_UID)  # the compiler runs as nobody
        return sandbox_command(
            cmd,
            read_only=[*(d for d in compile_cache_dirs() if d.exists()), *read_only, *build_environment()[1]],
            env=build_environment()[0],
            writable=writable,
            chdir=writable[0],
        )

    @staticmethod
    def _wrap(cmd: list[str], build_dir: Path) -> list[str]:
        import os

        from kernel_gym.verify.isolation import RUNNER_UID, _run_as_nobody, sandbox_command

        if _run_as_nobody():
            os.chown(build_dir, RUNNER_UID, RUNNER_UID)  # the compiler runs as nobody
        return sandbox_command(
            cmd,
            read_only=[d for d in compile_cache_dirs() if d.exists()],
            env={"PATH": "/usr/bin:/bin", "TMPDIR": "/tmp", "LANG": "C"},
            writable=[build_dir],
            chdir=build_dir,
        )


def prebuild_extensions(
    answers: Sequence[str], *, workers: int | None = None, sandboxed: bool | None = None
) -> list[Any]:
    """Build the ``load_inline`` extensions of several answers at once (the candidates of one step),
    so their verifications find them in the cache. Only answers that pass the static rules, with
    arguments readable from their syntax tree; each build in the compile sandbox where the machine
    has one. One entry per request: a BuildResult, or the error's message."""
    from concurrent.futures import ThreadPoolExecutor

    from kernel_gym.backends.cuda_extension import (
        ExtensionRequest,
        _ensure_pch,
        _key,
        build_environment,
        build_extension,
        check_flags,
        extract_calls,
        render_sources,
    )
    from kernel_gym.verify.static_checks import check_answer_source, check_kernel_source

    requests: dict[str, ExtensionRequest] = {}
    for answer in answers:
        if "load_inline" not in answer:
            continue
        try:
            if any(not v.runtime_checked for v in check_answer_source(answer, "cuda")):
                continue  # refused before it runs: nothing to build
            found = extract_calls(answer)
        except SyntaxError:
            continue
        for request in found:
            if isinstance(request, ExtensionRequest) and not check_flags(request):
                texts = (*request.cpp_sources, *request.cuda_sources)
                if not any(check_kernel_source(t) for t in texts):
                    requests[_key(render_sources(request), request, False)] = request
    if not requests:
        return []
    if sandboxed is None:
        from kernel_gym.verify.isolation import isolation_mode, namespaces_available

        sandboxed = isolation_mode() != "off" and namespaces_available()[0]
    wrap = CompileService._wrap_extension if sandboxed else None
    cpus = os.cpu_count() or 2
    workers = max(1, min(len(requests), workers or max(1, cpus // 2)))  # a build has two units
    if os.environ.get("KERNEL_GYM_TORCH_PCH", "1") != "0":
        # the shared header first, once, with every core: the builds then all use it
        _ensure_pch(next(iter(requests.values())), build_environment()[0], wrap, 900.0)
    saved = os.environ.get("KERNEL_GYM_BUILD_JOBS")
    os.environ["KERNEL_GYM_BUILD_JOBS"] = str(max(1, cpus // workers))

    def one(request: ExtensionRequest) -> Any:
        try:
            return build_extension(request, wrap=wrap)
        except CompileError as exc:
            return str(exc)

    try:
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, requests.values()))
    finally:
        if saved is None:
            os.environ.pop("KERNEL_GYM_BUILD_JOBS", None)
        else:
            os.environ["KERNEL_GYM_BUILD_JOBS"] = saved
