"""The package's layers point down only, and no two subpackages import each other.

experiments -> agents -> kernel_gym.envs -> (verify, memory, llm, tasks) -> backends ->
ascendc -> native. Imports are read from the source (every ``import`` and ``from ... import``,
including those inside functions), so a lazy import that points up is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS: list[set[str]] = [  # lowest first
    {"native"},
    {"ascendc"},
    {"backends"},
    {"verify", "memory", "llm", "tasks"},
    {"envs"},
    {"agents"},
    {"experiments"},
    {"__init__"},  # kernel_gym/__init__.py: the facade that registers the envs
]
TOP_LEVEL_SHARED = {"_version", "dispatch_mode"}  # importable from anywhere (import nothing of the package)


def _unit(module: str) -> str | None:
    """The layer unit a dotted module name belongs to: a kernel_gym subpackage, agents or experiments."""
    parts = module.split(".")
    if parts[0] in ("agents", "experiments"):
        return parts[0]
    if parts[0] == "kernel_gym" and len(parts) > 1:
        return parts[1]
    return None


def _rank(unit: str) -> int:
    return next(i for i, names in enumerate(LAYERS) if unit in names)


def _imports() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> the importing files."""
    edges: dict[tuple[str, str], list[str]] = {}
    for top in ("kernel_gym", "agents", "experiments"):
        for path in sorted((ROOT / top).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            me = _unit(module)
            if me is None or me in TOP_LEVEL_SHARED:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    if name == "kernel_gym":
                        edges.setdefault((me, "kernel_gym"), []).append(str(path.relative_to(ROOT)))
                        continue
                    other = _unit(name)
                    if other is not None and other != me and other not in TOP_LEVEL_SHARED:
                        edges.setdefault((me, other), []).append(str(path.relative_to(ROOT)))
    return edges


def test_every_unit_has_a_layer() -> None:
    units = {u for pair in _imports() for u in pair} - {"kernel_gym"}
    known = set().union(*LAYERS)
    assert units <= known, f"put {sorted(units - known)} in a layer of tests/test_layers.py"


def test_imports_point_down() -> None:
    up = {pair: files for pair, files in _imports().items()
          if pair[1] == "kernel_gym" or _rank(pair[1]) > _rank(pair[0])}
    assert not up, "imports pointing up a layer (or at kernel_gym itself, which registers the envs): " + "; ".join(
        f"{a} -> {b} in {', '.join(sorted(set(f)))}" for (a, b), f in sorted(up.items()))


def test_no_two_units_import_each_other() -> None:
    edges = _imports()
    cycles = sorted({tuple(sorted(pair)) for pair in edges if (pair[1], pair[0]) in edges})
    assert not cycles, f"mutual imports: {cycles}"


def test_shared_modules_import_nothing_of_the_package() -> None:
    ours = ("kernel_gym", "agents", "experiments")
    for name in sorted(TOP_LEVEL_SHARED):
        path = ROOT / "kernel_gym" / f"{name}.py"
        inside = []
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                inside += [a.name for a in node.names if a.name.split(".")[0] in ours]
            elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in ours):
                inside.append("." * node.level + (node.module or ""))
        assert not inside, f"kernel_gym/{name}.py is importable from every layer, so it may import nothing of ours: {inside}"
