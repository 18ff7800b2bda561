"""Arguments for an operator project's PyTorch binding, built from its PyTorch reference module.

A KernelBench level-2 binding takes the forward inputs, then the module's weights and numbers
under names of its own (``conv_bias_opt``, ``gn_gamma``, ``mul_w``, ``scaling``), in an order that
need not be the module's. Positional matching (inputs, then ``model.parameters()``) gets many of
them wrong: a post-conv ``bias`` declared before ``scale1`` in the module but after it in the
binding, a divisor passed as a one-element tensor. This module matches by name:

* the binding's parameters are read from its C++ signature (comments stripped): name and kind
  (tensor, optional tensor, int, float, bool);
* the leading tensor parameters take the forward inputs, in order;
* every other parameter takes the reference's value whose name fits best: a parameter, buffer,
  ``__init__`` argument or numeric module attribute (``group_norm.eps``), in that order; ties go
  to the earliest (``__init__`` order), each value used once; a tensor parameter takes a tensor
  whose name fits before a number of the same name (``bias=True`` is a flag, not the bias);
* a number passed where the binding takes a tensor becomes a one-element tensor: int32 for a
  count (an int or bool: ``num_groups``, ``training``), float32 otherwise;
* a per-channel weight stored ``(C, 1, 1)`` is offered both as is and flattened to ``(C,)``: the
  binding's own checks (cheap: they run before any launch) refuse the wrong one.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

TENSOR, OPTIONAL_TENSOR, INT, FLOAT, BOOL = "tensor", "optional_tensor", "int", "float", "bool"


@dataclass(frozen=True)
class BindingParam:
    name: str
    kind: str  # TENSOR | OPTIONAL_TENSOR | INT | FLOAT | BOOL

    @property
    def is_tensor(self) -> bool:
        return self.kind in (TENSOR, OPTIONAL_TENSOR)


def _strip_comments(src: str) -> str:
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", " ", src)


def _kind(decl: str) -> str:
    if "Tensor" in decl:
        return OPTIONAL_TENSOR if "optional" in decl else TENSOR
    if re.search(r"\bbool\b", decl):
        return BOOL
    if re.search(r"\b(double|float)\b", decl):
        return FLOAT
    return INT  # int64_t, int, long, size_t


def binding_params(bind_src: str, name: str) -> list[BindingParam] | None:
    """The parameters of the C++ function a binding registers as ``name`` (``m.def``/``m.impl``),
    or None when the registration or the definition cannot be found."""
    src = _strip_comments(bind_src)
    m = re.search(r'm\.(?:def|impl)\s*\(\s*"' + re.escape(name) + r'"\s*,\s*&?\s*([\w:]+)', src)
    if not m:
        return None
    fn = m.group(1).split("::")[-1]
    d = re.search(r"\b" + re.escape(fn) + r"\s*\(([^)]*)\)\s*(?:->[^{]*)?\{", src)
    if not d:
        return None
    out = []
    for decl in (p.strip() for p in d.group(1).split(",")):
        if not decl:
            continue
        decl = decl.split("=")[0].strip()  # a default value
        ident = re.search(r"(\w+)\s*(?:\[\s*\])?$", decl)
        out.append(BindingParam(ident.group(1) if ident else "", _kind(decl)))
    return out


# ---------------------------------------------------------------------------------------------
# the reference's named values
# ---------------------------------------------------------------------------------------------
def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float))  # bool included: a flag passed as a count


def named_values(model: Any, init: list[Any]) -> list[tuple[str, Any]]:
    """The reference's values a binding may take, named, in matching priority: parameters and
    buffers (registration order, which is ``__init__`` order), the ``__init__`` arguments by their
    signature names, then numeric attributes of the modules (``group_norm.eps``, ``training``)."""
    out: list[tuple[str, Any]] = []
    if model is None:
        return out
    order = _init_order(type(model))
    rank = {name: i for i, name in enumerate(order)}

    def by_init(items: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        # sorted() is stable: what the source does not name keeps registration order, last
        return sorted(items, key=lambda kv: rank.get(kv[0].split(".")[0], len(rank)))

    out += by_init([(n, p.detach()) for n, p in model.named_parameters()])
    out += by_init([(n, b.detach()) for n, b in model.named_buffers()])
    try:
        bound = inspect.signature(type(model).__init__).bind(model, *init)
        bound.apply_defaults()
        out += [(n, v) for n, v in list(bound.arguments.items())[1:] if _is_number(v)]
    except (TypeError, ValueError):  # a signature that does not take the init list
        pass
    for prefix, module in model.named_modules():
        for key, value in vars(module).items():
            if key.startswith("_") or not _is_number(value):
                continue
            if key == "training" and prefix:
                continue  # one flag: the top module's
            out.append((f"{prefix}.{key}" if prefix else key, value))
    return out


def _init_order(cls: type) -> list[str]:
    """The attributes ``cls.__init__`` assigns (``self.<name> = ...``), in source order. PyTorch
    registers a module's own parameters before its submodules' whatever the order they were
    assigned in, and bindings follow the source. Empty when the source cannot be read."""
    try:
        src = inspect.getsource(cls.__init__)  # type: ignore[misc]  # a class, not an instance
    except (OSError, TypeError):
        return []
    seen: list[str] = []
    for name in re.findall(r"\bself\.(\w+)\s*=(?!=)", src):
        if name not in seen:
            seen.append(name)
    return seen


# ---------------------------------------------------------------------------------------------
# name matching
# ---------------------------------------------------------------------------------------------
# words that name the same thing in bindings and modules
_SYNONYM = {
    "w": "weight",
    "gamma": "weight",
    "b": "bias",
    "beta": "bias",
    "scaling": "scale",
    "mul": "multiply",
    "multiplier": "multiply",
    "sub": "subtract",
    "c": "constant",
    "gn": "norm",
    "bn": "norm",
    "groupnorm": "norm",
    "group": "norm",
    "batch": "norm",
    "instance": "norm",
    "layer": "norm",
    "lin": "linear",
    "gemm": "linear",
    "matmul": "linear",
    "fc": "linear",
    "transpose": "conv",
}
_NORM_WORDS = {"gamma", "beta", "gn", "bn"}
_FILLER = {"opt", "factor", "value", "1d", "2d", "3d", "tensor", "param", "custom", "p"}


def _tokens(name: str) -> list[str]:
    """Canonical words of a name: split on ``_``/``.``/case, synonyms folded, filler words dropped
    (unless the name is nothing else)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+\d*d?|\d+d?", re.sub(r"([a-z])([A-Z])", r"\1_\2", name))]
    canon = [_SYNONYM.get(w, w) for w in words]
    kept = [w for w in canon if w not in _FILLER]
    return kept or canon


