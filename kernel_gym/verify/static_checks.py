"""Static anti-hack checks on an answer's Python source and the kernel sources inside it.

Each rule has a name (reported as ``VerifyResult.hack_rule``) and a message that says what
to do instead. The runtime checks in ``runtime_guards`` back these up: a static check can
be dodged by a determined answer, the dispatch-level guard cannot.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "RULES",
    "SOURCE_RULE_SETS",
    "Violation",
    "answer_imports",
    "check_answer_source",
    "check_compiler_flags",
    "check_kernel_source",
]

RULES: dict[str, str] = {
    "torch_compute": "ModelNew computes with torch ops instead of its kernel",
    "vendor_library": "the answer calls a vendor library (cuBLAS, cuDNN ...): KernelBench counts library calls as "
    "not custom kernels",
    "try_fallback": "try/except in the answer (a fallback to PyTorch hides kernel failures)",
    "monkey_patch": "the answer patches timers, synchronisation or torch/numpy/time functions",
    "threads_or_streams": "the answer uses threads, processes or side streams",
    "tensor_subclass": "tensor-subclass or lazy-evaluation tricks",
    "os_access": "the answer reaches the OS (processes, sockets, files, ctypes, dynamic code)",
    "reference_reuse": "the answer uses the reference Model or introspects the harness",
    "forbidden_import": "the answer imports a kernel_gym module other than the kernel loaders",
    "input_mutation": "the forward changed its inputs",
    "stale_or_constant_output": "the output did not change when the inputs did (cached or constant result)",
    "timing_forgery": "the answer reaches the simulator's accounting or reports an impossible latency",
    "output_layout": "the output is not a fresh tensor in the reference's layout",
    "protocol": "the answer's process broke the verification protocol",
}


def answer_imports(backend: str | None = None) -> dict[str, frozenset[str] | None]:
    """kernel_gym modules an answer may import (its backend's kernel loaders), each with the names
    it may use from it (None: any). Without ``backend``: what any registered backend allows."""
    from kernel_gym.backends import BACKENDS, backend_class

    merged: dict[str, frozenset[str] | None] = {}
    for name in [backend] if backend else sorted(BACKENDS):
        for module, names in backend_class(name).answer_imports.items():
            if names is None or (module in merged and merged[module] is None):
                merged[module] = None  # any name
            else:
                merged[module] = (merged.get(module) or frozenset()) | names
    return merged


_FORBIDDEN_MODULES = {
    "subprocess": "os_access",
    "socket": "os_access",
    "ctypes": "os_access",
    "cffi": "os_access",
    "pty": "os_access",
    "shutil": "os_access",
    "http": "os_access",
    "urllib": "os_access",
    "requests": "os_access",
    "importlib": "os_access",
    "builtins": "os_access",
    "sys": "reference_reuse",
    "gc": "reference_reuse",
    "inspect": "reference_reuse",
    "pickle": "os_access",
    "marshal": "os_access",
    "threading": "threads_or_streams",
    "_thread": "threads_or_streams",
    "multiprocessing": "threads_or_streams",
    "concurrent": "threads_or_streams",
    "asyncio": "threads_or_streams",
    "signal": "os_access",
    "time": "monkey_patch",
    "torch.utils.cpp_extension": "os_access",
    "tempfile": "os_access",
    "pathlib": "os_access",
    "glob": "os_access",
    "io": "os_access",
    "fcntl": "os_access",
    "mmap": "os_access",
    "resource": "os_access",
    "runpy": "os_access",
    "pkgutil": "os_access",
    "zipimport": "os_access",
    "atexit": "os_access",
    "torch.hub": "os_access",
    "numpy.ctypeslib": "os_access",
    "timeit": "monkey_patch",
    "torch.library": "monkey_patch",
    "torch.overrides": "monkey_patch",
    "torch._C": "monkey_patch",
    "torch._dynamo": "monkey_patch",
    "torch.utils._python_dispatch": "tensor_subclass",
}
_FORBIDDEN_CALLS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "open",
    "globals",
    "vars",
    "locals",
    "setattr",
    "delattr",
    "breakpoint",
    "input",
}
_OS_ALLOWED_ATTRS = {"path", "cpu_count", "sep"}
# torch functions that allocate or describe tensors without computing on them
_TORCH_ALLOWED = {
    "empty",
    "empty_like",
    "empty_strided",
    "zeros",
    "zeros_like",
    "tensor",
    "Size",
    "no_grad",
    "inference_mode",
    "is_tensor",
    "device",
    "get_num_threads",
    "numel",
    "float32",
    "float16",
    "bfloat16",
    "int64",
    "int32",
}
_SUBCLASS_MARKERS = (
    "__torch_function__",
    "__torch_dispatch__",
    "_make_subclass",
    "as_subclass",
    "_make_wrapper_subclass",
)
_TIMER_NAMES = {
    "perf_counter",
    "perf_counter_ns",
    "time",
    "monotonic",
    "monotonic_ns",
    "synchronize",
    "Event",
    "elapsed_time",
    "process_time",
}
# torch/numpy attributes (anywhere in the answer) that read or write files
_FILE_ATTRS = {
    "load",
    "save",
    "from_file",
    "fromfile",
    "tofile",
    "memmap",
    "loadtxt",
    "savetxt",
    "genfromtxt",
    "savez",
    "savez_compressed",
    "load_library",
    "hub",
}
# torch attributes (anywhere) that change how every module or op behaves, the reference's
# included: global module hooks, operator overrides, torch internals, global settings
_GLOBAL_STATE_ATTRS = {
    "library",
    "overrides",
    "_C",
    "_dynamo",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
    "use_deterministic_algorithms",
    "set_num_threads",
    "set_num_interop_threads",
    "set_flush_denormal",
    "set_default_dtype",
    "set_default_tensor_type",
    "fill_uninitialized_memory",
}
# dunder attributes an answer may use; others patch or introspect objects (type.__setattr__,
# x.__class__.__mro__, f.__closure__ ...)
_DUNDER_ALLOWED = {"__init__", "__name__", "__qualname__", "__doc__"}
# escape hatches of the ctypes binding to arbitrary native symbols (libc's system, ...)
_NATIVE_ESCAPES = {"symbol", "_dll", "_raw", "_handle", "_FuncPtr"}
# g++ flags load_cpp(extra_flags=[...]) may pass: optimisation and code generation only
# (-wrapper, -fplugin, -B, -I, -include, -specs, @file ... run or read arbitrary files)
_ALLOWED_CPP_FLAG = re.compile(
    r"-O[0-3sgz]?|-Ofast|-f(no-)?(fast-math|finite-math-only|unsafe-math-optimizations|associative-math|"
    r"reciprocal-math|signed-zeros|trapping-math|math-errno|rounding-math|tree-vectorize|"
    r"tree-loop-vectorize|tree-slp-vectorize|unroll-loops|unroll-all-loops|peel-loops|strict-aliasing|"
    r"omit-frame-pointer|prefetch-loop-arrays|openmp-simd|inline-functions|ipa-pta|"
    r"vect-cost-model(=[a-z]+)?|simd-cost-model(=[a-z]+)?|exceptions|rtti)|"
    r"-ffp-contract=(fast|on|off)|-march=[\w.-]+|-mtune=[\w.-]+|-mprefer-vector-width=\d+|"
    r"-m(no-)?(avx\w*|sse\w*|fma|f16c|bmi2?|popcnt|lzcnt|amx\w*)|-std=(c|gnu)\+\+\d\w|"
    r"-D[A-Za-z_]\w*(=[\w.+-]*)?|-U[A-Za-z_]\w*|-W[\w=-]*|-w|-g[0-3]?|--param=[\w-]+=\d+|"
    # nvcc (load_cuda): device code generation only
    r"-arch=sm_\d+a?|--?use_fast_math|-lineinfo|--?maxrregcount=\d+|--extra-device-vectorization|"
    r"--?ftz=(true|false)|--?prec-div=(true|false)|--?prec-sqrt=(true|false)|--?fmad=(true|false)|"
    r"-Xptxas=-O[0-3]|--?restrict|--?expt-relaxed-constexpr|--?expt-extended-lambda"
)


@dataclass(frozen=True)
class Violation:
    rule: str
    message: str
    line: int | None = None
    # a torch call in ModelNew.forward: the source alone does not say it runs (most are fallback
    # branches, `if not x.is_cuda: return torch...`); the judge then guards every call of the
    # answer and refuses it only when such an op actually executes (see watched_torch_calls)
    runtime_checked: bool = False

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{self.rule}: {where}{self.message}"


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _AnswerVisitor(ast.NodeVisitor):
    def __init__(self, allowed_imports: dict[str, frozenset[str] | None]) -> None:
        self.allowed_imports = allowed_imports
        self.violations: list[Violation] = []
        self.torch_aliases = {"torch"}
        self.functional_aliases: set[str] = set()
        self.os_aliases: set[str] = set()
        self.torch_family: set[str] = {"torch"}  # torch and its submodules (torch.nn as nn ...)
        self.numpy_aliases: set[str] = set()
        self.loader_aliases: dict[str, str] = {}  # alias -> a loader module whose names are restricted
        self.called_names: set[int] = set()
        self.in_model_new = False
        self.in_init = False

    def add(self, rule: str, message: str, node: ast.AST, runtime_checked: bool = False) -> None:
        self.violations.append(Violation(rule, message, getattr(node, "lineno", None), runtime_checked))

    # -- imports ---------------------------------------------------------------------------
    def _check_module(self, name: str, node: ast.AST) -> None:
        if name in self.allowed_imports or name.rpartition(".")[0] in self.allowed_imports:
            return  # a loader of the answer's backend (torch.utils.cpp_extension's load_inline on cuda)
        for mod, rule in _FORBIDDEN_MODULES.items():
            if name == mod or name.startswith(mod + "."):
                self.add(rule, f"import of {name!r} is not allowed in an answer", node)
                return
        if name == "kernel_gym" or name.startswith("kernel_gym."):
            if not any(name == a or name.startswith(a + ".") for a in self.allowed_imports):
                allowed = ", ".join(self.allowed_imports) or "no kernel_gym module"
                self.add("forbidden_import", f"import of {name!r}: answers may import only {allowed}", node)

    def _restricted(self, module: str, name: str) -> str | None:
        """The message when ``name`` of loader ``module`` is not one an answer may use."""
        names = self.allowed_imports.get(module)
        if names is None or name in names:
            return None
        return f"answers use only {', '.join(sorted(names))} of {module}"

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(alias.name, node)
            if alias.name == "torch":
                self.torch_aliases.add(alias.asname or "torch")
            if alias.name == "torch.nn.functional":
                self.functional_aliases.add(alias.asname or "torch.nn.functional")
            if alias.name == "os":
                self.os_aliases.add(alias.asname or "os")
            if alias.name == "torch" or alias.name.startswith("torch."):
                self.torch_family.add(alias.asname or "torch")
            if alias.name == "numpy" or alias.name.startswith("numpy."):
                self.numpy_aliases.add(alias.asname or "numpy")
            if self.allowed_imports.get(alias.name) is not None:
                self.loader_aliases[alias.asname or alias.name] = alias.name

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.add("forbidden_import", "relative imports are not allowed in an answer", node)
        self._check_module(module, node)
        for alias in node.names:
            full = f"{module}.{alias.name}"
            self._check_module(full, node)
            if full == "torch.nn.functional" or (module == "torch.nn" and alias.name == "functional"):
                self.functional_aliases.add(alias.asname or alias.name)
            if module == "os":
                if alias.name not in _OS_ALLOWED_ATTRS:
                    self.add("os_access", f"os.{alias.name} is not allowed in an answer", node)
            if module == "torch" and alias.name not in _TORCH_ALLOWED | {"nn", "Tensor"}:
                self.add("torch_compute", f"'from torch import {alias.name}': answers compute in their kernel", node)
            if module == "torch" or module.startswith("torch."):
                self.torch_family.add(alias.asname or alias.name)
            restricted = self._restricted(module, alias.name)
            if restricted:
                self.add("forbidden_import", f"'from {module} import {alias.name}': {restricted}", node)

    # -- structure -------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            name = _dotted(base) or ""
            if name.split(".")[-1] == "Tensor":
                self.add("tensor_subclass", f"class {node.name} subclasses torch.Tensor", node)
            if name == "Model" or name.endswith(".Model"):
                self.add("reference_reuse", f"class {node.name} derives from the reference Model", node)
        outer = self.in_model_new
        self.in_model_new = outer or node.name == "ModelNew"
        self.generic_visit(node)
        self.in_model_new = outer

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = self.in_init
        self.in_init = self.in_model_new and node.name == "__init__"
        if node.name in _SUBCLASS_MARKERS:
            self.add("tensor_subclass", f"defines {node.name}", node)
        self.generic_visit(node)
        self.in_init = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Try(self, node: ast.Try | ast.TryStar) -> None:
        self.add("try_fallback", "try/except is not allowed in an answer: let kernel errors surface", node)
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _FORBIDDEN_CALLS | {"getattr"} and id(node) not in self.called_names:
            rule = "monkey_patch" if node.id in ("setattr", "delattr") else "os_access"
            self.add(rule, f"{node.id} used as a value (an alias dodges the call check)", node)
        if node.id == "Model":
            self.add("reference_reuse", "the answer refers to the reference class Model", node)
        if node.id in ("__builtins__", "__loader__", "__spec__"):
            self.add("os_access", f"access to {node.id}", node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._check_attribute(node.value, node.attr, node)
        if isinstance(node.ctx, (ast.Store, ast.Del)):  # assignment, for/with targets, del
            self._check_assign_target(node, node)
        self.generic_visit(node)

    def _check_attribute(self, value: ast.AST, attr: str, node: ast.AST) -> None:
        """Rules on ``value.attr``; also applied to getattr(value, "attr")."""
        if attr in _SUBCLASS_MARKERS:
            self.add("tensor_subclass", f"use of {attr}", node)
        elif attr in ("__globals__", "__builtins__", "__subclasses__", "__code__", "f_back", "f_globals"):
            self.add("reference_reuse", f"introspection through {attr}", node)
        elif attr in ("__setattr__", "__delattr__", "__dict__"):
            self.add("monkey_patch", f"use of {attr}: answers may not change other objects", node)
        elif attr.startswith("__") and attr.endswith("__") and attr not in _DUNDER_ALLOWED:
            self.add("reference_reuse", f"introspection through {attr}", node)
        if attr in _NATIVE_ESCAPES:
            self.add(
                "os_access",
                f'raw native symbol access (.{attr}): call the kernel\'s extern "C" functions by name',
                node,
            )
        name = _dotted(value)
        if not name:
            return
        name = f"{name}.{attr}"
        parts = name.split(".")
        head = parts[0]
        if head in self.os_aliases and parts[1] not in _OS_ALLOWED_ATTRS:
            self.add("os_access", f"{name} is not allowed in an answer", node)
        if any(s in name for s in ("cuda.Stream", "npu.Stream", ".stream(", "cuda.stream", "npu.stream")):
            self.add("threads_or_streams", f"{name}: side streams are not allowed", node)
        if any(s in name for s in ("cuda.graph", "CUDAGraph", "make_graphed_callables", "cuda.Event")):
            what = "CUDA graphs and events replay or time work off the timed stream"
            self.add("threads_or_streams", f"{name}: {what}", node)
        if head in self.torch_family | self.numpy_aliases and attr in _FILE_ATTRS:
            self.add("os_access", f"{name}: answers may not read or write files", node)
        if head in self.torch_family and attr in _GLOBAL_STATE_ATTRS:
            self.add("monkey_patch", f"{name}: changes torch for every model, the reference's included", node)
        loader = self.loader_aliases.get(head)
        prefix = head
        if loader is None:
            loader = prefix = next((m for m in self.allowed_imports if name.startswith(m + ".")), "")
        if loader and name != prefix:
            restricted = self._restricted(loader, name[len(prefix) + 1 :].split(".")[0])
            if restricted:
                self.add("forbidden_import", f"{name}: {restricted}", node)

    def _check_assign_target(self, target: ast.AST, node: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            name = _dotted(target) or target.attr
            head = name.split(".")[0]
            patched_modules = (
                self.torch_family | self.functional_aliases | self.numpy_aliases | self.os_aliases | {"time", "torch"}
            )
            if target.attr in _TIMER_NAMES or head in patched_modules:
                self.add("monkey_patch", f"assignment to {name}", node)

    def _check_extra_flags(self, node: ast.Call) -> None:
        """load_cpp(extra_flags=[...]) must list literal optimisation flags."""
        for kw in node.keywords:
            if kw.arg is None:
                self.add("os_access", "**kwargs in a kernel-loader call: pass literal arguments", node)
            elif kw.arg == "extra_flags":
                items = kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) else None
                flags = [e.value for e in items or [] if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if items is None or len(flags) != len(items):
                    self.add("os_access", "extra_flags must be a literal list of strings", node)
                    continue
                for v in check_compiler_flags(flags):
                    self.add(v.rule, v.message, node)
        if any(isinstance(a, ast.Starred) for a in node.args):
            self.add("os_access", "*args in a kernel-loader call: pass literal arguments", node)

    def _check_load_inline(self, node: ast.Call) -> None:
        """load_inline's flags (where literal; the judge checks the values it builds with) and the
        arguments that would reach files."""
        from kernel_gym.backends.cuda_extension import _REFUSED_ARGUMENTS, ExtensionRequest, check_flags

        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            self.add("os_access", "*args or **kwargs in a load_inline call: pass literal arguments", node)
        flags: dict[str, list[str]] = {}
        for kw in node.keywords:
            empty = (
                isinstance(kw.value, ast.Constant)
                and kw.value.value in (None, False, "")
                or (isinstance(kw.value, (ast.List, ast.Tuple)) and not kw.value.elts)
            )
            if kw.arg in _REFUSED_ARGUMENTS and not empty:
                self.add(
                    "os_access", f"load_inline({kw.arg}=...): the judge builds from the inline sources alone", node
                )
            if kw.arg in ("extra_cflags", "extra_cuda_cflags") and isinstance(kw.value, (ast.List, ast.Tuple)):
                values = [e.value for e in kw.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if len(values) == len(kw.value.elts):
                    flags[kw.arg] = values
        for message in check_flags(ExtensionRequest(**flags)):  # type: ignore[arg-type]
            self.add("os_access", f"load_inline: {message}", node)

    def visit_Call(self, node: ast.Call) -> None:
        func = _dotted(node.func)
        if isinstance(node.func, ast.Name):
            self.called_names.add(id(node.func))
        if func and func.split(".")[-1] == "load_cpp":
            self._check_extra_flags(node)
        if func and func.split(".")[-1] == "load_inline":
            self._check_load_inline(node)
        if isinstance(node.func, ast.Name) and node.func.id in _FORBIDDEN_CALLS:
            rule = "monkey_patch" if node.func.id in ("setattr", "delattr") else "os_access"
            self.add(rule, f"call to {node.func.id}() is not allowed in an answer", node)
        if isinstance(node.func, ast.Name) and node.func.id == "getattr":
            if (
                len(node.args) < 2
                or not isinstance(node.args[1], ast.Constant)
                or not isinstance(node.args[1].value, str)
            ):
                self.add("os_access", "getattr with a computed name is not allowed in an answer", node)
            else:  # getattr(x, "name") is x.name: the same rules apply
                self._check_attribute(node.args[0], node.args[1].value, node)
        if func and self.in_model_new and not self.in_init:
            parts = func.split(".")
            if parts[0] in self.torch_aliases and len(parts) >= 2:
                if parts[1] in ("ops", "_C", "_ops"):
                    self.add("torch_compute", f"{func}() calls torch operators directly", node)
                elif len(parts) == 2 and parts[1] not in _TORCH_ALLOWED:
                    self.add("torch_compute", f"{func}() in ModelNew: compute in the kernel instead", node, True)
                elif parts[1] == "nn" and "functional" in parts:
                    self.add("torch_compute", f"{func}() in ModelNew: compute in the kernel instead", node, True)
            if parts[0] in self.functional_aliases or (
                len(parts) > 1 and ".".join(parts[:-1]) in self.functional_aliases
            ):
                self.add("torch_compute", f"{func}() in ModelNew: compute in the kernel instead", node, True)
        self.generic_visit(node)


# C++ patterns that reach the OS or run work outside the measured call. Names that only
# libc/CPython define are matched as words (a #define alias or a function pointer still
# names them); common words (open, read, ...) as calls.
_CPP_FORBIDDEN: list[tuple[str, str, str]] = [
    (
        r"#\s*include\s*<\s*(thread|future|pthread\.h|stop_token|semaphore|latch|barrier)\s*>",
        "threads_or_streams",
        "header {0}: kernels may use OpenMP, not threads of their own",
    ),
    (
        r"#\s*include\s*<\s*(fstream|filesystem|unistd\.h|fcntl\.h|dlfcn\.h|spawn\.h|"
        r"sys/[\w.]+|netinet/[\w.]+|arpa/[\w.]+|netdb\.h|dirent\.h|signal\.h|csignal|link\.h|"
        r"Python\.h|linux/[\w.]+)\s*>",
        "os_access",
        "header {0} reaches the OS",
    ),
    (
        r"#\s*include(?:_next)?\s*[<\"]\s*([^>\"\n]*\.\.[^>\"\n]*|/[^>\"\n]*)[>\"]",
        "os_access",
        "#include of {0}: only headers by name, no paths outside the build",
    ),
    (
        r"\b(system|popen|pclose|fork|vfork|execv\w*|execl\w*|execve|fexecve|posix_spawn\w*|dlopen|dlmopen|"
        r"dlsym|dlvsym|syscall|ptrace|mmap|mmap64|mprotect|fopen|fopen64|freopen|fdopen|tmpfile|opendir|"
        r"getenv|secure_getenv|environ|prctl|seccomp|unshare|setns|chroot|Py[A-Z_]\w*|_Py\w+)\b",
        "os_access",
        "{0} reaches the OS or the Python interpreter",
    ),
    (
        r"\b(open|openat|creat|read|write|pread|pwrite|unlink|unlinkat|remove|rename|chdir|chmod|mkdir|rmdir|"
        r"truncate|ftruncate|symlink|kill|socket|connect|bind|listen|accept|sendto|recvfrom|clone|clone3)\s*\(",
        "os_access",
        "call to {0}() reaches the OS",
    ),
    (
        r"\bstd::(thread|async|jthread)\b|\bpthread_create\b|\bthrd_create\b",
        "threads_or_streams",
        "{0}: kernels may use OpenMP, not threads of their own",
    ),
    (
        r"\b(omp_set_num_threads|omp_set_dynamic|omp_set_nested|omp_set_max_active_levels)\b",
        "threads_or_streams",
        "{0}: the thread count is the verifier's setting (both sides get the same)",
    ),
    (  # the OpenMP clause only: a variable named num_threads (common in CUDA code) is fine
        r"(?:#\s*pragma\s+omp\b|\b_Pragma\s*\(\s*\"\s*omp\b)[^\n]*?\b(num_threads)\b",
        "threads_or_streams",
        "{0}: the thread count is the verifier's setting (both sides get the same)",
    ),
    (
        r"\b(cudaStreamCreate\w*|cudaStreamAddCallback|cudaLaunchHostFunc|cudaStreamBeginCapture\w*|"
        r"cudaGraph\w*|cudaEventCreate\w*|cudaStreamPerThread|cudaStreamWaitEvent|cuStream\w*|cuGraph\w*|"
        r"cuLaunchHostFunc|cudaSetDevice|cudaDeviceReset|cudaDeviceSetLimit|cudaCtx\w*|cuCtx\w*)\b",
        "threads_or_streams",
        "{0}: kernels run on the verifier's stream (the default stream); no streams, events, graphs or "
        "host callbacks of their own",
    ),
    (
        r"\b(getStreamFromPool|getStreamFromExternal|setCurrentCUDAStream|CUDAStreamGuard|OptionalCUDAStreamGuard|"
        r"CUDAMultiStreamGuard|CUDAEvent|CUDAGraph|cudaStreamNonBlocking|getStreamFromPool)\b",
        "threads_or_streams",
        "{0}: extensions launch on the current stream (at::cuda::getCurrentCUDAStream()); no streams, "
        "events or graphs of their own",
    ),
    (
        r"\b(setAllowTF32CuBLAS|setAllowTF32CuDNN|setFloat32MatmulPrecision|setAllowFP16ReductionCuBLAS|"
        r"setAllowBF16ReductionCuBLAS|setBenchmarkCuDNN|setDeterministicAlgorithms|setFloat32Precision)\b",
        "monkey_patch",
        "{0} changes torch's numerics for every model, the reference's included",
    ),
    (
        r"\b(cublas\w*|cublasLt\w*|cudnn\w*|cusparse\w*|cusolver\w*|cufft\w*|curand\w*|getCurrentCUDABlasHandle|"
        r"getCurrentCUDABlasLtHandle|getCudnnHandle)\b",
        "vendor_library",
        "{0}: a vendor library (cuBLAS, cuDNN ...) computes instead of the answer's own kernel "
        "(KernelBench counts library calls as not custom kernels)",
    ),
    (
        r"__attribute__\s*\(\(\s*(constructor|destructor|alias|weakref|ifunc|section|init_priority)",
        "os_access",
        "__attribute__(({0})) is not allowed (load-time code or symbol aliasing)",
    ),
    (r"(##)", "os_access", "token pasting (##) is not allowed: it hides names from these checks"),
]


def check_compiler_flags(flags: list[str] | tuple[str, ...]) -> list[Violation]:
    """Rules for the extra compiler flags an answer passes to its kernel loader."""
    return [
        Violation("os_access", f"compiler flag {f!r} is not allowed (optimisation and code-generation flags only)")
        for f in flags
        if not (isinstance(f, str) and _ALLOWED_CPP_FLAG.fullmatch(f))
    ]


def check_kernel_source(source: str) -> list[Violation]:
    """Rules for C/C++/Ascend C kernel text (string literals of the answer)."""
    from kernel_gym.native.cabi import strip_comments

    text = strip_comments(source)
    found = []
    for pattern, rule, message in _CPP_FORBIDDEN:
        for m in re.finditer(pattern, text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(
                Violation(
                    rule, "kernel source: " + message.format((m.group(1) if m.groups() else None) or m.group(0)), line
                )
            )
    found.extend(_undefined_extern_c(text))
    found.extend(_inline_assembly(text))
    return found


_ASM = re.compile(r"\b(?:asm|__asm__|__asm)\b")
_ASM_TEMPLATE = re.compile(r"\s*(?:volatile\b|__volatile__\b|inline\b|goto\b)*\s*\(((?:\s*\"(?:\\.|[^\"\\])*\")*)")
# PTX statements: directives (.reg, .pred ...), predicates (@p), labels, and instructions with
# a type or state-space suffix (ld.global.nc.f32, mma.sync..., bar.sync) or one of the few
# suffix-free ones. Host (x86) assembly has no such form: syscall, int $0x80, movq, rdtsc.
_PTX_STATEMENT = re.compile(
    r"(\.\w+\b.*|@!?%?\w+\s+.*|\w+:|[a-z][a-z0-9_]*(\.[\w:]+)+\b.*|(trap|exit|ret|brkpt|pmevent)\b.*)",
    re.S,
)


def _inline_assembly(text: str) -> list[Violation]:
    """Inline assembly is allowed when it is PTX (device code: vector stores, cache hints,
    tensor-core instructions are legitimate CUDA); anything else (host assembly can make system
    calls) or a template that cannot be read from the source is refused."""
    found = []
    for m in _ASM.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        t = _ASM_TEMPLATE.match(text, m.end())
        if t is None:
            found.append(Violation("os_access", "kernel source: inline assembly without a literal template", line))
            continue
        template = "".join(
            bytes(lit[1:-1], "utf-8").decode("unicode_escape", "replace")
            for lit in re.findall(r'"(?:\\.|[^"\\])*"', t.group(1))
        )
        for statement in re.split(r"[;\n]", template):
            statement = statement.strip().lstrip("{").rstrip("}").strip()  # PTX scope braces
            if statement and not _PTX_STATEMENT.fullmatch(statement):
                found.append(
                    Violation(
                        "os_access",
                        f"kernel source: inline assembly {statement[:40]!r} is not PTX (only PTX is allowed)",
                        line,
                    )
                )
                break
    return found


def _undefined_extern_c(text: str) -> list[Violation]:
    """extern "C" prototypes of functions the source does not define: libc or CPython
    functions (system, PyRun_SimpleString ...) reached without their header."""
    from kernel_gym.native.cabi import _match_brace

    decls: list[tuple[str, int]] = []
    for m in re.finditer(r'extern\s+"C"\s*', text):
        start = m.end()
        if text.startswith("{", start):
            try:
                body = text[start + 1 : _match_brace(text, start)]
            except ValueError:
                continue
            depth, top = 0, []
            for ch in body:  # keep only the block's top level
                depth += ch == "{"
                top.append(ch if depth == 0 else " ")
                depth -= ch == "}"
            chunk, base = "".join(top), start + 1
        else:
            end = min([i for i in (text.find("{", start), text.find(";", start)) if i >= 0], default=len(text))
            chunk, base = text[start : end + 1], start
        for d in re.finditer(r"([A-Za-z_]\w*)\s*\([^;{}]*\)\s*(?:noexcept\s*)?;", chunk):
            decls.append((d.group(1), base + d.start()))
    found = []
    for name, pos in decls:
        if not re.search(rf"\b{re.escape(name)}\s*\([^;{{}}]*\)\s*(?:noexcept\s*)?\{{", text):
            found.append(
                Violation(
                    "os_access",
                    f'kernel source: extern "C" declaration of {name}(), which the source does not define',
                    text.count("\n", 0, pos) + 1,
                )
            )
    return found


def _string_literals(tree: ast.AST) -> list[tuple[str, int]]:
    # bare string statements (docstrings) are never compiled; the rules are for kernels
    bare = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and len(node.value) > 20
            and id(node) not in bare
        ):
            out.append((node.value, node.lineno))
    return out


def check_answer_source(source: str, backend: str | None = None) -> list[Violation]:
    """All static violations in an answer (Python source defining ModelNew). Empty: clean.

    ``backend`` names the backend it answers for: it may import only that backend's kernel
    loaders (None: any registered backend's). Raises SyntaxError when the source does not parse
    (the caller reports ``syntax_error``).
    """
    tree = ast.parse(source)
    visitor = _AnswerVisitor(answer_imports(backend))
    visitor.visit(tree)
    violations = list(visitor.violations)
    for text, lineno in _string_literals(tree):
        if re.search(r"#\s*include|extern\s+\"C\"|__global__|__aicore__|\{", text):
            for v in check_kernel_source(text):
                violations.append(
                    Violation(v.rule, v.message + f" (string starting at line {lineno})", lineno + (v.line or 1) - 1)
                )
    return violations


# The simulator's own names: its accounting, configuration and launch records. Kernel code
# calls the Ascend C API; anything else under kgsim is the judge's measuring instrument.
_KGSIM_PUBLIC = frozenset({"launch", "launch_at", "launch_named", "guard_call"})  # what the loader writes too
# The compiler instrumentation that charges scalar code (ascendc/src/rt_scalar.cpp): its hooks
# and the attributes that opt a function out of it.
_INSTRUMENTATION_NAME = re.compile(
    r"\b__sanitizer_\w*|\b__asan_\w*|\bno_sanitize\w*|\bno_instrument_function\b|"
    r"\bKGSIM_UNINSTRUMENTED\b"
)
_KGSIM_NAME = re.compile(r"\bkgsim\s*::\s*(\w+)|\b(kgsim_\w+)|\b(__kgsim\w*)|\bnamespace\s+(kgsim)\b")


def check_simulator_access(source: str) -> list[Violation]:
    """Kernel-source rules plus: no reference to the simulator's internals (timing_forgery)."""
    from kernel_gym.native.cabi import strip_comments

    text = strip_comments(source)
    found = []
    for m in _KGSIM_NAME.finditer(text):
        name = m.group(1) or m.group(2) or m.group(3) or f"namespace {m.group(4)}"
        if (
            m.group(1)
            and name in _KGSIM_PUBLIC
            or m.group(3)
            and name.startswith("__kgsim_call_")
            or m.group(2)
            and name.startswith("kgsim_gen_")
        ):
            continue  # the launch helpers, the loader's trampolines, generated operator-project entry points
        line = text.count("\n", 0, m.start()) + 1
        found.append(
            Violation(
                "timing_forgery",
                f"kernel source: the simulator's internal {name!r} is not part of the Ascend C API",
                line,
            )
        )
    for m in _INSTRUMENTATION_NAME.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        found.append(
            Violation(
                "timing_forgery",
                f"kernel source: {m.group(0)!r} would switch off or replace the simulator's accounting of scalar code",
                line,
            )
        )
    return found + check_kernel_source(source)


# static rule sets a backend names for its compile caches (Backend.compile_source_rules)
SOURCE_RULE_SETS: dict[str, Callable[[str], list[Violation]]] = {
    "kernel": check_kernel_source,
    "simulator": check_simulator_access,
}
