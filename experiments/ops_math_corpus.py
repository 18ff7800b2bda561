"""CANN's production operator library (hicann/ops-math) on the Ascend C simulator: every operator
with an Atlas A2 (ascend910b) configuration, built unmodified as the library's CMake build lays it
out for that SoC, and its aclnn example (``examples/test_aclnn_<op>.cpp``) run on it.

    python -m experiments.ops_math_corpus --corpus <ops-math checkout> [--only conversion/diag_v2 ...] [--json out.json]

The layout (cmake/func.cmake, ``add_all_modules_sources``): ``op_host/*.cpp`` (the OpDef, infershape,
tiling) plus the tiling directory the op's CMakeLists maps ascend910b to (``SUPPORT_TILING_DIR``,
``arch22`` or ``arch32``); the op's own aclnn layer in ``op_api/`` (or ``op_host/op_api/``), written on
CANN's op-API framework (opdev: the simulator's stand-in, ``include/opdev/kgsim_opdev.h``); the kernel
``op_kernel/<op>.cpp`` (``*_apt.cpp`` and ``arch35/`` are the Ascend 950 kernels); the repository's
``common/inc`` and its root on the include path (an aclnn layer includes another op's l0 header as
``conversion/fill/op_api/fill.h``, a kernel another op's kernel header as ``../diag_flat/x.h``, both
as the build copies them).

The examples only print their results: where the op is easy to compute, the printed values are
compared with a PyTorch computation of the example's own inputs (:data:`CHECKS`), else a clean run
is recorded as ``ran_unchecked``, never as a pass. Shares the project result, the error
classification and the child-process isolation with :mod:`experiments.cann_ops_corpus`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from experiments.cann_ops_corpus import (
    DOC,
    OPS_MATH_BEGIN,
    OPS_MATH_END,
    SOC,
    ProjectResult,
    _classify,
    _corpus_commit,
    run_in_child,
    section_tables,
)

_INCLUDE = re.compile(r'#\s*include\s*["<]([\w./+-]+)[">]')
_ARCH_DIR = re.compile(r"arch\d+$")
_SOURCE = (".cpp", ".cc", ".h", ".hpp", ".inc")
# what an example needs beyond the op's own aclnn layer: the graph engine's IR (test_geir_*) or
# another library's aclnn call
_GEIR = re.compile(r'#\s*include\s*[<"](graph/|ge/|all_ops\.h)')


def projects(corpus: Path, experimental: bool = False) -> list[Path]:
    """The operators with an Atlas A2 configuration (``op_host/config/ascend910b/``)."""
    found = sorted(p.parents[2] for p in corpus.glob("**/op_host/config/ascend910b") if p.is_dir())
    return [p for p in found if experimental or "experimental" not in p.relative_to(corpus).parts]


def tiling_dir(project: Path, soc_dir: str = "ascend910b") -> str | None:
    """The op_host/ subdirectory the op's CMakeLists maps the SoC to (SUPPORT_COMPUTE_UNIT and
    SUPPORT_TILING_DIR, one-to-one); None: the op's tiling sources sit in op_host/ itself."""
    cmake = project / "CMakeLists.txt"
    text = cmake.read_text(errors="replace") if cmake.is_file() else ""
    units = re.search(r"set\s*\(\s*SUPPORT_COMPUTE_UNIT\s+([^)]*)\)", text)
    dirs = re.search(r"set\s*\(\s*SUPPORT_TILING_DIR\s+([^)]*)\)", text)
    if units and dirs:
        u = [w.strip('"') for w in units.group(1).split()]
        d = [w.strip('"') for w in dirs.group(1).split()]
        return dict(zip(u, d, strict=False)).get(soc_dir)
    # an op_host/CMakeLists.txt choosing the tiling sources itself (arch35 for ascend950, else
    # arch22): the one architecture directory that is not Ascend 950's
    others = sorted(p.name for p in (project / "op_host").glob("arch*") if p.is_dir() and p.name != "arch35")
    return others[0] if len(others) == 1 else None


def _texts(root: Path, prefix: str, keep: Callable[[Path], bool], origin: dict[str, Path]) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")) if root.is_dir() else []:
        rel = p.relative_to(root)
        if p.is_file() and p.suffix in _SOURCE and keep(rel):
            out[f"{prefix}/{rel}"] = p.read_text(errors="replace")
            origin[f"{prefix}/{rel}"] = p
    return out


