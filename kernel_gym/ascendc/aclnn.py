"""aclnn as CANN generates it, for an operator project: ``aclnn<Op>GetWorkspaceSize`` / ``aclnn<Op>``
and the ``aclnn_<op>.h`` header, so that a host program written against them (the operator
library's ``examples/AclNNInvocationNaive/main.cpp``) builds and runs unmodified on the simulator.

    run = run_aclnn_example(project_files, example_files, inputs={"input/x.bin": ...}, cwd="build")

The two-phase API (CANN's single-operator API reference): the first call takes the op's
parameters in OpDef order (inputs, then attributes, then outputs), runs the op's TilingFunc and
reports the workspace size; the second launches the kernel with that workspace on a stream.
Parameter types follow the generated headers: a REQUIRED input is ``const aclTensor *``, an
OPTIONAL one ``const aclTensor *<name>Optional``, a DYNAMIC one ``const aclTensorList *``, an
input marked ``Scalar()`` ``const aclScalar *``; attributes are ``int64_t`` (Int), ``double``
(Float), ``bool``, ``char *`` (String), ``const aclIntArray *`` / ``aclFloatArray *`` /
``aclBoolArray *`` (lists); an output that shares an input's name is written in place (the input
is passed once, as ``<name>Ref``).

The op's parameters come from its OpDef: read from the source where it spells them out, else from
the compiled OpDef (the host side built once, alone, and asked), so OpDefs written with helper
macros are read as the build reads them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kernel_gym.ascendc.errors import AscendCCompileError
from kernel_gym.ascendc.loader import compile_module
from kernel_gym.ascendc.op_project import _C_TYPES, _DT_NAMES, ProjectSources, _snake, op_meta_text
from kernel_gym.ascendc.sample import SampleRun, run_sample

__all__ = ["AclnnOp", "aclnn_header_name", "generate_aclnn", "op_signature", "run_aclnn_example"]

_OPTIONAL, _DYNAMIC = 1, 3
_ATTR_TYPES = {
    0: "int64_t",
    1: "double",
    2: "bool",
    3: "char *",
    4: "const aclIntArray *",
    5: "const aclFloatArray *",
    6: "const aclBoolArray *",
}
_ATTR_SETTERS = {0: "attr_int", 1: "attr_float", 2: "attr_bool", 3: "attr_str", 4: "attr_ints", 5: "attr_floats"}
_ATTR_SETTERS[6] = "attr_bools"
# a ValueDepend input's values as the aclnn caller passes them, by the input's dtype
_VALUE_ARRAYS = {
    9: ("const aclIntArray *", "input_ints"),
    0: ("const aclFloatArray *", "input_floats"),
    12: ("const aclBoolArray *", "input_bools"),
}
_DTYPE_EXIT = re.compile(r"\[kgsim:dtype_column ([-\d,]*)\]")
# A project's own aclnn layer on CANN's op-API framework (opdev): op_host sources including its
# headers, and the aclnn entry points they define (``aclnnFooGetWorkspaceSize(...) {``)
_OPDEV_INCLUDE = re.compile(r'#\s*include\s*[<"](opdev/|aclnnop/|aclnn_kernels/)')
_DEFINED_API = re.compile(r"\b(aclnn\w+?)GetWorkspaceSize\s*\([^;{}]*\)\s*\{")
# an include written relative to an example's directory: ``#include "../../op_host/x.h"`` (the ../ run)
_UP_INCLUDE = re.compile(r'#\s*include\s*"((?:\.\./)+)')
# the unit defining CANN's built-in l0 ops (Contiguous, Cast, ...), the same text for every project
OPDEV_UNIT = "kgsim_opdev_builtins.cpp"


def aclnn_header_name(op_type: str) -> str:
    """The header CANN's build generates for an op: ``aclnn_<op type in snake case>.h``."""
    return f"aclnn_{_snake(op_type)}.h"


@dataclass
class AclnnParam:
    kind: str  # "input" | "attr" | "output"
    name: str
    ctype: str
    call: str  # the kgsim_aclnn setter that gathers it
    index: int  # position among the OpDef's inputs / attributes / outputs


