"""AdaExplore's validity rules: failures turned into one-sentence "You cannot ..." rules.

:func:`write_rule` is the deterministic rule writer: from a verifier result (``error_class``,
``message``, ``compile_log``, ``hack_rule``) it finds the offending line, pulls out the API token
it names (a quoted identifier such as ``‘Reluu’``, else the first CamelCase API name, else a
normalised skeleton of the message) and fills a per-error-class template. The **rule key** is
``<error_class>/<pattern>/<token>`` with the token lower-cased and stripped of template arguments,
numbers and punctuation, so two failures of the same class on the same API give the same key
whatever the line numbers, variable names or task.

:class:`RuleBook` stores rules as ``validity_rule`` items of a :class:`MemoryStore`, keyed
``rule/<backend>/<rule_key>`` (the store's unique ``key``): adding a rule whose key exists adds
one to that item's ``count`` instead (AdaExplore's deduplication), and :meth:`RuleBook.active`
lists the rules whose count reached the threshold (3 in the paper).

:func:`llm_rule_writer` wraps an LLM generator (anything with LiteLLMGenerator's ``_call``): the
LLM words the sentence, the deterministic key still decides deduplication (so LLM wording
variations cannot split counts), and any failure falls back to the deterministic sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kernel_gym.memory import MemoryItem, MemoryStore

__all__ = [
    "Rule",
    "RuleBook",
    "RULE_CLASSES",
    "offending_line",
    "api_token",
    "normalize_token",
    "write_rule",
    "llm_rule_writer",
    "deterministic_writer",
]

#: Error classes that produce a rule (compile / load / run failures and hacks). Numerical mismatches
#: only when asked (``include_mismatch``): the paper makes them optional. ``internal_error`` is a
#: verifier bug and never a rule; ``ok`` is no failure.
RULE_CLASSES: tuple[str, ...] = (
    "hacked",
    "syntax_error",
    "no_model_new",
    "import_error",
    "compile_error",
    "unsupported_dtype",
    "init_error",
    "runtime_error",
    "crash",
    "timeout",
    "memory_limit",
    "shape_mismatch",
    "dtype_mismatch",
    "nondeterministic",
)
MISMATCH_CLASSES: tuple[str, ...] = ("numerical_mismatch",)
#: Classes of the pipeline that are not backend faults (anything else that is not "ok" is a
#: simulated-hardware fault such as ub_overflow, misaligned_copy, gm_out_of_bounds).
_KNOWN = set(RULE_CLASSES) | set(MISMATCH_CLASSES) | {"ok", "internal_error"}


@dataclass
class Rule:
    """One validity rule: ``text`` ("You cannot ..."), ``key`` (dedup key without the backend),
    ``error_class``, ``token`` (normalised API token or message skeleton) and the offending ``line``."""

    text: str
    key: str
    error_class: str
    token: str = ""
    line: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return self.text if len(self.text) <= 120 else self.text[:117] + "..."


_QUOTED = re.compile(r"[‘'`\"“]([^’'`\"”]{1,80})[’'`\"”]")
_CAMEL = re.compile(r"\b([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+|[A-Z][a-z]{2,}[A-Za-z0-9]*)\b")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_:]*")
_ERROR_LINE = re.compile(r"\berror\b\s*:?", re.IGNORECASE)
# words that look like API names in messages but are not
_STOP = {
    "Error",
    "AscendCCompileError",
    "Traceback",
    "File",
    "Model",
    "ModelNew",
    "Python",
    "RuntimeError",
    "TypeError",
    "ValueError",
    "NameError",
    "AttributeError",
    "ImportError",
    "SyntaxError",
    "In",
    "The",
    "Exception",
    "IndexError",
    "KeyError",
    "AssertionError",
    "None",
    "True",
    "False",
}


def offending_line(verifier: Mapping[str, Any]) -> str:
    """The line that says what went wrong: the first compiler line containing ``error``, else the
    first such line of the message, else the message's first non-empty line."""
    for source in (verifier.get("compile_log") or "", verifier.get("message") or ""):
        for ln in str(source).splitlines():
            if _ERROR_LINE.search(ln) and ln.strip():
                return ln.strip()[:300]
    msg = str(verifier.get("message") or "")
    return next((ln.strip() for ln in msg.splitlines() if ln.strip()), "")[:300]


