"""Pull the answer file out of an LLM reply.

Replies usually hold prose plus one or more Markdown code fences. :func:`extract_code` picks the
fence that is the answer: among fences that define ``class ModelNew`` it prefers one that parses
as Python, then one tagged ``python``, then the last (a reply that corrects itself ends with the
correction); without such a fence it
takes the reply itself when that is bare code defining ``ModelNew`` (from its first line of code,
when a sentence comes first), else the longest Python (or
untagged) fence, whose missing ``ModelNew`` the verifier then reports as ``no_model_new``.
A reply with no code at all raises :class:`CodeExtractionError`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = ["CodeBlock", "CodeExtractionError", "extract_code", "find_code_blocks"]

_PY_TAGS = {"python", "py", "python3", "py3"}
# An opening fence at the start of a line (3+ backticks, optional info string), up to the matching
# closing fence at the start of a line or the end of the reply (a reply cut off by max_tokens).
_FENCE = re.compile(
    r"^[ \t]*(?P<fence>`{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)(?:^[ \t]*(?P=fence)[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)
_MODEL_NEW = re.compile(r"^\s*class\s+ModelNew\b", re.MULTILINE)
# A line that can open a Python file: an import, a definition, a decorator, a comment or an assignment.
_CODE_START = re.compile(r"^(?:import\s|from\s|class\s|def\s|@|#|[A-Za-z_]\w*\s*=)", re.MULTILINE)


class CodeExtractionError(ValueError):
    """The reply contains no code block to use as an answer."""


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: its language tag (lower case, may be empty), body and position."""

    lang: str
    code: str
    index: int

    @property
    def is_python(self) -> bool:
        return self.lang in _PY_TAGS

    @property
    def defines_model_new(self) -> bool:
        return bool(_MODEL_NEW.search(self.code))

    @property
    def parses(self) -> bool:
        try:
            ast.parse(self.code)
        except (SyntaxError, ValueError):
            return False
        return True


def find_code_blocks(reply: str) -> list[CodeBlock]:
    """All fenced code blocks of ``reply`` in order (an unterminated last fence runs to the end)."""
    blocks = []
    for i, m in enumerate(_FENCE.finditer(reply)):
        info = m.group("info").strip().split()
        lang = info[0].lower() if info else ""
        code = m.group("body").rstrip()
        if code.strip():
            blocks.append(CodeBlock(lang=lang, code=code + "\n", index=i))
    return blocks


def _bare_code(reply: str) -> str | None:
    """An unfenced reply's code: the reply itself when it parses, else its tail from the first line
    that opens Python code and parses to the end (a sentence before the code, as some models write
    ahead of a six-string answer); None when there is no such tail."""
    starts = [0] + [m.start() for m in _CODE_START.finditer(reply)]
    for at in starts:
        bare = CodeBlock(lang="python", code=reply[at:].strip() + "\n", index=0)
        if bare.parses:
            return bare.code
    return None


def extract_code(reply: str) -> str:
    """The answer source in ``reply`` (see the module docstring for the rules).

    Raises:
        CodeExtractionError: the reply is empty or holds neither a code fence nor bare code
            defining ``ModelNew``.
    """
    if not reply or not reply.strip():
        raise CodeExtractionError("the reply is empty")
    blocks = find_code_blocks(reply)
    answers = [b for b in blocks if b.defines_model_new]
    if answers:
        best = max(answers, key=lambda b: (b.parses, b.is_python, b.index))
        return best.code
    if _MODEL_NEW.search(reply) and not blocks:
        bare = _bare_code(reply)
        if bare is not None:
            return bare
    fallback = [b for b in blocks if b.is_python or not b.lang]
    if fallback:
        return max(fallback, key=lambda b: (b.is_python, len(b.code), b.index)).code
    kinds = ", ".join(sorted({b.lang or "untagged" for b in blocks})) or "none"
    raise CodeExtractionError(
        f"the reply has no Python code block defining class ModelNew "
        f"({len(blocks)} fenced block(s): {kinds}; {len(reply)} characters)"
    )