def project_files(project: Path, soc_dir: str = "ascend910b") -> tuple[dict[str, str], dict[str, Path]]:
    """The op's sources the library's build compiles for the SoC, keyed as the simulator's op
    project takes them: op_host/ (with the op's op_api/ under op_host/op_api/) and op_kernel/; and
    where each came from."""
    origin: dict[str, Path] = {}
    tdir = tiling_dir(project, soc_dir)

    def host(rel: Path) -> bool:
        top = rel.parts[0]
        if len(rel.parts) == 1:
            return True
        return top == tdir or top == "op_api" or not (_ARCH_DIR.match(top) or top == "config")

    def kernel(rel: Path) -> bool:
        if len(rel.parts) == 1:
            return not rel.stem.endswith("_apt")
        return rel.parts[0] == tdir or not _ARCH_DIR.match(rel.parts[0])

    files = _texts(project / "op_host", "op_host", host, origin)
    files.update(_texts(project / "op_api", "op_host/op_api", lambda rel: True, origin))
    files.update(_texts(project / "op_kernel", "op_kernel", kernel, origin))
    # the ops named as DEPENDENCIES: the build compiles their tiling sources into the same host
    # library (diag_v2's tiling calls diag_flat's TilingDiagFlat); their OpDefs and kernels stay theirs
    for dep in dependencies(project):
        ddir = tiling_dir(dep, soc_dir)

        def dep_host(rel: Path, ddir: str | None = ddir) -> bool:
            if len(rel.parts) == 1:
                return rel.suffix in (".h", ".hpp") or "_tiling" in rel.name
            return rel.parts[0] == ddir

        # (at their place in the repository, below the project's op_host/: a dependency's tiling
        # includes the project's own header by its path from there, ../../../diag_v2/op_host/...)
        prefix = f"op_host/kgsim_dep/{dep.relative_to(dep.parents[1])}/op_host"
        files.update(_texts(dep / "op_host", prefix, dep_host, origin))
    return files, origin


def dependencies(project: Path) -> list[Path]:
    """The ops the CMakeLists names as DEPENDENCIES of add_all_modules_sources, found beside it."""
    cmake = project / "CMakeLists.txt"
    text = cmake.read_text(errors="replace") if cmake.is_file() else ""
    m = re.search(r"DEPENDENCIES\s+([\w\s]+?)\s*(?:\)|[A-Z_]{4,}\s)", text)
    corpus = project.parents[1]
    out = []
    for name in m.group(1).split() if m else []:
        hits = sorted(p for p in corpus.glob(f"*/{name}") if (p / "op_host").is_dir())
        out += hits[:1]
    return out


def _simulator_has(name: str) -> bool:
    from kernel_gym.ascendc.loader import INCLUDE_DIR

    return (Path(INCLUDE_DIR) / name).is_file()


def include_headers(
    corpus: Path,
    project: Path,
    files: dict[str, str],
    origin: dict[str, Path],
    found_at: dict[str, Path] | None = None,
) -> dict[str, str]:
    """The repository's headers the sources reach, keyed where the build's include path finds them:
    ``common/inc/<name>`` (and its op_api/, external/) and ``<repo>/<name>`` at the include root
    (those the simulator itself provides stay its own); a header named by its path relative to the
    including file, at the same relative place (``../../../diag_v2/op_host/arch22/x.h``); another
    op's kernel header ``../<op>/<name>`` beside the project's op_kernel/ (``proj/<op>/<name>``, as
    the build copies every op's op_kernel/ to one directory)."""
    import posixpath

    inc = corpus / "common" / "inc"
    kernel_dirs = {p.parent.name: p for p in corpus.glob("*/*/op_kernel")}
    found: dict[str, str] = {}
    where_from = {f"proj/{k}": p for k, p in origin.items()}
    todo = [(f"proj/{k}", t) for k, t in files.items()]
    have = set(where_from)
    while todo:
        where, text = todo.pop()
        for name in _INCLUDE.findall(text):
            if where in where_from:  # a quoted include is first looked up beside the including file
                key = posixpath.normpath(posixpath.join(posixpath.dirname(where), name))
                src = (where_from[where].parent / name).resolve()
                if key in have:
                    continue
                if not key.startswith("../") and src.is_file():
                    found[key] = src.read_text(errors="replace")
                    where_from[key] = src
                    have.add(key)
                    todo.append((key, found[key]))
                    continue
            sibling = re.fullmatch(r"((?:\.\./)+)(\w+)/([\w./]+)", name)
            kernel_side = "/op_kernel/" in str(where_from.get(where, "")) or "op_kernel/" in where
            if sibling and kernel_side:
                ups, op, rest = sibling.groups()
                src = kernel_dirs.get(op)
                key = posixpath.normpath(posixpath.join(posixpath.dirname(where), name))
                if key.startswith("../") or len(ups) == 3:
                    key = f"proj/{op}/{rest}"
                if src and (src / rest).is_file() and key not in have and op != project.name:
                    found[key] = (src / rest).read_text(errors="replace")
                    where_from[key] = src / rest
                    have.add(key)
                    todo.append((key, found[key]))
                continue
            if name in have or name.startswith("../") or _simulator_has(name):
                continue
            for base in (inc, inc / "op_api", inc / "external", corpus):  # OPAPI_INCLUDE's order
                p = base / name
                if p.is_file():
                    found[name] = p.read_text(errors="replace")
                    where_from[name] = p
                    have.add(name)
                    todo.append((name, found[name]))
                    break
    if found_at is not None:  # where each header was read from
        found_at.update({k: where_from[k] for k in found})
    return found


def examples(project: Path) -> list[Path]:
    return sorted((project / "examples").glob("test_aclnn_*.cpp")) + sorted(
        (project / "examples").glob("test_acl_*.cpp")
    )