def op_signature(meta: Mapping[str, Any]) -> list[AclnnParam]:
    """The aclnn parameters of an op (its OpDef as op_meta reports it), in call order."""
    params: list[AclnnParam] = []
    in_names = [p["name"] for p in meta.get("inputs", [])]
    outs = {p["name"] for p in meta.get("outputs", [])}
    for k, p in enumerate(meta.get("inputs", [])):
        name, opt, scalar = p["name"], p.get("option", 2), p.get("scalar", 0)
        if scalar == 1:
            params.append(AclnnParam("input", name, "const aclScalar *", "input_scalar", k))
        elif scalar == 2:
            params.append(AclnnParam("input", name, "const aclScalarList *", "input_scalar_list", k))
        elif opt == _DYNAMIC:
            params.append(AclnnParam("input", name, "const aclTensorList *", "input_list", k))
        elif p.get("value_depend") and p["dtypes"] and set(p["dtypes"]) <= _VALUE_ARRAYS.keys():
            ctype, call = _VALUE_ARRAYS[p["dtypes"][0]]
            params.append(AclnnParam("input", name, ctype, call, k))
        elif name in outs:  # written in place: CANN names it <name>Ref
            params.append(AclnnParam("input", f"{name}Ref", "aclTensor *", "input", k))
        elif opt == _OPTIONAL:
            params.append(AclnnParam("input", f"{name}Optional", "const aclTensor *", "input", k))
        else:
            params.append(AclnnParam("input", name, "const aclTensor *", "input", k))
    for k, a in enumerate(meta.get("attrs", [])):
        t = int(a.get("type", 0))
        params.append(AclnnParam("attr", a["name"], _ATTR_TYPES.get(t, "int64_t"), _ATTR_SETTERS.get(t, "attr_int"), k))
    for k, p in enumerate(meta.get("outputs", [])):
        name = p["name"]
        if name in in_names:
            params.append(AclnnParam("output", f"{name}Ref", "aclTensor *", "output_ref", k))
        elif p.get("option", 2) == _DYNAMIC:
            params.append(AclnnParam("output", name, "const aclTensorList *", "output_list", k))
        else:
            params.append(AclnnParam("output", name, "const aclTensor *", "output", k))
    return params


def _cname(name: str, used: set[str]) -> str:
    base = re.sub(r"\W", "_", name) or "arg"
    if base[0].isdigit() or base in used or base in ("workspaceSize", "executor", "stream", "workspace"):
        base = f"{base}_"
    used.add(base)
    return base


# The generic part of the pair (kgsim/aclnn_exec.h: gathering arguments, TilingFunc, launch) is
# compiled in a unit of its own whose text is the same for every op, so its object is built once
# per cache and reused; the op's pair calls it out of line. Inlined into each op's host unit it
# was half that unit's compile time.
EXEC_UNIT = "kgsim_aclnn_exec.cpp"
_EXEC_NS = "kgsim_aclnn_unit"
_EXEC_API = (  # name, return type, parameters, as kgsim/aclnn_exec.h defines them
    ("begin", "aclOpExecutor*", "::ops::OpDef* def, const char* api"),
    ("fail", "void", "aclOpExecutor* ex, const char* why"),
    ("input", "void", "aclOpExecutor* ex, const aclTensor* t"),
    ("input_list", "void", "aclOpExecutor* ex, const aclTensorList* l"),
    ("input_scalar", "void", "aclOpExecutor* ex, const aclScalar* s"),
    ("input_scalar_list", "void", "aclOpExecutor* ex, const aclScalarList* l"),
    ("input_ints", "void", "aclOpExecutor* ex, const aclIntArray* a"),
    ("input_floats", "void", "aclOpExecutor* ex, const aclFloatArray* a"),
    ("input_bools", "void", "aclOpExecutor* ex, const aclBoolArray* a"),
    ("attr_int", "void", "aclOpExecutor* ex, int64_t v"),
    ("attr_float", "void", "aclOpExecutor* ex, double v"),
    ("attr_bool", "void", "aclOpExecutor* ex, bool v"),
    ("attr_str", "void", "aclOpExecutor* ex, const char* v"),
    ("attr_ints", "void", "aclOpExecutor* ex, const aclIntArray* v"),
    ("attr_floats", "void", "aclOpExecutor* ex, const aclFloatArray* v"),
    ("attr_bools", "void", "aclOpExecutor* ex, const aclBoolArray* v"),
    ("output", "void", "aclOpExecutor* ex, const aclTensor* t"),
    ("output_ref", "void", "aclOpExecutor* ex, const aclTensor* t"),
    ("output_list", "void", "aclOpExecutor* ex, const aclTensorList* l"),
    ("output_list_ref", "void", "aclOpExecutor* ex, const aclTensorList* l"),
    (
        "finish",
        "aclnnStatus",
        "aclOpExecutor* ex, const int64_t* compiled, size_t n_compiled, uint64_t* workspaceSize, "
        "aclOpExecutor** executor",
    ),
    (
        "run",
        "aclnnStatus",
        "aclOpExecutor* ex, void* workspace, uint64_t workspaceSize, ::kgsim_aclnn::LaunchV launch, "
        "size_t kernel_params",
    ),
)


