"""Correctness: trial inputs from several distributions and the output comparison."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from kernel_gym.tasks.spec import TaskSpec

__all__ = [
    "Comparison",
    "compare_outputs",
    "draw_inputs",
    "poison_",
    "published_parameter_seed",
    "row_reference",
    "sampled_reference",
    "seed_cpu",
]

#: inputs up to this many bytes make a non-row-separable reference affordable in full (a matmul of
#: transposed operands, 0.2 GiB at KernelBench's published shapes: seconds on two cores)
FULL_REFERENCE_BYTES = 1 << 30


def seed_cpu(seed: int) -> None:
    """Seed torch's CPU generator: what ``torch.manual_seed`` does on a CPU-only process, without
    its lazy per-accelerator bookkeeping (about 1 ms a call, paid per input draw)."""
    torch.default_generator.manual_seed(seed)


def published_parameter_seed(weight_seed: int) -> int:
    """The first seed of a published-shape build's lazy parameters (the answer's, in the runner,
    and the reference's, in the judge): from the verification's weight seed (48 bits), above
    every lazy input's seed (31 bits), so no parameter replays an input's stream."""
    return (1 << 48) + weight_seed


def draw_inputs(task_module: Any, seed: int, scale: float, device: str = "cpu") -> list[Any]:
    """One draw of the task's inputs under ``seed``, floating tensors multiplied by ``scale``.

    Scaling by a positive factor keeps every input in its domain (positive stays positive,
    integer targets are untouched) while moving the distribution, so an answer returning
    a constant tuned to one distribution fails on another. ``device="cuda"``: the task's
    ``get_inputs`` runs with the GPU as default device and its generator seeded (a published-shape
    input of 6 GiB is drawn in milliseconds there, seconds on the CPU); a seed gives the same
    values on every run of the same device type.
    """
    if device == "cpu":
        seed_cpu(seed)
        inputs = list(task_module.get_inputs())
    else:
        torch.manual_seed(seed)  # every device's generator
        with torch.device(device):
            inputs = list(task_module.get_inputs())
    if scale != 1.0:
        inputs = [x * scale if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    return inputs


def poison_(t: torch.Tensor) -> None:
    """Overwrite a tensor so its memory, once freed, cannot pass for a result."""
    if t.is_floating_point():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).max)


@dataclass
class Comparison:
    ok: bool
    error_class: str = "ok"
    message: str = ""
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    first_mismatch_index: list[int] | None = None
    mismatch_fraction: float | None = None
    hack_rule: str | None = None


def _finite_abs_mean(ref: torch.Tensor, all_finite: bool) -> float | None:
    """mean(|ref|) over the finite values (float64 ``ref``); None when there are none."""
    if all_finite:
        return float(ref.abs().mean()) if ref.numel() else None
    finite = ref[torch.isfinite(ref)]
    return float(finite.abs().mean()) if finite.numel() else None


def effective_atol(expected: torch.Tensor, atol: float) -> float:
    """The absolute tolerance scaled to the reference's magnitude.

    ``atol_eff = atol * min(1, mean(|ref|))`` over the finite reference values: an output of
    magnitude >= 1 keeps the preset's atol, a tiny one gets a proportionally tiny atol, so an
    all-zero answer cannot pass for outputs of size 1e-4 under atol = 1e-2.
    """
    ref = expected.detach().to(torch.float64)
    mean = _finite_abs_mean(ref, bool(torch.isfinite(ref).all()))
    return atol if mean is None else atol * min(1.0, mean)


_CHUNK = 1 << 16  # elements per float64 block on the CPU: two blocks stay in a core's L2
_DEVICE_CHUNK = 1 << 24  # elements per float64 block on a GPU (the copy there dominates)


@contextmanager
def _blocks_on(device: str) -> Iterator[int]:
    """The block size for ``device``; on the CPU one torch thread while blocking: cache-sized
    blocks gain nothing from threads, and on a busy machine torch's threads waiting for each
    other made a comparison of 64 M elements take 120 s instead of 2 s."""
    if device != "cpu":
        yield _DEVICE_CHUNK
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield _CHUNK
    finally:
        torch.set_num_threads(threads)


def _compare_finite_chunked(
    got: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float, device: str = "cpu", chunk: int = _CHUNK
) -> Comparison | None:
    """The common case (everything finite, every element within tolerance, the output not
    constant) in cache-sized float64 blocks; None sends the caller to the full comparison, which
    also explains a failure. Same formula as below, same result."""
    n = ref.numel()
    if n < 2:
        return None
    abs_sum, lo, hi, first = 0.0, float("inf"), float("-inf"), float(got[0])
    got_constant = True
    for i in range(0, n, chunk):
        r = ref[i : i + chunk].to(device, torch.float64)
        g = got[i : i + chunk].to(device, torch.float64)
        if not (bool(torch.isfinite(r).all()) and bool(torch.isfinite(g).all())):
            return None
        abs_sum += float(r.abs().sum())
        r_lo, r_hi = torch.aminmax(r)
        lo, hi = min(lo, float(r_lo)), max(hi, float(r_hi))
        got_constant = got_constant and bool((g == first).all())
    if got_constant and hi > lo:
        return None
    atol = atol * min(1.0, abs_sum / n)
    max_abs = max_rel = 0.0
    for i in range(0, n, chunk):
        r = ref[i : i + chunk].to(device, torch.float64)
        diff = (got[i : i + chunk].to(device, torch.float64) - r).abs_()
        r.abs_()
        if bool((diff > r * rtol + atol).any()):
            return None
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float(diff.div_(r.clamp_min_(1e-12)).max()))
    return Comparison(True, "ok", "", max_abs, max_rel, None, 0.0)


def _staged_on(t: torch.Tensor, device: str) -> torch.Tensor:
    """``t`` copied to ``device`` once, in its own dtype, when the device has room for it (the
    comparison then converts its float64 blocks there). Converting each block to float64 on the
    host and copying it over, twice per pass, made comparing a 2 GiB output on an H200 take 7 s."""
    if not device.startswith("cuda") or t.device.type != "cpu":
        return t
    free, _ = torch.cuda.mem_get_info(torch.device(device))
    need = t.numel() * t.element_size() + 4 * _DEVICE_CHUNK * 8  # and the float64 blocks beside it
    if free < 2 * need:  # room for the other side's copy too
        return t
    return t.to(device)


def compare_outputs(out: Any, expected: torch.Tensor, atol: float, rtol: float, device: str = "cpu") -> Comparison:
    """Shape, dtype, then ``|out - ref| <= effective_atol + rtol |ref|`` elementwise.

    NaN must match NaN and infinities must match in position and sign; an output that is
    constant (or all NaN) where the reference varies is a mismatch even when every element is
    within tolerance.
    """
    if not isinstance(out, torch.Tensor):
        return Comparison(False, "runtime_error", f"forward returned {type(out).__name__}, expected a torch.Tensor")
    if out.shape != expected.shape:
        return Comparison(
            False, "shape_mismatch", f"output shape {tuple(out.shape)} != reference shape {tuple(expected.shape)}"
        )
    if out.dtype != expected.dtype:
        return Comparison(False, "dtype_mismatch", f"output dtype {out.dtype} != reference dtype {expected.dtype}")
    got, ref = out.detach().reshape(-1), expected.detach().reshape(-1)
    got, ref = _staged_on(got, device), _staged_on(ref, device)
    with _blocks_on(device) as chunk:  # ``device``: where the float64 blocks are compared (the judge's GPU)
        fast = _compare_finite_chunked(got, ref, atol, rtol, device, chunk)
        if fast is not None:
            return fast
        return _compare_explained(got, ref, expected.shape, atol, rtol, device, chunk)


def _compare_explained(
    got: torch.Tensor,
    ref: torch.Tensor,
    shape: torch.Size,
    atol: float,
    rtol: float,
    device: str = "cpu",
    chunk: int = _CHUNK,
) -> Comparison:
    """The full comparison of two flat tensors, with what explains a failure, in float64 blocks
    of ``chunk`` elements (whole float64 copies of a GiB-sized output would take eight times its
    size): pass 1 the reference's magnitude and the constant-output test, pass 2 the tolerance."""
    n = ref.numel()
    abs_sum, finite_n = 0.0, 0
    lo, hi = float("inf"), float("-inf")
    first = got[0].to(device, torch.float64) if n else None
    got_constant = True
    for i in range(0, n, chunk):
        r = ref[i : i + chunk].to(device, torch.float64)
        finite = torch.isfinite(r)
        if not bool(finite.all()):
            r = r[finite]
        if r.numel():
            abs_sum, finite_n = abs_sum + float(r.abs().sum()), finite_n + r.numel()
            r_lo, r_hi = torch.aminmax(r)
            lo, hi = min(lo, float(r_lo)), max(hi, float(r_hi))
        if got_constant:
            g = got[i : i + chunk].to(device, torch.float64)
            assert first is not None  # n > 0 inside the loop
            got_constant = bool(g.isnan().all()) if bool(first.isnan()) else bool(torch.eq(g, first).all())
    if n >= 2 and finite_n >= 2 and hi > lo and got_constant:
        # an honest kernel that never writes its output looks the same (all NaN): a mismatch, not a hack
        return Comparison(
            False, "numerical_mismatch", "the output is constant (or all NaN) where the reference's varies"
        )
    atol = atol if finite_n == 0 else atol * min(1.0, abs_sum / finite_n)
    max_abs = max_rel = 0.0
    bad_n, first_bad = 0, None
    for i in range(0, n, chunk):
        g = got[i : i + chunk].to(device, torch.float64)
        r = ref[i : i + chunk].to(device, torch.float64)
        ref_abs = r.abs()
        if bool(torch.isfinite(r).all()) and bool(torch.isfinite(g).all()):
            diff = (g - r).abs_()  # the common case, in few passes
            bad = diff > ref_abs.mul(rtol).add_(atol)
        else:
            diff = (g - r).abs()
            both_nan = g.isnan() & r.isnan()
            both_inf = torch.isinf(g) & torch.isinf(r) & (g == r)
            diff = torch.where(both_nan | both_inf, torch.zeros_like(diff), diff)
            diff = torch.nan_to_num(diff, nan=float("inf"))
            bad = diff > (atol + rtol * ref_abs.nan_to_num(posinf=0.0, neginf=0.0))
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float(diff.div_(ref_abs.clamp_min_(1e-12)).max()))
        count = int(bad.sum())
        if count and first_bad is None:
            k = int(bad.nonzero()[0])
            first_bad = (i + k, float(g[k]), float(r[k]))
        bad_n += count
    if first_bad is None:
        return Comparison(True, "ok", "", max_abs, max_rel, None, 0.0)
    flat, got_v, ref_v = first_bad
    index = [int(i) for i in torch.unravel_index(torch.tensor(flat), shape)] if len(shape) else []
    return Comparison(
        False,
        "numerical_mismatch",
        f"{bad_n} of {n} elements differ beyond atol={atol:g}, rtol={rtol:g}; "
        f"first at index {index}: got {got_v:.6g}, expected {ref_v:.6g}",
        max_abs,
        max_rel,
        index,
        bad_n / n,
    )


