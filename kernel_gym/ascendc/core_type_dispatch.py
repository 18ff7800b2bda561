"""Member templates specialised per core type, the way CANN's template library (catlass) writes
its kernels, turned into C++ that g++ accepts and that runs on either core type.

On the NPU a kernel is compiled once per core type and ``g_coreType`` is a compile-time constant
in each binary, so a kernel class writes::

    template <int32_t CORE_TYPE = g_coreType>
    void operator()(Params const& params);
    template <>
    void operator()<AscendC::AIC>(Params const& params) { ...cube side... }
    template <>
    void operator()<AscendC::AIV>(Params const& params) { ...vector side... }

Two things stop g++: an explicit specialisation inside a class (accepted by the CCE compiler,
which is clang-based; g++ still rejects it, CWG 727), and ``g_coreType``, which the simulator
knows only at run time because one CPU build runs both core types. The rewrite keeps the text
line for line and turns each specialisation into a constrained overload
(``template <int32_t T> requires (T == AscendC::AIC)``), the primary's default into ``-1``
and the primary's body into a run-time dispatch on the running block's core type
(``ASCEND_IS_AIC``). A core type without a specialisation runs the primary's own body, or nothing
when it has none (the NPU build instantiates only the specialisations it calls).
"""

from __future__ import annotations

import re

from kernel_gym.ascendc.loader import _mask, _match_forward, _split_top

__all__ = ["rewrite_core_type_dispatch"]

_ANY = "-1"  # the primary's default: "dispatch on the running core"
_PRIMARY = re.compile(r"template\s*<\s*((?:const\s+)?[\w:]+)\s+(\w+)\s*=\s*g_coreType\s*>")
_SPECIAL = re.compile(r"template\s*<\s*>")
_IF_CONSTEXPR = re.compile(r"\bif\s+constexpr(\s*\(\s*g_coreType\b)")
# `constexpr T x = Name<ARGS, g_coreType>::member;` (a per-core constant such as a barrier's flag id)
_CONSTEXPR_PICK = re.compile(
    r"\bconstexpr\s+([\w:]+)\s+(\w+)\s*=\s*([\w:]+)\s*<([^<>;{}]*?)\bg_coreType\s*>\s*::\s*(\w+)\s*;"
)


def _param_names(params: str) -> list[str] | None:
    """The names of a parameter list's parameters (None when one is unnamed)."""
    text = params.strip()
    if not text or text == "void":
        return []
    names = []
    for part in _split_top(text, _mask(text)):
        decl = part.split("=", 1)[0].strip()
        m = re.search(r"(\w+)\s*(\[[^\]]*\])?$", decl)
        if not m or m.group(1) in ("const", "volatile") or decl.rstrip().endswith(("&", "*", ">")):
            return None
        names.append(m.group(1))
    return names


def _declarator(masked: str, start: int) -> tuple[str, int, int, int] | None:
    """From ``start`` (just after a template header): the function's name, the span of its
    parameter list (open, close) and the index of the ``;`` or ``{`` that ends the declarator."""
    i, n = start, len(masked)
    last_open = last_close = -1
    while i < n:
        ch = masked[i]
        if ch == "(":
            close = _match_forward(masked, i)
            last_open, last_close = i, close
            i = close + 1
            continue
        if ch in ";{":
            break
        if ch == "}":
            return None
        i += 1
    if last_open < 0 or i >= n:
        return None
    head = masked[start:last_open].rstrip()
    m = re.search(r"(operator\s*\(\s*\)|operator\s*\S+|~?\w+)$", head)
    if not m:
        return None
    return re.sub(r"\s+", "", m.group(1)), last_open, last_close, i


_CLASS_SPECIAL = re.compile(r"template\s*<\s*>\s*(struct|class)\s+(\w+)\s*<")
_SPEC_PARAM = "KgsimSpecialisation"


def _class_scopes(masked: str) -> list[tuple[int, int]]:
    """The [open, close) spans of class bodies (``struct X ... {`` / ``class X ... {``)."""
    spans, stack = [], []
    last_stop = 0
    for i, ch in enumerate(masked):
        if ch == "{":
            head = masked[last_stop:i]
            is_class = re.search(r"\b(struct|class|union)\s+\w+[^;()]*$", head) is not None and not re.search(
                r"\benum\b", head
            )
            stack.append((i, is_class))
            last_stop = i + 1
        elif ch == "}":
            if stack:
                start, is_class = stack.pop()
                if is_class:
                    spans.append((start, i))
            last_stop = i + 1
        elif ch == ";":
            last_stop = i + 1
    return spans