def normalize_token(token: str) -> str:
    """Lower-case identifier core: template args, namespaces' ``AscendC::``, numbers and punctuation gone."""
    t = re.sub(r"<[^<>]*>", "", token)
    t = t.split("::")[-1] if "::" in t else t
    t = re.sub(r"[^A-Za-z_]", "", t).lower().strip("_")
    return t[:48]


def api_token(line: str) -> str:
    """The API name a line is about: a quoted identifier (compiler style ``‘Reluu’``), else the
    first CamelCase name that is not an exception class, else "" (normalised)."""
    body = line.split("error:", 1)[-1] if "error:" in line else line
    for m in _QUOTED.finditer(body):
        idents = _IDENT.findall(m.group(1))
        if idents:
            tok = normalize_token(idents[0])
            if tok:
                return tok
    for m in _CAMEL.finditer(body):
        if m.group(1) not in _STOP:
            return normalize_token(m.group(1))
    return ""


def _skeleton(line: str, words: int = 6) -> str:
    """Message skeleton for keys: file/line prefixes, numbers and quoted parts dropped, first words."""
    s = re.sub(r"^[\w./-]+:\d+(:\d+)?:\s*", "", line)  # kernel.cpp:55:9:
    s = re.sub(r"\(answer line \d+\)", "", s)
    s = re.sub(r"\bline \d+\b:?", "", s)
    s = _QUOTED.sub(" ", s)
    s = re.sub(r"[^A-Za-z ]+", " ", s).lower()
    toks = [w for w in s.split() if w not in ("error", "the", "a", "an", "of", "in", "to", "is")]
    return "-".join(toks[:words])


def _q(tok: str) -> str:
    return f"`{tok}`" if tok else "it"


