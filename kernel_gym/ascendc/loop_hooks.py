"""Iteration hooks in a kernel's own ``for`` loops, so loop sampling can skip native iterations.

Loop sampling (``docs/ascendc_simulator.md``, "Loops") sees a block as a stream of API calls and
skips the calls of repeating periods, but the kernel's own C++ still runs every iteration: a loop of
scalar ``GetValue``/``SetValue`` work (EvoKernel's convolutions and matmuls written as scalar loops)
cost the host as much sampled as in full. This module parses a kernel source (tree-sitter's C++
grammar) and puts one call first in the body of each ``for`` loop whose trip is a counted one:

    for (uint32_t t = begin; t < end; ++t) { KGSIM_LOOP_ITER(t, end, 1, 0); <body> }

The call is an event of the loop-sampling stream (``kgsim::loop_iter``, ``src/rt_sampling.cpp``);
once a block's periods repeat and one iteration of this loop is one period, it returns the
induction variable moved forward to the loop's last iterations, and the skipped periods are
extrapolated as skipped API calls are. Outside loop sampling it returns the variable unchanged (one
out-of-line call, no branch in kernel code, so the block counts that time scalar code are those of
the loop as written).

A loop is hooked only where a jump is sound from the source alone:
- ``for (T i = a; i OP b; i STEP)`` with ``OP`` one of ``< <= > >= !=`` (either side) and ``STEP``
  ``++``, ``--``, ``+= s`` or ``-= s``; ``i`` an integer (checked at compile time: any other type
  is left as it is);
- ``b`` and ``s`` plain expressions (names, members, literals, arithmetic, casts: no calls, no
  subscripts, no ``->`` except on ``this``) that the body does not assign, nor ``i``;
- no ``break``, ``return`` or ``goto`` leaves the loop from its body, and no variable that the body
  changes and that lives on across iterations steers a branch of the body or the loop's condition
  (a running offset that decides a tail, a counter that ends the loop);
- the body holds another loop or a scalar ``GetValue``/``SetValue`` (the loops whose native work
  costs the host; an innermost loop of plain arithmetic or raw-pointer accesses is left alone, as
  the hook would keep GCC from vectorising or peeling it and so change the blocks it counts);
- not in a ``constexpr``/``consteval`` function, not both bounds literal with 64 trips or fewer.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

HOOK = "KGSIM_LOOP_ITER"
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
_LITERAL_TRIPS = 64


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


def _int_literal(node: Any) -> int | None:
    if node is None or node.type != "number_literal":
        return None
    t = _text(node).decode().rstrip("uUlL")
    try:
        return int(t, 0)
    except ValueError:
        return None


def _loop_parts(node: Any) -> tuple[bytes, Any, str, bytes] | None:
    """(variable, bound node, comparison, step text) of a counted ``for``, or None."""
    init, cond, upd = (node.child_by_field_name(f) for f in ("initializer", "condition", "update"))
    if init is None or cond is None or upd is None:
        return None
    var: bytes | None = None
    if init.type == "declaration":
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
    if var is None or cond.type != "binary_expression":
        return None
    op = _text(cond.child_by_field_name("operator")).decode()
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if op not in _CMP or left is None or right is None:
        return None
    if left.type == "identifier" and _text(left) == var:
        bound = right
    elif right.type == "identifier" and _text(right) == var:
        bound, op = left, _FLIP[op]
    else:
        return None
    if not _plain(bound):
        return None
    if upd.type == "update_expression":
        arg = upd.child_by_field_name("argument")
        if arg is None or _text(arg) != var:
            return None
        step = b"1" if b"++" in _text(upd) else b"-1"
    elif upd.type == "assignment_expression":
        left_u, right_u = upd.child_by_field_name("left"), upd.child_by_field_name("right")
        uop = _text(upd.child_by_field_name("operator"))
        if left_u is None or right_u is None or _text(left_u) != var:
            return None
        if uop not in (b"+=", b"-=") or not _plain(right_u):
            return None
        step = (b"-(" if uop == b"-=" else b"(") + _text(right_u) + b")"
    else:
        return None
    return var, bound, op, step


def _eligible(node: Any) -> tuple[bytes, bytes, str, bytes] | None:
    if node.has_error or _in_constexpr(node):
        return None
    parts = _loop_parts(node)
    if parts is None:
        return None
    var, bound, op, step = parts
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
    lo, hi = _int_literal(init_value), _int_literal(bound)
    if lo is not None and hi is not None and abs(hi - lo) <= _LITERAL_TRIPS:
        return None
    written = _written(body)
    if var in written or _names(bound) & written:
        return None
    upd = node.child_by_field_name("update")
    if upd is not None and upd.type == "assignment_expression":
        right_u = upd.child_by_field_name("right")
        if right_u is not None and _names(right_u) & written:
            return None
    if _leaves_loop(body):
        return None
    carried = written - _declared(body) - {var}
    if carried:
        for c in _conditions(body):
            if _names(c) & carried:
                return None
    body_text = _text(body)
    has_loop = any(n.type in _LOOPS for n in _walk(body) if n is not body)
    if not has_loop and not any(c in body_text for c in _SCALAR_CALLS):
        return None
    return var, _text(bound), op, step


def instrument_loops(source: str) -> str:
    """``source`` with :data:`HOOK` first in the body of every loop the module docstring admits.

    Line numbers are kept (nothing is inserted but on the lines that are there). Text the parser
    cannot read is left as it is, as is every loop it does not admit."""
    if "for" not in source:
        return source
    data = source.encode()
    tree = _parser().parse(data)
    inserts: list[tuple[int, bytes]] = []
    for node in _walk(tree.root_node):
        if node.type != "for_statement":
            continue
        got = _eligible(node)
        if got is None:
            continue
        var, bound, op, step = got
        body = node.child_by_field_name("body")
        call = b"%s(%s, %s, %s, %d);" % (HOOK.encode(), var, bound.replace(b"\n", b" "), step, _CMP[op])
        if body.type == "compound_statement":
            inserts.append((body.start_byte + 1, b" " + call))
        else:
            inserts.append((body.start_byte, b"{ " + call + b" "))
            inserts.append((body.end_byte, b" }"))
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
