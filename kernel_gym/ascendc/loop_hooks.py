"""Iteration hooks in a kernel's own ``for`` loops, so loop sampling can skip native iterations.

Loop sampling (``docs/ascendc_simulator.md``, "Loops") sees a block as a stream of API calls and
skips the calls of repeating periods, but the kernel's own C++ still runs every iteration: a loop of
scalar ``GetValue``/``SetValue`` work (EvoKernel's convolutions and matmuls written as scalar loops)
cost the host as much sampled as in full. This module parses a kernel source (tree-sitter's C++
grammar) and adds one call to the update clause of each ``for`` loop whose trip is a counted one:

    for (uint32_t t = begin; t < end; ++t, KGSIM_LOOP_ITER(t, end, 1, 0)) { <body> }

so it runs at the start of every iteration but the first (``kgsim::loop_iter``,
``src/rt_sampling.cpp``). Under loop sampling it samples the loop: it returns the induction variable
moved forward past iterations drawn at random, whose cost the iteration just run stands for. Outside
loop sampling it returns the variable unchanged. One out-of-line call in the loop's latch, no branch:
the machine basic blocks that time the kernel's scalar code stay those of the loop as written (first
in the body, the call split an outer loop's header from its inner loop's: one block more per
iteration).

A loop is hooked only where a jump is sound from the source alone:
- ``for (T i = a; i OP b; i STEP)`` with ``OP`` one of ``< <= > >= !=`` (either side; ``i + c`` or
  ``i - c`` for ``i`` too; the initialiser may be missing) and ``STEP`` ``++``, ``--``, ``+= s`` or
  ``-= s`` (with more such steps of other variables after a comma); ``i`` an integer (checked at
  compile time: any other type is left as it is);
- ``b`` and ``s`` plain expressions (names, members, literals, arithmetic, casts: no calls, no
  subscripts, no ``->`` except on ``this``) that the body does not assign, nor ``i``;
- no ``break``, ``return`` or ``goto`` leaves the loop from its body, and no variable that the body
  changes and that lives on across iterations steers a branch of the body or the loop's condition
  (a running offset that decides a tail, a counter that ends the loop); a condition that only picks
  a value (``_select``: ``if (v > best) best = v;``, a pure ternary) may read one, as its work is
  the same either way;
- the body holds another loop or a scalar ``GetValue``/``SetValue``, itself or in a function of the
  same source that it calls by name (a tile loop that calls ``ComputeTile``): the loops whose native
  work costs the host; an innermost loop of plain arithmetic or raw-pointer accesses is left alone,
  as the hook would keep GCC from vectorising or peeling it and so change the blocks it counts;
- not in a ``constexpr``/``consteval`` function; with a trip count known at compile time (start,
  bound and step literals, ``constexpr`` or ``const`` integers, ``#define``s), only when it is at
  least :data:`MIN_CONSTANT_TRIP` and no condition of the body reads the variable or a variable
  computed from it: GCC peels short loops whole and proves branches on such a variable away from
  its known range, which the value the hook returns would hide (a depthwise convolution's bounds
  checks on ``oh + kh``: +61 % latency in full simulation with its row loops hooked).

A ``while (i OP b)`` loop (``OP`` one of ``< <= > >=``) gets the hook after the statement that ends
its body, where that statement is the variable's only change, a step towards the bound (``i += s``,
``i -= s``, ``++i``, ``--i``), and the body meets the rules above (no ``continue`` either):

    while (linear < end) { ...; linear += span; KGSIM_LOOP_ITER(linear, end, (span), 16); }

``s`` may vary from one iteration to the next (a tile that shrinks to what is left of a row), but
only as a plain expression (no call, no subscript: no read of memory) of the variable, of what the
body does not change and of the body's own variables computed that way, under conditions of such
names only (``if (span > left) span = left;``): a step read from data could not be repeated by a
jump. The hook carries :data:`VARIABLE_STEP`: the runtime samples such a loop a period of steps at
a time (``src/rt_sampling.cpp``, ``find_period``).

Each hook's comparison code carries :data:`VALUES_ONLY` where the loop's scalar reads of local
memory (``GetValue``, a local tensor's ``t(i)``), and its reads back of what it stores, steer no work
in the functions joined to its own by calls, callers included (``_reads_steer_nothing``): the runtime
may then sample the loop although it reads local memory or rewrites its output within an
iteration, which it otherwise leaves alone. Other variables the update clause steps (``++cur,
++oh``) get :data:`FOLLOW` after the hook, which moves them along by as many steps as the jump.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

HOOK = "KGSIM_LOOP_ITER"
FOLLOW = "KGSIM_LOOP_FOLLOW"  # another variable the update clause steps: moved along after a jump
_CMP = {"<": 0, "<=": 1, ">": 2, ">=": 3, "!=": 4}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
_PLAIN = {
    "identifier",
    "field_identifier",
    "number_literal",
    "true",
    "false",
    "this",
    "parenthesized_expression",
    "binary_expression",
    "unary_expression",
    "cast_expression",
    "qualified_identifier",
    "namespace_identifier",
    "type_descriptor",
    "primitive_type",
    "sized_type_specifier",
    "type_identifier",
    "sizeof_expression",
    "field_expression",
    "template_argument_list",
}
_TOKENS = frozenset("( ) + - * / % << >> & | ^ ~ ! . -> :: < > ,".split())
_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_BRANCHES = ("if_statement", "while_statement", "do_statement", "for_statement", "switch_statement")
_SCALAR_CALLS = (b"GetValue", b"SetValue")
# Constant trip counts below this are left unhooked: GCC peels a loop of up to 16 iterations whole
# (its max-completely-peel-times), and loop sampling never jumps in one this short anyway (it needs
# 16 iterations left after three).
MIN_CONSTANT_TRIP = 32
# Added to a hook's comparison code where the loop's scalar reads of local memory steer no work
# (``_reads_steer_nothing``): loop_iter may then sample it although it reads local memory.
VALUES_ONLY = 8
# Added to a ``while`` loop's hook: its step is the last iteration's (it may vary: a tile that
# shrinks at a row's end), so loop_iter tells an instance by its bound and its variable moving on.
VARIABLE_STEP = 16


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_cpp

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))


def _walk(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _text(node: Any) -> bytes:
    return bytes(node.text)


def _plain(node: Any) -> bool:
    for n in _walk(node):
        if n.type in _TOKENS:
            continue
        if n.type == "field_expression":
            op = n.child_by_field_name("operator")
            arg = n.child_by_field_name("argument")
            if op is not None and _text(op) == b"->" and (arg is None or arg.type != "this"):
                return False
        elif n.type == "binary_expression":
            op = n.child_by_field_name("operator")
            if op is not None and _text(op) in (b"&&", b"||"):
                return False
        elif n.type not in _PLAIN:
            return False
    return True


def _names(node: Any) -> set[bytes]:
    """The plain names and member names an expression reads."""
    out: set[bytes] = set()
    for n in _walk(node):
        if n.type == "identifier":
            out.add(_text(n))
        elif n.type == "field_expression":
            out.add(_text(n).replace(b"this->", b"").replace(b" ", b""))
            f = n.child_by_field_name("field")
            if f is not None:
                out.add(_text(f))
    return out


def _target(node: Any) -> bytes | None:
    """The name an assignment or increment writes (``a``, ``a.b``, ``this->b``, ``a[k]`` -> ``a``)."""
    while node is not None and node.type in ("parenthesized_expression", "subscript_expression", "pointer_expression"):
        node = node.child_by_field_name("argument") or (node.named_children[0] if node.named_children else None)
    if node is None:
        return None
    if node.type == "identifier":
        return _text(node)
    if node.type == "field_expression":
        f = node.child_by_field_name("field")
        return _text(f) if f is not None else None
    return None


def _written(body: Any) -> set[bytes]:
    out: set[bytes] = set()
    for n in _walk(body):
        if n.type == "assignment_expression":
            t = _target(n.child_by_field_name("left"))
        elif n.type == "update_expression":
            t = _target(n.child_by_field_name("argument"))
        else:
            continue
        if t is not None:
            out.add(t)
    return out


def _declared(body: Any) -> set[bytes]:
    out: set[bytes] = set()
    for n in _walk(body):
        if n.type in ("init_declarator", "declaration") or n.type.endswith("declarator"):
            d = n.child_by_field_name("declarator")
            while d is not None and d.type not in ("identifier",):
                d = d.child_by_field_name("declarator")
            if d is not None:
                out.add(_text(d))
        if n.type == "declaration":
            for c in n.named_children:
                if c.type == "identifier":
                    out.add(_text(c))
    return out


def _leaves_loop(body: Any) -> bool:
    """A ``break``, ``return`` or ``goto`` that leaves the loop whose body this is."""

    def visit(n: Any, nested: bool) -> bool:
        if n.type in ("return_statement", "goto_statement", "co_return_statement"):
            return True
        if n.type == "break_statement" and not nested:
            return True
        if n.type == "lambda_expression":
            return False
        inner = nested or n.type in (*_LOOPS, "switch_statement")
        return any(visit(c, inner) for c in n.children)

    return any(visit(c, False) for c in body.children)


def _conditions(body: Any) -> Iterator[Any]:
    for n in _walk(body):
        if n.type in _BRANCHES:
            c = n.child_by_field_name("condition")
            if c is not None:
                yield c
        elif n.type == "conditional_expression":
            c = n.child_by_field_name("condition")
            if c is not None:
                yield c


def _in_constexpr(node: Any) -> bool:
    n = node.parent
    while n is not None:
        if n.type in ("function_definition", "lambda_expression"):
            for c in n.children:
                if c.type in ("type_qualifier", "storage_class_specifier", "virtual_specifier") and _text(c) in (
                    b"constexpr",
                    b"consteval",
                ):
                    return True
            if n.type == "function_definition":
                return False
        n = n.parent
    return False


def _int_value(node: Any, consts: dict[bytes, int]) -> int | None:
    """An integer expression of literals and the source's integer constants, or None."""
    if node is None:
        return None
    t = node.type
    if t == "number_literal":
        try:
            return int(_text(node).decode().rstrip("uUlL"), 0)
        except ValueError:
            return None
    if t == "identifier":
        return consts.get(_text(node))
    if t == "parenthesized_expression" and node.named_children:
        return _int_value(node.named_children[0], consts)
    if t == "cast_expression":
        return _int_value(node.child_by_field_name("value"), consts)
    if t == "unary_expression" and _text(node.child_by_field_name("operator")) in (b"-", b"+"):
        v = _int_value(node.child_by_field_name("argument"), consts)
        return None if v is None else (-v if _text(node.child_by_field_name("operator")) == b"-" else v)
    if t == "binary_expression":
        a = _int_value(node.child_by_field_name("left"), consts)
        b = _int_value(node.child_by_field_name("right"), consts)
        op = _text(node.child_by_field_name("operator"))
        if a is None or b is None:
            return None
        ops = {b"+": a + b, b"-": a - b, b"*": a * b, b"<<": a << b if 0 <= b < 64 else None}
        if op in ops:
            return ops[op]
        if op in (b"/", b"%") and b != 0:
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            return q if op == b"/" else a - b * q
    return None