def write_rule(verifier: Mapping[str, Any], include_mismatch: bool = False) -> Rule | None:
    """The deterministic rule for one failed verification, or None (feasible, verifier bug, or a
    class that makes no rule). Same class + same normalised token -> same ``key``."""
    ec = str(verifier.get("error_class") or "internal_error")
    if verifier.get("feasible") or ec in ("ok", "internal_error"):
        return None
    if ec in MISMATCH_CLASSES and not include_mismatch:
        return None
    line = offending_line(verifier)
    raw_tok = ""
    m = next((m for m in _QUOTED.finditer(line.split("error:", 1)[-1])), None)
    if m:
        raw_tok = m.group(1).strip()
    tok = api_token(line)
    low = line.lower()
    shown = raw_tok or tok

    if ec == "hacked":
        rule_name = str(verifier.get("hack_rule") or "unknown")
        slug = normalize_token(rule_name.replace("-", "_")) or "unknown"
        text = (
            f"You cannot break the anti-hack rule '{rule_name}' (e.g. computing with PyTorch ops, caching "
            f"or falling back to the reference instead of running the kernel): {line[:160]}"
        )
        return Rule(text, f"hacked/{slug}", ec, slug, line)
    if ec == "no_model_new":
        return Rule(
            "You cannot leave out class ModelNew: the answer must define ModelNew with the reference "
            "Model's constructor and forward signatures.",
            "no_model_new/model_new",
            ec,
            "model_new",
            line,
        )
    if ec == "syntax_error":
        sk = _skeleton(line, 5) or "parse"
        return Rule(
            f"You cannot submit Python that does not parse ({line[:120]}); check brackets, quotes and "
            "indentation of the whole answer.",
            f"syntax_error/{sk}",
            ec,
            sk,
            line,
        )
    if ec in ("compile_error", "unsupported_dtype"):
        if "not declared" in low or "no member named" in low or "is not a member" in low or "undeclared" in low:
            return Rule(
                f"You cannot use {_q(shown)}: it is not declared by the backend API or in scope; "
                "use the exact API name and namespace from the API templates.",
                f"{ec}/undeclared/{tok or _skeleton(line, 3)}",
                ec,
                tok,
                line,
            )
        if "no match" in low or "cannot convert" in low or "invalid conversion" in low:
            return Rule(
                f"You cannot call {_q(shown)} with these argument types: match one of its documented "
                "signatures (tensor types, counts and parameter structs).",
                f"{ec}/signature/{tok or _skeleton(line, 3)}",
                ec,
                tok,
                line,
            )
        if "expected" in low:
            sk = _skeleton(line, 4)
            return Rule(
                f"You cannot write malformed C++ ({line[:120]}); every statement needs its ';' and balanced braces.",
                f"{ec}/syntax/{sk}",
                ec,
                sk,
                line,
            )
        if ec == "unsupported_dtype":
            return Rule(
                f"You cannot use {_q(shown)} with a dtype the SoC does not support ({line[:120]}); "
                "cast to a supported dtype first.",
                f"{ec}/{tok or _skeleton(line, 3)}",
                ec,
                tok,
                line,
            )
        key = tok or _skeleton(line, 4) or "unknown"
        return Rule(
            f"You cannot write {_q(shown)} as in '{line[:120]}': the kernel compiler rejects it.",
            f"{ec}/other/{key}",
            ec,
            key,
            line,
        )
    if ec in ("import_error", "init_error", "runtime_error"):
        where = {
            "import_error": "at import time of the answer module",
            "init_error": "in ModelNew.__init__",
            "runtime_error": "in ModelNew.forward",
        }[ec]
        key = tok or _skeleton(line, 4) or "unknown"
        return Rule(f"You cannot rely on {_q(shown)} {where}: it raised '{line[:120]}'.", f"{ec}/{key}", ec, key, line)
    if ec == "timeout":
        return Rule(
            "You cannot write a kernel that hangs or loops without end (unbalanced EnQue/DeQue or "
            "AllocTensor/FreeTensor, wrong loop bounds); the run hit the time limit.",
            "timeout/hang",
            ec,
            "hang",
            line,
        )
    if ec == "crash":
        return Rule(
            f"You cannot access memory out of bounds or through invalid pointers: the worker crashed ({line[:100]}).",
            "crash/segfault",
            ec,
            "segfault",
            line,
        )
    if ec == "memory_limit":
        return Rule(
            "You cannot allocate unbounded host memory in the answer: the memory limit was hit.",
            "memory_limit/alloc",
            ec,
            "alloc",
            line,
        )
    if ec in ("shape_mismatch", "dtype_mismatch"):
        what = "shape" if ec == "shape_mismatch" else "dtype"
        return Rule(
            f"You cannot return an output whose {what} differs from the reference Model's output.",
            f"{ec}/output",
            ec,
            "output",
            line,
        )
    if ec == "nondeterministic":
        return Rule(
            "You cannot produce outputs that change between calls (races, uninitialised buffers, "
            "state kept across calls).",
            "nondeterministic/output",
            ec,
            "output",
            line,
        )
    if ec == "numerical_mismatch":
        return Rule(
            "You cannot drop or mis-index elements (tails, strides, reductions): outputs must match the "
            "reference within tolerance on every trial.",
            "numerical_mismatch/values",
            ec,
            "values",
            line,
        )
    # a simulated-hardware fault: ub_overflow, misaligned_copy, gm_out_of_bounds, ...
    fault = ec.replace("_", " ")
    key = tok or "fault"
    return Rule(
        f"You cannot trigger a {fault} on the device ({line[:120]}); respect buffer capacity, "
        f"32-byte alignment and tensor bounds{' around ' + _q(shown) if shown else ''}.",
        f"{ec}/{key}",
        ec,
        key,
        line,
    )