def _aclnn_header(main: str) -> list[tuple[str, str]]:
    """The headers an example includes from CANN's aclnn package (aclnnop/aclnn_<op>.h, and
    aclnnop/acl_rfft1d.h of the FFT family), with their file names."""
    return re.findall(r'#\s*include\s*"(aclnnop/(acl\w+\.h))"', main)


# ---------------------------------------------------------------------------------------------
# Checks of the printed results: the example's own inputs (as its main writes them), the op
# computed with PyTorch, compared with what main printed.

_PRINTED = re.compile(r"result\[(\d+)\]\s*(?:is)?\s*:\s*([-+\w.]+)")


def _printed(stdout: str, pattern: re.Pattern[str] = _PRINTED) -> list[float]:
    vals = []
    for _, v in pattern.findall(stdout):
        try:
            vals.append(float(v))
        except ValueError:
            vals.append(float("nan"))
    return vals


def _close(got: list[float], want: list[float], rtol: float = 1e-3, atol: float = 1e-4) -> tuple[bool, str]:
    import torch

    if len(got) != len(want):
        return False, f"printed {len(got)} values, expected {len(want)}"
    g, w = torch.tensor(got, dtype=torch.float64), torch.tensor(want, dtype=torch.float64)
    ok = torch.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return bool(ok), "" if ok else f"max |diff| {float((g - w).abs().nan_to_num(1e30).max()):.3g}"


CHECKS: dict[str, Callable[[str], tuple[bool, str]]] = {}


def check(name: str) -> Callable[[Callable[[str], tuple[bool, str]]], Callable[[str], tuple[bool, str]]]:
    def reg(fn: Callable[[str], tuple[bool, str]]) -> Callable[[str], tuple[bool, str]]:
        CHECKS[name] = fn
        return fn

    return reg


# the inputs each example's main writes (its own literals), for the checks below
_IS_X = [0, 1.123, -2.001, 303.45, 40009, -50.1234, 60.666, -7.6543, 8000, -9.009, 1024, -11.23345, 12, 1356, -14.99]
_IS_X = [*_IS_X, -15.34023]


@check("test_aclnn_diag.cpp")
def _diag(stdout: str) -> tuple[bool, str]:
    import torch

    return _close(_printed(stdout), torch.diag(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), 0).tolist())


@check("test_aclnn_is_finite.cpp")
def _is_finite(stdout: str) -> tuple[bool, str]:
    import torch

    return _close(_printed(stdout), torch.isfinite(torch.tensor(_IS_X)).float().tolist(), 0, 0)


@check("test_aclnn_is_inf.cpp")
def _is_inf(stdout: str) -> tuple[bool, str]:
    import torch

    return _close(_printed(stdout), torch.isinf(torch.tensor(_IS_X)).float().tolist(), 0, 0)


@check("test_aclnn_lin_space.cpp")
def _lin_space(stdout: str) -> tuple[bool, str]:
    import torch

    return _close(_printed(stdout), torch.linspace(0.0, 1.0, 8).tolist())


@check("test_aclnn_angle_v2.cpp")
def _angle(stdout: str) -> tuple[bool, str]:
    import torch

    return _close(_printed(stdout), torch.angle(torch.tensor([1.0, 0.0, 0.0, 1.0, -1.0, 0.0])).tolist())


@check("test_aclnn_histc.cpp")
def _histc(stdout: str) -> tuple[bool, str]:
    import torch

    x = torch.arange(1.0, 10.0)
    return _close(_printed(stdout), torch.histc(x, bins=3, min=1.0, max=9.0).tolist())


@check("test_aclnn_linalg_cholesky.cpp")
def _cholesky(stdout: str) -> tuple[bool, str]:
    import torch

    a = torch.tensor([[6.0, -3, 1], [-3, 2, 0], [1, 0, 4]], dtype=torch.float64)
    return _close(_printed(stdout), torch.linalg.cholesky(a, upper=False).flatten().tolist())


@check("test_aclnn_coalesce_sparse.cpp")
def _coalesce(stdout: str) -> tuple[bool, str]:
    """CoalesceSparse (README): row i of the indices and value i go to slot unique_indices[i], the
    values summed; main prints the new indices (8x4), then the new values."""
    import torch

    unique = torch.tensor([5, 1, 6, 4, 7, 0, 3, 2])
    index = torch.tensor(
        [17, 17, 1, 0, 3, 17, 1, 8, 19, 10, 13, 6, 13, 16, 0, 15, 19, 14, 5, 15, 2, 8, 18, 5, 5, 2, 0, 13, 4, 5, 9, 1]
    ).view(8, 4)
    value = torch.tensor([148.25, -706.5, 178.625, 399.5, -795.5, -171.875, 388.75, -171.625], dtype=torch.float64)
    new_index = torch.zeros(8, 4, dtype=torch.long)
    new_index[unique] = index
    new_value = torch.zeros(8, dtype=torch.float64).index_add_(0, unique, value)
    return _close(_printed(stdout), new_index.flatten().tolist() + new_value.tolist())


@check("test_aclnn_strided_slice_assign_v2.cpp")
def _strided_slice_assign(stdout: str) -> tuple[bool, str]:
    import torch

    var = torch.arange(12.0).view(4, 3)
    var[1:4:2, 0:2] = torch.tensor([[-1.0, -2], [-3, -4]])
    return _close(_printed(stdout), var.flatten().tolist())


