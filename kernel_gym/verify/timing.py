"""The judge's clock for host-timed backends, and the speedup's 95 % interval.

Three things make a wall-clock speedup on a shared machine noisy: time the runner spends
preempted by other processes, drift between the moment the reference is timed and the moment
the answer is (frequency, load, cache state) and too few trials to tell. The judge answers each:

- :func:`run_delay_s` reads the kernel's scheduler statistics (``/proc/<pid>/schedstat``, field 2:
  time runnable but waiting for a CPU). A call's latency is its wall time minus the run-queue wait
  of the runner and of the judge during it; the runner's CPU time (all its threads, measured by
  the kernel) stays a floor, so no time the answer spends working is ever subtracted.
- The reference runs in a runner of its own and the two are timed in alternating rounds on the
  same input values (paired), so drift hits both sides alike.
- :func:`speedup_interval` bootstraps the paired rounds; rounds are added until the interval is
  within the target or the time budget is spent.

Everything here reads the kernel's accounting from the judge's side: nothing the runner writes.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import platform
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "converged",
    "interval_of_ratio",
    "perf_counters_available",
    "run_delay_s",
    "schedstat_available",
    "speedup_interval",
    "steal_seconds",
    "timing_cpus",
]

BOOTSTRAP_RESAMPLES = 2000


def run_delay_s(pid: int | None = None, tid: int | None = None) -> float | None:
    """Seconds thread ``tid`` of process ``pid`` (default: the calling thread) has spent runnable
    but not running, or None where the kernel does not expose it."""
    if pid is None:
        path = "/proc/thread-self/schedstat"
    elif tid is None:
        path = f"/proc/{pid}/schedstat"  # the thread-group leader: the runner's serving thread
    else:
        path = f"/proc/{pid}/task/{tid}/schedstat"
    try:
        with open(path, "rb") as f:
            fields = f.read().split()
        return int(fields[1]) * 1e-9
    except (OSError, IndexError, ValueError):
        return None


def schedstat_available() -> bool:
    """Whether the kernel keeps per-task run-queue wait (CONFIG_SCHED_INFO): a busy loop of a few
    milliseconds must show a nonzero run time in our own schedstat."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            return int(f.read().split()[0]) > 0
    except (OSError, IndexError, ValueError):
        return False


def steal_seconds() -> float | None:
    """CPU time the hypervisor took from this virtual machine, summed over CPUs (``/proc/stat``
    steal column), or None where unknown. Steal is invisible to the guest's scheduler: a call
    that lost the CPU to the host looks like a call that ran."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}


@functools.cache
def perf_counters_available() -> bool:
    """Whether this process could count its own CPU cycles with perf_event_open (user space
    only, which perf_event_paranoid 2 allows). Virtual machines often have no PMU (ENOENT).
    Detected and reported, not used as the clock (docs/verification.md says why)."""
    number = _PERF_EVENT_OPEN.get(platform.machine())
    if number is None:
        return False
    # perf_event_attr, first 72 bytes: type HARDWARE, size, config CPU_CYCLES, sample fields,
    # flags disabled | exclude_kernel | exclude_hv, the rest zero
    attr = struct.pack("=IIQQQQQIIQQ", 0, 72, 0, 0, 0, 0, 1 | 32 | 64, 0, 0, 0, 0)
    buf = ctypes.create_string_buffer(attr, len(attr))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    this_thread, any_cpu, no_group = ctypes.c_int(0), ctypes.c_int(-1), ctypes.c_int(-1)
    fd = libc.syscall(ctypes.c_long(number), buf, this_thread, any_cpu, no_group, ctypes.c_ulong(0))
    if fd < 0:
        return False
    os.close(fd)
    return True


def timing_cpus(threads: int) -> list[int] | None:
    """The CPUs the runners and the judge are pinned to while timing: the last ``threads`` of the
    allowed set (CPU 0 tends to take more interrupts), or None where pinning would leave the
    runner fewer CPUs than it may use threads."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    if len(allowed) <= threads:
        return None
    return allowed[-threads:]


def _block_indices(rng: np.random.Generator, n: int) -> np.ndarray:
    """Moving-block bootstrap indices (BOOTSTRAP_RESAMPLES x n): runs of consecutive rounds, so
    load that comes and goes over several rounds widens the interval instead of averaging out as
    if every round were independent. Block length n^(1/3), rounded up."""
    block = max(1, math.ceil(n ** (1 / 3)))
    starts = rng.integers(0, n - block + 1, size=(BOOTSTRAP_RESAMPLES, math.ceil(n / block)))
    idx = (starts[:, :, None] + np.arange(block)[None, None, :]).reshape(BOOTSTRAP_RESAMPLES, -1)
    return idx[:, :n]


def interval_of_ratio(
    numerator: Sequence[float], denominator: Sequence[float], paired: bool, seed: int = 0
) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of median(numerator) / median(denominator).

    ``paired``: the i-th values were measured together (one round) and are resampled together
    (in blocks of consecutive rounds), so drift common to both sides cancels; otherwise each side
    is resampled on its own.
    """
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    rng = np.random.default_rng(seed)
    if paired:
        if len(num) != len(den):
            raise ValueError("paired samples must have the same length")
        idx = _block_indices(rng, len(num))
        ratios = np.median(num[idx], axis=1) / np.median(den[idx], axis=1)
    else:
        i = rng.integers(0, len(num), size=(BOOTSTRAP_RESAMPLES, len(num)))
        j = rng.integers(0, len(den), size=(BOOTSTRAP_RESAMPLES, len(den)))
        ratios = np.median(num[i], axis=1) / np.median(den[j], axis=1)
    lo, hi = np.quantile(ratios, [0.025, 0.975])
    return float(lo), float(hi)


def speedup_interval(
    reference_s: Sequence[float], answer_s: Sequence[float], paired: bool
) -> tuple[float, float] | None:
    """The speedup's (reference / answer, ratio of medians) 95 % interval; None with fewer than
    three samples a side, where a bootstrap says nothing."""
    if min(len(reference_s), len(answer_s)) < 3 or min(min(reference_s), min(answer_s)) <= 0:
        return None
    return interval_of_ratio(reference_s, answer_s, paired)


def converged(speedup: float, interval: tuple[float, float] | None, target: float) -> bool:
    """Whether ``interval`` lies within ``speedup`` * (1 -+ ``target``)."""
    if interval is None or not math.isfinite(speedup) or speedup <= 0:
        return False
    lo, hi = interval
    return lo >= speedup * (1.0 - target) and hi <= speedup * (1.0 + target)


def spread(samples: Sequence[float]) -> dict[str, Any]:
    """Median, interquartile range and extremes of a side's samples, seconds."""
    a = np.asarray(samples, dtype=np.float64)
    q1, med, q3 = np.quantile(a, [0.25, 0.5, 0.75])
    return {"median_s": float(med), "iqr_s": float(q3 - q1), "min_s": float(a.min()), "max_s": float(a.max())}