def output_dtype_name(task: TaskSpec, expected: torch.Tensor) -> str:
    return str(expected.dtype).removeprefix("torch.")


def _close_in_chunks(x: torch.Tensor, y: torch.Tensor, rtol: float, atol: float, chunk: int = _CHUNK) -> bool:
    """``torch.allclose`` in float64, a chunk of elements at a time: a published-shape row can be
    hundreds of MB, and whole float64 copies of it would double the check's memory. Cache-sized
    chunks: with 1 M-element ones the probe of ConvTransposed2dSquareInputSquareKernel's two
    rows (135 M elements) spent 4.7 of its 10.3 CPU s here, 2.7 times what 64 K-element ones take."""
    if x.shape != y.shape:
        return False
    a, b = x.reshape(-1), y.reshape(-1)
    return all(
        torch.allclose(a[i : i + chunk].double(), b[i : i + chunk].double(), rtol=rtol, atol=atol, equal_nan=True)
        for i in range(0, a.numel(), chunk)
    )


def reference_rows_per_call(inputs: list[Any], out: Any = None, budget: int = 128 << 20) -> int:
    """Rows per reference call of a sampled check: at most 16, and no more than ``budget`` bytes
    of input rows plus twice the output rows (``out``: the kernel's output, shaped as the
    reference's; a meta tensor will do). Both count: a batch row of a 3-D pooling at published
    shapes is 512 MiB of input, one of a 16-to-128-channel conv 510 MiB of output, and a CPU
    convolution peaks at about twice its output (measured): 16 such rows took 2-5 GiB."""
    tensors = [x for x in inputs if isinstance(x, torch.Tensor) and x.dim() > 0]
    if not tensors:
        return 16
    batch = tensors[0].shape[0]
    row_bytes = sum(math.prod(x.shape[1:]) * x.element_size() for x in tensors if x.shape[0] == batch)
    if isinstance(out, torch.Tensor) and out.dim() > 0 and out.shape[0] == batch:
        row_bytes += 2 * math.prod(out.shape[1:]) * out.element_size()
    return max(1, min(16, budget // max(1, row_bytes)))


def sampled_reference(model: Any, inputs: list[Any], full_max_bytes: int = FULL_REFERENCE_BYTES) -> tuple[Any, str]:
    """``(rows, why)``: the reference output rows a sampled simulation's stores are checked against.

    ``rows`` is :func:`row_reference`'s rule where the model is row-separable; otherwise, when the
    tensor inputs total at most ``full_max_bytes``, the reference computed once in full and sliced
    (rows of a 0-d output are its one element). ``rows`` is None when neither holds, and ``why`` then
    says why the output cannot be checked; a one-element output (a loss summed over every block)
    is never checked: the sampled blocks alone store a partial value."""
    rows = row_reference(model, inputs)
    if rows is not None:
        return rows, ""
    nbytes = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
    if nbytes > full_max_bytes:
        return None, (
            f"the reference is not row-separable and its inputs ({nbytes / 2**30:.2f} GiB) exceed the "
            f"{full_max_bytes / 2**30:.2f} GiB a full reference may take"
        )
    with torch.no_grad():
        full = model(*inputs)
    full = full[0] if isinstance(full, (tuple, list)) else full
    if not isinstance(full, torch.Tensor):
        return None, f"the reference returns {type(full).__name__}, not a tensor"
    if full.numel() <= 1:
        return None, "a one-element output (a loss over every block): the sampled blocks store only a partial value"
    flat = full.reshape(-1) if full.dim() == 0 else full
    return (lambda r0, r1: flat[r0:r1]), ""


class RowReference:
    """``(r0, r1) -> output rows`` of a row-separable model, computed on input rows [r0, r1).

    ``slab`` is set where the model is separable along output dim 1 too (a matmul's columns, a
    pooling's or an activation's channels): ``slab(r0, r1, c0, c1)`` is then output rows [r0, r1)
    restricted to dim-1 indices [c0, c1), computed on the matching slices of the inputs, so a
    check of a few tiles does not compute whole rows (a sampled matmul's stored tiles touch every
    row: rows alone computed the whole product)."""

    def __init__(self, model: Any, inputs: list[Any], batch: int, first: Any, all_rows: bool) -> None:
        self.model, self.inputs, self.batch, self.first, self.all_rows = model, inputs, batch, first, all_rows
        self.slab: Callable[[int, int, int, int], torch.Tensor] | None = None

    def row_sliced(self, x: Any) -> bool:
        """Whether input ``x`` is cut to the rows asked for."""
        return (
            isinstance(x, torch.Tensor)
            and x.dim() > 0
            and x.shape[0] == self.batch
            and (self.all_rows or x is self.first)
        )

    def _args(self, r0: int, r1: int) -> list[Any]:
        return [x[r0:r1] if self.row_sliced(x) else x for x in self.inputs]

    def _run(self, args: list[Any]) -> Any:
        with torch.no_grad():
            y = self.model(*args)
        return y[0] if isinstance(y, (tuple, list)) else y

    def __call__(self, r0: int, r1: int) -> Any:
        return self._run(self._args(r0, r1))

    def column_rule(self, index: int, dim: int) -> Callable[[int, int, int, int], torch.Tensor]:
        """Slabs that slice input ``index`` along ``dim`` (after the row slicing) by [c0, c1)."""

        return _Slab(self, index, dim)


class _Slab:
    """Output rows [r0, r1) x dim-1 [c0, c1), from input ``index`` sliced along ``dim``;
    ``width`` is the output's dim-1 size (that input's along ``dim``), which a checked output's
    dim 1 must have."""

    def __init__(self, rows: RowReference, index: int, dim: int) -> None:
        self.rows, self.index, self.dim = rows, index, dim
        self.width = int(rows.inputs[index].shape[dim])

    def __call__(self, r0: int, r1: int, c0: int, c1: int) -> torch.Tensor:
        args = self.rows._args(r0, r1)
        args[self.index] = args[self.index].narrow(self.dim, c0, c1 - c0)
        return self.rows._run(args)


class _ParamSlab:
    """Output rows [r0, r1) x dim-1 [c0, c1), from the model with its parameters and buffers
    ``cuts`` (``(name, dim)``: each with the output's dim-1 size, ``width``, along ``dim``) cut to
    [c0, c1) along that dim: a Linear's or a convolution's weight along dim 0, a transposed
    convolution's (in, out, k...) along dim 1."""

    def __init__(self, rows: RowReference, cuts: tuple[tuple[str, int], ...], width: int) -> None:
        self.rows, self.cuts, self.width = rows, cuts, width
        tensors = dict(rows.model.named_parameters())
        tensors.update(rows.model.named_buffers())
        self.tensors = {n: (tensors[n], d) for n, d in cuts}

    @staticmethod
    def cuts_for(model: Any, width: int, dim: int = 0) -> tuple[tuple[str, int], ...]:
        """Each parameter's and buffer's dim of size ``width``: ``dim`` where it has that size,
        else dim 0 (a bias), else dim 1; tensors with neither are left whole."""
        if not isinstance(model, torch.nn.Module):
            return ()
        out = []
        for n, t in [*model.named_parameters(), *model.named_buffers()]:
            d = next((d for d in (dim, 0, 1) if d < t.dim() and t.shape[d] == width), None)
            if d is not None:
                out.append((n, d))
        return tuple(out)

    def __call__(self, r0: int, r1: int, c0: int, c1: int) -> torch.Tensor:
        cut = {n: t.detach().narrow(d, c0, c1 - c0) for n, (t, d) in self.tensors.items()}
        with torch.no_grad():
            y = torch.func.functional_call(self.rows.model, cut, tuple(self.rows._args(r0, r1)))
        return y[0] if isinstance(y, (tuple, list)) else y


def _peak(t: torch.Tensor) -> float:
    flat = t.detach().reshape(-1)
    return max(
        (float(flat[i : i + _CHUNK].abs().nan_to_num().max()) for i in range(0, flat.numel(), _CHUNK)),
        default=0.0,
    )


def _column_probes(width: int) -> list[tuple[int, int]]:
    """Dim-1 slices [c0, c1) a column rule is probed on: a prefix, an interior and a suffix."""
    return [(0, 1), (width // 2, width // 2 + 2), (width - 2, width)]


def _find_column_rule(
    rows: RowReference, both: torch.Tensor, cropped: bool = False
) -> Callable[[RowReference], Callable[[int, int, int, int], torch.Tensor]] | None:
    """How to slice output dim 1, as a function of the :class:`RowReference` to slice: the first
    (input index, dim) whose slicing commutes with the model on rows 0-1, else the model's
    parameters and buffers with dim 1's size along dim 0 (else along dim 1: a transposed
    convolution's weight is (in, out, k...)), all cut together (a Linear's weight rows and bias:
    the tiles' columns need those rows of a 4 GiB weight, not all of it), probed on a
    prefix, an interior and a suffix slice, so a model whose dim-1 entries depend on what precedes
    or follows them (a cumulative sum, a softmax over dim 1) or on their absolute position is
    refused. ``cropped``: ``rows`` holds :func:`_cropped_rows` inputs, whose dims past 1 are cut, so
    only dims the crop kept whole are candidates."""
    if both.dim() < 2 or both.shape[1] < 4:
        return None
    width = both.shape[1]
    tol = 1e-3 * (1.0 + _peak(both))
    probes = _column_probes(width)

    def commutes(slab: Callable[[int, int, int, int], Any]) -> bool:
        try:
            return all(
                isinstance(got := slab(0, 2, c0, c1), torch.Tensor)
                and got.shape == (2, c1 - c0, *both.shape[2:])
                and _close_in_chunks(got, both[:, c0:c1], 1e-3, tol)
                for c0, c1 in probes
            )
        except Exception:  # noqa: BLE001 - a model that cannot run on this slicing
            return False

    for index, x in enumerate(rows.inputs):
        if not isinstance(x, torch.Tensor):
            continue
        first_dim = 1 if rows.row_sliced(x) else 0
        last_dim = 2 if cropped and rows.row_sliced(x) else x.dim()
        for dim in range(first_dim, last_dim):
            if x.shape[dim] == width and commutes(rows.column_rule(index, dim)):
                return functools.partial(RowReference.column_rule, index=index, dim=dim)
    tried: set[tuple[tuple[str, int], ...]] = set()
    for dim in (0, 1):  # weights cut along dim 0 (Linear, Conv), else dim 1 (ConvTranspose: in, out, k...)
        cuts = _ParamSlab.cuts_for(rows.model, width, dim)
        if cuts and cuts not in tried and commutes(_ParamSlab(rows, cuts, width)):
            return functools.partial(_ParamSlab, cuts=cuts, width=width)
        tried.add(cuts)
    return None


#: the probe's crop of a row-sliced input's dims past 1 (spatial dims): enough for the kernels,
#: strides and dilations of KernelBench's convolutions and poolings
PROBE_EDGE = 64
#: the crop where an input has three spatial dims: a receptive field of 7 taps at dilation 3 spans
#: 19, and 64^3 made each probe row of KernelBench's ConvTranspose3d cost 2.5 CPU s (32^3: an eighth)
PROBE_EDGE_3D = 32


def _cropped_rows(rows: RowReference) -> RowReference | None:
    """``rows`` with every row-sliced input cut to its first :data:`PROBE_EDGE` entries along each
    dim past 1 (:data:`PROBE_EDGE_3D` where an input has three such dims), or None where no input
    has such a dim longer than that. At published shapes two rows of a convolution are GiBs (a 16
    -> 128 channel 3x3 conv over 1024 x 1024: 1 GiB of output, 2.6 GiB resident while computing
    it); a batch mixing the rows mixes them at any spatial size."""
    sliced = [x for x in rows.inputs if rows.row_sliced(x) and x.dim() > 2]
    edge = PROBE_EDGE_3D if any(x.dim() > 4 for x in sliced) else PROBE_EDGE
    crop = [
        x[(slice(None), slice(None), *(slice(0, edge) for _ in x.shape[2:]))]
        if rows.row_sliced(x) and x.dim() > 2 and max(x.shape[2:]) > edge
        else x
        for x in rows.inputs
    ]
    if all(c is x for c, x in zip(crop, rows.inputs, strict=True)):
        return None
    first = crop[next(i for i, x in enumerate(rows.inputs) if x is rows.first)]
    return RowReference(rows.model, crop, rows.batch, first, rows.all_rows)


#: parameters and buffers (bytes) from which a model's rows are compared on its parameter slabs
#: (:func:`_rows_separate`): each whole-row call reads all of them
SLAB_ROWS_MIN_PARAMETER_BYTES = 256 << 20


def _parameter_bytes(model: Any) -> int:
    if not isinstance(model, torch.nn.Module):
        return 0
    return sum(t.numel() * t.element_size() for t in itertools.chain(model.parameters(), model.buffers()))


def _two_rows(rows: RowReference) -> torch.Tensor | None:
    """Rows 0-1 computed together, or None where the model cannot run on that slicing."""
    try:
        both = rows(0, 2)
    except Exception:  # noqa: BLE001 - a model that cannot run on this slicing
        return None
    return both if isinstance(both, torch.Tensor) and both.dim() > 0 and both.shape[0] == 2 else None


def _rows_separate(
    rows: RowReference, both: torch.Tensor, slab: Callable[[int, int, int, int], torch.Tensor] | None = None
) -> bool:
    """Whether rows 0 and 1 computed apart equal ``both`` (rows 0-1 computed together). With
    ``slab`` (a parameter slab that commutes with the model on rows 0-1), compared on the column
    rule's probe slices only: each whole-row call of a matmul whose weight is 4 GiB of lazy memory
    refills all of it (MatmulSwishScaling: 6 CPU s a call), a slab only the weight rows it needs."""
    # loose: a batched and a one-row call may round differently; a slicing that breaks the
    # model changes values by far more
    tol = 1e-3 * (1.0 + _peak(both))
    try:
        if slab is None:
            # one row at a time: a published-shape row can be hundreds of MB
            return _close_in_chunks(both[:1], rows(0, 1), 1e-3, tol) and _close_in_chunks(
                both[1:], rows(1, 2), 1e-3, tol
            )
        return all(
            _close_in_chunks(slab(r, r + 1, c0, c1), both[r : r + 1, c0:c1], 1e-3, tol)
            for c0, c1 in _column_probes(both.shape[1])
            for r in (0, 1)
        )
    except Exception:  # noqa: BLE001 - a model that cannot run on this slicing
        return False


def row_reference(model: Any, inputs: list[Any]) -> RowReference | None:
    """A :class:`RowReference` computing output rows on input rows [r0, r1), or None where the
    model is not row-separable. Rows are sliced from every tensor whose dim 0 is the first input's,
    or failing that from the first input alone (a matmul's A); a rule is kept when rows 0-1
    computed together equal rows 0 and 1 computed apart (on its ``slab``'s probe slices where it
    has one). Its ``slab`` is probed against rows 0-1 computed together.
    Both probes run on the inputs cropped past dim 1 (:func:`_cropped_rows`) first, and on the
    inputs themselves where the crop does not run or does not separate."""
    tensors = [x for x in inputs if isinstance(x, torch.Tensor) and x.dim() > 0]
    if not tensors or tensors[0].shape[0] < 2:
        return None
    first, batch = tensors[0], tensors[0].shape[0]

    for all_rows in (True, False):
        rows = RowReference(model, inputs, batch, first, all_rows)
        cropped = _cropped_rows(rows)
        for probe in (cropped, rows):
            if probe is None or (both := _two_rows(probe)) is None:
                continue
            # the column rule first: where it cuts a model's large parameters, rows 0 and 1 apart are
            # compared on its slices; elsewhere whole (probes at three columns miss what depends on the
            # column's position where the inputs are zero: a tril of a product of triangular matrices)
            rule = _find_column_rule(probe, both, cropped=probe is cropped)
            slab = rule(probe) if rule is not None else None
            if not isinstance(slab, _ParamSlab) or _parameter_bytes(model) <= SLAB_ROWS_MIN_PARAMETER_BYTES:
                slab = None
            if not _rows_separate(probe, both, slab):
                continue
            if rule is not None:
                rows.slab = rule(rows)
            return rows
    return None
