"""Static anti-hack checks on an answer's Python source and the kernel sources inside it.

Each rule has a name (reported as ``VerifyResult.hack_rule``) and a message that says what
to do instead. The runtime checks in ``runtime_guards`` back these up: a static check can
be dodged by a determined answer, the dispatch-level guard cannot.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["Violation", "check_answer_source", "check_kernel_source", "RULES"]

RULES: dict[str, str] = {
    "torch_compute": "ModelNew computes with torch ops instead of its kernel",
    "try_fallback": "try/except in the answer (a fallback to PyTorch hides kernel failures)",
    "monkey_patch": "the answer patches timers, synchronisation or torch/numpy/time functions",
    "threads_or_streams": "the answer uses threads, processes or side streams",
    "tensor_subclass": "tensor-subclass or lazy-evaluation tricks",
    "os_access": "the answer reaches the OS (processes, sockets, files, ctypes, dynamic code)",
    "reference_reuse": "the answer uses the reference Model or introspects the harness",
    "forbidden_import": "the answer imports a kernel_gym module other than the kernel loaders",
    "input_mutation": "the forward changed its inputs",
    "stale_or_constant_output": "the output did not change when the inputs did (cached or constant result)",
}

# kernel_gym modules an answer may import: the kernel loaders.
ALLOWED_KERNEL_GYM_IMPORTS = ("kernel_gym.backends.cpu", "kernel_gym.ascendc")

_FORBIDDEN_MODULES = {
    "subprocess": "os_access", "socket": "os_access", "ctypes": "os_access", "cffi": "os_access",
    "pty": "os_access", "shutil": "os_access", "http": "os_access", "urllib": "os_access",
    "requests": "os_access", "importlib": "os_access", "builtins": "os_access", "sys": "reference_reuse",
    "gc": "reference_reuse", "inspect": "reference_reuse", "pickle": "os_access", "marshal": "os_access",
    "threading": "threads_or_streams", "_thread": "threads_or_streams",
    "multiprocessing": "threads_or_streams", "concurrent": "threads_or_streams",
    "asyncio": "threads_or_streams", "signal": "os_access", "time": "monkey_patch",
    "torch.utils.cpp_extension": "os_access",
}
_FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "open", "globals", "vars", "locals",
                    "setattr", "delattr", "breakpoint", "input"}
_OS_ALLOWED_ATTRS = {"path", "cpu_count", "sep"}
# torch functions that allocate or describe tensors without computing on them
_TORCH_ALLOWED = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "tensor", "Size",
                  "no_grad", "inference_mode", "is_tensor", "device", "get_num_threads", "numel",
                  "float32", "float16", "bfloat16", "int64", "int32"}
_SUBCLASS_MARKERS = ("__torch_function__", "__torch_dispatch__", "_make_subclass", "as_subclass",
                     "_make_wrapper_subclass")
_TIMER_NAMES = {"perf_counter", "perf_counter_ns", "time", "monotonic", "monotonic_ns",
                "synchronize", "Event", "elapsed_time", "process_time"}


@dataclass(frozen=True)
class Violation:
    rule: str
    message: str
    line: int | None = None

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
    def __init__(self) -> None:
        self.violations: list[Violation] = []
        self.torch_aliases = {"torch"}
        self.functional_aliases: set[str] = set()
        self.os_aliases: set[str] = set()
        self.in_model_new = False
        self.in_init = False

    def add(self, rule: str, message: str, node: ast.AST) -> None:
        self.violations.append(Violation(rule, message, getattr(node, "lineno", None)))

    # -- imports ---------------------------------------------------------------------------
    def _check_module(self, name: str, node: ast.AST) -> None:
        for mod, rule in _FORBIDDEN_MODULES.items():
            if name == mod or name.startswith(mod + "."):
                self.add(rule, f"import of {name!r} is not allowed in an answer", node)
                return
        if name == "kernel_gym" or name.startswith("kernel_gym."):
            if not any(name == a or name.startswith(a + ".") for a in ALLOWED_KERNEL_GYM_IMPORTS):
                self.add("forbidden_import", f"import of {name!r}: answers may import only "
                         f"{', '.join(ALLOWED_KERNEL_GYM_IMPORTS)}", node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(alias.name, node)
            if alias.name == "torch":
                self.torch_aliases.add(alias.asname or "torch")
            if alias.name == "torch.nn.functional":
                self.functional_aliases.add(alias.asname or "torch.nn.functional")
            if alias.name == "os":
                self.os_aliases.add(alias.asname or "os")

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

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        outer = self.in_init
        self.in_init = self.in_model_new and node.name == "__init__"
        if node.name in _SUBCLASS_MARKERS:
            self.add("tensor_subclass", f"defines {node.name}", node)
        self.generic_visit(node)
        self.in_init = outer

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Try(self, node: ast.Try) -> None:
        self.add("try_fallback", "try/except is not allowed in an answer: let kernel errors surface", node)
        self.generic_visit(node)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "Model":
            self.add("reference_reuse", "the answer refers to the reference class Model", node)
        if node.id in ("__builtins__", "__loader__", "__spec__"):
            self.add("os_access", f"access to {node.id}", node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in _SUBCLASS_MARKERS:
            self.add("tensor_subclass", f"use of {node.attr}", node)
        if node.attr in ("__globals__", "__builtins__", "__subclasses__", "__code__", "f_back", "f_globals"):
            self.add("reference_reuse", f"introspection through {node.attr}", node)
        name = _dotted(node)
        if name:
            head = name.split(".")[0]
            if head in self.os_aliases and name.split(".")[1] not in _OS_ALLOWED_ATTRS:
                self.add("os_access", f"{name} is not allowed in an answer", node)
            if any(s in name for s in ("cuda.Stream", "npu.Stream", ".stream(", "cuda.stream", "npu.stream")):
                self.add("threads_or_streams", f"{name}: side streams are not allowed", node)
        self.generic_visit(node)

    def _check_assign_target(self, target: ast.AST, node: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            name = _dotted(target) or target.attr
            head = name.split(".")[0]
            if target.attr in _TIMER_NAMES or head in self.torch_aliases | self.os_aliases | {"time", "torch"}:
                self.add("monkey_patch", f"assignment to {name}", node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._check_assign_target(t, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_assign_target(node.target, node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = _dotted(node.func)
        if isinstance(node.func, ast.Name) and node.func.id in _FORBIDDEN_CALLS:
            rule = "monkey_patch" if node.func.id in ("setattr", "delattr") else "os_access"
            self.add(rule, f"call to {node.func.id}() is not allowed in an answer", node)
        if isinstance(node.func, ast.Name) and node.func.id == "getattr":
            if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
                self.add("os_access", "getattr with a computed name is not allowed in an answer", node)
        if func and self.in_model_new and not self.in_init:
            parts = func.split(".")
            if parts[0] in self.torch_aliases and len(parts) >= 2:
                if parts[1] in ("ops", "_C", "_ops"):
                    self.add("torch_compute", f"{func}() calls torch operators directly", node)
                elif len(parts) == 2 and parts[1] not in _TORCH_ALLOWED:
                    self.add("torch_compute", f"{func}() in ModelNew: compute in the kernel instead", node)
                elif parts[1] == "nn" and "functional" in parts:
                    self.add("torch_compute", f"{func}() in ModelNew: compute in the kernel instead", node)
            if parts[0] in self.functional_aliases or (len(parts) > 1 and ".".join(parts[:-1]) in self.functional_aliases):
                self.add("torch_compute", f"{func}() in ModelNew: compute in the kernel instead", node)
        self.generic_visit(node)


# C++ patterns that reach the OS or run work outside the measured call.
_CPP_FORBIDDEN: list[tuple[str, str, str]] = [
    (r"#\s*include\s*<\s*(fstream|thread|future|filesystem|sys/socket\.h|netinet/[\w.]+|arpa/[\w.]+|"
     r"unistd\.h|sys/mman\.h|dlfcn\.h|sys/wait\.h|spawn\.h|pthread\.h|sys/syscall\.h|sys/ptrace\.h)\s*>",
     "os_access", "header {0} reaches the OS or starts threads"),
    (r"\b(system|popen|fork|vfork|execv|execvp|execve|execl|execlp|dlopen|syscall|fopen|freopen|"
     r"ptrace|kill|mmap|mprotect|socket|connect)\s*\(", "os_access", "call to {0}() reaches the OS"),
    (r"\bstd::(thread|async|jthread)\b|\bpthread_create\b", "threads_or_streams",
     "{0}: kernels may use OpenMP, not threads of their own"),
    (r"\b(asm|__asm__)\b", "os_access", "inline assembly is not allowed"),
    (r"__attribute__\s*\(\(\s*constructor", "os_access", "load-time constructors are not allowed"),
    (r"\bgetenv\s*\(", "os_access", "reading the environment is not allowed"),
]


def check_kernel_source(source: str) -> list[Violation]:
    """Rules for C/C++/Ascend C kernel text (string literals of the answer)."""
    from kernel_gym.native.cabi import strip_comments

    text = strip_comments(source)
    found = []
    for pattern, rule, message in _CPP_FORBIDDEN:
        for m in re.finditer(pattern, text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(Violation(rule, "kernel source: " + message.format(m.group(1) if m.groups() else m.group(0)), line))
    return found


def _string_literals(tree: ast.AST) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 20:
            out.append((node.value, node.lineno))
    return out


def check_answer_source(source: str) -> list[Violation]:
    """All static violations in an answer (Python source defining ModelNew). Empty: clean.

    Raises SyntaxError when the source does not parse (the caller reports ``syntax_error``).
    """
    tree = ast.parse(source)
    visitor = _AnswerVisitor()
    visitor.visit(tree)
    violations = list(visitor.violations)
    for text, lineno in _string_literals(tree):
        if re.search(r"#\s*include|extern\s+\"C\"|__global__|__aicore__|\{", text):
            for v in check_kernel_source(text):
                violations.append(Violation(v.rule, v.message + f" (string starting at line {lineno})",
                                            lineno + (v.line or 1) - 1))
    return violations
