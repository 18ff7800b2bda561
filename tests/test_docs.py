"""Documentation references resolve to files in the repository (no network).

Checked:
- every relative markdown link ``[text](target)`` in README.md, docs/*.md and
  kernel_gym/**/README.md resolves from the linking file's folder;
- every ``*.md`` path named in those files, and in the comments, docstrings and other string
  literals of the Python sources under kernel_gym/, agents/ and experiments/, resolves to a file
  inside the repository.

A named path is looked up relative to the citing file's folder, the repository root and docs/;
prompt template names cited under kernel_gym/llm/ also relative to kernel_gym/llm/prompts.
Placeholders (``format_<backend>.md``, ``format_{form}.md``) and ``*`` match as wildcards.
A path that leaves the repository (``../elsewhere/X.md``) never resolves.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Names of files the package writes at run time, so they are not in the repository:
#: report.md is the run report of experiments/report.py (docs/run_format.md).
GENERATED = {"report.md"}

PY_DIRS = ("kernel_gym", "agents", "experiments")
PROMPTS = Path("kernel_gym/llm/prompts")

_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://\S+")
_MD_PATH = re.compile(r"[\w./*<>{}-]*\w[\w./*<>{}-]*\.md(?!\w|\.\w)")
_MD_LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_PLACEHOLDER = re.compile(r"<[^<>/]*>|\{[^{}/]*\}")


def markdown_files(root: Path = ROOT) -> list[Path]:
    files = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    files += sorted((root / "kernel_gym").rglob("README.md"))
    return [f for f in files if f.is_file()]


def python_files(root: Path = ROOT) -> list[Path]:
    return [f for d in PY_DIRS if (root / d).is_dir() for f in sorted((root / d).rglob("*.py"))]


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _exists(base: Path, target: str, root: Path) -> bool:
    """``target`` (wildcards allowed) names an existing file or folder under ``base`` inside ``root``."""
    pattern = _PLACEHOLDER.sub("*", target)
    if "*" in pattern:
        return any(_inside(p, root) for p in base.glob(pattern))
    path = base / pattern
    return path.exists() and _inside(path, root)


def resolves(target: str, citing: Path, root: Path = ROOT) -> bool:
    """Whether a ``*.md`` path cited in ``citing`` names a file of the repository."""
    if Path(target).name in GENERATED:
        return True
    bases = [citing.parent, root, root / "docs"]
    if _inside(citing, root / "kernel_gym" / "llm"):
        bases.append(root / PROMPTS)
    return any(_exists(b, target, root) for b in bases)


def md_paths(text: str) -> list[tuple[int, str]]:
    """``(offset, path)`` of every ``*.md`` path named in ``text`` (URLs skipped)."""
    text = _URL.sub(lambda m: " " * len(m.group(0)), text)
    return [(m.start(), m.group(0)) for m in _MD_PATH.finditer(text)]


def python_texts(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every comment and string literal (docstrings included) of a source."""
    src = path.read_text(encoding="utf-8")
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            out.append((tok.start[0], tok.string))
    ast.parse(src)  # a file that does not parse is reported by its own tests, not skipped here
    return out


def broken_references(root: Path = ROOT) -> list[str]:
    """One line per reference that does not resolve: ``file:line: target (kind)``."""
    broken = []
    for f in markdown_files(root):
        rel = f.relative_to(root)
        text = f.read_text(encoding="utf-8")
        for m in _MD_LINK.finditer(text):
            target = m.group(1)
            if _URL.match(target) or target.startswith(("#", "mailto:")):
                continue
            target = target.split("#", 1)[0]
            if target and not (_inside(f.parent / target, root) and (f.parent / target).exists()):
                broken.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {target} (markdown link)")
        for off, target in md_paths(text):
            if not resolves(target, f, root):
                broken.append(f"{rel}:{text.count(chr(10), 0, off) + 1}: {target} (named path)")
    for f in python_files(root):
        rel = f.relative_to(root)
        for line, text in python_texts(f):
            for off, target in md_paths(text):
                if not resolves(target, f, root):
                    broken.append(f"{rel}:{line + text.count(chr(10), 0, off)}: {target} (comment or string)")

    def order(entry: str) -> tuple[str, int, str]:
        path, line, rest = entry.split(":", 2)
        return path, int(line), rest

    return sorted(dict.fromkeys(broken), key=order)


def test_documentation_references_resolve() -> None:
    broken = broken_references()
    assert not broken, "references to files that are not in the repository:\n" + "\n".join(broken)


def test_checker_finds_broken_references(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("See [setup](setup.md) and [api](../docs/guide.md#top).\n")
    (tmp_path / "docs" / "setup.md").write_text("Generated: report.md. Missing: `docs/gone.md`.\n")
    (tmp_path / "README.md").write_text("[guide](docs/guide.md), [web](https://example.org/x.md), [bad](nope/)\n")
    pkg = tmp_path / "agents"
    pkg.mkdir()
    (pkg / "a.py").write_text(
        '"""Uses docs/guide.md and ../elsewhere/NOTES.md."""\n'
        "# see docs/setup.md and format_<backend>.md\n"
        'LABEL = "SPEC.md spec"\n'
    )
    llm = tmp_path / "kernel_gym" / "llm"
    (llm / "prompts" / "sections").mkdir(parents=True)
    (llm / "prompts" / "format_cpu.md").write_text("x")
    (llm / "prompts" / "sections" / "pool.md").write_text("x")
    (llm / "prompting.py").write_text(
        '"""Templates: ``sections/pool.md``, ``format_<backend>.md``, ``sections/*.md``."""\n'
    )
    assert broken_references(tmp_path) == [
        "README.md:1: nope/ (markdown link)",
        "agents/a.py:1: ../elsewhere/NOTES.md (comment or string)",
        "agents/a.py:2: format_<backend>.md (comment or string)",
        "agents/a.py:3: SPEC.md (comment or string)",
        "docs/setup.md:1: docs/gone.md (named path)",
    ]


@pytest.mark.parametrize("target", ["docs/methods.md", "docs/ascendc_simulator.md", "docs/backends.md"])
def test_design_documents_are_in_docs(target: str) -> None:
    assert (ROOT / target).is_file(), f"{target} is cited by the code and must be in the repository"