def _constants(root: Any) -> dict[bytes, int]:
    """The source's integer constants: ``constexpr``/``const`` variables with a constant initialiser
    and object-like ``#define``s of one (GCC unrolls a loop bounded by them as by literals)."""
    consts: dict[bytes, int] = {}
    for n in _walk(root):
        if n.type == "preproc_def":
            name, value = n.child_by_field_name("name"), n.child_by_field_name("value")
            if name is not None and value is not None:
                try:
                    consts[_text(name)] = int(_text(value).decode().strip().strip("()").rstrip("uUlL"), 0)
                except ValueError:
                    pass
        elif n.type in ("declaration", "field_declaration"):
            quals = {_text(c) for c in n.children if c.type == "type_qualifier"}
            if not quals & {b"const", b"constexpr"}:
                continue
            for d in n.named_children:
                if d.type == "init_declarator":
                    name, value = d.child_by_field_name("declarator"), d.child_by_field_name("value")
                    v = _int_value(value, consts)
                    if name is not None and name.type == "identifier" and v is not None:
                        consts[_text(name)] = v
    return consts


def _var_side(side: Any, var: bytes | None) -> tuple[bytes, Any, bytes] | None:
    """``(variable, offset node, sign)`` of a comparison side ``i``, ``i + c`` or ``i - c`` (offset
    None for plain ``i``); ``var``: the variable it must be, None for any."""
    if side.type == "identifier" and (var is None or _text(side) == var):
        return _text(side), None, b""
    if side.type == "binary_expression":
        op = _text(side.child_by_field_name("operator"))
        left, right = side.child_by_field_name("left"), side.child_by_field_name("right")
        if op in (b"+", b"-") and left is not None and left.type == "identifier" and right is not None:
            if (var is None or _text(left) == var) and _plain(right):
                return _text(left), right, op
    return None