@check("test_aclnn_unfold_grad.cpp")
def _unfold_grad(stdout: str) -> tuple[bool, str]:
    """The gradient of x.unfold(0, 3, 2) for x of (8, 2). The example's grad_out is (3, 2, 3) but
    its host vector holds 16 values, so its copy reads 2 values past it: the entries of grad_in
    those reach are left out of the comparison."""
    import torch

    def grad(tail: float) -> torch.Tensor:
        x = torch.zeros(8, 2, dtype=torch.float64, requires_grad=True)
        g = torch.tensor([*range(1, 17), tail, tail], dtype=torch.float64).view(3, 2, 3)
        x.unfold(0, 3, 2).backward(g)
        assert x.grad is not None
        return x.grad.flatten()

    a, b = grad(0.0), grad(1.0)
    got = _printed(stdout)
    if len(got) != a.numel():
        return False, f"printed {len(got)} values, expected {a.numel()}"
    keep = (a == b).tolist()
    return _close(
        [g for g, k in zip(got, keep, strict=True) if k], [float(v) for v, k in zip(a, keep, strict=True) if k]
    )


@check("test_aclnn_amp_update_scale.cpp")
def _amp_update_scale(stdout: str) -> tuple[bool, str]:
    """The documented update (aclnnAmpUpdateScale's doc in ops-math) of the example's scale 65536, tracker 900,
    found_inf 0, growth interval 1000: no growth yet, so the scale stays and the tracker counts on."""
    m = re.search(r"updatedScale = ([-\d.]+), updatedGrowthTracker = (-?\d+)", stdout)
    if not m:
        return False, "no result line printed"
    return _close([float(m.group(1)), float(m.group(2))], [65536.0, 901.0], 0, 0)


@check("test_aclnn_exp_segsum_backward.cpp")
def _exp_segsum_backward(stdout: str) -> tuple[bool, str]:
    """The documented steps (its doc in ops-math) on the example's all-ones (1,1,1,4,4) inputs."""
    import torch

    n = 4
    upper = torch.ones(n, n, dtype=torch.bool).triu()
    out = (torch.ones(n, n) * torch.ones(n, n)).masked_fill(upper, 0)
    out = out.flip(-2).cumsum(-2).flip(-2).masked_fill(upper, 0)
    return _close(_printed(stdout), out.sum(-1).tolist())


@check("test_aclnn_segsum.cpp")
def _exp_segsum(stdout: str) -> tuple[bool, str]:
    """The documented steps (the aclnnExpSegsum doc in ops-math) on the example's (1,1,1,4) input 0..3."""
    import torch

    n = 4
    x = torch.arange(float(n)).unsqueeze(-1).expand(n, n)
    x = x.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(), 0).cumsum(-2)
    x = x.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return _close(_printed(stdout), x.exp().flatten().tolist())


@check("test_aclnn_grouped_bias_add_grad.cpp")
def _grouped_bias_add_grad(stdout: str) -> tuple[bool, str]:
    """Per group (group_idx the cumulative row ends 5, 15, 30, 40), the sum of grad_y's rows: all ones, (40, 10)."""
    import torch

    ends = [5, 15, 30, 40]
    g = torch.ones(40, 10)
    sums = [g[a:b].sum(0) for a, b in zip([0, *ends[:-1]], ends, strict=True)]
    return _close(_printed(stdout), torch.stack(sums).flatten().tolist())


@check("test_aclnn_masked_select.cpp")
def _masked_select(stdout: str) -> tuple[bool, str]:
    import torch

    mask = torch.tensor([False] * 4 + [True] * 4)
    return _close(_printed(stdout), torch.arange(8.0)[mask].tolist())


@check("test_aclnn_chunk_cat.cpp")
def _chunk_cat(stdout: str) -> tuple[bool, str]:
    import torch

    xs = [torch.arange(1.0, 7.0).view(2, 3), torch.tensor([[7.0, 8, 9]])]
    return _close(_printed(stdout), torch._chunk_cat(xs, 0, 2).flatten().tolist())


@check("test_aclnn_transform_bias_rescale_qkv.cpp")
def _transform_bias_rescale_qkv(stdout: str) -> tuple[bool, str]:
    """PyTorch's _transform_bias_rescale_qkv on the example's qkv (3, 4, 144) = 0, 1, 2, ..., bias 0.5,
    3 heads: main prints q, k, v in turn."""
    import torch

    b, t, n, d = 3, 4, 3, 16
    qkv = torch.arange(b * t * 3 * n * d, dtype=torch.float64).view(b, t, 3 * n * d)
    q, k, v = torch._transform_bias_rescale_qkv(qkv, torch.full((3 * n * d,), 0.5, dtype=torch.float64), n)
    return _close(_printed(stdout), torch.cat([q.flatten(), k.flatten(), v.flatten()]).tolist())


