"""GPU timing shared by the ``cuda`` and ``triton`` backends.

What KernelBench does (CUDA events around the call on the current stream, same inputs every
trial, warm L2) measures a warm cache and misses work an answer leaves running on another
stream. Here, per timed call:

- the call runs on a dedicated *blocking* stream (created through the driver, wrapped with
  ``torch.cuda.ExternalStream``): kernels an answer launches on the legacy default stream
  (``kernel<<<grid, block>>>``) are ordered with it, so events on it bracket them;
- L2 is flushed before the call by writing a buffer of twice the L2 size on that stream;
- no head start: the GPU is idle when the call begins, so the host's launch gaps count. A spin
  on the stream before the start event (nvbench's blocking kernel) cut the robust CV of three
  level-2 references on an H200 from 0.5-1.5 % to 0.2 %, but work an answer puts on a stream of its
  own runs during the spin and ends before the call does: the side-stream exploits passed;
- CUDA events record the start and end on the stream; the host then waits for the end event and
  *then* for the whole device: the second wait (``sync_gap_s``) is what the call left running
  elsewhere (a non-blocking stream of its own, a host callback), which an honest call never does;
- TF32 and the float32 matmul precision are checked after every call (an answer may not switch
  them on).

The verifier makes one such call per judge message (new input values at the same device
addresses every call), so every timed output is checked; the judge takes the median of the event
times, reports IQR, count, GPU name and clocks, and rejects a series whose median sync gap is more
than a small fixed allowance or a quarter of the median event time.
"""

from __future__ import annotations

import ctypes
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "DeviceSession",
    "FLOOR_BYTES_PER_S",
    "blocking_stream",
    "check_report",
    "device_info",
    "summarize_reports",
    "time_events",
    "time_events_simple",
]

# Above the memory bandwidth of any GPU today (H200: 4.8 TB/s, B200: 8 TB/s): every output byte
# is written once, so no honest call beats output bytes / this.
FLOOR_BYTES_PER_S = 10e12
# The device-wide wait after the timed stream is done: an honest call's is the driver's latency
# (microseconds); one that left work running waits for it.
SYNC_GAP_ALLOWANCE_S = 50e-6
SYNC_GAP_FRACTION = 0.25

_PERF_COUNTER = time.perf_counter  # bound at import: an answer's patch cannot change it


class SettingChanged(RuntimeError):
    """The answer switched on a precision mode (TF32) the verifier keeps off."""

    error_class = "hacked"
    hack_rule = "monkey_patch"


def blocking_stream(device: Any) -> Any:
    """A new CUDA stream *without* the non-blocking flag (torch's own streams have it), so the
    legacy default stream synchronises with it. Falls back to the device's default stream."""
    import torch

    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        handle = ctypes.c_void_p()
        with torch.cuda.device(device):
            torch.cuda.current_stream().synchronize()  # the primary context is current now
            status = libcuda.cuStreamCreate(ctypes.byref(handle), ctypes.c_uint(0))
        if status == 0 and handle.value:
            return torch.cuda.ExternalStream(handle.value, device=device)
    except (OSError, AttributeError):
        pass
    return torch.cuda.default_stream(device)