def match_score(binding_name: str, value_name: str) -> int:
    """How well a reference value's name fits a binding parameter's name; 0 for no fit."""
    leaf = value_name.rsplit(".", 1)[-1]
    module = value_name.rsplit(".", 1)[0] if "." in value_name else ""
    if binding_name in (value_name, value_name.replace(".", "_")):
        return 100
    if binding_name == leaf:
        return 90
    bt, lt, mt = _tokens(binding_name), _tokens(leaf), set(_tokens(module))
    if not bt or not lt:
        return 0
    # gamma/beta name a normalisation's affine weight/bias: a norm module's beats a conv's
    norm_hint = 5 if "norm" in mt and set(re.findall(r"[a-z]+", binding_name.lower())) & _NORM_WORDS else 0
    if bt == lt:
        return 80 + norm_hint
    if bt[-1] == lt[-1]:  # the same kind of thing (a bias, a weight, a scale), module words as tie-breaker
        shared = len(set(bt[:-1]) & (mt | set(lt[:-1])))
        return 50 + 5 * shared + norm_hint
    if bt[-1] in lt or lt[-1] in bt:
        return 20
    return 0


def _as_tensor(value: Any, param: BindingParam) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, bool) or (isinstance(value, int) and not isinstance(value, float)):
        return torch.tensor([int(value)], dtype=torch.int32)  # a count
    return torch.tensor([float(value)], dtype=torch.float32)