@check("test_aclnn_sim_thread_exponential_st.cpp")
def _sim_thread_exponential_st(stdout: str) -> tuple[bool, str]:
    """This example checks its own cases (every value finite and positive) and prints a summary."""
    m = re.search(r"SUMMARY: (\d+) PASS, (\d+) FAIL", stdout)
    if not m:
        return False, "no SUMMARY line printed"
    return (int(m.group(2)) == 0 and int(m.group(1)) > 0), f"its own summary: {m.group(0)}"


def _pad_grad(shape: tuple[int, ...], pad: int, mode: str) -> list[float]:
    """The gradient of F.pad(x, [pad] * 2 * spatial_dims, mode) for x of `shape` and an all-ones
    grad_output: what the pad backward examples compute."""
    import torch
    import torch.nn.functional as F

    x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    y = F.pad(x, [pad] * 2 * (len(shape) - 2 if len(shape) > 2 else 1), mode=mode)
    y.backward(torch.ones_like(y))
    assert x.grad is not None
    return x.grad.flatten().tolist()


@check("test_aclnn_circular_pad.cpp")
def _circular_pad(stdout: str) -> tuple[bool, str]:
    import torch
    import torch.nn.functional as F

    x = torch.tensor([[[[1.0, 2], [3, 4]]]])
    return _close(_printed(stdout), F.pad(x, [1, 1, 1, 1], mode="circular").flatten().tolist())


@check("test_aclnn_circular_pad_grad.cpp")
def _circular_pad2d_backward(stdout: str) -> tuple[bool, str]:
    return _close(_printed(stdout), _pad_grad((1, 1, 2, 2), 1, "circular"))


@check("test_aclnn_circular_pad3d_backward.cpp")
def _circular_pad3d_backward(stdout: str) -> tuple[bool, str]:
    return _close(_printed(stdout), _pad_grad((1, 1, 2, 2, 2), 1, "circular"))


@check("test_aclnn_pad_v3_grad_replicate.cpp")
def _replication_pad1d_backward(stdout: str) -> tuple[bool, str]:
    return _close(_printed(stdout), _pad_grad((1, 2), 1, "replicate"))


@check("test_aclnn_replication_pad2d_backward.cpp")
def _replication_pad2d_backward(stdout: str) -> tuple[bool, str]:
    return _close(_printed(stdout), _pad_grad((1, 1, 2, 2), 1, "replicate"))


@check("test_aclnn_pad_v3_grad_replication.cpp")
def _replication_pad3d_backward(stdout: str) -> tuple[bool, str]:
    return _close(_printed(stdout), _pad_grad((1, 1, 2, 2, 2), 1, "replicate"))


@check("test_aclnn_reflection_pad1d_backward.cpp")
def _reflection_pad1d_backward(stdout: str) -> tuple[bool, str]:
    return _close(_printed(stdout), _pad_grad((1, 2), 1, "reflect"))


@check("test_acl_rfft1d.cpp")
def _rfft1d(stdout: str) -> tuple[bool, str]:
    """torch.fft.rfft of the example's 1..8 (norm "backward"), printed as (real, imaginary) pairs."""
    import torch

    y = torch.fft.rfft(torch.arange(1.0, 9.0, dtype=torch.float64), norm="backward")
    return _close(_printed(stdout), torch.view_as_real(y).flatten().tolist())


@check("test_aclnn_sinkhorn.cpp")
def _sinkhorn(stdout: str) -> tuple[bool, str]:
    """aclnnSinkhorn's documented iteration (its doc in ops-math) on the example's 3x2 cost, tol 1e-4."""
    import torch

    cost = torch.tensor([[45.0, 48], [65, 68], [68, 10]], dtype=torch.float64).exp()
    rows, cols = cost.shape
    d1 = torch.ones(cols, dtype=torch.float64)
    d1_old, err, eps = d1, 1e9, 1e-8
    while err > 1e-4:
        d0 = 1 / (rows * ((d1 * cost).sum(1) + eps))
        d1 = 1 / (cols * ((d0.unsqueeze(1) * cost).sum(0) + eps))
        err = float((d1_old - d1).abs().mean())
        d1_old = d1
    return _close(_printed(stdout), (d1 * cost * d0.unsqueeze(1)).flatten().tolist())


# ---------------------------------------------------------------------------------------------


