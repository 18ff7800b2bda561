"""Sampled simulation: kernels at KernelBench's published shapes in bounded time and memory.

A 910B kernel over 12 GiB of tensors cannot be simulated by computing all of it on two CPU
cores. Three pieces make it tractable (the runtime side is ``src/rt_sampling.cpp``):

- **Block sampling** (:func:`sampled_simulation`): a launch of more than ``blocks`` AI Core
  groups runs ``blocks`` of them, evenly spaced, always the first and the last, plus the middle
  groups between two sampled ones whose costs differ enough to misjudge the skipped ones between
  them (a step in the per-block work is found by bisection; see ``src/rt_sampling.cpp``). Each skipped
  block gets the cycles, pipe busy time and GM bytes of the nearest sampled block of its core
  type, and every launch report carries ``blocks_skipped`` and the latency bracket
  ``[latency_lo_s, latency_hi_s]`` (every skipped block at the cheapest / the dearest sampled
  one). Kernels whose blocks wait for each other (SyncAll, cross-core flags) cannot be sampled:
  that is an ``unsupported_api`` fault naming the fix (``blocks=0`` simulates in full).
- **Lazy GM** (:func:`lazy_tensor`): a tensor whose memory is filled 64 KiB at a time when first
  touched, by the kernel or by PyTorch. Inputs are a counter-based pseudo-random stream (a
  value depends only on its index and the seed, so evicted chunks refill identically and the
  reference can be computed on any slice); resident clean input chunks are evicted above
  ``resident_cap_bytes``. Outputs fill with the verifier's poison (NaN, the type's max, true),
  so a kernel that does not write its share cannot match. Written chunks above three quarters
  of the cap go to an unlinked temporary file (in ``$TMPDIR``) and are read back when touched,
  so the resident lazy bytes stay within the cap however much the sampled blocks write.
- **Checking the sampled share** (:func:`check_sampled_output`): the spans of GM bytes the
  sampled blocks stored into the output are compared with the reference computed on just the
  rows covering them.

Example (a 12 GiB ReLU; ``relu_do`` is the kernel's host function)::

    with sampled_simulation(blocks=5):
        x = lazy_tensor((4096, 393216), torch.float32, "normal", seed=1)
        y = lazy_tensor((4096, 393216), torch.float32, "poison")
        mod.relu_do(40, None, x, y, x.numel())
        check = check_sampled_output(y, lambda r0, r1: torch.relu(x[r0:r1]))
    mod.last_run.latency_s, mod.last_run.latency_lo_s, mod.last_run.latency_hi_s, check.ok
"""

from __future__ import annotations

import bisect
import ctypes
import math
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from kernel_gym.ascendc.loader import runtime_library
from kernel_gym.dispatch_mode import PlainDispatchMode

__all__ = [
    "CHECKABLE_FALLBACK_ORDER",
    "LOOP_FALLBACK_ORDER",
    "LazyOutputs",
    "LazyParameters",
    "SampledCheck",
    "check_sampled_output",
    "input_specs",
    "is_lazy",
    "is_loop_refusal",
    "lazy_inputs",
    "lazy_stats",
    "lazy_tensor",
    "untracked_store_bytes",
    "run_sampled",
    "run_with_loop_fallback",
    "sampled_simulation",
    "set_lazy_resident_cap",
    "written_spans",
]

_FILLS = {"zeros": 0, "normal": 1, "uniform": 2, "randint": 3, "poison": 4}
_DTYPES = {
    torch.float32: 0,
    torch.float16: 1,
    torch.bfloat16: 2,
    torch.float64: 3,
    torch.int8: 4,
    torch.uint8: 5,
    torch.int16: 6,
    torch.int32: 7,
    torch.int64: 8,
    torch.bool: 9,
}


# the runtime's loop sampling modes
_LOOP_MODES: dict[bool | str, int] = {False: 0, True: 1, "all": 2, "all_checked": 3}
_ACTIVE = 0  # sampled_simulation blocks running (a caller's own settings win over the loaders' option)
_TYPED: set[int] = set()  # runtime libraries whose sampling functions have their ctypes signatures


def _rt() -> ctypes.CDLL:
    _, rt = runtime_library()
    if id(rt) not in _TYPED:
        rt.kgsim_set_sampling.argtypes = [ctypes.c_longlong]
        rt.kgsim_get_sampling.restype = ctypes.c_longlong
        rt.kgsim_set_loop_sampling.argtypes = [ctypes.c_int]
        rt.kgsim_set_scalar_fast_forward.argtypes = [ctypes.c_int]
        rt.kgsim_get_scalar_fast_forward.restype = ctypes.c_int
        rt.kgsim_get_loop_sampling.restype = ctypes.c_int
        rt.kgsim_lazy_alloc.restype = ctypes.c_void_p
        rt.kgsim_lazy_alloc.argtypes = [
            ctypes.c_ulonglong,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_ulonglong,
            ctypes.c_double,
            ctypes.c_double,
        ]
        rt.kgsim_lazy_free.argtypes = [ctypes.c_void_p]
        rt.kgsim_lazy_set_cap.argtypes = [ctypes.c_ulonglong]
        rt.kgsim_lazy_stats.argtypes = [ctypes.POINTER(ctypes.c_double)]
        rt.kgsim_track_writes.argtypes = [ctypes.c_int]
        rt.kgsim_written_spans.restype = ctypes.c_ulonglong
        rt.kgsim_written_spans.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_ulonglong]
        rt.kgsim_untracked_spans.restype = ctypes.c_ulonglong
        rt.kgsim_untracked_spans.argtypes = [ctypes.POINTER(ctypes.c_ulonglong), ctypes.c_ulonglong]
        rt.kgsim_lazy_is.argtypes = [ctypes.c_void_p]
        rt.kgsim_gen_bind_data.restype = ctypes.c_void_p
        rt.kgsim_gen_bind_data.argtypes = [ctypes.c_int64]
        rt.kgsim_gen_bind_detach.restype = ctypes.c_void_p
        rt.kgsim_gen_bind_detach.argtypes = [ctypes.c_int64]
        rt.kgsim_gen_bind_drop.argtypes = [ctypes.c_void_p]
        _TYPED.add(id(rt))
    return rt