def _exec_declarations() -> str:
    lines = [f"{ret} {name}({params});" for name, ret, params in _EXEC_API]
    return f"namespace {_EXEC_NS} {{\n" + "\n".join(lines) + "\n}\n"


def exec_unit() -> str:
    """The unit defining the pair's generic calls (the same text for every op)."""
    out = ['#include "kgsim/aclnn_exec.h"', f"namespace {_EXEC_NS} {{"]
    for name, ret, params in _EXEC_API:
        args = ", ".join(p.rsplit(" ", 1)[1].lstrip("*") for p in params.split(", "))
        out.append(f"{ret} {name}({params}) {{ return ::kgsim_aclnn::{name}({args}); }}")
    return "\n".join([*out, "}"]) + "\n"


def generate_aclnn(meta: Mapping[str, Any], dtypes: Sequence[int] | None = None) -> tuple[str, str]:
    """(header, implementation) of the op's aclnn pair. The implementation is appended to the
    project's unit (it uses the unit's ``kgsim_gen_op_def`` and ``kgsim_gen_op_launch_v``);
    ``dtypes``: the per-parameter dtypes a ``DTYPE_<NAME>`` kernel was built for."""
    op = meta["op"]
    params = op_signature(meta)
    used: set[str] = set()
    names = [_cname(p.name, used) for p in params]
    decl = ", ".join(
        f"{p.ctype}{'' if p.ctype.endswith('*') else ' '}{n}"
        for p, n in zip(params, names, strict=True)
        if p.call != "output_ref"  # the in-place output is its input's <name>Ref, passed once
    )
    sep = ", " if decl else ""
    first = f"aclnnStatus aclnn{op}GetWorkspaceSize({decl}{sep}uint64_t *workspaceSize, aclOpExecutor **executor)"
    second = (
        f"aclnnStatus aclnn{op}(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)"
    )
    guard = f"ACLNN_{_snake(op).upper()}_H_"
    header = (
        f"// generated by kernel_gym.ascendc.aclnn from the {op} OpDef\n"
        f"#ifndef {guard}\n#define {guard}\n"
        '#include "aclnn/aclnn_base.h"\n'
        f"{first};\n{second};\n#endif\n"
    )
    body = []
    in_refs: dict[int, str] = {}
    in_lists: dict[int, str] = {}  # a DYNAMIC input written in place: the same list is the output
    for p, n in zip(params, names, strict=True):
        if p.kind == "input":
            body.append(f"    ::{_EXEC_NS}::{p.call}(ex, {n});")
            if p.name.endswith("Ref"):
                in_refs[p.index] = n
            elif p.call == "input_list":
                in_lists[p.index] = n
        elif p.kind == "attr":
            body.append(f"    ::{_EXEC_NS}::{p.call}(ex, {n});")
        elif p.call == "output_ref":
            in_k = [q["name"] for q in meta["inputs"]].index(p.name[:-3])
            if in_k in in_refs:
                body.append(f"    ::{_EXEC_NS}::output_ref(ex, {in_refs[in_k]});")
            else:
                body.append(f"    ::{_EXEC_NS}::output_list_ref(ex, {in_lists[in_k]});")
        else:
            body.append(f"    ::{_EXEC_NS}::{p.call}(ex, {n});")
    if dtypes is not None:
        arr = ", ".join(str(int(d)) for d in dtypes) or "-1"
        check = f"    static const int64_t compiled[] = {{{arr}}};\n"
        finish = f"compiled, {len(dtypes)}"
    else:
        check, finish = "", "nullptr, 0"
    impl = (
        '\n#include "kgsim/aclnn_exec.h"\n'
        f'#include "{aclnn_header_name(op)}"\n'
        f"{_exec_declarations()}"
        f"{first} {{\n"
        f'    aclOpExecutor* ex = ::{_EXEC_NS}::begin(kgsim_gen_op_def(), "aclnn{op}");\n'
        + "\n".join(body)
        + f"\n{check}    return ::{_EXEC_NS}::finish(ex, {finish}, workspaceSize, executor);\n}}\n"
        f"{second} {{\n"
        "    (void)stream;\n"
        f"    return ::{_EXEC_NS}::run(executor, workspace, workspaceSize, kgsim_gen_op_launch_v, "
        "KGSIM_GEN_KERNEL_PARAMS);\n}\n"
    )
    return header, impl


