"""MultiKernelBench answers: six strings, built and run unmodified on the simulator.

A MultiKernelBench Ascend C answer is a Python text assigning six strings:

=================== =========================================================================
``project_json_src`` the operator's definition (msopgen JSON: op name, inputs, outputs, attrs)
``host_tiling_src``  the tiling-data header (``BEGIN_TILING_DATA_DEF`` ...)
``host_operator_src`` the host side: TilingFunc, InferShape, the ``OpDef`` class
``kernel_src``       the ``__global__ __aicore__`` kernel
``python_bind_src``  the C++ binding: allocates outputs (``at::empty``...), calls ``EXEC_NPU_CMD``
``model_src``        Python defining ``ModelNew``, calling ``custom_ops_lib.<op>(...)``
=================== =========================================================================

:func:`load_multikernelbench` compiles the four C++ parts into one operator-project unit with
the binding (against the simulator's small ATen shim, ``include/kgsim/aten_shim.h``, not the
real torch headers), so the binding's own code allocates the outputs and its
``EXEC_NPU_CMD`` runs the TilingFunc and the kernel. ``model_src`` runs with ``custom_ops_lib``
(the binding's functions) and a ``torch_npu`` stand-in importable; tensors stay on the CPU.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import types
from collections.abc import Mapping
from typing import Any

import torch

from kernel_gym.ascendc.loader import INCLUDE_DIR, sampled_blocks
from kernel_gym.ascendc.op_project import (
    _C_TYPES,
    _GE_DTYPES,
    _MAX_DIMS,
    _TORCH_DTYPES,
    OpProjectOp,
    _declared_params,
    _first_column,
    _snake,
)
from kernel_gym.ascendc.sampling import handover_lazy_result, run_sampled
from kernel_gym.native.cabi import strip_comments

__all__ = [
    "SIX_STRING_KEYS",
    "MultiKernelBenchOp",
    "install_six_string",
    "load_multikernelbench",
    "parse_six_strings",
    "six_string_answer_source",
    "six_string_files",
]

SIX_STRING_KEYS = (
    "project_json_src",
    "host_tiling_src",
    "host_operator_src",
    "kernel_src",
    "python_bind_src",
    "model_src",
)

_C_CODES = {c: code for code, c in _C_TYPES.items()}
# raised by include/kgsim/binding_glue.h: the GE dtypes of the tensors an EXEC_NPU_CMD passed
_DTYPE_COLUMN = re.compile(r"\[kgsim:dtype_column ([-\d,]+)\]")

_BIND_UNIT = """
// ---- the python binding and EXEC_NPU_CMD (include/kgsim/binding_glue.h) ----
#include "kgsim/aten_shim.h"
#include "proj/python_bind.cpp.inc"
#include "kgsim/binding_glue.h"
extern "C" int64_t kgsim_gen_bind_names(uint8_t* buf, int64_t cap) {
    std::string o;
    for (auto& e : ::kgsim_gen_bind::registry()) o += e.first + "\\n";
    int64_t n = int64_t(o.size());
    if (n < cap) memcpy(buf, o.data(), size_t(n));
    return n;
}

extern "C" int64_t kgsim_gen_bind_call(int64_t fn, int64_t nargs, int64_t* kinds, int64_t* ptrs, int64_t* dims,
                                       int64_t* ndims, int64_t* dtypes, double* numbers, double* lists) {
    auto& reg = ::kgsim_gen_bind::registry();
    if (fn < 0 || size_t(fn) >= reg.size()) throw std::runtime_error("no such binding function");
    return ::kgsim_gen_binding::call(reg[size_t(fn)].second, nargs, kinds, ptrs, dims, ndims, dtypes, numbers, lists);
}

extern "C" int64_t kgsim_gen_bind_result(int64_t i, int64_t* dims, int64_t* ndim, int64_t* dtype) {
    return ::kgsim_gen_binding::result(i, dims, ndim, dtype);
}