def rewrite_member_class_specialisations(src: str) -> str:
    """``template <> struct Helper<void> {...}`` inside a class (an explicit specialisation of a
    member class template, which g++ rejects there, CWG 727) becomes a partial specialisation:
    the primary in the same file gets a defaulted extra parameter and the specialisation
    ``template <class KgsimSpecialisation> struct Helper<void, KgsimSpecialisation>``. Every
    ``Helper<...>`` of the library names the same classes as before. Line numbers are kept."""
    if "template" not in src:
        return src
    masked = _mask(src)
    specs = [m for m in _CLASS_SPECIAL.finditer(masked)]
    if not specs:
        return src
    scopes = _class_scopes(masked)

    def in_class(pos: int) -> bool:
        return any(a < pos < b for a, b in scopes)

    names = {m.group(2) for m in specs if in_class(m.start())}
    edits: list[tuple[int, int, str]] = []
    done_names = set()
    for name in names:
        primary = re.compile(r"template\s*<([^<>]*)>\s*(?:struct|class)\s+" + name + r"\s*[:{;]")
        hits = [p for p in primary.finditer(masked) if "..." not in p.group(1) and p.group(1).strip()]
        if not hits:
            continue
        done_names.add(name)
        for p in hits:
            edits.append((p.end(1), p.end(1), f", class {_SPEC_PARAM} = void"))
    for m in specs:
        if m.group(2) not in done_names or not in_class(m.start()):
            continue
        lt = m.end() - 1
        depth, k = 0, lt
        while k < len(masked):
            if masked[k] == "<":
                depth += 1
            elif masked[k] == ">":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        if k >= len(masked):
            continue
        head_end = masked.index(">", m.start()) + 1  # the `template <>`
        edits.append((m.start(), head_end, f"template <class {_SPEC_PARAM}>"))
        edits.append((k, k, f", {_SPEC_PARAM}"))
    for a, b, text in sorted(edits, reverse=True):
        src = src[:a] + text + src[b:]
    return src


def rewrite_core_type_dispatch(src: str) -> str:
    """``src`` with per-core-type member specialisations made g++-compatible (see the module doc);
    unchanged when it has none. Line numbers are kept."""
    src = rewrite_member_class_specialisations(src)
    if "g_coreType" not in src:
        return src
    # `if constexpr (g_coreType == AscendC::AIV)`: a run-time test here (one build, both core types)
    src = _IF_CONSTEXPR.sub(r"if\1", src)
    # ... and a per-core constant is picked at run time, from the instantiation for each core type
    src = _CONSTEXPR_PICK.sub(
        r"const \1 \2 = ::kgsim::core_select([]<int32_t KgsimC>() { return \3<\4KgsimC>::\5; });", src
    )
    masked = _mask(src)
    edits: list[tuple[int, int, str]] = []
    primaries: dict[str, str] = {}  # function name -> its template parameter's type
    for m in _PRIMARY.finditer(masked):
        found = _declarator(masked, m.end())
        if found is None:
            continue
        name, p_open, p_close, end = found
        args = _param_names(src[p_open + 1 : p_close])
        if args is None:
            continue
        ptype, pname = m.group(1), m.group(2)
        primaries[name] = ptype
        default_at = masked.index("g_coreType", m.start())
        edits.append((default_at, default_at + len("g_coreType"), _ANY))
        call = ", ".join(args)
        dispatch = (
            f"if (ASCEND_IS_AIC) this->template {name}<::AscendC::AIC>({call}); "
            f"else this->template {name}<::AscendC::AIV>({call});"
        )
        if masked[end] == ";":
            edits.append((end, end + 1, f"{{ if constexpr ({pname} == {_ANY}) {{ {dispatch} }} }}"))
        else:
            edits.append((end + 1, end + 1, f" if constexpr ({pname} == {_ANY}) {{ {dispatch} return; }}"))
    if not primaries:
        return src
    for m in _SPECIAL.finditer(masked):
        found = _declarator(masked, m.end())
        if found is None:
            continue
        _, p_open, _, _ = found
        head = masked[m.end() : p_open]
        spec = re.search(r"(operator\s*\(\s*\)|\w+)\s*<([^<>]+)>\s*$", head)
        if not spec:
            continue
        name = re.sub(r"\s+", "", spec.group(1))
        if name not in primaries:
            continue
        value = src[m.end() + spec.start(2) : m.end() + spec.end(2)].strip()
        edits.append(
            (m.start(), m.end(), f"template <{primaries[name]} KgsimCoreType> requires (KgsimCoreType == {value})")
        )
        # drop the explicit argument list: `name<ARG>` -> `name`
        edits.append((m.end() + spec.end(1), m.end() + spec.end(), ""))
    for a, b, text in sorted(edits, reverse=True):
        src = src[:a] + text + src[b:]
    return src
