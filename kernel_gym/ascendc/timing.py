"""Launch reports and the process-global launch recorder.

The timing model itself runs in the C++ runtime (src/rt_core.cpp) while the kernel
executes: every API instruction is placed on its pipe's timeline, and a launch's latency is
derived from the per-block makespans, the HBM bound and the launch overhead. This module
holds what Python sees of it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LaunchReport", "LaunchRecorder", "record_launches", "active_recorders", "overlapped_bounds"]


def overlapped_bounds(compute_s: float, hbm_s: float, gm_port_s: float, norm: float) -> float:
    """A launch's body from its three bounds, as the runtime combines them (src/rt_sampling.cpp).

    compute_s: the critical core's pipe makespan (s); hbm_s: the launch's GM bytes at the HBM
    bandwidth (s); gm_port_s: the busiest core's GM bytes through its own port (s); norm: the
    profile's ``overlap_norm`` p. Returns their p-norm in seconds (the largest alone when p <= 0).
    """
    top = max(compute_s, hbm_s, gm_port_s)
    if norm <= 0 or top <= 0:
        return top
    return top * sum((x / top) ** norm for x in (compute_s, hbm_s, gm_port_s)) ** (1.0 / norm)


@dataclass
class LaunchReport:
    """The simulated outcome of one kernel launch.

    latency_s / latency_cycles: simulated kernel time (the slowest core's pipes, the HBM bound and
    the busiest core's GM port combined by :func:`overlapped_bounds`, plus the launch overhead);
    per_pipe_busy: busy cycles per pipe (S, V, MTE1, MTE2, MTE3, M, FIX) of the critical core;
    bound: the largest of those terms, "pipe" | "hbm" | "gm_port" (the busiest core's GM bytes through
    its own port, ``gm_port_bytes_per_cycle``) | "launch"; faults / warnings: records with
    error_class, message, file, line, block. Under sampled simulation (:mod:`.sampling`),
    ``blocks_skipped`` blocks did not run: their time and GM bytes are those of the nearest sampled
    block, and [latency_lo_s, latency_hi_s] is the latency with every skipped block at the
    cheapest and at the dearest sampled one (both equal latency_s when nothing was skipped).
    Under loop sampling, ``loop_sampled_blocks`` blocks had ``loop_periods_skipped`` periods of
    their loops extrapolated (the bracket widens by the cost differences seen between periods);
    ``loop_fallback`` names the first block that ran in full although loop sampling was on, and why.
    ``loop_jumps``: how often a kernel's own loop was moved forward past skipped periods (its
    iterations never ran on the host; ``kernel_gym.ascendc.loop_hooks``).
    ``scalar_ff_accesses``: scalar GM accesses that scalar fast-forward charged at its windows' mean
    cycles instead of running the data-cache model (sampled simulation only; the bracket widens by
    three standard errors of that mean over them).
    """

    kernel: str
    soc: str
    num_blocks: int
    latency_s: float = 0.0
    latency_cycles: float = 0.0
    per_pipe_busy: dict[str, float] = field(default_factory=dict)
    waves: int = 0
    cores_used: int = 0
    gm_bytes: int = 0
    gm_read_bytes: int = 0
    gm_write_bytes: int = 0
    bound: str = "pipe"
    faults: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    compute_s: float = 0.0
    hbm_s: float = 0.0
    gm_port_s: float = 0.0
    launch_s: float = 0.0
    block_cycles: list[float] = field(default_factory=list)
    blocks_run: int = 0
    file: str = ""
    line: int = 0
    blocks_skipped: int = 0
    latency_lo_s: float = 0.0
    latency_hi_s: float = 0.0
    loop_sampled_blocks: int = 0
    loop_periods_skipped: int = 0
    loop_fallback: str = ""
    loop_jumps: int = 0
    scalar_ff_accesses: int = 0

    @classmethod
    def from_json(cls, d: dict[str, Any], soc: str) -> LaunchReport:
        return cls(
            kernel=d.get("kernel", ""),
            soc=soc,
            num_blocks=int(d.get("num_blocks", 0)),
            latency_s=float(d.get("latency_s", 0.0)),
            latency_cycles=float(d.get("latency_cycles", 0.0)),
            per_pipe_busy={k: float(v) for k, v in d.get("per_pipe_busy", {}).items()},
            waves=int(d.get("waves", 0)),
            cores_used=int(d.get("cores_used", 0)),
            gm_bytes=int(d.get("gm_read", 0)) + int(d.get("gm_write", 0)),
            gm_read_bytes=int(d.get("gm_read", 0)),
            gm_write_bytes=int(d.get("gm_write", 0)),
            bound=d.get("bound", "pipe"),
            faults=list(d.get("faults", [])),
            warnings=list(d.get("warnings", [])),
            compute_s=float(d.get("compute_s", 0.0)),
            hbm_s=float(d.get("hbm_s", 0.0)),
            gm_port_s=float(d.get("gm_port_s", 0.0)),
            launch_s=float(d.get("launch_s", 0.0)),
            block_cycles=[float(x) for x in d.get("block_cycles", [])],
            blocks_run=int(d.get("blocks_run", 0)),
            file=d.get("file", ""),
            line=int(d.get("line", 0)),
            blocks_skipped=int(d.get("blocks_skipped", 0)),
            latency_lo_s=float(d.get("latency_lo_s", d.get("latency_s", 0.0))),
            latency_hi_s=float(d.get("latency_hi_s", d.get("latency_s", 0.0))),
            loop_sampled_blocks=int(d.get("loop_sampled_blocks", 0)),
            loop_periods_skipped=int(d.get("loop_periods_skipped", 0)),
            loop_fallback=str(d.get("loop_fallback", "")),
            loop_jumps=int(d.get("loop_jumps", 0)),
            scalar_ff_accesses=int(d.get("scalar_ff_accesses", 0)),
        )

    @property
    def ok(self) -> bool:
        return not self.faults

    def summary(self) -> str:
        busy = ", ".join(f"{k} {v:.0f}" for k, v in self.per_pipe_busy.items() if v)
        return (
            f"{self.kernel}: {self.latency_s * 1e6:.2f} us ({self.bound}-bound), {self.num_blocks} blocks in "
            f"{self.waves} wave(s), GM {self.gm_bytes} B, busy cycles [{busy}]"
        )


class LaunchRecorder:
    """Collects every launch made while it is active (see :func:`record_launches`)."""

    def __init__(self) -> None:
        self.launches: list[LaunchReport] = []
        #: host-side work of kernel files (basic blocks of their host C++ code), in seconds:
        #: computing on the host before a launch is not free either
        self.host_s = 0.0
        self.host_blocks = 0

    @property
    def total_latency_s(self) -> float:
        return float(sum(r.latency_s for r in self.launches)) + self.host_s

    def __len__(self) -> int:
        return len(self.launches)


_RECORDERS: list[LaunchRecorder] = []
_RECORDERS_LOCK = threading.Lock()


@contextlib.contextmanager
def record_launches() -> Iterator[LaunchRecorder]:
    """Record every simulated launch in the process while the block runs (nestable)."""
    rec = LaunchRecorder()
    with _RECORDERS_LOCK:
        _RECORDERS.append(rec)
    try:
        yield rec
    finally:
        with _RECORDERS_LOCK:
            _RECORDERS.remove(rec)


def active_recorders() -> list[LaunchRecorder]:
    with _RECORDERS_LOCK:
        return list(_RECORDERS)