def _as_scalar(value: Any, param: BindingParam) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            return None
        value = value.item()
    if param.kind == BOOL:
        return bool(value)
    if param.kind == INT:
        return int(value) if float(value).is_integer() else None
    return float(value)


def named_arguments(
    params: list[BindingParam], inputs: list[Any], model: Any, init: list[Any]
) -> list[tuple[str, list[Any]]]:
    """Argument lists for the binding matched by name: the mapping as matched first, then the same
    with per-channel ``(C, 1, ..., 1)`` tensors flattened to ``(C,)`` where any is, then with every
    number-as-tensor float32 (a count the binding takes as float). Empty when a parameter finds no
    value of a fitting name."""
    import torch

    in_tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    in_numbers = [x for x in inputs if _is_number(x)]
    pool = named_values(model, init)
    used: set[int] = set()
    ti = iter(in_tensors)
    n_in = 0
    chosen: list[tuple[BindingParam, Any]] = []
    for p in params:
        if p.is_tensor and n_in < len(in_tensors):  # the leading tensor parameters: the forward inputs
            chosen.append((p, next(ti)))
            n_in += 1
            continue
        if not p.is_tensor and in_numbers:  # a forward input that is a number (a dim, a margin)
            chosen.append((p, in_numbers.pop(0)))
            continue
        best, best_score = -1, 0
        # a tensor parameter takes a tensor of a fitting name before a number of the same name (a
        # module's `bias=True` flag is not the conv's bias); numbers only where no tensor fits
        passes = ((True, 50), (False, 1)) if p.is_tensor else ((None, 1),)
        for tensors_only, floor in passes:
            for i, (vname, value) in enumerate(pool):
                if i in used or (not p.is_tensor and isinstance(value, torch.Tensor) and value.numel() != 1):
                    continue
                if tensors_only is not None and isinstance(value, torch.Tensor) != tensors_only:
                    continue
                s = match_score(p.name, vname)
                if s >= floor and s > best_score:
                    best, best_score = i, s
            if best >= 0:
                break
        if best < 0:
            if p.kind == OPTIONAL_TENSOR:
                chosen.append((p, None))  # the binding's default (e.g. a conv without bias)
                continue
            return []
        used.add(best)
        chosen.append((p, pool[best][1]))
    if n_in < len(in_tensors):
        return []  # the binding does not take every forward input: not this mapping

    def build(flatten: bool, counts_as_float: bool) -> list[Any] | None:
        args: list[Any] = []
        for p, v in chosen:
            if v is None:
                args.append(None)
            elif p.is_tensor:
                t = _as_tensor(float(v) if counts_as_float and _is_number(v) else v, p)
                if flatten and t.dim() > 1 and t.numel() == t.shape[0]:
                    t = t.reshape(-1)
                args.append(t)
            else:
                s = _as_scalar(v, p)
                if s is None:
                    return None
                args.append(s)
        return args

    out: list[tuple[str, list[Any]]] = []
    for label, flatten, as_float in (
        ("by name", False, False),
        ("by name, per-channel flattened", True, False),
        ("by name, counts as float", False, True),
    ):
        args = build(flatten, as_float)
        if args is not None and not any(_same(args, a) for _, a in out):
            out.append((label, args))
    return out


def _same(a: list[Any], b: list[Any]) -> bool:
    import torch

    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x is not y and (x.shape != y.shape or x.dtype != y.dtype or not torch.equal(x, y)):
                return False
        elif x is not y and x != y:
            return False
    return True