@contextmanager
def sampled_simulation(
    blocks: int = 5,
    resident_cap_bytes: int = 2 << 30,
    *,
    loops: bool | str = False,
    scalar_fast_forward: bool = True,
) -> Iterator[None]:
    """Run launches made inside the block on a sample of ``blocks`` block groups (0: all).

    :param blocks: AI Core groups simulated per launch (launches with no more run in full);
        at least 2 so that the first and the last block, where tails live, are both sampled. From
        4 up they run in two stages: the first, the middle one and the last group, then the others
        only where those three cost differently (more than 1 % apart), so a launch of equal
        blocks costs 3 blocks of host time. More run where neighbouring groups differ (a step
        in the per-block work, found by bisection).
    :param resident_cap_bytes: resident bytes of lazy tensors: clean input chunks above it are
        evicted oldest first (they refill identically when touched again), written chunks above
        three quarters of it are spilled to a temporary file (read back when touched again).
    :param loops: loop sampling inside each simulated block but the first (block index 0 runs
        in full): once a block's tile loop repeats with the same costs, its middle iterations
        are skipped and extrapolated (see ``docs/ascendc_simulator.md``). Launch reports say how
        many blocks were loop-sampled (``loop_sampled_blocks``) and why a block ran in full
        (``loop_fallback``). ``"all"``: block 0 loop-samples too (a launch of one block, or a
        long block 0, then costs only its first and last iterations); the sampled check then
        covers every sampled block's iterations before its first skip. ``"all_checked"``: as
        ``"all"``, but block 0's skips keep every call's work (only their timing is extrapolated)
        until it has stored something the check sees, so a kernel whose every block stores only
        after a skipped loop (a per-tile reduction, then the tile's store) still has block 0's
        first stores to check, without block 0 in full (``True``). A block that skipped
        and then waits for another is an ``unsupported_api`` fault: :func:`run_with_loop_fallback`
        retries with less loop sampling.
    :param scalar_fast_forward: with block sampling on (``blocks`` > 0), each simulated block's
        scalar GM accesses (GetValue/SetValue/operator(), raw ``__gm__`` pointers) past its first
        window alternate between detailed windows (data-cache model, race detector) and fast
        stretches charged the windows' mean cycles per access (bounds, data and GM bytes kept);
        detailed is about 1/32 of them. Launch reports count the fast ones (``scalar_ff_accesses``)
        and widen the bracket by three standard errors of the windows' mean over them (see
        ``docs/ascendc_simulator.md``). ``False``: every access detailed.
    Written-span tracking starts (empty) with the block; what it recorded stays readable after
    it until the next sampled simulation starts (see :func:`written_spans`).
    """
    if blocks == 1 or blocks < 0:
        raise ValueError(
            "sampled_simulation(blocks=...) needs 0 (simulate in full) or at least 2 (first and last block)"
        )
    global _ACTIVE
    rt = _rt()
    before = int(rt.kgsim_get_sampling())
    loops_before = int(rt.kgsim_get_loop_sampling())
    ff_before = int(rt.kgsim_get_scalar_fast_forward())
    if loops not in _LOOP_MODES:
        raise ValueError(f"sampled_simulation(loops=...) takes False, True, 'all' or 'all_checked', not {loops!r}")
    rt.kgsim_set_sampling(int(blocks))
    rt.kgsim_set_loop_sampling(_LOOP_MODES[loops])
    rt.kgsim_set_scalar_fast_forward(int(bool(scalar_fast_forward)))
    rt.kgsim_lazy_set_cap(int(resident_cap_bytes))
    rt.kgsim_track_writes(1)
    _ACTIVE += 1
    try:
        yield
    finally:
        _ACTIVE -= 1
        rt.kgsim_set_sampling(before)
        rt.kgsim_set_loop_sampling(loops_before)
        rt.kgsim_set_scalar_fast_forward(ff_before)
        rt.kgsim_track_writes(0)


LOOP_FALLBACK_ORDER: tuple[bool | str, ...] = ("all", True, False)
# the modes, in turn, of a rerun whose "all" run left nothing to check (every sampled block stored
# only after skipping loop iterations)
CHECKABLE_FALLBACK_ORDER: tuple[bool | str, ...] = ("all_checked", True, False)
_OPTION_CAP = 1 << 30  # clean lazy input chunks under the loaders' option: with the process, under 2 GiB


def run_sampled(blocks: int, call: Callable[[], Any]) -> Any:
    """``call()`` under :func:`sampled_simulation` of ``blocks`` groups, for the ``sampled``
    option of the loaders: every sampled block loop-samples (``loops="all"``, so a launch of one
    block or a long block 0 costs only its first and last iterations), stepping down through
    :data:`LOOP_FALLBACK_ORDER` where loop-sampled blocks wait for each other
    (:func:`run_with_loop_fallback`: ``call`` runs again from the start). Plain ``call()`` when
    ``blocks`` is 0 or a sampled simulation is running already (the caller's settings win).
    Written spans stay readable after it."""
    if blocks <= 0 or _ACTIVE:
        return call()

    def attempt(loops: bool | str) -> Any:
        with sampled_simulation(blocks=blocks, resident_cap_bytes=_OPTION_CAP, loops=loops):
            return call()

    return run_with_loop_fallback(attempt)[0]