_META_CACHE: dict[str, dict[str, Any]] = {}
_OPDEF_CLASS = re.compile(r"class\s+(\w+)\s*:\s*public\s+(?:ops::)?OpDef\b")
_DECL = re.compile(r"\bthis\s*->\s*(Input|Output|Attr)\s*\(\s*\"(\w+)\"\s*\)([^;]*);")
_ATTR_KINDS = {"Int": 0, "Float": 1, "Bool": 2, "String": 3, "ListInt": 4, "ListFloat": 5, "ListBool": 6}
_OPTIONS = {"IGNORE": 0, "OPTIONAL": 1, "REQUIRED": 2, "DYNAMIC": 3, "VIRTUAL": 4}
_GE_CODES = {
    "DT_FLOAT": 0, "DT_FLOAT16": 1, "DT_INT8": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 6, "DT_UINT16": 7,
    "DT_UINT32": 8, "DT_INT64": 9, "DT_UINT64": 10, "DT_DOUBLE": 11, "DT_BOOL": 12, "DT_COMPLEX64": 16, "DT_BF16": 27,
}  # fmt: skip


def static_meta(files: Mapping[str, str]) -> dict[str, Any] | None:
    """The OpDef as its source spells it out (``this->Input("x").ParamType(...)...;`` chains in the
    class OP_ADD registers), or None where the source does not say it plainly (helper macros,
    names in variables, SoC-specific configs): then the compiled OpDef is asked instead."""
    from kernel_gym.native.cabi import strip_comments

    host = {p: strip_comments(t) for p, t in files.items() if p.startswith("op_host/") and p.endswith((".cpp", ".cc"))}
    added = [m for t in host.values() for m in re.findall(r"\bOP_ADD\s*\(\s*(\w+)", t)]
    if len(added) != 1:
        return None
    op = added[0]
    for text in host.values():
        m = next((m for m in _OPDEF_CLASS.finditer(text) if m.group(1) == op), None)
        if m is None:
            continue
        start = text.find("{", m.end())
        depth, end = 0, start
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        body = text[start:end]
        if re.search(r"\b(?:Input|Output|Attr)\s*\(\s*[^\"\s)]", body) or "OpAICoreConfig" in body:
            return None
        meta: dict[str, Any] = {"op": op, "inputs": [], "outputs": [], "attrs": []}
        for kind, name, chain in _DECL.findall(body):
            if kind == "Attr":
                types = re.findall(r"\.(ListInt|ListFloat|ListBool|String|Bool|Float|Int)\s*\(", chain)
                if len(types) != 1:
                    return None
                meta["attrs"].append({"name": name, "type": _ATTR_KINDS[types[0]]})
                continue
            opt = re.search(r"ParamType\s*\(\s*(?:ops::)?(\w+)\s*\)", chain)
            dts = re.search(r"\bDataType(?:List)?\s*\(\s*\{([^}]*)\}", chain)
            if dts is None and re.search(r"\bDataType(?:List)?\s*\(", chain):
                return None  # the dtypes are in a variable: the compiled OpDef knows them
            names = re.findall(r"\bDT_\w+", dts.group(1)) if dts else []
            if any(n not in _GE_CODES for n in names) or (opt and opt.group(1) not in _OPTIONS):
                return None
            meta["inputs" if kind == "Input" else "outputs"].append(
                {
                    "name": name,
                    "option": _OPTIONS[opt.group(1)] if opt else 2,
                    "scalar": 2 if ".ScalarList()" in chain else 1 if ".Scalar()" in chain else 0,
                    "value_depend": "ValueDepend" in chain,
                    "dtypes": [_GE_CODES[n] for n in names],
                }
            )
        return meta if meta["outputs"] else None
    return None