def run_example(project: Path, corpus: Path, example: Path, timeout_s: float) -> ProjectResult:
    from kernel_gym.ascendc.aclnn import AclnnOp, aclnn_header_name, run_aclnn_example
    from kernel_gym.ascendc.errors import AscendCCompileError

    name = f"{project.relative_to(corpus)}:{example.name}"
    main = example.read_text(errors="replace")
    files, origin = project_files(project)
    headers_origin: dict[str, Path] = {}
    headers = include_headers(corpus, project, files, origin, headers_origin)
    # the example includes the op's aclnn header from CANN's package (aclnnop/aclnn_<op>.h)
    own = {p.rsplit("/", 1)[-1]: p for p in files if p.startswith("op_host/op_api/") and p.endswith(".h")}
    for inc, base in _aclnn_header(main):
        if base in own:
            headers[inc] = f'#include "proj/{own[base]}"\n'
    # another op's l0 header (conversion/fill/op_api/fill.h): the library's build compiles every
    # op's l0 sources (op_api/*.cpp but aclnn_*), so the l0 op beside the header is built too (PadV3's
    # l0 launches circular_pad's CircularPad kernel); what stays undefined gets the opdev layer's
    # weak stand-ins (the run names the op if its path calls one). That op's OpDef and shape
    # inference are not built (two OpDefs in one build are not this runner's): an l0 op that infers
    # its output shape (INFER_SHAPE) reports that it has none.
    extra: dict[str, Path] = {}
    for key, text in list(headers.items()):
        if "/op_api/" in key and re.search(r"\bnamespace\s+l0op\b", text):
            rel = key.removeprefix("proj/")
            files[f"op_host/kgsim_l0/{rel}"] = text
            src = headers_origin.get(key)
            impl = src.with_suffix(".cpp") if src is not None else None
            if src is not None and impl is not None and impl.is_file() and not impl.name.startswith("aclnn_"):
                extra[f"op_host/kgsim_l0/{rel[: -len(src.name)]}{impl.name}"] = impl
    if extra:  # the headers those sources reach
        more = {k: p.read_text(errors="replace") for k, p in extra.items()}
        files.update(more)
        origin.update(extra)
        for k, v in include_headers(corpus, project, more, origin, headers_origin).items():
            headers.setdefault(k, v)
    t0 = time.perf_counter()
    try:
        op = AclnnOp(files, soc=SOC, headers=headers)
        if op.generates_pair:  # an op without its own aclnn layer: CANN's build generates aclnn_<op>.h
            for inc, _base in _aclnn_header(main):
                headers.setdefault(inc, f'#include "../{aclnn_header_name(op.meta["op"])}"\n')
        calls = set(re.findall(r"\b(aclnn\w+?)GetWorkspaceSize\s*\(", main)) - set(op.defined_apis)
        if op.generates_pair:
            calls -= {f"aclnn{op.meta['op']}"}
        if calls:
            return ProjectResult(
                name, "needs_cann_library", f"its example calls {', '.join(sorted(calls))}", "out of scope"
            )
        run = run_aclnn_example(files, {example.name: main}, {}, soc=SOC, headers=headers, timeout_s=timeout_s)
    except AscendCCompileError as exc:
        blocker, owner = _classify(str(exc))
        errors = [ln for ln in str(exc).splitlines() if "error:" in ln]
        return ProjectResult(name, "fail", blocker, owner, time.perf_counter() - t0, {"errors": errors[:40]})
    except OSError as exc:
        blocker, owner = _classify(str(exc))
        return ProjectResult(name, "fail", blocker, owner, time.perf_counter() - t0)
    except (ValueError, TypeError, RuntimeError) as exc:
        return ProjectResult(name, "fail", f"{type(exc).__name__}: {exc}"[:240], "aclnn generator")
    secs = time.perf_counter() - t0
    detail = {"stdout": run.stdout[-1500:], "stderr": run.stderr[-1500:]}
    if run.returncode != 0 or run.error is not None:
        stand_in = re.search(r"(?:l0op|op)::(\w+): CANN's built-in l0 op is not simulated", run.stderr)
        if stand_in:  # an l0 op of another operator: where its header is, in the repository or CANN's
            l0 = stand_in.group(1)
            where = next(
                (
                    k.split("/op_api/")[0].rsplit("/", 1)[-1]
                    for k, v in headers.items()
                    if "/op_api/" in k and re.search(rf"\b{l0}\s*\(", v)
                ),
                "CANN's built-in ops",
            )
            dirs = [d for d in corpus.glob(f"*/{where}") if (d / "op_host").is_dir()]
            if dirs and not (dirs[0] / "op_host" / "config" / "ascend910b").is_dir():
                where += ", which has no Atlas A2 kernel in ops-math"
            blocker, owner = f"needs l0 op {l0} of another operator ({where}), not built with this one", "out of scope"
        elif re.search(r"INFER_SHAPE\((\w+)\): no InferShape", run.stderr):  # another op's l0 op, run
            other = re.search(r"INFER_SHAPE\((\w+)\): no InferShape", run.stderr)
            assert other is not None
            blocker = (
                f"needs op {other.group(1)}'s OpDef and shape inference (another operator's l0 op, whose OpDef"
                " is not built with this one)"
            )
            owner = "out of scope"
        elif "ADD_TO_LAUNCHER_LIST_AICPU" in run.stderr:  # the aclnn layer's path for it is an AI CPU kernel
            aicpu = re.search(r"ADD_TO_LAUNCHER_LIST_AICPU\((\w+)\)", run.stderr)
            kernel = aicpu.group(1) if aicpu else "?"
            blocker, owner = (
                f"its aclnn layer launches the AI CPU kernel {kernel} (AI CPU not simulated)",
                "out of scope",
            )
        elif "TilingFunc returned a failure" in run.stderr:
            blocker, owner = "the op's TilingFunc rejects its example's input", "simulator"
        elif run.error:
            blocker, owner = _classify(run.error)
        else:
            err = [ln for ln in (run.stderr + run.stdout).splitlines() if ln.strip()][-1:] or ["?"]
            blocker, owner = f"main exited {run.returncode}: {err[0][:200]}", "simulator"
        return ProjectResult(name, "fail", blocker, owner, secs, detail)
    fn = CHECKS.get(example.name)
    if fn is None:
        return ProjectResult(name, "ran_unchecked", "the example only prints; no reference here", "", secs, detail)
    ok, why = fn(run.stdout)
    if ok:
        return ProjectResult(name, "pass", "", "", secs, detail)
    return ProjectResult(name, "fail", f"printed results differ from PyTorch: {why}", "simulator", secs, detail)