def is_loop_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` is the runtime's refusal of a loop-sampled block that then waited for or
    signalled another block (rerunning with less loop sampling simulates it)."""
    return getattr(exc, "error_class", "") == "unsupported_api" and "cannot be loop sampled" in str(exc)


def run_with_loop_fallback(
    run: Callable[[bool | str], Any], order: tuple[bool | str, ...] = LOOP_FALLBACK_ORDER
) -> tuple[Any, bool | str]:
    """``run(loops)`` with the first loop-sampling mode of ``order`` that the kernel takes: a
    kernel whose loop-sampled blocks wait for each other is refused (:func:`is_loop_refusal`)
    and run again with the next mode (block 0 in full, then no loop sampling). Returns the
    result and the mode it ran with; any other error propagates."""
    for i, loops in enumerate(order):
        try:
            return run(loops), loops
        except Exception as exc:
            if i + 1 == len(order) or not is_loop_refusal(exc):
                raise
    raise ValueError("run_with_loop_fallback needs at least one loop-sampling mode")


def lazy_tensor(
    shape: tuple[int, ...] | torch.Size,
    dtype: torch.dtype = torch.float32,
    fill: str = "normal",
    *,
    seed: int = 0,
    low: float = 0.0,
    high: float = 1.0,
    mean: float = 0.0,
    std: float = 1.0,
) -> torch.Tensor:
    """A CPU tensor whose memory is filled when first touched (see the module docstring).

    :param shape: the tensor's shape (any size the address space holds; nothing is resident yet).
    :param fill: "normal" (mean, std), "uniform" [low, high), "randint" [low, high) (integers),
        "zeros", or "poison" (NaN / the type's max / true: for outputs).
    :param seed: the pseudo-random stream; element i of two tensors with the same seed, fill and
        dtype holds the same value.
    """
    if fill not in _FILLS:
        raise ValueError(f"lazy_tensor fill must be one of {sorted(_FILLS)}, not {fill!r}")
    if dtype not in _DTYPES:
        raise ValueError(f"lazy_tensor dtype must be one of {sorted(str(d) for d in _DTYPES)}, not {dtype}")
    numel = math.prod(int(s) for s in shape)
    esize = torch.empty((), dtype=dtype).element_size()
    nbytes = max(1, numel * esize)
    a, b = (mean, std) if fill == "normal" else (low, high)
    rt = _rt()
    addr = rt.kgsim_lazy_alloc(nbytes, _FILLS[fill], _DTYPES[dtype], seed & (2**64 - 1), float(a), float(b))
    if not addr:
        raise MemoryError(f"cannot reserve {nbytes} bytes of address space for a lazy tensor (or 256 are live already)")
    return _wrap(addr, numel * esize, tuple(int(s) for s in shape), dtype, lambda: rt.kgsim_lazy_free(addr))


def is_lazy(t: torch.Tensor) -> bool:
    """Whether ``t``'s memory starts a lazy region (a :func:`lazy_tensor` or a lazy binding output)."""
    return bool(_rt().kgsim_lazy_is(t.data_ptr())) if t.numel() else False


def _wrap(
    addr: int, nbytes: int, shape: tuple[int, ...], dtype: torch.dtype, release: Callable[[], None]
) -> torch.Tensor:
    raw = np.ctypeslib.as_array((ctypes.c_uint8 * max(1, nbytes)).from_address(addr))
    weakref.finalize(raw, release)  # the torch tensor keeps `raw` alive
    return torch.from_numpy(raw)[:nbytes].view(dtype).view(shape)


def handover_lazy_result(index: int, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor | None:
    """Under sampled simulation, result ``index`` of the last MultiKernelBench binding call as a
    view of the binding's own buffer (kept alive with it): a lazy output is not read in full, and
    the written spans refer to that buffer. None otherwise (the caller copies)."""
    if not _sampling_active():
        return None
    rt = _rt()
    addr = rt.kgsim_gen_bind_data(index)
    if not addr:
        return None
    handle = rt.kgsim_gen_bind_detach(index)
    nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
    return _wrap(addr, nbytes, shape, dtype, lambda: rt.kgsim_gen_bind_drop(handle))


def _sampling_active() -> bool:
    return bool(_TYPED) and int(_rt().kgsim_get_sampling()) > 0


class _Origins(TorchFunctionMode):
    """Which torch function made each tensor of a ``get_inputs`` run, with its arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.made: dict[int, tuple[str, tuple[Any, ...], dict[str, Any], torch.Tensor]] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if isinstance(out, torch.Tensor):  # the tensor is kept so that its id stays its own
            self.made[id(out)] = (getattr(func, "__name__", ""), tuple(args), dict(kwargs), out)
        return out


def _fill_like_reference(
    x: torch.Tensor, origin: tuple[str, tuple[Any, ...], dict[str, Any], Any] | None
) -> dict[str, Any]:
    """The lazy fill that draws from the distribution the reference's ``get_inputs`` uses for
    ``x``: ``torch.rand`` uniform [0, 1), ``torch.randn`` normal, ``torch.randint`` its range,
    zeros and constant fills as such. Anything else: floats standard normal, integers in [0, 2)
    (indices and labels stay in range)."""
    name, args, kwargs, _ = origin if origin is not None else ("", (), {}, None)
    if name in ("triu", "tril") and args and isinstance(args[0], torch.Tensor):
        # a triangle of a draw (KernelBench's triangular matmuls): the draw's fill, then the mask, so
        # a kernel that relies on the zeros is checked on the inputs it was written for
        base = _fill_like_reference(args[0], origins_of(args[0]))
        diagonal = args[1] if len(args) > 1 else kwargs.get("diagonal", 0)
        return {**base, "triangle": "upper" if name == "triu" else "lower", "diagonal": int(diagonal)}
    if name in ("rand", "rand_like"):
        return {"fill": "uniform", "low": 0.0, "high": 1.0}
    if name in ("randn", "randn_like"):
        return {"fill": "normal"}
    if name == "randint":
        ints = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
        low, high = (
            (kwargs.get("low", 0), kwargs.get("high"))
            if "high" in kwargs
            else ((ints[0], ints[1]) if len(ints) >= 2 else (0, ints[0] if ints else 2))
        )
        return {"fill": "randint", "low": float(low), "high": float(high if high is not None else 2)}
    if name in ("zeros", "zeros_like"):
        return {"fill": "zeros"}
    constant = {"ones": 1.0, "ones_like": 1.0}.get(name)
    if name in ("full", "full_like") and len(args) >= 2 and isinstance(args[1], (int, float)):
        constant = float(args[1])
    if constant is not None:  # a uniform draw from [c, c) is c
        return {"fill": "uniform", "low": constant, "high": constant}
    return {"fill": "normal"} if x.is_floating_point() else {"fill": "randint", "low": 0, "high": 2}


_ORIGINS: _Origins | None = None  # the get_inputs run input_specs is describing


def origins_of(x: torch.Tensor) -> tuple[str, tuple[Any, ...], dict[str, Any], Any] | None:
    """What made ``x`` in the ``get_inputs`` run being described (None outside one)."""
    return _ORIGINS.made.get(id(x)) if _ORIGINS is not None else None


def input_specs(get_inputs: Callable[[], Any], seed: int) -> list[dict[str, Any]]:
    """Describe a task's inputs at their real shapes without allocating them (a meta-device run
    of ``get_inputs``): per input either ``{"value": x}`` or the :func:`lazy_tensor` arguments,
    drawn as the reference draws it (``_fill_like_reference``: a kernel checked only on
    ``torch.rand`` inputs is checked on [0, 1) here too)."""
    global _ORIGINS
    origins = _Origins()
    with torch.device("meta"), origins:
        values = list(get_inputs())
    _ORIGINS = origins
    try:
        return _specs_of(values, origins, seed)
    finally:
        _ORIGINS = None


def _specs_of(values: list[Any], origins: _Origins, seed: int) -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = []
    for i, x in enumerate(values):
        if not isinstance(x, torch.Tensor):
            specs.append({"value": x})
            continue
        spec: dict[str, Any] = {"shape": list(x.shape), "dtype": str(x.dtype).removeprefix("torch."), "seed": seed + i}
        spec.update(_fill_like_reference(x, origins.made.get(id(x))))
        specs.append(spec)
    return specs


def lazy_inputs(specs: list[dict[str, Any]]) -> list[Any]:
    """The inputs :func:`input_specs` describes; equal specs give equal values in any process."""
    out: list[Any] = []
    for spec in specs:
        if "value" in spec:
            out.append(spec["value"])
            continue
        dtype = getattr(torch, str(spec["dtype"]))
        kw = {k: float(spec[k]) for k in ("low", "high") if k in spec}
        if "triangle" in spec and spec["fill"] in ("uniform", "normal") and dtype.is_floating_point:
            # a triangle's zeros are not a lazy fill: drawn in memory from a generator of the seed (the
            # same values in any process), then masked
            gen = torch.Generator().manual_seed(int(spec["seed"]))
            shape = tuple(spec["shape"])
            if spec["fill"] == "uniform":
                lo, hi = kw.get("low", 0.0), kw.get("high", 1.0)
                x = torch.rand(shape, generator=gen, dtype=dtype) * (hi - lo) + lo
            else:
                x = torch.randn(shape, generator=gen, dtype=dtype)
            mask = torch.triu if spec["triangle"] == "upper" else torch.tril
            out.append(mask(x, int(spec.get("diagonal", 0))))
            continue
        out.append(lazy_tensor(tuple(spec["shape"]), dtype, spec["fill"], seed=int(spec["seed"]), **kw))
    return out


def spec_bytes(specs: list[dict[str, Any]]) -> int:
    """Bytes of the tensors ``specs`` describes."""
    total = 0
    for spec in specs:
        if "shape" in spec:
            total += math.prod(spec["shape"]) * torch.empty((), dtype=getattr(torch, spec["dtype"])).element_size()
    return total


class LazyOutputs(TorchFunctionMode):
    """Inside it, large ``torch.empty``/``empty_like``/``zeros``/``zeros_like``/``new_empty``/
    ``new_zeros`` CPU allocations are lazy tensors: poisoned for the empty family, zeros for the
    zeros family (as their contracts say), so an answer's output buffer at published shapes costs
    only what its sampled blocks write."""

    _EMPTY = {torch.empty, torch.empty_like, torch.Tensor.new_empty}
    _ZEROS = {torch.zeros, torch.zeros_like, torch.Tensor.new_zeros}

    def __init__(self, min_bytes: int = 16 << 20) -> None:
        super().__init__()
        self.min_bytes = min_bytes

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = dict(kwargs or {})
        if func in self._EMPTY or func in self._ZEROS:
            like = args[0] if args and isinstance(args[0], torch.Tensor) else None
            device = kwargs.get("device", like.device if like is not None else None)
            if device is None or torch.device(device).type == "cpu":
                meta = func(*args, **{**kwargs, "device": "meta"})  # the shape and dtype it would have
                if meta.numel() * meta.element_size() >= self.min_bytes and meta.dtype in _DTYPES:
                    fill = "poison" if func in self._EMPTY else "zeros"
                    return lazy_tensor(tuple(meta.shape), meta.dtype, fill)
        return func(*args, **kwargs)


_aten = torch.ops.aten


class LazyParameters(PlainDispatchMode):
    """Build a model at published shapes with its large parameters and buffers lazy: inside it,
    CPU allocations of at least ``min_bytes`` (``torch.empty`` & co., ``zeros``, ``ones``, ``full``,
    ``rand``, ``randn``) are :func:`lazy_tensor` regions, and an in-place initialisation of a whole
    such region (``uniform_``, ``normal_``, ``zero_``, ``fill_``: what ``nn.init`` and the layers'
    ``reset_parameters`` come down to) points the tensor at a fresh lazy region of that
    distribution instead of writing it, seeded ``seed``, ``seed + 1``, ... in allocation order (the
    same model built twice holds the same values). The reference and the kernel read the same
    tensors, so they see the same values; a 4 GiB ``nn.Linear`` weight costs only the chunks the
    sampled blocks and the check touch, within the lazy resident cap. Any other operation on such a
    tensor runs as usual on its lazy memory (what it writes stays, resident or spilled): values are
    never lost, only the memory saving. The draws skipped leave PyTorch's generator where it was,
    so the small parameters made after a lazy one differ from a plain build's.

    ``seed_constants`` False: only random regions (``rand``, ``randn``, ``uniform_``, ``normal_``)
    take a seed, counted in the order of those draws; a constant region (zeros, ones, ``full``, the
    ``empty`` a layer then initialises) takes none. Two builds that differ by a constant buffer, or
    by ``torch.randn`` against ``torch.empty(...).normal_()``, then draw the same values, as plain
    builds seeded alike would (the verifier's published-shape check builds the answer's model and
    the reference's in two processes). ``draws`` lists each region made, in order, as
    ``(shape, dtype, fill, seed)``: what a build drew, to compare two builds by."""

    _FACTORIES: dict[Any, str] = {
        _aten.empty.memory_format: "zeros",
        _aten.zeros.default: "zeros",
        _aten.ones.default: "ones",
        _aten.full.default: "full",
        _aten.rand.default: "uniform",
        _aten.randn.default: "normal",
    }

    def __init__(self, seed: int = 0, min_bytes: int = 16 << 20, *, seed_constants: bool = True) -> None:
        super().__init__()
        self.seed, self.min_bytes, self.seed_constants = seed, min_bytes, seed_constants
        self.made = 0  # seeded lazy regions drawn so far (the next one's seed offset)
        self.draws: list[tuple[tuple[int, ...], str, str, int | None]] = []
        self._mine: set[int] = set()  # base addresses of the regions this mode made

    def _draw(self, shape: tuple[int, ...], dtype: torch.dtype, fill: str, **kw: float) -> torch.Tensor:
        if fill == "uniform":
            kw = {"low": kw.get("low", 0.0), "high": kw.get("high", 1.0)}
        elif fill == "normal":
            kw = {"mean": kw.get("mean", 0.0), "std": kw.get("std", 1.0)}
        random = fill == "normal" or (fill == "uniform" and kw["low"] != kw["high"])  # [c, c) is c
        seed: int | None = None
        if random or self.seed_constants:
            seed = self.seed + self.made
            self.made += 1
        t = lazy_tensor(shape, dtype, fill, seed=seed or 0, **kw)
        what = f"{fill}({', '.join(f'{v:g}' for v in kw.values())})" if random else f"constant {kw.get('low', 0.0):g}"
        self.draws.append((shape, str(dtype).removeprefix("torch."), what, seed))
        self._mine.add(t.data_ptr())
        return t

    def _whole(self, t: Any) -> bool:
        """Whether ``t`` is all of a lazy region this mode made (not a slice of one)."""
        return (
            isinstance(t, torch.Tensor)
            and t.data_ptr() in self._mine
            and t.is_contiguous()
            and t.untyped_storage().nbytes() == t.numel() * t.element_size()
        )

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = dict(kwargs or {})
        kind = self._FACTORIES.get(func)
        if kind is not None and args:
            dtype = kwargs.get("dtype") or torch.get_default_dtype()
            device = kwargs.get("device")
            shape = tuple(int(s) for s in args[0])
            nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
            if (
                (device is None or torch.device(device).type == "cpu")
                and kwargs.get("layout") in (None, torch.strided)
                and dtype in _DTYPES
                and nbytes >= self.min_bytes
            ):
                if kind in ("ones", "full"):
                    value = 1.0 if kind == "ones" else float(args[1])
                    return self._draw(shape, dtype, "uniform", low=value, high=value)  # [c, c) is c
                return self._draw(shape, dtype, kind)
        fill = self._fill_of(func, args, kwargs)
        if fill is not None and self._whole(args[0]):
            t = args[0]
            name, kw = fill
            t.set_(self._draw(tuple(t.shape), t.dtype, name, **kw))  # the old region goes with its last view
            return t
        return func(*args, **kwargs)

    @staticmethod
    def _fill_of(func: Any, args: tuple, kwargs: dict[str, Any]) -> tuple[str, dict[str, float]] | None:
        """The lazy fill an in-place initialisation draws, or None for any other operation."""
        if func is _aten.uniform_.default:
            lo = args[1] if len(args) > 1 else kwargs.get("from", 0.0)
            hi = args[2] if len(args) > 2 else kwargs.get("to", 1.0)
            return "uniform", {"low": float(lo), "high": float(hi)}
        if func is _aten.normal_.default:
            mean = args[1] if len(args) > 1 else kwargs.get("mean", 0.0)
            std = args[2] if len(args) > 2 else kwargs.get("std", 1.0)
            return "normal", {"mean": float(mean), "std": float(std)}
        if func is _aten.zero_.default:
            return "zeros", {}
        if func is _aten.fill_.Scalar and len(args) > 1:
            return "uniform", {"low": float(args[1]), "high": float(args[1])}
        return None


@dataclass
class LazyStats:
    resident_bytes: int
    peak_resident_bytes: int
    chunk_fills: int
    evictions: int
    spilled_bytes: int = 0  # written chunks moved to the spill file (read back when touched)
    # chunk fills written whole before the chunk became accessible (through /proc/self/mem): other
    # threads never see a part-filled chunk; the rest were filled in place (no /proc/self/mem)
    whole_fills: int = 0


def lazy_stats() -> LazyStats:
    """Resident bytes of lazy tensors now and at peak, chunk fills (faults), evictions and bytes
    of written chunks spilled to disk, and how many fills were installed whole."""
    out = (ctypes.c_double * 6)()
    _rt().kgsim_lazy_stats(out)
    return LazyStats(int(out[0]), int(out[1]), int(out[2]), int(out[3]), int(out[4]), int(out[5]))


def set_lazy_resident_cap(nbytes: int) -> None:
    """Bound the resident bytes of lazy tensors to ``nbytes`` from now on, as
    :func:`sampled_simulation`'s ``resident_cap_bytes`` does (each sampled simulation sets its own
    on entry): clean input chunks above it are evicted now and written chunks above three quarters
    of it spilled to the temporary file, so what a finished simulation left resident makes room
    for the reference the check computes next. Nothing is lost: evicted chunks refill identically
    and spilled ones are read back when touched."""
    if nbytes < 1:
        raise ValueError(f"set_lazy_resident_cap needs a positive byte count, not {nbytes}")
    _rt().kgsim_lazy_set_cap(int(nbytes))


def written_spans(t: torch.Tensor) -> list[tuple[int, int, int, int]]:
    """The spans of ``t``'s memory each core stored into since :func:`sampled_simulation` began
    (overlapping or touching stores of a core merged).

    Rows of (core uid, first element, end element, elements stored); element offsets count from
    ``t.data_ptr()`` in ``t``'s element size.
    """
    rt = _rt()
    n = int(rt.kgsim_written_spans(None, 0))
    buf = (ctypes.c_ulonglong * (4 * max(n, 1)))()
    n = int(rt.kgsim_written_spans(buf, n))
    base, es = t.data_ptr(), t.element_size()
    end = base + t.numel() * es
    rows = []
    for i in range(n):
        uid, lo, hi, nbytes = (int(buf[4 * i + k]) for k in range(4))
        if lo >= base and hi <= end:
            rows.append((uid, (lo - base) // es, -(-(hi - base) // es), nbytes // es))
    return rows


def untracked_store_bytes(t: torch.Tensor) -> int:
    """Bytes stored into ``t`` since :func:`sampled_simulation` began that :func:`written_spans`
    leaves out: a block's stores after it first skipped loop iterations (its local data may be
    stale from then on, so they are not checked)."""
    rt = _rt()
    n = int(rt.kgsim_untracked_spans(None, 0))
    buf = (ctypes.c_ulonglong * (3 * max(n, 1)))()
    n = int(rt.kgsim_untracked_spans(buf, n))
    base = t.data_ptr()
    end = base + t.numel() * t.element_size()
    return sum(int(buf[3 * i + 2]) for i in range(n) if base <= int(buf[3 * i]) < end)


@dataclass
class SampledCheck:
    """Outcome of :func:`check_sampled_output`: ``ok``, what was compared and the worst error.
    ``checkable`` is False when the sampled blocks stored into the output only after skipping
    loop iterations: nothing could be compared, which says nothing about the output."""

    ok: bool
    message: str
    elements_checked: int = 0
    output_fraction: float = 0.0  # of the output's elements, the share the sampled blocks cover
    max_abs_error: float = 0.0
    spans: list[tuple[int, int, int, int]] = field(default_factory=list)
    checkable: bool = True


def _span_batches(group: list[tuple[int, int, int]], limit: int) -> Iterator[tuple[np.ndarray, np.ndarray, list[int]]]:
    """``group``'s spans ``(lo, hi, uid)`` in order as batches of at most ``limit`` elements
    (a span longer than that split across batches): ``(firsts, lengths, uids)`` per batch."""
    los: list[int] = []
    lens: list[int] = []
    uids: list[int] = []
    n = 0
    for lo, hi, uid in group:
        while lo < hi:
            take = min(hi - lo, limit - n)
            los.append(lo)
            lens.append(take)
            uids.append(uid)
            n += take
            lo += take
            if n >= limit:
                yield np.array(los, dtype=np.int64), np.array(lens, dtype=np.int64), uids
                los, lens, uids, n = [], [], [], 0
    if n:
        yield np.array(los, dtype=np.int64), np.array(lens, dtype=np.int64), uids


# a piece of a batch at least this long is compared as two slices (no index arrays); shorter
# ones are gathered together, so a million 32-byte spans still take a few vector operations
_SLICE_MIN = 1 << 12
# elements of a slice compared at a time: the difference, the bound and the verdict of a
# chunk stay in the cache, and below PyTorch's grain size no operation wakes a second thread
_SLICE_CHUNK = 1 << 15


def _compare_values(got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float) -> tuple[float, int | None, float]:
    """``(worst, first bad position or None, its reference value)`` of ``got`` against ``want``;
    NaN anywhere (poison) is bad and counts as an infinite error."""
    if got.dtype != want.dtype or not got.is_floating_point():
        got, want = got.double(), want.double()
    diff = (got - want).abs()
    bad = ~(diff <= atol + rtol * want.abs())
    if bool(bad.any()):
        at = int(bad.nonzero()[0, 0])
        return float(diff.nan_to_num(nan=float("inf")).max()), at, float(want[at])
    return (float(diff.max()) if diff.numel() else 0.0), None, 0.0


def _compare_slices(got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float) -> tuple[float, int | None, float]:
    """:func:`_compare_values` of two equally long 1-D slices, a cache-sized chunk at a time with
    the same operations in the same dtype (the same verdict, bit for bit), into reused buffers."""
    n = got.numel()
    same = got.dtype == want.dtype and got.is_floating_point()
    dtype = got.dtype if same else torch.float64
    size = min(n, _SLICE_CHUNK)
    diff_buf = torch.empty(size, dtype=dtype)
    bound_buf = torch.empty(size, dtype=dtype)
    ok_buf = torch.empty(size, dtype=torch.bool)
    worst, first, first_want = 0.0, None, 0.0
    for i in range(0, n, _SLICE_CHUNK):
        m = min(_SLICE_CHUNK, n - i)
        g, w = got[i : i + m], want[i : i + m]
        if not same:
            g, w = g.double(), w.double()
        diff, bound, ok = diff_buf[:m], bound_buf[:m], ok_buf[:m]
        torch.sub(g, w, out=diff).abs_()
        torch.abs(w, out=bound).mul_(rtol).add_(atol)  # atol + rtol * |want|, rounded as written
        torch.le(diff, bound, out=ok)
        if bool(ok.all()):
            worst = max(worst, float(diff.max()))
            continue
        if first is None:
            k = int((~ok).nonzero()[0, 0])
            first, first_want = i + k, float(w[k])
        worst = max(worst, float(diff.nan_to_num_(nan=float("inf")).max()))
    return worst, first, first_want


def _compare_batch(
    flat: torch.Tensor,
    ref: torch.Tensor,
    los: np.ndarray,
    ref_los: np.ndarray,
    lengths: np.ndarray,
    atol: float,
    rtol: float,
) -> tuple[float, int | None, float]:
    """``(worst, first bad position or None, its reference value)`` of the batch's pieces, piece
    ``k`` being ``flat[los[k]:][:lengths[k]]`` against ``ref[ref_los[k]:][:lengths[k]]``; positions
    count through the pieces in order. Long pieces are compared as slices, each run of short ones
    through one index gather; every element is compared either way."""
    ends = np.cumsum(lengths)
    starts = ends - lengths
    worst, first, first_want = 0.0, None, 0.0

    def note(result: tuple[float, int | None, float], offset: int) -> None:
        nonlocal worst, first, first_want
        worst = max(worst, result[0])
        if first is None and result[1] is not None:
            first, first_want = offset + result[1], result[2]

    def gather(k0: int, k1: int) -> None:  # pieces [k0, k1), all short, through one index
        if k0 == k1:
            return
        lens = lengths[k0:k1]
        offs = np.arange(int(lens.sum())) - np.repeat(starts[k0:k1] - starts[k0], lens)
        index = torch.from_numpy(np.repeat(los[k0:k1], lens) + offs)
        ref_index = torch.from_numpy(np.repeat(ref_los[k0:k1], lens) + offs)
        note(_compare_values(flat[index], ref[ref_index], atol, rtol), int(starts[k0]))

    k = 0
    for j in np.flatnonzero(lengths >= _SLICE_MIN).tolist():
        gather(k, j)
        lo, rlo, n = int(los[j]), int(ref_los[j]), int(lengths[j])
        note(_compare_slices(flat[lo : lo + n], ref[rlo : rlo + n], atol, rtol), int(starts[j]))
        k = j + 1
    gather(k, len(lengths))
    return worst, first, first_want


def _element_at(los: np.ndarray, lengths: np.ndarray, uids: list[int], at: int) -> tuple[int, int]:
    """``(output element, core uid)`` of position ``at`` counted through a batch's pieces."""
    ends = np.cumsum(lengths)
    k = int(np.searchsorted(ends, at, side="right"))
    return int(los[k]) + at - int(ends[k] - lengths[k]), uids[k]


def _shape_mismatch(shape: torch.Size, reference: str) -> str:
    return (
        f"the output has shape {tuple(shape)}, but the reference's {reference}: an output row holds "
        "another number of elements than the reference's (check the arguments passed to the kernel)"
    )


def _check_by_slabs(
    flat: torch.Tensor,
    shape: torch.Size,
    todo: list[tuple[int, int, int]],
    slab: Callable[[int, int, int, int], torch.Tensor],
    atol: float,
    rtol: float,
    max_rows: int,
    max_elements: int,
) -> tuple[int, float, str | None]:
    """The spans ``todo`` (sorted ``(lo, hi, uid)``) compared with reference slabs: output rows
    restricted to the dim-1 range the spans touch, one slab per run of rows of one merged dim-1
    interval. Returns ``(elements checked, worst error, first failure or None)``."""
    inner = max(1, math.prod(shape[2:]))
    row = shape[1] * inner
    width = getattr(slab, "width", None)  # the reference output's dim-1 size, where the slab says
    if width is not None and width != shape[1]:
        return 0, 0.0, _shape_mismatch(shape, f"dim 1 has {width} entries")
    pieces: list[tuple[int, int, int, int]] = []  # (row, lo, hi, uid): a span cut at row ends
    for lo, hi, uid in todo:
        while lo < hi:
            r = lo // row
            cut = min(hi, (r + 1) * row)
            pieces.append((r, lo, cut, uid))
            lo = cut
    # dim-1 range of each piece, then the ranges merged into disjoint intervals
    ranges = sorted(((lo - r * row) // inner, (hi - 1 - r * row) // inner + 1) for r, lo, hi, _ in pieces)
    intervals: list[list[int]] = []
    for c0, c1 in ranges:
        if intervals and c0 <= intervals[-1][1]:
            intervals[-1][1] = max(intervals[-1][1], c1)
        else:
            intervals.append([c0, c1])
    starts = [c0 for c0, _ in intervals]
    by_interval: dict[int, list[tuple[int, int, int, int]]] = {}
    for piece in pieces:
        r, lo, _, _ = piece
        k = bisect.bisect_right(starts, (lo - r * row) // inner) - 1
        by_interval.setdefault(k, []).append(piece)
    checked, worst = 0, 0.0
    for k, group in sorted(by_interval.items()):
        c0, c1 = intervals[k]
        width = (c1 - c0) * inner
        group.sort()
        i = 0
        while i < len(group):
            r0 = group[i][0]
            j = i
            while j < len(group) and group[j][0] < r0 + max_rows:
                j += 1
            part = group[i:j]
            r1 = part[-1][0] + 1
            ref = slab(r0, r1, c0, c1)
            if ref.numel() != (r1 - r0) * width:
                return (
                    checked,
                    worst,
                    _shape_mismatch(shape, f"rows [{r0}, {r1}) x dim-1 [{c0}, {c1}) have shape {tuple(ref.shape)}"),
                )
            ref = ref.reshape(-1)
            span_list = [(lo, hi, uid) for _, lo, hi, uid in part]
            for los, lengths, uids in _span_batches(span_list, max_elements):
                # a piece lies within one output row's dim-1 range: contiguous in the slab too
                rows_of = los // row
                ref_los = (rows_of - r0) * width + (los - rows_of * row - c0 * inner)
                batch_worst, at, want = _compare_batch(flat, ref, los, ref_los, lengths, atol, rtol)
                worst = max(worst, batch_worst)
                if at is not None:
                    e, uid = _element_at(los, lengths, uids, at)
                    return checked, worst, f"core {uid}: element {e} is {float(flat[e])}, the reference {want}"
                checked += int(lengths.sum())
            del ref
            i = j
    return checked, worst, None


def check_sampled_output(
    out: torch.Tensor,
    reference_rows: Callable[[int, int], torch.Tensor],
    *,
    atol: float = 1e-2,
    rtol: float = 1e-2,
    max_rows: int = 1 << 16,
    max_elements: int = 1 << 22,
) -> SampledCheck:
    """Compare what the sampled blocks stored into ``out`` with the reference on those rows.

    :param out: a contiguous output tensor (dim 0 is the row dimension; a 1-D output has rows of
        one element).
    :param reference_rows: ``(r0, r1) -> tensor`` of the reference output rows ``[r0, r1)``.
    :param max_rows: rows computed per reference call (bounds the reference's memory).
    :param max_elements: elements compared per batch (bounds the comparison's memory: spans
        shorter than 4096 elements are gathered through an index, about 30 bytes an element;
        longer ones are compared as slices in cache-sized chunks; the result does not depend on it).
    Every span the sampled blocks stored is compared in full (a strided copy's span includes its
    gaps, which are still poison if nothing else wrote them). A kernel that stored nothing into
    ``out`` fails. What was not stored is not judged here: that is the full check's job at
    simulation scale.
    """
    if not out.is_contiguous():
        raise ValueError("check_sampled_output needs a contiguous output tensor")
    if max_elements < 1:
        raise ValueError(f"check_sampled_output(max_elements=...) needs at least 1, not {max_elements}")
    spans = written_spans(out)
    if not spans:
        late = untracked_store_bytes(out)
        if late:
            return SampledCheck(
                False,
                f"the sampled blocks stored into the output ({late} B) only after skipping loop iterations, so none "
                "of it can be checked; loops='all_checked' keeps block 0's work until its first store, loops=True "
                "runs block 0 in full, and either checks block 0's stores",
                checkable=False,
            )
        return SampledCheck(False, "the sampled blocks stored nothing into the output")
    flat = out.reshape(-1)
    row = max(1, out[0].numel()) if out.dim() > 1 else 1
    todo = sorted((lo, hi, uid) for uid, lo, hi, _ in spans)
    slab = getattr(reference_rows, "slab", None)
    if slab is not None and out.dim() >= 2:
        checked, worst, failure = _check_by_slabs(flat, out.shape, todo, slab, atol, rtol, max_rows, max_elements)
        if failure is not None:
            return SampledCheck(False, failure, checked, max_abs_error=worst, spans=spans)
        covered = sum(hi - lo for _, lo, hi, _ in spans)
        return SampledCheck(True, "ok", checked, covered / max(1, out.numel()), worst, spans)
    checked, worst, i = 0, 0.0, 0
    while i < len(todo):  # spans in order, as many per reference call as max_rows rows hold
        r0 = todo[i][0] // row
        group: list[tuple[int, int, int]] = []
        while i < len(todo):
            lo, hi, uid = todo[i]
            if -(-hi // row) - r0 <= max_rows:
                group.append((lo, hi, uid))
                i += 1
            elif not group:  # a span longer than max_rows rows: its first part now, the rest next
                cut = (r0 + max_rows) * row
                group.append((lo, cut, uid))
                todo[i] = (cut, hi, uid)
                break
            else:
                break
        r1 = -(-max(hi for _, hi, _ in group) // row)
        ref_rows = reference_rows(r0, r1)
        if ref_rows.numel() != (r1 - r0) * row:
            # offsets into the output would index other elements of the reference (a mapping that
            # hands the kernel another tensor than the one the reference's output comes from); the
            # layout within a row may differ ([N, C*H*W] for [N, C, H, W]), as the full check allows
            msg = _shape_mismatch(out.shape, f"rows [{r0}, {r1}) have shape {tuple(ref_rows.shape)}")
            return SampledCheck(False, msg, checked, max_abs_error=worst, spans=spans)
        ref_rows = ref_rows.reshape(-1)
        # the group's spans in batches of at most max_elements: short spans through one index per
        # run of them (a block of scalar stores can leave a million 32-byte spans: compared one by
        # one, the check took minutes), long ones as slices (CumsumExclusive's check of 335 M stored
        # elements took 7.9 CPU s through index gathers, 4.2 as slices, then mostly the reference)
        group_worst, failure, group_n = 0.0, None, 0
        for los, lengths, uids in _span_batches(group, max_elements):
            batch_worst, at, want = _compare_batch(flat, ref_rows, los, los - r0 * row, lengths, atol, rtol)
            if failure is None and at is not None:
                k, uid = _element_at(los, lengths, uids, at)
                failure = f"core {uid}: element {k} is {float(flat[k])}, the reference {want}"
            group_worst = max(group_worst, batch_worst)  # the group's worst error, NaN as inf
            group_n += int(lengths.sum())
        del ref_rows  # before the next group's reference rows are computed
        if failure is not None:
            return SampledCheck(False, failure, checked, max_abs_error=max(worst, group_worst), spans=spans)
        worst = max(worst, group_worst)
        checked += group_n
    covered = sum(hi - lo for _, lo, hi, _ in spans)
    return SampledCheck(True, "ok", checked, covered / max(1, out.numel()), worst, spans)