# CANN's built-in l0 ops the stand-in defines (opdev/kgsim_opdev_builtins.h)
_L0_BUILTINS = frozenset(
    "Contiguous ViewCopy Cast CastOnlyForConvBackward Transpose Reshape TransData TransDataSpecial ReFormat "
    "PickViewAsContiguous UnsqueezeNd SqueezeNd BroadcastTo Expand Fill ZerosLike OnesLike TensorMove Slice".split()
)
OPDEV_STUB_UNIT = "kgsim_opdev_l0_stubs.cpp"
_L0_NAMESPACE = re.compile(r"\bnamespace\s+l0op\s*\{")
_OP_NAMESPACE = re.compile(r"\bnamespace\s+op\s*\{")
_L0_DECL = re.compile(r"(?:^|(?<=[;}]))\s*((?:const\s+)?[\w:<>]+(?:\s*<[^;{}()]*>)?[\s*&]+)(\w+)\s*\(([^;{}]*)\)\s*;")


def _namespace_bodies(text: str, opening: re.Pattern[str]) -> list[str]:
    """The texts inside each ``namespace l0op { ... }`` of a source."""
    out = []
    for m in opening.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append(text[m.end() : i - 1])
    return out


def _strip_defaults(params: str) -> str:
    """A parameter list without its default arguments (a definition may not repeat them)."""
    parts, depth, cur = [], 0, ""
    for ch in params:
        depth += {"(": 1, "<": 1, ")": -1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return ", ".join(p.split("=", 1)[0].strip() for p in parts if p.strip())


def l0_stub_unit(files: Mapping[str, str]) -> str | None:
    """A unit of weak stand-ins for the l0 ops a project declares in its op_host headers and neither
    it nor the simulator defines: CANN's own kernels (ResizeBilinearV2, Mul, ...). An aclnn layer
    often names one on a path its example does not take (another SoC, another dtype); the stand-in
    logs that the op is not simulated and returns nothing, which the layer's own checks turn into
    its error code. None: nothing to stand in for."""
    from kernel_gym.native.cabi import strip_comments

    texts = {p: strip_comments(t) for p, t in files.items() if p.startswith("op_host/")}
    defined = {
        name
        for p, t in texts.items()
        if p.endswith((".cpp", ".cc"))
        for body in _namespace_bodies(t, _L0_NAMESPACE)
        for name in re.findall(r"(\w+)\s*\([^;{}]*\)\s*(?:const\s*)?\{", body)
    }
    defined |= {
        name
        for p, t in texts.items()
        if p.endswith((".cpp", ".cc"))
        for body in _namespace_bodies(t, _OP_NAMESPACE)
        for name in re.findall(r"(\w+)\s*\([^;{}]*\)\s*(?:const\s*)?\{", body)
    }
    headers, stubs, seen = [], [], set()
    for p, t in texts.items():
        if not p.endswith((".h", ".hpp")):
            continue
        found = False
        # l0 ops, and the op:: helpers of CANN's aclnn layer that return a tensor (ResizeFromND) or a
        # status (ProcessEmptyTensorWithValue, then ACLNN_ERR_INNER: a stand-in never reports success)
        bodies = [("l0op", b) for b in _namespace_bodies(t, _L0_NAMESPACE)]
        bodies += [("op", b) for b in _namespace_bodies(t, _OP_NAMESPACE)]
        for ns, body in bodies:
            for ret, name, params in _L0_DECL.findall(body):
                if name in defined or name in _L0_BUILTINS or "operator" in name:
                    continue
                status = "aclnnStatus" in ret  # a helper returning a status (ProcessEmptyTensorWithValue)
                if ns == "op" and "aclTensor" not in ret and not status:
                    continue
                sig = f"{' '.join(ret.split())} {name}({_strip_defaults(params)})"
                key = re.sub(r"\s+", "", re.sub(r"\b\w+\s*(?=[,)])", "", sig + ")"))
                found = True
                if key in seen:
                    continue
                seen.add(key)
                stubs.append(
                    f"namespace {ns} {{\n__attribute__((weak)) {sig} {{\n"
                    f"    ::kgsim_opdev::log_error(int64_t(ACLNN_ERR_INNER), \"{ns}::{name}: CANN's built-in l0 op is "
                    f"not simulated (the simulator runs the project's own kernel)\");\n"
                    f"    return {'ACLNN_ERR_INNER' if status else '{}'};\n}}\n}}"
                )
        if found:
            headers.append(p)
    if not stubs:
        return None
    lines = ['#include "opdev/kgsim_opdev.h"', *(f'#include "proj/{h}"' for h in headers)]
    return "\n".join([*lines, *stubs]) + "\n"


def opdev_registration(op_type: str, dtypes: Sequence[int] | None) -> str:
    """What the project's entry unit adds for its own aclnn layer (opdev/kgsim_opdev.h): the op type
    whose kernel ADD_TO_LAUNCHER_LIST_AICORE launches, with its OpDef, launch and (a DTYPE_<NAME>
    kernel) the dtypes it was built for."""
    arr = ", ".join(str(int(d)) for d in dtypes) if dtypes else "-1"
    n = len(dtypes) if dtypes else 0
    return (
        '\n#include "opdev/kgsim_opdev.h"\n'
        f"static const int64_t kgsim_opdev_compiled[] = {{{arr}}};\n"
        "static const bool kgsim_opdev_registered [[maybe_unused]] = ::kgsim_opdev::register_kernel(\n"
        f'    "{op_type}", &kgsim_gen_op_def, kgsim_gen_op_launch_v, KGSIM_GEN_KERNEL_PARAMS, '
        f"{'kgsim_opdev_compiled' if n else 'nullptr'}, {n});\n"
    )


class AclnnOp:
    """An operator project with its generated aclnn pair: ``meta`` (the OpDef), ``header``,
    and ``sample_files(main_files, dtypes)`` (what :func:`run_sample` compiles)."""

    def __init__(self, files: Mapping[str, str], soc: str = "Ascend910B2", headers: Mapping[str, str] | None = None):
        self.project = ProjectSources(files)
        self.soc = soc
        self.headers = dict(headers or {})  # include-path headers the build adds (the library's common/inc)
        self.project.note_include_headers(self.headers)
        from kernel_gym.native.cabi import strip_comments

        host = {
            p: strip_comments(t)
            for p, t in self.project.files.items()
            if p.startswith("op_host/") and p.endswith((".cpp", ".cc", ".h", ".hpp"))
        }
        # the project's own aclnn layer on the op-API framework: its l0 ops launch the kernel
        self.uses_opdev = any(_OPDEV_INCLUDE.search(t) for t in host.values())
        # the aclnn entry points the project's own sources define (none generated for those)
        self.defined_apis = sorted(
            {a for p, t in host.items() if p.endswith((".cpp", ".cc")) for a in _DEFINED_API.findall(t)}
        )
        self.meta = self._meta()
        # the op type as the OpDef registers it (OP_ADD inside a family's helper macro hides it from the text)
        self.project.op_type = self.meta["op"]
        self.header, _ = generate_aclnn(self.meta)

    @property
    def generates_pair(self) -> bool:
        """Whether the aclnn pair of the op is generated: not when the project has an aclnn layer of
        its own (whose header may bear the generated one's name: aclnn_upsample_bilinear2d_grad.h
        declaring aclnnUpsampleBilinear2dBackwardV2)."""
        return not self.defined_apis

    def _level0_headers(self) -> dict[str, str]:
        """An l0 header named by its place in CANN's package (`#include "level0/geglu_v2.h"`): the
        project's own l0 header of that op (op_host/ge_glu_v2_l0.h)."""
        out: dict[str, str] = {}
        for text in self.project.files.values():
            for inc, name in re.findall(r'#\s*include\s*"(level0/(\w+)\.h)"', text):
                match = [
                    p
                    for p in self.project.files
                    if p.startswith("op_host/")
                    and p.endswith("_l0.h")
                    and p.rsplit("/", 1)[-1][: -len("_l0.h")].replace("_", "") == name.replace("_", "")
                ]
                if match:
                    out[inc] = f'#include "proj/{match[0]}"\n'
        return out

    def _host_unit(self) -> dict[str, str]:
        unit = {**self.project.split_units({}, self.headers, with_kernel=False), **self.headers}
        unit.update({k: v for k, v in self._level0_headers().items() if k not in unit})
        if self.uses_opdev:  # the project's aclnn layer calls CANN's built-in l0 ops
            unit[OPDEV_UNIT] = '#include "opdev/kgsim_opdev_builtins.h"\n'
            stubs = l0_stub_unit(self.project.files)
            if stubs:
                unit[OPDEV_STUB_UNIT] = stubs
        return unit

    def _meta(self) -> dict[str, Any]:
        found = static_meta(self.project.files)
        if found is not None:
            return found
        unit = self._host_unit()
        key = json.dumps(unit, sort_keys=True)
        if key not in _META_CACHE:
            mod = compile_module(unit, soc=self.soc, pch="host")
            _META_CACHE[key] = json.loads(op_meta_text(mod))
        meta = _META_CACHE[key]
        if not meta.get("op"):
            raise ValueError("the project defines no operator (no OP_ADD in op_host/)")
        return meta

    def default_dtypes(self) -> list[int] | None:
        """Per aclnn tensor parameter, the dtype of the OpDef's first column (None: not a DTYPE_ kernel)."""
        cols = self.columns()
        return cols[0] if cols else None

    def columns(self) -> list[list[int]]:
        """The OpDef's dtype columns, per aclnn tensor parameter (none: not a DTYPE_ kernel)."""
        if not self.project.uses_dtype_macros:
            return []
        ps = self._tensor_params()
        n = max((len(p["dtypes"]) for p in ps), default=0)
        return [[p["dtypes"][k] if k < len(p["dtypes"]) else -1 for p in ps] for k in range(max(n, 1))]

    def _tensor_params(self) -> list[dict[str, Any]]:
        in_names = {p["name"] for p in self.meta["inputs"]}
        return list(self.meta["inputs"]) + [p for p in self.meta["outputs"] if p["name"] not in in_names]

    def dtype_defs(self, dtypes: Sequence[int]) -> dict[str, str]:
        defs: dict[str, str] = {}
        ps = self._tensor_params()
        for p, d in zip(ps, dtypes, strict=False):
            code = int(d) if int(d) in _C_TYPES else (p["dtypes"][0] if p["dtypes"] else 0)
            defs[f"DTYPE_{p['name'].upper()}"] = _C_TYPES.get(code, "float")
            defs[f"ORIG_DTYPE_{p['name'].upper()}"] = _DT_NAMES.get(code, "DT_FLOAT")
        outs = {p["name"] for p in self.meta["outputs"]}
        for p in self.meta["inputs"]:  # an in-place parameter is also named <NAME>_REF, as CANN's build names it
            if p["name"] in outs:
                for pre in ("DTYPE_", "ORIG_DTYPE_"):
                    defs[f"{pre}{p['name'].upper()}_REF"] = defs[f"{pre}{p['name'].upper()}"]
        return defs

    def sample_files(self, main_files: Mapping[str, str], dtypes: Sequence[int] | None) -> dict[str, str]:
        defs = self.dtype_defs(dtypes) if dtypes is not None else {}
        unit = self.project.split_units(defs, self.headers)
        n_params = len(self.project.kernel_params)
        unit["op_host_unit.cpp"] += f"#define KGSIM_GEN_KERNEL_PARAMS {n_params}\n"
        if self.generates_pair:
            _, impl = generate_aclnn(self.meta, dtypes)
            unit["op_host_unit.cpp"] += impl
        out = {**unit, **self.headers, EXEC_UNIT: exec_unit()}
        if self.generates_pair:
            out[aclnn_header_name(self.meta["op"])] = self.header
        if self.uses_opdev:  # the l0 ops find the project's kernel by its op type; CANN's own l0 ops
            unit_text = opdev_registration(self.meta["op"], dtypes)
            out["op_host_unit.cpp"] += unit_text
            out[OPDEV_UNIT] = '#include "opdev/kgsim_opdev_builtins.h"\n'
            stubs = l0_stub_unit(self.project.files)
            if stubs:
                out[OPDEV_STUB_UNIT] = stubs
        for inc, text in self._level0_headers().items():
            out.setdefault(inc, text)
        # the project's own headers a main includes by name (its aclnn_<op>.h in op_host/)
        own_headers = {
            p.rsplit("/", 1)[-1]: t
            for p, t in self.project.files.items()
            if p.startswith("op_host/") and p.endswith((".h", ".hpp"))
        }
        for main in main_files.values():
            for inc in re.findall(r'#\s*include\s*"([\w.]+)"', main):
                if inc not in out and inc in own_headers:
                    out[inc] = own_headers[inc]
        # a main may include the header under another spelling of the op's name
        for main in main_files.values():
            for inc in re.findall(r'#\s*include\s*"(aclnn_\w+\.h)"', main):
                same = inc.replace("_", "") == aclnn_header_name(self.meta["op"]).replace("_", "")
                if inc not in out and same and self.generates_pair:
                    out[inc] = self.header
        # a main including the project's header by its path from the example's directory
        # (``../../op_host/aclnn_pow.h``) sits that deep, under the project's op_host/ copies
        depth = max((len(m) for t in main_files.values() for m in _UP_INCLUDE.findall(t)), default=0) // 3
        if depth:
            nest = "/".join(f"kgsim_example{k}" for k in range(depth)) + "/"
            main_files = {nest + n: t for n, t in main_files.items()}
            for p, t in self.project.files.items():
                if p.startswith("op_host/") and p.endswith((".h", ".hpp")):
                    out.setdefault(p, t)
        out.update(main_files)
        return out


def _builds(op: AclnnOp, example_files: Mapping[str, str], dtypes: list[int], soc: str) -> bool:
    from kernel_gym.ascendc.sample import _unity_source

    sources, _ = _unity_source(op.sample_files(example_files, dtypes), soc)
    main = "kgsim_sample.cpp"
    try:
        compile_module({main: sources.pop(main), **sources}, soc=soc, pch="host")
    except AscendCCompileError:
        return False
    return True


def run_aclnn_example(
    project_files: Mapping[str, str],
    example_files: Mapping[str, str],
    inputs: Mapping[str, bytes] | None = None,
    *,
    cwd: str = "",
    soc: str = "Ascend910B2",
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 120.0,
    argv: Sequence[str] = (),
) -> SampleRun:
    """Build an operator project with its generated aclnn pair and run an example's ``main`` on it.

    ``example_files``: the example's sources (``main.cpp`` and its headers); ``inputs``: files placed
    in the working directory (what its ``gen_data.py`` wrote); ``cwd``: the subdirectory ``main``
    runs in (``build`` for the operator library's examples, which read ``../input``). A kernel built
    with ``DTYPE_<NAME>`` macros is built for the OpDef's first dtype column, and again for the
    dtypes the example passes when they differ. ``argv``: ``main``'s arguments (an example's run.sh
    may pass it what its ``gen_data.py`` printed).
    """
    op = AclnnOp(project_files, soc=soc, headers=headers)
    columns = op.columns()
    dtypes = columns[0] if columns else None
    for attempt in range(3):
        files = op.sample_files(example_files, dtypes)
        try:
            run = run_sample(files, inputs=inputs, argv=argv, timeout_s=timeout_s, soc=soc, cwd=cwd, pch="host")
        except AscendCCompileError:
            # a column the kernel cannot be built for (an API without that dtype on this SoC): the
            # first column that builds runs, and the example's own dtypes are taken from there
            rest = [c for c in columns if c != dtypes]
            if attempt > 0 or not rest:
                raise
            dtypes = next((c for c in rest if _builds(op, example_files, c, soc)), None)
            if dtypes is None:
                raise
            continue
        found = _DTYPE_EXIT.search(run.stderr)
        if not found or dtypes is None:
            return run
        given = [int(v) for v in found.group(1).split(",") if v]
        if given == list(dtypes):
            return run
        dtypes = [g if g >= 0 else d for g, d in zip(given, dtypes, strict=False)]
    return run