def _loop_parts(node: Any) -> tuple[bytes, bytes, list[Any], Any, str, bytes, list[Any]] | None:
    """(variable, bound text, nodes the bound reads, its constant node or None, comparison, step
    text, the other variables the update clause steps) of a counted ``for``, or None. ``i + c < e``
    is ``i < (e) - (c)``; without an initialiser the variable is the condition's."""
    init, cond, upd = (node.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if cond is None or upd is None or cond.type != "binary_expression":
        return None
    var: bytes | None = None
    if init is None:
        pass
    elif init.type == "declaration":
        decls = [c for c in init.named_children if c.type == "init_declarator"]
        if len(decls) != 1:
            return None
        d = decls[0].child_by_field_name("declarator")
        if d is None or d.type != "identifier":
            return None
        var = _text(d)
    elif init.type == "assignment_expression" and _text(init.child_by_field_name("operator")) == b"=":
        left = init.child_by_field_name("left")
        if left is None or left.type != "identifier":
            return None
        var = _text(left)
    else:
        return None
    op = _text(cond.child_by_field_name("operator")).decode()
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if op not in _CMP or left is None or right is None:
        return None
    side = _var_side(left, var)
    if side is not None:
        other = right
    else:
        side, other, op = _var_side(right, var), left, _FLIP[op]
    if side is None or not _plain(other):
        return None
    var, offset, sign = side
    if offset is None:
        bound_text, reads, const = _text(other), [other], other
    else:  # i + c OP e: i OP e - c
        back = b"-" if sign == b"+" else b"+"
        bound_text, reads, const = (
            b"(" + _text(other) + b") " + back + b" (" + _text(offset) + b")",
            [other, offset],
            None,
        )
    items = _update_items(upd)
    steps = [_step_of(u) for u in items]
    if not steps or any(st is None for st in steps):
        return None
    mine = [st for st in steps if st is not None and st[0] == var]
    others = [st for st in steps if st is not None and st[0] != var]
    if len(mine) != 1 or len({st[0] for st in others}) != len(others):
        return None
    step = mine[0][1]
    return var, bound_text, reads, const, op, step, others


def _update_items(upd: Any) -> list[Any]:
    """The expressions of a ``for`` update clause, ``a, b, c`` flattened."""
    if upd.type == "comma_expression":
        return _update_items(upd.child_by_field_name("left")) + _update_items(upd.child_by_field_name("right"))
    return [upd]


def _step_of(item: Any) -> tuple[bytes, bytes, Any] | None:
    """(variable, step text, step node or None) of ``++v``, ``v--``, ``v += s`` or ``v -= s`` (``s``
    plain), else None."""
    if item.type == "update_expression":
        arg = item.child_by_field_name("argument")
        if arg is None or arg.type != "identifier":
            return None
        return _text(arg), (b"1" if b"++" in _text(item) else b"-1"), None
    if item.type == "assignment_expression":
        left, right = item.child_by_field_name("left"), item.child_by_field_name("right")
        op = _text(item.child_by_field_name("operator"))
        if left is None or right is None or left.type != "identifier" or op not in (b"+=", b"-=") or not _plain(right):
            return None
        return _text(left), (b"-(" if op == b"-=" else b"(") + _text(right) + b")", right
    return None


def _callee(call: Any) -> bytes | None:
    """The last name of a call's function (``f``, ``obj.f``, ``this->f``, ``ns::f``, ``f<T>``)."""
    f = call.child_by_field_name("function")
    while f is not None and f.type in ("template_function", "qualified_identifier", "field_expression"):
        f = f.child_by_field_name("name") or f.child_by_field_name("field")
    return _text(f) if f is not None and f.type in ("identifier", "field_identifier") else None


def _function_name(fn: Any) -> bytes | None:
    """The last name a ``function_definition`` defines (``f``, ``K::f``), or None."""
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type not in ("identifier", "field_identifier", "qualified_identifier"):
        d = d.child_by_field_name("declarator")
    if d is not None and d.type == "qualified_identifier":
        d = d.child_by_field_name("name")
    return _text(d) if d is not None and d.type in ("identifier", "field_identifier") else None


def _function_bodies(root: Any) -> dict[bytes, list[Any]]:
    """The source's function definitions by name (a name defined twice has two)."""
    bodies: dict[bytes, list[Any]] = {}
    for n in _walk(root):
        if n.type == "function_definition":
            name, body = _function_name(n), n.child_by_field_name("body")
            if name is not None and body is not None:
                bodies.setdefault(name, []).append(n)
    return bodies


def _calls(fns: dict[bytes, list[Any]]) -> dict[bytes, set[bytes]]:
    """The names each function calls."""
    return {
        name: {c for fn in defs for c in (_callee(n) for n in _walk(fn) if n.type == "call_expression") if c}
        for name, defs in fns.items()
    }


def _heavy_functions(root: Any) -> set[bytes]:
    """Names of the source's functions whose bodies hold a loop or a scalar accessor, directly or
    through another such function they call (a name defined twice counts if either is heavy)."""
    fns = _function_bodies(root)
    calls = _calls(fns)
    heavy = {name for name, defs in fns.items() if any(_direct_work(fn.child_by_field_name("body")) for fn in defs)}
    changed = True
    while changed:
        changed = False
        for name, callees in calls.items():
            if name not in heavy and callees & heavy:
                heavy.add(name)
                changed = True
    return heavy


# Calls through which a value read from local memory may pass and stay a value (no control flow, no
# address): C math and function-style or static casts.
_VALUE_CALLS = frozenset(
    b"abs fabs fabsf sqrt sqrtf exp expf exp2f log logf log2f tanh tanhf erf erff pow powf sin sinf cos cosf "
    b"floor floorf ceil ceilf round roundf fmax fmaxf fmin fminf max min static_cast".split()
)


# Vector instructions with a scalar operand, and its position: the scalar is a value the
# instruction computes with (Muls(dst, src, scale, count): the asc-devkit signatures, every form),
# while lengths, masks and repeat parameters around it set the work.
_SCALAR_OPERAND = {
    b"Adds": 2,
    b"Muls": 2,
    b"Maxs": 2,
    b"Mins": 2,
    b"Axpy": 2,
    b"LeakyRelu": 2,
    b"CompareScalar": 2,
    b"Duplicate": 1,
}


def _declared_names(decl: Any) -> Iterator[bytes]:
    for d in decl.children_by_field_name("declarator"):
        while d is not None and d.type not in ("identifier", "field_identifier"):
            d = d.child_by_field_name("declarator")
        if d is not None:
            yield _text(d)


def _tensors(root: Any, kind: bytes) -> set[bytes]:
    """Names declared with ``kind`` in their type (``GlobalTensor``: fields, locals, parameters)."""
    out: set[bytes] = set()
    for n in _walk(root):
        if n.type in ("declaration", "field_declaration", "parameter_declaration"):
            t = n.child_by_field_name("type")
            if t is not None and kind in _text(t):
                out.update(_declared_names(n))
    return out


def _local_read(call: Any, gm: set[bytes]) -> bool:
    """A ``GetValue`` call on anything but a ``GlobalTensor``: a scalar read of local memory."""
    f = call.child_by_field_name("function")
    if f is None or f.type != "field_expression" or _text(f.child_by_field_name("field")) != b"GetValue":
        return False
    return _target(f.child_by_field_name("argument")) not in gm


def _element_call(call: Any, tensors: set[bytes]) -> bool:
    """A tensor's ``operator()`` (``t(i)``, ``this->t(i)``): one element, read or written."""
    f = call.child_by_field_name("function")
    return f is not None and f.type in ("identifier", "field_expression") and _target(f) in tensors


def _assigned(node: Any) -> bool:
    """Whether ``node`` is the target of a plain ``=`` (a store, not a read)."""
    p = node.parent
    return (
        p is not None
        and p.type == "assignment_expression"
        and p.child_by_field_name("left") == node
        and _text(p.child_by_field_name("operator")) == b"="
    )


def _outputs(fns: list[Any], gm: set[bytes], declared: set[bytes], local: set[bytes]) -> set[bytes]:
    """What these functions store into: tensors they ``SetValue`` or ``DataCopy`` to or assign an
    element of (``t(i) = v``), pointers they assign through (local arrays excepted)."""
    out: set[bytes] = set()
    for fn in fns:
        for m in _walk(fn):
            if m.type == "call_expression" and _element_call(m, gm | local):
                p = m.parent
                if p is not None and p.type == "assignment_expression" and p.child_by_field_name("left") == m:
                    out.add(_target(m.child_by_field_name("function")) or b"")
                continue
            if m.type == "call_expression":
                name, f = _callee(m), m.child_by_field_name("function")
                args = m.child_by_field_name("arguments").named_children
                if name == b"SetValue" and f is not None and f.type == "field_expression":
                    t = _target(f.child_by_field_name("argument"))
                elif name in (b"DataCopy", b"DataCopyPad") and args:
                    t = _target(args[0])
                    t = t if t in gm else None
                else:
                    continue
            elif m.type in ("assignment_expression", "update_expression"):
                left = m.child_by_field_name("left") or m.child_by_field_name("argument")
                if left is None or left.type not in ("subscript_expression", "pointer_expression"):
                    continue
                t = _target(left)
                t = None if t in declared else t
            else:
                continue
            if t is not None:
                out.add(t)
    return out


def _read_back(node: Any, outputs: set[bytes], tensors: set[bytes]) -> bool:
    """A read of what the functions store into: ``GetValue`` or ``operator()`` of an output tensor
    (but as the target of a plain ``=``), a subscript or dereference of an output pointer anywhere
    but as the target of a plain ``=`` (a tensor's subscript is a view, not a read)."""
    if node.type == "call_expression":
        f = node.child_by_field_name("function")
        if _element_call(node, outputs & tensors):
            return not _assigned(node)
        return (
            f is not None
            and f.type == "field_expression"
            and _text(f.child_by_field_name("field")) == b"GetValue"
            and _target(f.child_by_field_name("argument")) in outputs
        )
    if node.type in ("subscript_expression", "pointer_expression") and _target(node) in outputs - tensors:
        if node.type == "pointer_expression" and _text(node.child_by_field_name("operator")) != b"*":
            return False
        return not _assigned(node)
    return False


def _parameters(fn: Any) -> list[tuple[bytes | None, bool]]:
    """A function definition's parameters in order: (name, passed by value)."""
    d = fn.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    plist = d.child_by_field_name("parameters") if d is not None else None
    out: list[tuple[bytes | None, bool]] = []
    for prm in plist.named_children if plist is not None else ():
        if prm.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        decl = prm.child_by_field_name("declarator")
        names = list(_declared_names(prm))
        out.append((names[0] if names else None, decl is not None and decl.type == "identifier"))
    return out


def _reads_steer_nothing(fns: list[Any], gm: set[bytes], local: set[bytes]) -> bool:
    """Whether, in these functions, every value read from local memory as a scalar (``GetValue`` of a
    ``LocalTensor``) or read back from what they store into (their output tensors and pointers), and
    every variable computed from one, is only a value: it reaches arithmetic, local variables and
    arrays, stores (the value of a ``SetValue``, an assignment through a subscript) and C math, never
    a condition (but one that only picks a value, :func:`_select`), a subscript, a call's other
    argument, a pointer or a variable that outlives the functions. Values cross the
    functions both ways: an argument taints the parameter it is passed by value to, and a function
    that returns a read value (``ExpScalar(v)``: SetValue, a vector Exp, GetValue of a one-element
    UB tensor) taints its calls, followed in the caller as a read; a vector instruction's scalar
    operand (``Muls(dst, src, scale, n)``, :data:`_SCALAR_OPERAND`) is a value. Then a loop among
    them may jump although it reads local memory or rewrites its output: what a stale read returns
    after a jump changes no work, only values, and every store after a jump is out of the check
    anyway."""
    # each function's own names (its locals and by-value parameters): a value is followed per
    # function, so a parameter `x` tainted in one is not a buffer `x` of another
    declared: dict[int, set[bytes]] = {}
    for fn in fns:
        declared[fn.id] = _declared(fn.child_by_field_name("body"))
    outputs = _outputs(fns, gm, set().union(*declared.values()), local)
    params = {fn.id: _parameters(fn) for fn in fns}
    defs: dict[bytes, list[Any]] = {}
    for fn in fns:
        declared[fn.id] |= {name for name, by_value in params[fn.id] if name is not None and by_value}
        name = _function_name(fn)
        if name is not None:
            defs.setdefault(name, []).append(fn)

    def own_call(m: Any) -> bool:
        return m.type == "call_expression" and _callee(m) in defs and not _element_call(m, gm | local)

    returning: set[bytes] = set()  # functions of these that return a read value (or one computed from it)

    def source(m: Any) -> bool:
        if m.type != "call_expression":
            return _read_back(m, outputs, gm | local)
        if own_call(m) and _callee(m) in returning:
            return True  # the value a function of these returns from a read: followed in the caller
        # GetValue of local memory, a local tensor's element read (t(i), but as a store's target)
        if _local_read(m, gm) or (_element_call(m, local) and not _assigned(m)):
            return True
        return _read_back(m, outputs, gm | local)

    if not any(source(m) for fn in fns for m in _walk(fn)):
        return False  # no read seen here: any the runtime counts comes from code not analysed
    for fn in fns:
        for m in _walk(fn):
            # reads this analysis does not follow: a raw pointer to local memory, a local reference
            # (an alias of a variable it would not see written)
            if m.type == "field_identifier" and _text(m) == b"GetPhyAddr":
                return False
            elif m.type == "init_declarator" and m.child_by_field_name("declarator").type == "reference_declarator":
                return False
    tainted: dict[int, set[bytes]] = {fn.id: set() for fn in fns}

    def dirty(node: Any, fn: Any) -> bool:
        names = tainted[fn.id]
        for m in _walk(node):
            if source(m):
                return True
            if m.type == "identifier" and _text(m) in names:
                return True
        return False

    def writes(fn: Any) -> Iterator[tuple[Any, Any]]:  # (written node, value node)
        for m in _walk(fn):
            if m.type == "assignment_expression":
                yield m.child_by_field_name("left"), m.child_by_field_name("right")
            elif m.type == "init_declarator":
                yield m.child_by_field_name("declarator"), m.child_by_field_name("value")

    changed = True
    while changed:  # taint: every variable a read value flows into
        changed = False
        for fn in fns:
            mine = declared[fn.id]
            for left, right in writes(fn):
                if left is None or right is None or not dirty(right, fn):
                    continue
                if left.type == "call_expression" and _element_call(left, gm | local):
                    continue  # an element store (t(i) = v): the value goes to memory
                name = _target(left)
                while left.type in ("array_declarator", "pointer_declarator", "reference_declarator"):
                    left = left.child_by_field_name("declarator") or left.named_children[0]
                    name = _text(left) if left.type == "identifier" else name
                if left.type in ("subscript_expression", "pointer_expression") and name not in mine:
                    continue  # a store through a pointer: the value goes to memory
                if left.type == "field_expression" or name is None or name not in mine:
                    return False  # a field, global or parameter: may steer outside what is seen
                if name not in tainted[fn.id]:
                    tainted[fn.id].add(name)
                    changed = True
            for m in _walk(fn):
                if m.type == "return_statement" and dirty(m, fn):
                    name = _function_name(fn)
                    if name is None:
                        return False
                    if name not in returning:
                        returning.add(name)
                        changed = True
                elif own_call(m):
                    args = [a for a in m.child_by_field_name("arguments").named_children if a.type != "comment"]
                    for k, a in enumerate(args):
                        if not dirty(a, fn):
                            continue
                        for callee in defs[_callee(m)]:  # type: ignore[index]
                            prm, by_value = params[callee.id][k] if k < len(params[callee.id]) else (None, False)
                            if prm is None or not by_value:
                                return False  # a reference or pointer parameter: an alias not followed
                            if prm not in tainted[callee.id]:
                                tainted[callee.id].add(prm)
                                changed = True
    for fn in fns:
        body = fn.child_by_field_name("body")
        if any(dirty(c, fn) and not _select(c) for c in _conditions(body)):
            return False
        for m in _walk(body):
            t = m.type
            if t == "binary_expression" and _text(m.child_by_field_name("operator")) in (b"&&", b"||") and dirty(m, fn):
                return False
            if t == "subscript_expression":
                if any(dirty(c, fn) for c in m.named_children if c != m.child_by_field_name("argument")):
                    return False
            elif t == "pointer_expression" or (
                t == "field_expression" and _text(m.child_by_field_name("operator")) == b"->"
            ):
                if dirty(m.child_by_field_name("argument"), fn):
                    return False
            elif t == "throw_statement" and dirty(m, fn):
                return False
            elif own_call(m):
                continue  # a function of these: its arguments taint its parameters (above)
            elif t == "call_expression" and not source(m):
                args = [a for a in m.child_by_field_name("arguments").named_children if a.type != "comment"]
                name = _callee(m)
                f = m.child_by_field_name("function")
                if name == b"SetValue":
                    args = args[:-1]  # the stored value
                elif name in _SCALAR_OPERAND and len(args) > _SCALAR_OPERAND[name]:
                    args = args[: _SCALAR_OPERAND[name]] + args[_SCALAR_OPERAND[name] + 1 :]
                elif name in _VALUE_CALLS or (f is not None and f.type == "primitive_type"):
                    continue
                if any(dirty(a, fn) for a in args):
                    return False
            elif t == "call_expression" and any(
                dirty(a, fn) for a in m.child_by_field_name("arguments").named_children
            ):
                return False  # a read at an index computed from a read
    return True


def _values_only(root: Any) -> dict[bytes, bool]:
    """For each function of the source: whether its local-memory reads, and those of every function
    of the source joined to it by calls, callers included (transitively), steer nothing
    (:func:`_reads_steer_nothing`). Callers count: a loop in a helper leaves stale values in what it
    stores, and the code after the call may read them back and branch on them."""
    fns, gm, local = _function_bodies(root), _tensors(root, b"GlobalTensor"), _tensors(root, b"LocalTensor")
    calls = _calls(fns)
    joined: dict[bytes, set[bytes]] = {name: set() for name in fns}
    for name, callees in calls.items():
        for c in callees & set(fns):
            joined[name].add(c)
            joined[c].add(name)
    out: dict[bytes, bool] = {}
    for name in fns:
        if name in out:
            continue
        scope, todo = {name}, [name]
        while todo:
            for c in joined[todo.pop()]:
                if c not in scope:
                    scope.add(c)
                    todo.append(c)
        flag = _reads_steer_nothing([fn for s in scope for fn in fns[s]], gm, local)
        out.update(dict.fromkeys(scope, flag))  # one component, one answer
    return out


def _direct_work(body: Any) -> bool:
    return any(n.type in _LOOPS for n in _walk(body) if n is not body) or any(c in _text(body) for c in _SCALAR_CALLS)


def _constant_trip(start: int | None, bound: int | None, step: bytes, op: str, consts: dict[bytes, int]) -> int | None:
    """The trip count of a loop whose start, bound and step are all compile-time constants, else None."""
    if start is None or bound is None:
        return None
    stmt = _parser().parse(step + b";").root_node.named_children
    s = _int_value(stmt[0].named_children[0], consts) if stmt and stmt[0].named_children else None
    if s is None or s == 0:
        return None
    if op in ("<", "!="):
        return max(0, -(-(bound - start) // s)) if s > 0 else (0 if op == "<" or start <= bound else None)
    if op == "<=":
        return max(0, (bound - start) // s + 1) if s > 0 else 0
    if op == ">":
        return max(0, -(-(start - bound) // -s)) if s < 0 else 0
    if op == ">=":
        return max(0, (start - bound) // -s + 1) if s < 0 else 0
    return None


def _subscripted(body: Any) -> set[bytes]:
    """Names the body writes through a subscript (``a[k] = v``)."""
    out: set[bytes] = set()
    for n in _walk(body):
        left = n.child_by_field_name("left") if n.type == "assignment_expression" else None
        if left is None and n.type == "update_expression":
            left = n.child_by_field_name("argument")
        if left is not None and left.type == "subscript_expression":
            t = _target(left)
            if t is not None:
                out.add(t)
    return out


def _pure(node: Any) -> bool:
    """An expression that only computes a value: no call but C math and casts, no assignment."""
    for n in _walk(node):
        if n.type in ("assignment_expression", "update_expression", "new_expression", "delete_expression"):
            return False
        if n.type == "call_expression" and _callee(n) not in _VALUE_CALLS:
            f = n.child_by_field_name("function")
            if f is None or f.type != "primitive_type":
                return False
    return True


def _select(cond: Any) -> bool:
    """Whether a condition only picks a value: ``c ? a : b`` of pure operands, or an ``if`` (and
    ``else``) whose branches only assign pure values to plain variables (``if (v > m) m = v;``, a
    running max). Its outcome changes values, never work: the branches cost the same scalar
    blocks whichever runs (GCC turns most into a select)."""
    p = cond.parent
    if p is None or not _pure(cond):
        return False
    if p.type == "conditional_expression":
        return all(_pure(p.child_by_field_name(f)) for f in ("consequence", "alternative"))
    if p.type != "if_statement":
        return False

    def assigns_only(st: Any) -> bool:
        if st is None:
            return True
        if st.type == "else_clause":
            return all(assigns_only(c) for c in st.named_children)
        if st.type == "compound_statement":
            return all(assigns_only(c) for c in st.named_children if c.type != "comment")
        if st.type != "expression_statement" or len(st.named_children) != 1:
            return False
        e = st.named_children[0]
        left = e.child_by_field_name("left") if e.type == "assignment_expression" else None
        return left is not None and left.type == "identifier" and _pure(e.child_by_field_name("right"))

    return assigns_only(p.child_by_field_name("consequence")) and assigns_only(p.child_by_field_name("alternative"))


def _steers_branch(body: Any, var: bytes, selects: bool = True) -> bool:
    """Whether ``var``, or a variable the body computes from it, appears in a condition of the body
    (with ``selects=False``, one that only picks a value, :func:`_select`, does not count)."""
    derived = {var}
    changed = True
    while changed:
        changed = False
        for m in _walk(body):
            if m.type == "assignment_expression":
                left, right = m.child_by_field_name("left"), m.child_by_field_name("right")
            elif m.type == "init_declarator":
                left, right = m.child_by_field_name("declarator"), m.child_by_field_name("value")
            else:
                continue
            name = _target(left) if left is not None and left.type != "init_declarator" else None
            if left is not None and left.type == "identifier":
                name = _text(left)
            if name is not None and name not in derived and right is not None and _names(right) & derived:
                derived.add(name)
                changed = True
    return any(_names(c) & derived and (selects or not _select(c)) for c in _conditions(body))


def _eligible(
    node: Any, heavy: set[bytes], consts: dict[bytes, int]
) -> tuple[bytes, bytes, str, bytes, list[tuple[bytes, bytes]]] | None:
    if node.has_error or _in_constexpr(node):
        return None
    parts = _loop_parts(node)
    if parts is None:
        return None
    var, bound, reads, const, op, step, others = parts
    body = node.child_by_field_name("body")
    if body is None:
        return None
    init = node.child_by_field_name("initializer")
    init_value = None
    if init is not None and init.type == "declaration":
        d = next(c for c in init.named_children if c.type == "init_declarator")
        init_value = d.child_by_field_name("value")
    else:
        init_value = init.child_by_field_name("right") if init is not None else None
    trip = _constant_trip(_int_value(init_value, consts), _int_value(const, consts), step, op, consts)
    if trip is not None and (trip < MIN_CONSTANT_TRIP or _steers_branch(body, var)):
        # GCC may peel or unroll it whole, or prove branches on it away from its known range: with
        # the hook it could not (a depthwise convolution's bounds checks on `oh + kh`: +61 %)
        return None
    written = _written(body)
    if var in written or any(_names(r) & written for r in reads):
        return None
    # every step (the variable's, and those of the variables the update clause moves with it, which
    # a jump moves by as many iterations) is one the body does not change
    for st in _update_items(node.child_by_field_name("update")):
        if _names(st) & written:
            return None
    if any(name in _names(r) for name, _, _ in others for r in reads):
        return None
    if not _body_admits(body, var, written, heavy):
        return None
    return var, bound, op, step, [(name, st) for name, st, _ in others]


def _body_admits(body: Any, var: bytes, written: set[bytes], heavy: set[bytes]) -> bool:
    """The rules of the module docstring on a hooked loop's body (``written``: the names it writes):
    nothing leaves the loop, no carried variable steers its work, and it holds work that costs the host."""
    if _leaves_loop(body):
        return False
    # a variable the body changes and carries across iterations may not steer its work: passed
    # iterations would have changed it (a condition that only picks a value, a running max, may
    # read it: the work is the same either way, and a stale value only changes values)
    carried = written - _declared(body) - {var}
    for c in _conditions(body):
        if _names(c) & carried and not _select(c):
            return False
    # a carried scalar through a copy (`c2 = cnt; if (c2 > n)`); an array the body refills (weights
    # reloaded per row) only as itself, above
    if any(_steers_branch(body, v, selects=False) for v in carried - _subscripted(body)):
        return False
    return _direct_work(body) or any(_callee(n) in heavy for n in _walk(body) if n.type == "call_expression")


def _definitions(body: Any) -> Iterator[tuple[bytes, Any, Any]]:
    """``(name, value node, the node written)`` of every assignment, compound assignment and
    initialised declaration of a plain name in ``body``; an increment's value node is None."""
    for n in _walk(body):
        if n.type == "assignment_expression":
            left = n.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                yield _text(left), n.child_by_field_name("right"), n
        elif n.type == "update_expression":
            arg = n.child_by_field_name("argument")
            if arg is not None and arg.type == "identifier":
                yield _text(arg), None, n
        elif n.type == "init_declarator":
            d, v = n.child_by_field_name("declarator"), n.child_by_field_name("value")
            if d is not None and d.type == "identifier" and v is not None:
                yield _text(d), v, n


def _from_position(body: Any, names: set[bytes], var: bytes) -> bool:
    """Whether ``names`` (read by a ``while`` loop's step) are computed from the loop's variable and
    what the body does not change alone: each is unwritten in the body, the variable, or a variable
    the body declares whose every definition is a plain expression (no call, no subscript: no read
    of memory) of such names, under conditions of such names only (``if (span > left) span =
    left;``). A step read from data (a record's length) could not be repeated by a jump."""
    defs: dict[bytes, list[Any]] = {}
    for name, value, node in _definitions(body):
        defs.setdefault(name, []).append((value, node))
    changed_here = _written(body) | set(defs)  # a declaration's initialiser is a change too
    good = set(defs) & _declared(body)
    ok = lambda n: n not in changed_here or n == var or n in good  # noqa: E731

    def clean(name: bytes) -> bool:
        for value, node in defs[name]:
            if value is not None and (not _plain(value) or not all(ok(m) for m in _names(value))):
                return False
            up = node.parent
            while up is not None and up is not body:
                c = up.child_by_field_name("condition") if up.type in (*_BRANCHES, "conditional_expression") else None
                if c is not None and c.type == "condition_clause":
                    c = c.child_by_field_name("value")
                if c is not None and (not _plain(c) or not all(ok(m) for m in _names(c))):
                    return False
                up = up.parent
        return True

    changed = True
    while changed:
        changed = False
        for name in list(good):
            if not clean(name):
                good.discard(name)
                changed = True
    return all(ok(n) for n in names)


def _while_eligible(node: Any, heavy: set[bytes]) -> tuple[bytes, bytes, str, bytes, Any] | None:
    """``(variable, bound text, comparison, step text, the step statement)`` of a ``while (i OP b)``
    loop whose body ends on the variable's only change, ``i += s`` (``-=``, ``++``, ``--``), with
    ``s`` computed from the variable's position alone (:func:`_from_position`: a tile's length
    that shrinks at a row's end), and whose body meets the ``for`` loops' rules; else None."""
    if node.has_error or _in_constexpr(node):
        return None
    clause, body = node.child_by_field_name("condition"), node.child_by_field_name("body")
    cond = clause.child_by_field_name("value") if clause is not None else None
    if cond is None or cond.type != "binary_expression" or body is None or body.type != "compound_statement":
        return None
    op = _text(cond.child_by_field_name("operator")).decode()
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    stmts = [c for c in body.named_children if c.type != "comment"]
    if op not in ("<", "<=", ">", ">=") or left is None or right is None or not stmts:
        return None
    last = stmts[-1]
    if last.type != "expression_statement" or len(last.named_children) != 1:
        return None
    e = last.named_children[0]
    var = _target(e.child_by_field_name("argument" if e.type == "update_expression" else "left"))
    if left.type == "identifier" and _text(left) == var and _plain(right):
        bound = right
    elif right.type == "identifier" and _text(right) == var and _plain(left):
        bound, op = left, _FLIP[op]
    else:
        return None
    up = op in ("<", "<=")
    if e.type == "update_expression":
        step, rhs = (b"1" if b"++" in _text(e) else b"-1"), None
    elif e.type == "assignment_expression":
        sign = _text(e.child_by_field_name("operator"))
        rhs = e.child_by_field_name("right")
        if sign not in (b"+=", b"-=") or rhs is None or not _plain(rhs) or var in _names(rhs):
            return None
        text = _text(rhs).replace(b"\n", b" ")
        step = b"(%s)" % text if sign == b"+=" else b"-(%s)" % text
    else:
        return None
    if (step.startswith(b"-")) == up:  # a step away from the bound: not a loop this admits
        return None
    written = _written(body)
    writes_var = sum(1 for name, _, _ in _definitions(body) if name == var)
    if writes_var != 1 or var in _declared(body) or _names(bound) & written or _has_continue(body):
        return None
    if rhs is not None and not _from_position(body, _names(rhs), var):
        return None
    if not _body_admits(body, var, written, heavy):
        return None
    return var, _text(bound).replace(b"\n", b" "), op, step, last


def _has_continue(body: Any) -> bool:
    """A ``continue`` of the loop whose body this is (it would pass over the step at the body's end)."""

    def visit(n: Any) -> bool:
        if n.type == "continue_statement":
            return True
        if n.type in (*_LOOPS, "lambda_expression"):
            return False
        return any(visit(c) for c in n.children)

    return any(visit(c) for c in body.children)


def instrument_loops(source: str) -> str:
    """``source`` with :data:`HOOK` in the update clause of every loop the module docstring admits.

    Line numbers are kept (nothing is inserted but on the lines that are there). Text the parser
    cannot read is left as it is, as is every loop it does not admit."""
    if "for" not in source and "while" not in source:
        return source
    data = source.encode()
    tree = _parser().parse(data)
    inserts: list[tuple[int, bytes]] = []
    heavy = _heavy_functions(tree.root_node)
    consts = _constants(tree.root_node)
    values_only: dict[bytes, bool] | None = None
    for node in _walk(tree.root_node):
        if node.type == "for_statement":
            got = _eligible(node, heavy, consts)
            if got is None:
                continue
            var, bound, op, step, followers = got
            at, flags = node.child_by_field_name("update").end_byte, 0
        elif node.type == "while_statement":
            found = _while_eligible(node, heavy)
            if found is None:
                continue
            var, bound, op, step, last = found
            at, flags, followers = last.end_byte, VARIABLE_STEP, []
        else:
            continue
        fn = node.parent
        while fn is not None and fn.type != "function_definition":
            fn = fn.parent
        if values_only is None:
            values_only = _values_only(tree.root_node)
        if fn is not None and values_only.get(_function_name(fn) or b"", False):
            flags |= VALUES_ONLY
        call = b"%s(%s, %s, %s, %d)" % (HOOK.encode(), var, bound.replace(b"\n", b" "), step, _CMP[op] | flags)
        for name, st in followers:  # moved by as many iterations as the loop's variable
            call += b", %s(%s, %s)" % (FOLLOW.encode(), name, st)
        # a for loop's in its update clause; a while loop's after the step that ends its body
        inserts.append((at, b", " + call if node.type == "for_statement" else b" " + call + b";"))
    if not inserts:
        return source
    inserts.sort(key=lambda t: t[0])
    out, last = [], 0
    for pos, text in inserts:
        out.append(data[last:pos])
        out.append(text)
        last = pos
    out.append(data[last:])
    return b"".join(out).decode()