extern "C" void kgsim_gen_bind_copy(int64_t i, uint8_t* dst) { ::kgsim_gen_binding::copy_result(i, dst); }
"""


def parse_six_strings(text: str) -> dict[str, str]:
    """The six strings of a MultiKernelBench answer text (Python assigning string literals).

    The text is parsed, never executed. A published answer is often the model's reply as it came,
    the Python inside a Markdown fence with prose around it (MultiKernelBench's harness takes the
    reply's first code block): where the whole text is not Python, each string is read as the
    literal assigned to its name at the start of a line, the first such assignment that is one.
    Raises ValueError naming what is missing or malformed.
    """
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        assigned = _assigned_literals(text)
        if len(assigned) == len(SIX_STRING_KEYS):
            return assigned
        missing = [k for k in SIX_STRING_KEYS if k not in assigned]
        raise ValueError(
            f"the answer is not valid Python (line {exc.lineno}: {exc.msg}), and no string literal is assigned to "
            f"{', '.join(missing)} at the start of a line; a six-string answer assigns "
            f"{', '.join(SIX_STRING_KEYS)} as string literals"
        ) from None
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in SIX_STRING_KEYS:
                if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                    raise ValueError(f"{name} must be a plain string literal (line {node.lineno})")
                found[name] = node.value.value
    missing = [k for k in SIX_STRING_KEYS if k not in found]
    if missing:
        raise ValueError(
            f"the six-string answer lacks {', '.join(missing)}; it must assign all of {', '.join(SIX_STRING_KEYS)}"
        )
    return found


_ASSIGNED = re.compile(
    rf"^(?P<name>{'|'.join(SIX_STRING_KEYS)})[ \t]*=[ \t]*(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|\")",
    re.MULTILINE,
)


def _assigned_literals(text: str) -> dict[str, str]:
    """{name: value} of the six names' string literals assigned at the start of a line of ``text``
    (the first assignment of each that is a complete literal), read with ``ast.literal_eval``."""
    found: dict[str, str] = {}
    for m in _ASSIGNED.finditer(text):
        name, quote, raw = m.group("name"), m.group("quote"), m.group("prefix") in ("r", "R")
        if name in found:
            continue
        i = m.end()
        while i < len(text):
            if text.startswith(quote, i):
                break
            if text[i] == "\\" and not raw:
                i += 1  # an escaped character, a quote included
            elif text[i] == "\n" and len(quote) == 1:
                i = len(text)  # a one-quote literal ends on its line
            i += 1
        if i >= len(text):
            continue
        try:
            value = ast.literal_eval(text[m.start("prefix") : i + len(quote)])
        except (SyntaxError, ValueError):
            continue
        if isinstance(value, str):
            found[name] = value
    return found


def six_string_files(six: Mapping[str, str], op_type: str) -> dict[str, str]:
    """The operator project a six-string answer stands for: {relative path: text} of its tiling header,
    host operator and kernel (the binding and model are not project files)."""
    snake = _snake(op_type) if op_type else "custom_op"
    # the answer's own tiling header: the first quoted include naming one that CANN does not provide
    # (host code often includes register/tilingdata_base.h or tiling/tiling_api.h before it)
    own = [
        h
        for h in re.findall(r'#\s*include\s+"([\w./]*tiling\w*\.h)"', strip_comments(six["host_operator_src"]))
        if not (INCLUDE_DIR / h).is_file()
    ]
    tiling_name = own[0].split("/")[-1] if own else f"{snake}_tiling.h"
    files = {
        f"op_host/{tiling_name}": six["host_tiling_src"],
        f"op_host/{snake}.cpp": six["host_operator_src"],
        f"op_kernel/{snake}.cpp": six["kernel_src"],
    }
    if tiling_name != f"{snake}_tiling.h":  # kernels may include the tiling header under the op's name too
        files.setdefault(f"op_kernel/{tiling_name}", six["host_tiling_src"])
    return files


class _BoundOp(OpProjectOp):
    """The operator project with the binding compiled into its unit."""

    def __init__(self, files: Mapping[str, str], binding: str, soc: str, opts: dict[str, Any]) -> None:
        self._binding = binding
        super().__init__(files, soc, opts)

    def _unit(self, with_kernel: bool, dtype_defs: Mapping[str, str]) -> dict[str, str]:
        out = super()._unit(with_kernel, dtype_defs)
        if with_kernel:
            main = next(iter(out))
            out["proj/python_bind.cpp.inc"] = f'#line 1 "python_bind.cpp"\n{self._binding}'
            io = ""
            if dtype_defs:  # the GE dtypes this module's kernel is built for, inputs then outputs
                meta = getattr(self, "meta", None) or _declared_params(self.files)  # None while compiling meta
                params = meta.get("inputs", []) + meta.get("outputs", [])
                codes = [_C_CODES.get(dtype_defs.get(f"DTYPE_{p['name'].upper()}", ""), -1) for p in params]
                io = f"#define KGSIM_GEN_IO_DTYPES {{{', '.join(map(str, codes))}}}\n"
            out[main] += f"#define KGSIM_GEN_KERNEL_PARAMS size_t({len(self.kernel_params)})\n{io}{_BIND_UNIT}"
        return out


class MultiKernelBenchOp:
    """A loaded six-string answer.

    Attributes:
        ModelNew: the class ``model_src`` defines.
        ops: the ``custom_ops_lib`` stand-in: one callable per binding function
            (``ops.add_custom(x, y)``), taking and returning CPU tensors.
        project: the underlying :class:`~kernel_gym.ascendc.op_project.OpProjectOp`.
        last_runs: launch reports of the last binding call.
    """

    def __init__(self, six: Mapping[str, str], soc: str, opts: dict[str, Any]) -> None:
        missing = [k for k in SIX_STRING_KEYS if not isinstance(six.get(k), str)]
        if missing:
            raise ValueError(
                f"missing or non-string: {', '.join(missing)}; a six-string answer has {', '.join(SIX_STRING_KEYS)}"
            )
        self.strings = {k: six[k] for k in SIX_STRING_KEYS}
        self.op_type = self._op_type()
        files = six_string_files(six, self.op_type)
        self.project = _BoundOp(files, six["python_bind_src"], soc, opts)
        self.last_runs: list = []
        self._name_cache: list[str] | None = None
        self.ops = self._ops_module()
        self.ModelNew = self._model_class()

    def _op_type(self) -> str:
        try:
            spec = json.loads(self.strings["project_json_src"])
        except json.JSONDecodeError as exc:
            raise ValueError(f"project_json_src is not JSON ({exc.msg}, line {exc.lineno})") from None
        entries = spec if isinstance(spec, list) else [spec]
        for e in entries:
            if isinstance(e, dict) and isinstance(e.get("op"), str):
                return e["op"]
        found = re.findall(r"\bOP_ADD\s*\(\s*(\w+)", strip_comments(self.strings["host_operator_src"]))
        return found[0] if found else ""

    # ---- calling the binding ---------------------------------------------------------------
    def _module_for(self, tensors: list[torch.Tensor]):
        project = self.project
        if not project._uses_dtype_macros:
            return project._kernel_module(None, [], [])
        n_in = len(project.meta.get("inputs", []))
        in_dt = [_GE_DTYPES[t.dtype] for t in tensors[:n_in]]
        column, out_dt = project._out_dtypes(in_dt)
        first = _first_column(project.meta)
        if column is None and first is not None:
            # the arguments match no OpDef column, so the binding casts them before EXEC_NPU_CMD:
            # try the first column's kernel (binding_glue.h names the right one if it is not)
            column, (in_dt, out_dt) = 0, first
        return project._kernel_module(column, in_dt, out_dt)

    def call(self, name: str, *args: Any) -> Any:
        """Call binding function ``name`` with tensors and numbers; returns what it returns.

        With the ``sampled`` option, the whole call (the binding's output allocations and the
        hand-over of its results) runs under sampled simulation."""
        blocks = sampled_blocks(self.project._opts.get("sampled", False))
        return run_sampled(blocks, lambda: self._call(name, *args))

    def _call(self, name: str, *args: Any) -> Any:
        names = self._names()
        if name not in names:
            raise AttributeError(
                f"custom_ops_lib has no function {name!r}; the binding defines: {', '.join(names) or 'none'}"
            )
        n = len(args)
        kinds = torch.zeros(max(n, 1), dtype=torch.int64)
        ptrs = torch.zeros(max(n, 1), dtype=torch.int64)
        dims = torch.zeros(max(n, 1) * _MAX_DIMS, dtype=torch.int64)
        ndims = torch.zeros(max(n, 1), dtype=torch.int64)
        dtypes = torch.zeros(max(n, 1), dtype=torch.int64)
        numbers = torch.zeros(max(n, 1), dtype=torch.float64)
        held, tensors = [], []
        values: list[float] = []  # the list arguments' values, one after another
        for k, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                if a.dtype not in _GE_DTYPES:
                    raise TypeError(f"argument {k}: dtype {a.dtype} is not supported by the simulator's bindings")
                t = a.detach().contiguous()
                held.append(t)
                tensors.append(t)
                ptrs[k] = t.data_ptr()
                ndims[k] = t.dim()
                for d, size in enumerate(t.shape):
                    dims[k * _MAX_DIMS + d] = size
                dtypes[k] = _GE_DTYPES[t.dtype]
            elif isinstance(a, (bool, int, float)):
                kinds[k] = 1
                numbers[k] = float(a)
            elif isinstance(a, (list, tuple, torch.Size)):
                # a list argument (IntArrayRef, std::vector<int64_t>, std::vector<float>): kind 2 for
                # integers, 3 for floats, its values at ptrs[k] in `lists`, ndims[k] of them
                items = list(a)
                if not all(isinstance(v, (bool, int, float)) for v in items):
                    raise TypeError(f"argument {k}: a list of {type(a).__name__}; list arguments hold numbers")
                kinds[k] = 3 if any(isinstance(v, float) for v in items) else 2
                ptrs[k] = len(values)
                ndims[k] = len(items)
                values += [float(v) for v in items]
            else:
                raise TypeError(f"argument {k}: a {type(a).__name__}; bindings take tensors, numbers, lists of numbers")
        lists = torch.tensor(values or [0.0], dtype=torch.float64)
        mod = self._module_for(tensors)
        for attempt in range(4):
            try:
                count = int(
                    mod.kgsim_gen_bind_call(names.index(name), n, kinds, ptrs, dims, ndims, dtypes, numbers, lists)
                )
                break
            except Exception as exc:
                # The kernel's DTYPE_<NAME> macros follow the tensors EXEC_NPU_CMD passes, which the
                # binding may have cast (a bool mask made float): rerun with the module built for
                # those. Nothing reached the caller's tensors: they are copied back only on success.
                column = _DTYPE_COLUMN.search(str(exc))
                if column is None or attempt == 3:
                    raise
                codes = [int(v) for v in column.group(1).split(",")]
                n_in = len(self.project.meta.get("inputs", []))
                mod = self.project._kernel_module(None, codes[:n_in], codes[n_in:])
        self.last_runs = list(mod.last_runs)
        self.project.last_run, self.project.last_runs = mod.last_run, mod.last_runs
        outs = []
        for i in range(count):
            rdims = torch.zeros(_MAX_DIMS, dtype=torch.int64)
            rnd = torch.zeros(1, dtype=torch.int64)
            rdt = torch.zeros(1, dtype=torch.int64)
            mod.kgsim_gen_bind_result(i, rdims, rnd, rdt)
            shape = tuple(int(v) for v in rdims[: int(rnd)].tolist())
            lazy = handover_lazy_result(i, shape, _TORCH_DTYPES[int(rdt)])
            if lazy is not None:
                outs.append(lazy)
                continue
            out = torch.empty(shape, dtype=_TORCH_DTYPES[int(rdt)])
            mod.kgsim_gen_bind_copy(
                i, out.reshape(-1).view(torch.uint8) if out.numel() else torch.empty(1, dtype=torch.uint8)
            )
            outs.append(out)
        if not outs:
            return None
        return outs[0] if count == 1 else tuple(outs)

    def _names(self) -> list[str]:
        if self._name_cache is None:
            project = self.project
            if not project._uses_dtype_macros:
                mod = project._kernel_module(None, [], [])
            else:  # one module per dtype column; any of them has the registry
                mod = next(iter(project._mods.values()), None)
                if mod is None:
                    ins, outs = project.meta.get("inputs", []), project.meta.get("outputs", [])
                    mod = project._kernel_module(0, [p["dtypes"][0] for p in ins], [p["dtypes"][0] for p in outs])
            buf = torch.zeros(1 << 14, dtype=torch.uint8)
            size = int(mod.kgsim_gen_bind_names(buf, buf.numel()))
            self._name_cache = [n for n in bytes(buf[:size].tolist()).decode().split("\n") if n]
        return self._name_cache

    # ---- model_src ---------------------------------------------------------------------------
    def _ops_module(self) -> types.ModuleType:
        ops = types.ModuleType("custom_ops_lib", "The answer's binding functions, run on the Ascend C simulator.")
        for name in self._names():
            setattr(ops, name, lambda *args, _name=name: self.call(_name, *args))
        return ops

    def _model_class(self) -> type:
        namespace: dict[str, Any] = {"__name__": "model_src"}
        saved = {k: sys.modules.get(k) for k in ("custom_ops_lib", "torch_npu")}
        sys.modules["custom_ops_lib"], sys.modules["torch_npu"] = self.ops, _torch_npu_stand_in()
        try:
            exec(compile(self.strings["model_src"], "model_src", "exec"), namespace)  # noqa: S102 - the answer's own model
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        model = namespace.get("ModelNew")
        if not isinstance(model, type):
            raise ValueError("model_src defines no class ModelNew")
        return model


def _torch_npu_stand_in() -> types.ModuleType:
    npu = types.ModuleType("torch_npu", "Stand-in for torch_npu: tensors stay on the CPU in the simulator.")
    npu.npu = types.SimpleNamespace(  # type: ignore[attr-defined]  # typeshed: ModuleType has no __setattr__
        synchronize=lambda *a, **k: None,
        current_device=lambda: 0,
        set_device=lambda *a, **k: None,
        is_available=lambda: True,
    )
    return npu


def install_six_string(answer: str, soc: str = "Ascend910B2", **opts: Any) -> MultiKernelBenchOp:
    """Build a six-string answer and make ``custom_ops_lib`` (its binding) and ``torch_npu`` (a
    stand-in) importable, so its ``model_src`` can run as a module of its own."""
    op = load_multikernelbench(answer, soc, **opts)
    sys.modules["custom_ops_lib"] = op.ops
    sys.modules["torch_npu"] = _torch_npu_stand_in()
    return op


def six_string_answer_source(answer: str) -> str:
    """The Python answer module for a six-string answer (``answer_format=six_string``).

    It builds the C++ parts with :func:`install_six_string` and then is ``model_src`` itself,
    verbatim, so the verifier's static rules read the model's Python as they read any answer's.
    A malformed answer (not Python, a string missing) fails when the module loads, with the
    reason, like any answer that does not build.
    """
    try:
        model_src = parse_six_strings(answer)["model_src"]
    except ValueError as exc:
        return f"raise ValueError({str(exc)!r})\n"
    return (
        "from kernel_gym.ascendc.multikernelbench import install_six_string as _install_six_string\n"
        f"_install_six_string({answer!r})\n"
        "# ---- model_src ----\n" + model_src + "\n"
    )


def load_multikernelbench(answer: str | Mapping[str, str], soc: str = "Ascend910B2", **opts: Any) -> MultiKernelBenchOp:
    """Build a MultiKernelBench six-string answer: the answer's text, or ``{name: string}``.

    Returns a :class:`MultiKernelBenchOp`; ``.ModelNew`` is ``model_src``'s class, whose forward
    calls the binding (``custom_ops_lib``), which runs the kernel on the simulator. Options are
    those of :func:`kernel_gym.ascendc.load`.
    """
    six = parse_six_strings(answer) if isinstance(answer, str) else dict(answer)
    return MultiKernelBenchOp(six, soc, dict(opts))