def triage(project: Path, corpus: Path) -> ProjectResult | None:
    name = str(project.relative_to(corpus))
    if not examples(project):
        geir = sorted((project / "examples").glob("test_geir_*.cpp"))
        if geir:
            return ProjectResult(
                name, "needs_cann_library", "only a graph-engine example (test_geir_*: GE IR)", "out of scope"
            )
        return ProjectResult(name, "no_example", "no examples/test_aclnn_*.cpp", "corpus")
    return None


def _child(project: str, corpus: str, example: str, timeout_s: float, out: str) -> int:
    res = run_example(Path(project), Path(corpus), Path(example), timeout_s)
    Path(out).write_text(json.dumps(asdict(res)))
    return 0


def run_isolated(project: Path, corpus: Path, example: Path, timeout_s: float) -> ProjectResult:
    """One example in a child process (cann_ops_corpus.run_in_child)."""
    name = f"{project.relative_to(corpus)}:{example.name}"
    args = [str(project), "--corpus", str(corpus), "--example", str(example)]
    return run_in_child("experiments.ops_math_corpus", name, args, timeout_s)


_ORDER = ("fail", "needs_cann_library", "ran_unchecked", "pass")


def combine(name: str, results: list[ProjectResult]) -> ProjectResult:
    """An operator's row from its examples' results: the worst status, its blocker."""
    worst = min(results, key=lambda r: _ORDER.index(r.status) if r.status in _ORDER else 0)
    secs = sum(r.seconds for r in results)
    per = {r.project.split(":", 1)[-1]: f"{r.status}: {r.blocker}".rstrip(": ") for r in results}
    runs = {r.project.split(":", 1)[-1]: r.detail for r in results}
    return ProjectResult(name, worst.status, worst.blocker, worst.owner, secs, {"examples": per, "runs": runs})


# Blockers that name what the corpus calls rather than what the simulator lacks: functions of Ascend
# C's implementation (its impl/ headers, the matmul client) that no public header declares.
NOT_PUBLIC = {
    "DataCopyUB2GMImpl": "the UB-to-GM copy of Ascend C's implementation (impl/basic_api)",
    "AscendC::AscendCUtils::GetRsvdCnt": "an internal utility of Ascend C's implementation (impl/)",
    "AscendC::WaitEvent": "the matmul client's cross-core wait (impl/, no public declaration)",
}


def explain(r: ProjectResult) -> ProjectResult:
    """A row with its blocker said in the doc's terms: a non-public function the corpus calls (owner
    corpus), the shape output of an OutputShapeDependOnCompute op (OP_OUTSHAPE) the launcher does not
    pass."""
    m = re.match(r"missing_api: ([\w:]+)", r.blocker)
    if m and m.group(1) in NOT_PUBLIC:
        why = f"calls {m.group(1)}, {NOT_PUBLIC[m.group(1)]}: not a public API"
        return ProjectResult(r.project, r.status, why, "corpus (non-public API)", r.seconds, r.detail)
    if re.search(r"takes (\d+) GM_ADDR parameters, got (\d+)", r.blocker):
        why = (
            "its output's shape depends on the computation (OutputShapeDependOnCompute): the l0 op passes the"
            " shape output with OP_OUTSHAPE, an extra kernel parameter the simulator's launcher does not pass"
        )
        return ProjectResult(r.project, r.status, why, "simulator", r.seconds, r.detail)
    return r


def recheck(results: list[ProjectResult]) -> list[ProjectResult]:
    """The ran_unchecked examples of a --json file judged again by CHECKS added since, from the output
    the run stored (its last 1500 characters: only a complete one is judged)."""
    out = []
    for r in results:
        runs = r.detail.get("runs", {}) if r.status == "ran_unchecked" else {}
        per = []
        for ex, d in runs.items():
            status = r.detail["examples"].get(ex, "")
            stdout = d.get("stdout", "")
            if status.startswith("ran_unchecked") and ex in CHECKS and 0 < len(stdout) < 1500:
                ok, why = CHECKS[ex](stdout)
                res = ProjectResult(f"{r.project}:{ex}", "pass" if ok else "fail", "" if ok else why, "", 0.0, d)
                if not ok:
                    res.blocker, res.owner = f"printed results differ from PyTorch: {why}", "simulator"
            else:
                kind, _, blocker = status.partition(": ")
                res = ProjectResult(f"{r.project}:{ex}", kind, blocker, r.owner if kind == r.status else "", 0.0, d)
            per.append(res)
        out.append(combine(r.project, per) if per else r)
    return out


