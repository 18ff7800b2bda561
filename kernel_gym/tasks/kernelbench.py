"""Load the task files of an external KernelBench checkout, shrinking huge shapes.

KernelBench's shapes are sized for datacenter GPUs (a 4096 x 393216 input); a CPU or a
simulator needs them smaller. ``load_kernelbench_dir`` halves a task's module-level integer
shape constants (never its settings such as kernel_size or dim) until every input fits
``max_elements``, then runs the reference once to prove the computation is still valid.
A file it cannot load is reported with the reason, never silently dropped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import torch

from kernel_gym.tasks.spec import TaskSpec, load_task_module

__all__ = ["KernelBenchLoad", "LoadFailure", "load_kernelbench_dir", "shrink_task_source"]

# Module-level integers with these names configure the operator, not its size.
_SETTING_NAMES = re.compile(
    r"(kernel|stride|padding|dilation|dim$|^dim|axis|groups|num_groups|eps|reduction|"
    r"output_padding|pool|window|^k$|^p$|scale|factor|slope|bias|heads|num_layers|top)",
    re.I,
)

_CATEGORY_KEYWORDS = [
    ("matmul", r"matmul|gemm|bmm|matrix|linear|mm_"),
    ("conv", r"conv"),
    ("pooling", r"pool"),
    ("normalization", r"norm"),
    ("softmax", r"softmax"),
    ("loss", r"loss|entropy|kl_?div|hinge|huber"),
    ("scan", r"cumsum|cumprod|scan"),
    ("reduction", r"sum|mean|max|min|argmax|argmin|prod|reduction"),
    ("activation", r"relu|gelu|sigmoid|tanh|swish|softplus|elu|selu|hardtanh|softsign|mish|silu"),
]


@dataclass(frozen=True)
class LoadFailure:
    path: Path
    reason: str


@dataclass
class KernelBenchLoad:
    """What ``load_kernelbench_dir`` found: the tasks it loaded and the files it could not load.

    Iterating or ``len()`` goes over the tasks.
    """

    tasks: list[TaskSpec] = field(default_factory=list)
    failures: list[LoadFailure] = field(default_factory=list)
    shrunk: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)

    def __iter__(self) -> Iterator[TaskSpec]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def report(self) -> str:
        lines = [f"loaded {len(self.tasks)} task(s), {len(self.failures)} failure(s), {len(self.shrunk)} shrunk"]
        lines += [f"  FAILED {f.path.name}: {f.reason}" for f in self.failures]
        return "\n".join(lines)


def _int_constants(tree: ast.Module) -> dict[str, ast.Constant]:
    consts: dict[str, ast.Constant] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and type(node.value.value) is int
            and node.value.value > 1
        ):
            consts[node.targets[0].id] = node.value
    return consts


def _substitute(source: str, values: dict[str, int]) -> str:
    """Rewrite module-level ``NAME = <int>`` assignments, keeping every other byte."""
    tree = ast.parse(source)
    consts = _int_constants(tree)
    lines = source.splitlines(keepends=True)
    # right-to-left within a line so earlier offsets stay valid
    edits = sorted(
        (
            (consts[n].lineno, consts[n].col_offset, consts[n].end_col_offset, v)
            for n, v in values.items()
            if n in consts
        ),
        reverse=True,
    )
    for lineno, start, end, value in edits:
        line = lines[lineno - 1]
        lines[lineno - 1] = line[:start] + str(value) + line[end:]
    return "".join(lines)


def _input_numels(source: str) -> list[int]:
    """Numels of get_inputs() computed on the meta device (allocates nothing)."""
    mod = load_task_module(source, "kernelbench_probe")
    with torch.device("meta"):
        inputs = mod.get_inputs()
    return [x.numel() for x in inputs if isinstance(x, torch.Tensor)]


def shrink_task_source(source: str, max_elements: int, max_rounds: int = 200) -> tuple[str, dict[str, tuple[int, int]]]:
    """Halve shape constants until every input has at most ``max_elements`` elements.

    Returns the rewritten source and {name: (old, new)} for the constants it changed.
    Raises ValueError when the inputs cannot be made small enough.
    """
    # a setting-like name with a large value (KernelBench's "dim = 393216") is a size
    consts: dict[str, int] = {}
    for n, c in _int_constants(ast.parse(source)).items():
        assert isinstance(c.value, int)  # _int_constants keeps int constants only
        if not _SETTING_NAMES.search(n) or c.value > 64:
            consts[n] = c.value
    values = dict(consts)
    current = source
    for _ in range(max_rounds):
        numels = _input_numels(current)
        if not numels or max(numels) <= max_elements:
            changed = {n: (consts[n], values[n]) for n in values if values[n] != consts[n]}
            return current, changed
        # halve the largest constant whose halving shrinks the inputs
        for name in sorted(values, key=lambda n: -values[n]):
            if values[name] < 2:
                continue
            trial = dict(values, **{name: max(1, values[name] // 2)})
            trial_source = _substitute(source, trial)
            if sum(_input_numels(trial_source)) < sum(numels):
                values, current = trial, trial_source
                break
        else:
            raise ValueError(
                f"cannot shrink inputs below {max_elements} elements "
                f"(largest input still has {max(numels)}); no shape constant left to halve"
            )
    raise ValueError(f"gave up shrinking after {max_rounds} rounds")


def _guess_category(stem: str, source: str) -> str:
    text = stem.lower()
    for category, pattern in _CATEGORY_KEYWORDS:
        if re.search(pattern, text):
            return category
    return "other"


def _first_float_dtype(source: str) -> str:
    mod = load_task_module(source, "kernelbench_probe")
    with torch.device("meta"):
        inputs = mod.get_inputs()
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            return str(x.dtype).removeprefix("torch.")
    return "float32"


def _validate(source: str, name: str) -> None:
    mod = load_task_module(source, name)
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs())
    with torch.no_grad():
        out = model(*mod.get_inputs())
    if not isinstance(out, torch.Tensor):
        raise ValueError(f"forward returned {type(out).__name__}, expected a tensor")


def load_kernelbench_dir(
    path: str | Path, level: int | str, max_elements: int = 2_000_000, shrink: bool = True
) -> KernelBenchLoad:
    """Load ``<path>/level<N>/*.py`` of a KernelBench checkout as TaskSpecs.

    Args:
        path: the checkout root (holding level1/, level2/, level3/) or a level folder itself.
        level: 1, 2, 3 or "level1"...
        max_elements: the most elements any input may have after shrinking.
        shrink: halve shape constants of oversized tasks; without it they are failures.

    Returns:
        KernelBenchLoad with ``.tasks``, ``.failures`` (path + reason) and ``.shrunk``.
    """
    level_num = int(str(level).removeprefix("level"))
    root = Path(path)
    folder = root / f"level{level_num}" if (root / f"level{level_num}").is_dir() else root
    if not folder.is_dir():
        raise FileNotFoundError(
            f"no folder level{level_num}/ under {root}; pass the KernelBench "
            "checkout root (the folder holding level1/, level2/, level3/)"
        )
    result = KernelBenchLoad()

    def sort_key(p: Path) -> tuple[int, str]:
        m = re.match(r"(\d+)", p.name)
        return (int(m.group(1)) if m else 10**9, p.name)

    for file in sorted(folder.glob("*.py"), key=sort_key):
        if file.name.startswith("__"):
            continue
        try:
            source = published = file.read_text()
            numels = _input_numels(source)
            if numels and max(numels) > max_elements:
                if not shrink:
                    raise ValueError(f"largest input has {max(numels)} elements > max_elements={max_elements}")
                source, changed = shrink_task_source(source, max_elements)
                result.shrunk[file.stem] = changed
                header = "# shrunk by kernel_gym: " + ", ".join(f"{n} {a}->{b}" for n, (a, b) in changed.items())
                source = header + "\n" + source
            _validate(source, file.stem)
            result.tasks.append(
                TaskSpec(
                    id=f"kernelbench/level{level_num}/{file.stem}",
                    level=level_num,
                    category=_guess_category(file.stem, source),
                    dtype=_first_float_dtype(source),
                    source=source,
                    description=f"KernelBench level{level_num} task {file.stem}",
                    path=file,
                    published_source=published if source != published else None,
                )
            )
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none dropped
            result.failures.append(LoadFailure(file, f"{type(exc).__name__}: {exc}"))
    return result