class RuleBook:
    """Validity rules in a :class:`MemoryStore` (kind ``validity_rule``), deduplicated by key.

    Args:
        memory: the store (the env's shared one).
        backend: the backend the rules are about (part of the item key and the item's ``backend``).
        threshold: count from which a rule is *active* (goes into every context); 3 in AdaExplore.
    """

    def __init__(self, memory: MemoryStore, backend: str, threshold: int = 3) -> None:
        self.memory = memory
        self.backend = backend
        self.threshold = int(threshold)

    def item_key(self, rule_key: str) -> str:
        return f"rule/{self.backend}/{rule_key}"

    def add(self, rule: Rule) -> tuple[int, bool]:
        """Store ``rule``; a rule whose key exists adds one to that item's count instead.
        Returns ``(item id, True if a new item was written)``."""
        item = MemoryItem(
            kind="validity_rule",
            title=rule.title,
            text=rule.text,
            backend=self.backend,
            category="general",
            key=self.item_key(rule.key),
            payload={
                "error_class": rule.error_class,
                "rule_key": rule.key,
                "token": rule.token,
                "line": rule.line[:300],
                "tags": ["rule", rule.error_class, rule.token],
            },
        )
        added = self.memory.add(item)
        assert not isinstance(added, list)  # one item in, one id out
        rid = int(added)
        created = item.id is not None  # the store sets the id only on a new insert
        if not created:
            self.memory.increment([rid], "count", 1)
        return rid, created

    def rules(self) -> list[MemoryItem]:
        """Every rule item of this backend written by a rule writer (payload has ``rule_key``)."""
        return [it for it in self.memory.all("validity_rule", backend=self.backend) if "rule_key" in it.payload]

    def active(self) -> list[MemoryItem]:
        """Rules with ``count >= threshold``, highest count first (ties by id)."""
        return sorted((it for it in self.rules() if it.count >= self.threshold), key=lambda it: (-it.count, it.id))


def llm_rule_writer(generator: Any, include_mismatch: bool = False) -> Callable[[Mapping[str, Any], str], Rule | None]:
    """A rule writer that lets an LLM word the sentence (AdaExplore: the generator writes the rule).

    ``generator`` needs LiteLLMGenerator's ``_call(messages) -> (text, usage, notes)``. The key stays
    the deterministic one (dedup must not depend on wording); the reply must start with "You
    cannot" and be one sentence, else the deterministic text is kept.
    """

    def writer(verifier: Mapping[str, Any], code: str = "") -> Rule | None:
        rule = write_rule(verifier, include_mismatch=include_mismatch)
        if rule is None:
            return None
        msgs = [
            {
                "role": "system",
                "content": "You turn kernel verification failures into one-sentence rules. "
                "Answer with exactly one sentence that starts with 'You cannot'.",
            },
            {
                "role": "user",
                "content": f"Error class: {rule.error_class}\nOffending line: {rule.line}\n"
                f"Message: {str(verifier.get('message', ''))[:600]}\nCode excerpt:\n{code[:1500]}",
            },
        ]
        try:
            text, _, _ = generator._call(msgs)
        except Exception:  # noqa: BLE001 - the deterministic sentence is always a valid fallback
            return rule
        text = " ".join(str(text).strip().split())
        if text.lower().startswith("you cannot") and 10 < len(text) <= 400:
            rule.text = text.split(". ")[0].rstrip(".") + "."
        return rule

    return writer


def deterministic_writer(include_mismatch: bool = False) -> Callable[[Mapping[str, Any], str], Rule | None]:
    """:func:`write_rule` as a ``(verifier, code) -> Rule | None`` writer."""

    def writer(verifier: Mapping[str, Any], code: str = "") -> Rule | None:
        return write_rule(verifier, include_mismatch=include_mismatch)

    return writer