def render_section(results: list[ProjectResult], commit: str, command: str, notes: str = "") -> str:
    """The doc's ops-math section: the pass count, the blockers by frequency, a row per operator and
    ``notes`` (what this pass fixed, as a paragraph of Markdown)."""
    results = [explain(r) for r in results]
    counts = Counter(r.status for r in results)
    runnable = counts["pass"] + counts["fail"] + counts["ran_unchecked"]
    lines = [
        OPS_MATH_BEGIN,
        "## CANN's production library (ops-math), Atlas A2 operators",
        "",
        "Every operator of CANN's open-source production library (hicann/ops-math) with an Atlas A2",
        "configuration (`op_host/config/ascend910b/`; the experimental/ tree left out), built unmodified",
        "as the library's CMake build lays it out for that SoC (op_host/ with the ascend910b tiling",
        "directory, the op's own aclnn layer op_api/ on the op-API framework, op_kernel/ without the",
        "Ascend 950 `*_apt.cpp`/`arch35/`, the repository's `common/inc` and root on the include path,",
        "the tiling sources of its CMake DEPENDENCIES), and its aclnn example",
        "(`examples/test_aclnn_*.cpp`) run on it. The examples only print their results: a run counts",
        "as a pass when the printed values match a PyTorch computation of the example's own inputs",
        "(`CHECKS` in experiments/ops_math_corpus.py, from the op's documented formula); a clean run",
        "without such a check is `ran_unchecked`, never a pass.",
        "",
        f"Corpus: hicann/ops-math, commit `{commit}` (`<ops-math checkout>`, kept outside the repository);",
        f"SoC {SOC}. Run: `{command}`",
        "",
        f"**{counts['pass']} of {len(results)} operators pass** ({runnable} have an aclnn example on this op"
        f" alone and were run: {counts['pass']} pass, {counts['ran_unchecked']} ran unchecked,"
        f" {counts['fail']} fail);"
        f" {counts['needs_cann_library']} need another CANN library (the graph engine's IR, another"
        f" operator's aclnn), {counts['no_example']} have no aclnn example"
        + (f", {counts['not_run']} were not run" if counts["not_run"] else "")
        + ".",
        "",
        *([notes, ""] if notes else []),
        *section_tables(results, "operators", "operator"),
    ]
    return "\n".join([*lines, OPS_MATH_END]) + "\n"


def write_doc(section: str) -> None:
    """Replace (or append) the ops-math section of docs/ascendc_compat.md."""
    text = DOC.read_text()
    if OPS_MATH_BEGIN in text and OPS_MATH_END in text:
        a, b = text.index(OPS_MATH_BEGIN), text.index(OPS_MATH_END) + len(OPS_MATH_END) + 1
        text = text[:a] + section + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    DOC.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="an ops-math checkout")
    ap.add_argument("--only", nargs="*", default=None, help="operators (category/name) or categories to run")
    ap.add_argument("--experimental", action="store_true", help="also the operators under experimental/")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per step")
    ap.add_argument("--json", default=None, help="write the results as JSON here")
    ap.add_argument("--commit", default=None)
    ap.add_argument("--render", default=None, help="print the doc section from this --json file")
    ap.add_argument(
        "--write-doc", default=None, help="write the doc section of docs/ascendc_compat.md from this --json"
    )
    ap.add_argument("--recheck", default=None, help="judge a --json file's ran_unchecked examples by CHECKS again")
    ap.add_argument("--notes", default=None, help="with --write-doc: a Markdown file of what the pass fixed")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--example", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        return _child(a.child, a.corpus, a.example, a.timeout, a.out)
    corpus = Path(a.corpus).resolve()
    cmd = "python -m experiments.ops_math_corpus --corpus <ops-math checkout> --timeout 180 --json <file>"
    if a.recheck:
        done = recheck([ProjectResult(**d) for d in json.loads(Path(a.recheck).read_text())])
        Path(a.recheck).write_text(json.dumps([asdict(r) for r in done], indent=1))
        print(dict(Counter(r.status for r in done)))
        return 0
    if a.render or a.write_doc:
        done = [ProjectResult(**d) for d in json.loads(Path(a.render or a.write_doc).read_text())]
        notes = Path(a.notes).read_text().strip() if a.notes else ""
        section = render_section(done, _corpus_commit(corpus, a.commit), cmd, notes)
        if a.write_doc:
            write_doc(section)
        else:
            print(section)
        return 0
    todo = projects(corpus, a.experimental)
    if a.only:
        todo = [
            p
            for p in todo
            if any(
                str(p.relative_to(corpus)) == o.rstrip("/")
                or str(p.relative_to(corpus)).startswith(o.rstrip("/") + "/")
                for o in a.only
            )
        ]
    results = []
    for p in todo:
        name = str(p.relative_to(corpus))
        r = triage(p, corpus) or combine(name, [run_isolated(p, corpus, ex, a.timeout) for ex in examples(p)])
        results.append(r)
        print(f"{r.status:20s} {r.seconds:6.1f}s {r.project:45s} {r.blocker[:140]}", flush=True)
        if a.json:
            Path(a.json).write_text(json.dumps([asdict(x) for x in results], indent=1))
    counts = Counter(r.status for r in results)
    print(f"\npass {counts['pass']} / {len(results)}; {dict(counts)}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