def _nvml_clocks(props: Any, index: int) -> dict[str, Any]:
    """SM and memory clocks (current and maximum, MHz) from NVML, read through ctypes."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if nvml.nvmlInit_v2() != 0:
            return {"clocks": "NVML init failed"}
        handle = ctypes.c_void_p()
        bus = getattr(props, "pci_bus_id", None)
        found = 1
        if bus is not None:
            pci = f"{getattr(props, 'pci_domain_id', 0):08X}:{bus:02X}:{getattr(props, 'pci_device_id', 0):02X}.0"
            found = nvml.nvmlDeviceGetHandleByPciBusId_v2(pci.encode(), ctypes.byref(handle))
        if found != 0:
            found = nvml.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(handle))
        if found != 0:
            return {"clocks": "NVML has no handle for the device"}
        out: dict[str, Any] = {}
        for key, kind in (("sm_clock_mhz", 1), ("mem_clock_mhz", 2)):
            value = ctypes.c_uint()
            if nvml.nvmlDeviceGetClockInfo(handle, ctypes.c_uint(kind), ctypes.byref(value)) == 0:
                out[key] = value.value
            if nvml.nvmlDeviceGetMaxClockInfo(handle, ctypes.c_uint(kind), ctypes.byref(value)) == 0:
                out["max_" + key] = value.value
        return out
    except (OSError, AttributeError):
        return {"clocks": "NVML (libnvidia-ml.so.1) not available"}


def device_info(device: Any) -> dict[str, Any]:
    """Name, compute capability, SM count, L2 size and clocks of ``device``."""
    import torch

    props = torch.cuda.get_device_properties(device)
    index = device.index if getattr(device, "index", None) is not None else torch.cuda.current_device()
    return {
        "gpu": props.name,
        "capability": f"{props.major}.{props.minor}",
        "sms": props.multi_processor_count,
        "l2_bytes": int(getattr(props, "L2_cache_size", 0) or 0),
        **_nvml_clocks(props, index),
    }


class DeviceSession:
    """The answer process's side of device timing (see the module docstring).

    ``check_state``: returns a message when a setting the verifier locks has changed."""

    def __init__(self, check_state: Callable[[], str | None] | None = None, flush_l2: bool = True) -> None:
        import torch

        self.torch = torch
        self.device = torch.device("cuda", torch.cuda.current_device())
        self.info = device_info(self.device)
        l2 = self.info["l2_bytes"] or (64 << 20)
        self.flush_bytes = max(2 * l2, 16 << 20) if flush_l2 else 0
        self._flush = torch.empty(self.flush_bytes // 4, dtype=torch.float32, device=self.device)
        self.stream = blocking_stream(self.device)
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)
        self._staged: dict[int, Any] = {}
        # device copies of the staged inputs as the judge wrote them, where the device has room: a
        # forward that left its inputs alone (nearly all) needs no copy back (2 GiB each call at
        # KernelBench's published shapes, the runner's largest cost on an H200)
        self._pristine: dict[int, Any] = {}
        self._flushes = 0
        self.check_state = check_state

    def place_model(self, model: Any) -> Any:
        return model.to(self.device) if isinstance(model, self.torch.nn.Module) else model

    def stage(self, host_inputs: list[Any]) -> list[Any]:
        """Device copies of the inputs, at the same addresses every call (new values only)."""
        torch = self.torch
        staged = []
        for i, x in enumerate(host_inputs):
            if isinstance(x, torch.Tensor):
                buf = self._staged.get(i)
                if buf is None or buf.shape != x.shape or buf.dtype != x.dtype or buf.stride() != x.stride():
                    buf = self._staged[i] = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=self.device)
                buf.copy_(x)
                staged.append(buf)
            else:
                staged.append(x)
        self._keep_pristine(staged)
        torch.cuda.synchronize(self.device)
        return staged

    def restage(self, host_inputs: list[Any]) -> list[Any]:
        """The device copies of the last ``stage``, as they are, when they match ``host_inputs`` in
        shape, dtype and strides (the same set called again); else ``stage(host_inputs)``."""
        torch = self.torch
        staged = []
        for i, x in enumerate(host_inputs):
            if not isinstance(x, torch.Tensor):
                staged.append(x)
                continue
            buf = self._staged.get(i)
            if buf is None or buf.shape != x.shape or buf.dtype != x.dtype or buf.stride() != x.stride():
                return self.stage(host_inputs)
            staged.append(buf)
        return staged

    def _keep_pristine(self, staged: list[Any]) -> None:
        torch = self.torch
        tensors = {i: x for i, x in enumerate(staged) if isinstance(x, torch.Tensor)}
        for i in list(self._pristine):
            if i not in tensors or (self._pristine[i].shape, self._pristine[i].dtype) != (
                tensors[i].shape,
                tensors[i].dtype,
            ):
                del self._pristine[i]
        need = sum(x.numel() * x.element_size() for i, x in tensors.items() if i not in self._pristine)
        if need and torch.cuda.mem_get_info(self.device)[0] < 2 * need + (1 << 30):
            self._pristine.clear()  # no room: every input is copied back instead
            return
        for i, x in tensors.items():
            if i not in self._pristine:
                self._pristine[i] = torch.empty_like(x)
            self._pristine[i].copy_(x)

    def flush_l2(self) -> None:
        if self.flush_bytes:
            self._flushes += 1
            self._flush.fill_(float(self._flushes & 0xFF))

    def run(self, call: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
        """``call()`` on the timed stream after an L2 flush; the output and the timing report."""
        torch, stream = self.torch, self.stream
        stream.synchronize()
        t0 = _PERF_COUNTER()
        with torch.cuda.stream(stream):
            # no wait after the flush (as Triton's do_bench): the GPU is busy flushing while the host
            # enqueues the call, so the events time the call's kernels, not the host's launch jitter
            self.flush_l2()
            self._start.record(stream)
            out = call()
            self._end.record(stream)
        self._end.synchronize()
        t1 = _PERF_COUNTER()
        torch.cuda.synchronize(self.device)  # everything the call left running, on any stream
        t2 = _PERF_COUNTER()
        report = {
            "event_s": self._start.elapsed_time(self._end) / 1e3,
            "wall_s": t2 - t0,
            "sync_gap_s": t2 - t1,
            "l2_flush_bytes": self.flush_bytes,
            **self.info,
        }
        changed = self.check_state() if self.check_state is not None else None
        if changed:
            raise SettingChanged(changed)
        return out, report

    def to_host(self, out: Any, staged: list[Any], host_inputs: list[Any]) -> Any:
        """The device inputs copied back over the host's where the forward changed them (so the
        judge sees a forward that wrote into its inputs); the output as it is (the runner copies
        it into the shared buffer straight from the device)."""
        torch = self.torch
        for i, (dev, host) in enumerate(zip(staged, host_inputs, strict=True)):
            if isinstance(dev, torch.Tensor) and isinstance(host, torch.Tensor) and dev.device != host.device:
                kept = self._pristine.get(i)
                if kept is None or not torch.equal(dev, kept):
                    host.copy_(dev)
        return out


# ------------------------------------------------------------------------------ judge side
def check_report(report: Any, reply: dict[str, Any], judge_wall_s: float) -> float:
    """The latency of one timed call from its device report; raises TimingRejected for an
    impossible one (missing, not positive, longer than the judge saw, below the bandwidth floor)."""
    from kernel_gym.backends.base import TimingRejected

    event = report.get("event_s") if isinstance(report, dict) else None
    if not isinstance(event, (int, float)) or not math.isfinite(event) or event <= 0:
        raise TimingRejected("timing_forgery", f"the call's device timing report is missing or invalid ({event!r})")
    if event > judge_wall_s + 1e-3:
        raise TimingRejected(
            "timing_forgery",
            f"device time {event * 1e6:.1f} us exceeds the judge's wall clock of the call "
            f"({judge_wall_s * 1e6:.1f} us)",
        )
    import torch

    dtype = getattr(torch, str(reply.get("dtype", "float32")), torch.float32)
    itemsize = torch.empty((), dtype=dtype).element_size() if isinstance(dtype, torch.dtype) else 4
    nbytes = math.prod(int(d) for d in reply.get("shape", [])) * itemsize
    floor = nbytes / FLOOR_BYTES_PER_S
    if event < floor:
        raise TimingRejected(
            "timing_forgery",
            f"device time {event * 1e6:.3f} us is below the bandwidth floor {floor * 1e6:.3f} us for the output",
        )
    return float(event)


def summarize_reports(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Median, IQR and count of the event times, the sync check and the device; raises
    TimingRejected when the calls left work running after they returned."""
    from kernel_gym.backends.base import TimingRejected

    reports = [r for r in reports if isinstance(r, dict) and "event_s" in r]
    if not reports:
        return {}
    events = sorted(float(r["event_s"]) for r in reports)
    gaps = sorted(float(r.get("sync_gap_s", 0.0)) for r in reports)
    walls = sorted(float(r.get("wall_s", 0.0)) for r in reports)
    n = len(events)
    median_event, median_gap = statistics.median(events), statistics.median(gaps)
    allowance = max(SYNC_GAP_ALLOWANCE_S, SYNC_GAP_FRACTION * median_event)
    if median_gap > allowance:
        raise TimingRejected(
            "threads_or_streams",
            f"the forward returned with work still running outside the timed stream: the device-wide "
            f"synchronize waited a median {median_gap * 1e6:.1f} us after the timed stream was done "
            f"(event time {median_event * 1e6:.1f} us, allowance {allowance * 1e6:.1f} us); launch on the "
            "current stream (the default stream or torch.cuda.current_stream())",
        )
    last = reports[-1]
    device = {k: last[k] for k in last if k not in ("event_s", "wall_s", "sync_gap_s")}
    return {
        "clock": "CUDA events on a dedicated blocking stream, L2 flushed before each call",
        "device_median_s": median_event,
        "device_iqr_s": events[(3 * n) // 4] - events[n // 4],
        "device_trials": n,
        "sync_check": {
            "median_sync_gap_s": median_gap,
            "allowance_s": allowance,
            "median_synchronized_wall_s": statistics.median(walls),
        },
        **device,
    }


# ------------------------------------------------------------------------------ in-process timers
def time_events(
    fn: Callable[[], Any], *, warmup: int = 10, trials: int = 100, session: DeviceSession | None = None
) -> dict[str, Any]:
    """The verifier's method in one process (benchmarks): ``session.run`` per trial (blocking
    stream, L2 flush, events, sync check), median and IQR of the event times."""
    session = session or DeviceSession()
    for _ in range(warmup):
        session.run(fn)
    reports = [session.run(fn)[1] for _ in range(trials)]
    return summarize_reports(reports)


def time_events_simple(fn: Callable[[], Any], *, warmup: int = 3, trials: int = 100) -> dict[str, Any]:
    """KernelBench's method, for comparison: events on the current stream around each call,
    the same inputs every trial, no cache flush, no check of other streams."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    times.sort()
    return {"median_s": statistics.median(times), "iqr_s": times[(3 * trials) // 4] - times[trials // 4]}
