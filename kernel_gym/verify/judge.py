"""The judge: draws inputs, runs the reference, compares, times and decides, one stage per function.

It runs in its own trusted process (forked per verification by ``kernel_gym.verify.zygote``)
and drives the answer runner (``kernel_gym.verify.runner``, in the sandbox) through a
``RunnerLink``. Nothing the runner can write decides anything here: the judge reads the
runner's output bytes from the shared buffer with the dtype and shape of its own expected
output, its clock and the kernel's CPU accounting of the runner time every call, and a
message from the runner can only count against the answer.

Stages: prepare_reference -> time_reference -> load_answer -> check_correctness ->
measure_latency -> recheck_after_timing.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import random
import signal
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import torch

from kernel_gym.backends import Backend, get_backend
from kernel_gym.native import compiler_version
from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify.channel import (
    ChannelClosed,
    ChannelTimeout,
    SharedBuffer,
    TensorSlot,
    recv_message,
    send_message,
    tensor_nbytes,
)
from kernel_gym.verify.correctness import compare_outputs, draw_inputs, reference_rows_per_call, seed_cpu
from kernel_gym.verify.settings import VerifySettings, set_module_mode
from kernel_gym.verify.timing import (
    converged,
    perf_counters_available,
    run_delay_s,
    speedup_interval,
    spread,
    steal_seconds,
    timing_cpus,
)

__all__ = ["RunnerLink", "StageFailure", "run_job"]

# Memory for the distinct input sets (and their reference outputs) of the timed calls held at once.
TIMING_SET_BYTES = 256 << 20
# Sets up to this size past that budget are drawn when used (one timed call each); larger ones
# (published-shape level-1 tasks) are cut to two sets, a warm-up and one timed call.
DEFERRED_TIMING_SET_BYTES = 1 << 30
# Paired timing adds rounds up to this many times timing_trials (small trial counts stay quick).
MAX_ROUNDS_FACTOR = 10


class StageFailure(Exception):
    def __init__(self, error_class: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.extra = extra


# ------------------------------------------------------------------------------ the runner link
def process_cpu_seconds(pid: int) -> float:
    """CPU time of every thread of process ``pid`` (exited threads included), in seconds."""
    clock = ((~pid) << 3) | 2  # the process-wide CPUCLOCK_SCHED clock of another process
    return time.clock_gettime(clock)


def _wait_stopped(pid: int, timeout_s: float = 1.0) -> None:
    deadline = time.monotonic() + timeout_s
    path = f"/proc/{pid}/stat"
    while time.monotonic() < deadline:
        try:
            with open(path, "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return
        if state in (b"T", b"t", b"Z", b"X"):
            return
        time.sleep(0)


@dataclass
class CallTiming:
    wall_s: float
    cpu_s: float
    #: run-queue wait of the runner and the judge during the call (0 when not measured)
    delay_s: float = 0.0


class RunnerLink:
    """The judge's end of a runner: pipes, the shared buffer, the runner's pid, a deadline."""

    def __init__(
        self,
        commands: int,
        replies: int,
        shared: int,
        pid: int,
        deadline: float,
        compile_service: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> None:
        self.commands, self.replies, self.pid, self.deadline = commands, replies, pid, deadline
        self.buffer = SharedBuffer(shared)
        self.compile_service = compile_service
        #: read the scheduler's run-queue wait around timed calls (host-timed backends)
        self.measure_delay = False

    def _delays(self) -> float | None:
        runner, judge = run_delay_s(self.pid), run_delay_s()
        return None if runner is None or judge is None else runner + judge

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise StageFailure("timeout", "the verification's time limit was reached")
        return left

    def _receive(self) -> dict[str, Any]:
        while True:
            try:
                reply = recv_message(self.replies, timeout_s=self._left())
            except ChannelTimeout:
                raise StageFailure(
                    "timeout", "the answer did not finish within the time limit (it hangs or is far too slow)"
                ) from None
            except ChannelClosed:
                raise StageFailure("crash", "the answer's process died") from None
            except ValueError as exc:
                raise StageFailure(
                    "hacked", f"the answer's process sent a malformed message ({exc})", hack_rule="protocol"
                ) from None
            if reply.get("op") == "compile":
                send_message(self.commands, self.compile_service(reply))
                continue
            return reply

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a message; return the reply, or raise StageFailure with the runner's error."""
        try:
            send_message(self.commands, message)
        except OSError:
            raise StageFailure("crash", "the answer's process died") from None
        reply = self._receive()
        if not reply.get("ok"):
            extra = {k: reply[k] for k in ("hack_rule", "compiled", "compile_log") if k in reply}
            error_class = str(reply.get("error_class", "runtime_error"))
            if error_class in ("ok", "internal_error"):  # the runner cannot claim success nor blame us
                error_class = "runtime_error"
            raise StageFailure(error_class, str(reply.get("message", ""))[:4000], **extra)
        return reply

    def timed_call(self, message: dict[str, Any]) -> tuple[dict[str, Any], CallTiming]:
        """One call, clocked here; the runner is stopped as soon as it answers, so nothing it
        does after its reply (a late write to the output, background work) goes unseen."""
        delay0 = self._delays() if self.measure_delay else None
        cpu0 = process_cpu_seconds(self.pid)
        t0 = time.perf_counter()
        try:
            send_message(self.commands, message)
        except OSError:
            raise StageFailure("crash", "the answer's process died") from None
        reply = self._receive()
        t1 = time.perf_counter()
        self.stop()
        cpu1 = process_cpu_seconds(self.pid)
        delay1 = self._delays() if delay0 is not None else None
        if not reply.get("ok"):
            self.resume()
            extra = {k: reply[k] for k in ("hack_rule", "compiled", "compile_log") if k in reply}
            error_class = str(reply.get("error_class", "runtime_error"))
            if error_class in ("ok", "internal_error"):
                error_class = "runtime_error"
            raise StageFailure(error_class, str(reply.get("message", ""))[:4000], **extra)
        delay = delay1 - delay0 if delay0 is not None and delay1 is not None else 0.0
        return reply, CallTiming(t1 - t0, cpu1 - cpu0, max(0.0, delay))

    def stop(self) -> None:
        try:
            os.kill(self.pid, signal.SIGSTOP)
        except ProcessLookupError:
            raise StageFailure("crash", "the answer's process died") from None
        _wait_stopped(self.pid)

    def resume(self) -> None:
        try:
            os.kill(self.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


# ------------------------------------------------------------------------------ stages
@dataclass
class InputSet:
    inputs: list[Any]
    expected: torch.Tensor | None


class DeferredInputSet:
    """An input set whose seed is fixed now and whose values and expected output are drawn when
    first used, then dropped (``release``). For tasks whose sets are GiBs each: at KernelBench's
    published shapes one level-1 input is 6 GiB, and holding every trial's inputs and expected
    output at once would take tens of GiB. Its sizes are those of ``like``, a set of the same task
    drawn already (every draw of a task has the same shapes)."""

    def __init__(self, make: Callable[[], InputSet], like: InputSet, drawn: InputSet | None = None) -> None:
        self._make = make
        self.like = _shapes_only(like)  # sizes only: holding ``like`` itself would keep a whole set alive
        self._set: InputSet | None = drawn  # a set drawn already (to learn the sizes), kept until released

    def _drawn(self) -> InputSet:
        if self._set is None:
            self._set = self._make()
        return self._set

    @property
    def inputs(self) -> list[Any]:
        return self._drawn().inputs

    @property
    def expected(self) -> torch.Tensor | None:
        return self._drawn().expected

    def release(self) -> None:
        self._set = None


def _shapes_only(s: InputSet) -> InputSet:
    """The set's tensors as meta tensors (shape, dtype and strides, no storage)."""

    def meta(x: Any) -> Any:
        if not isinstance(x, torch.Tensor):
            return x
        return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")

    return InputSet([meta(x) for x in s.inputs], None if s.expected is None else meta(s.expected))


def release_set(s: InputSet | DeferredInputSet) -> None:
    """Drop a drawn-when-used set's values after its last use (an eager set stays as it is)."""
    if isinstance(s, DeferredInputSet):
        s.release()


#: above this many bytes of inputs and expected outputs over the correctness trials, the trials
#: after the first are drawn when used (DeferredInputSet)
EAGER_TRIAL_BYTES = 4 << 30


@dataclass
class ReferencePlan:
    """Everything the reference contributes, computed here before any answer code runs."""

    weight_seed: int
    trials: list[tuple[float, InputSet | DeferredInputSet]]  # (input scale, set)
    recheck: InputSet | DeferredInputSet
    timing_sets: list[InputSet | DeferredInputSet] = field(default_factory=list)
    reference_timing_sets: list[InputSet | DeferredInputSet] = field(default_factory=list)
    #: a fresh input set (OS-entropy seed) with the reference's output, for paired timing rounds
    draw: Callable[[float], InputSet] | None = None
    #: where the judge ran the reference, and so where it compares outputs ("cuda": a GPU backend's)
    device: str = "cpu"


def _entropy_seed() -> int:
    return int.from_bytes(os.urandom(6), "little")


def _seed_source(settings: VerifySettings) -> Callable[[], int]:
    """Where the draws' seeds come from: OS entropy (nothing an answer can predict), or with
    ``settings.fixed_inputs`` a stream from ``settings.seed``, so that a run's failure messages
    (which quote values) and so its memories repeat exactly (the offline demo)."""
    if not settings.fixed_inputs:
        return _entropy_seed
    rng = random.Random(settings.seed)
    return lambda: rng.getrandbits(48)


def _reference_output(
    reference: torch.nn.Module, inputs: list[Any], device: str = "cpu", to_host: bool = True
) -> torch.Tensor:
    """The reference's output for one input set; on ``device`` (the judge's own GPU work: at
    KernelBench's published shapes a CPU reference takes minutes), in full fp32 precision (no TF32
    in cuBLAS or cuDNN), returned on the CPU (on ``device`` with ``to_host=False``)."""
    args = [x.to(device, copy=True) if isinstance(x, torch.Tensor) else x for x in inputs]
    if device == "cpu":
        with torch.no_grad():
            out = reference(*args)
    else:
        matmul = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        try:
            with torch.no_grad(), torch.backends.cudnn.flags(enabled=True, allow_tf32=False):
                out = reference(*args)
            del args
            if isinstance(out, torch.Tensor) and out.device.type != "cpu":
                if not to_host:
                    return out.detach().clone()  # the reference's own tensor might alias its state
                return out.detach().cpu()  # a copy already: no second one of a GiB-sized output
        finally:
            torch.backends.cuda.matmul.allow_tf32 = matmul
    if not isinstance(out, torch.Tensor):
        raise StageFailure(
            "internal_error", f"the task's reference returned {type(out).__name__}; single-tensor outputs are supported"
        )
    return out.detach().clone()


def _nbytes(values: list[Any]) -> int:
    return sum(tensor_nbytes(v) for v in values if isinstance(v, torch.Tensor))


def prepare_reference(
    task_module: Any, settings: VerifySettings, simulated: bool = False, paired: bool = False, device: str = "cpu"
) -> ReferencePlan:
    """Inputs from fresh OS-entropy seeds and the reference's outputs for every call.

    Nothing here is predictable by the answer: weights, trial inputs, timing inputs and the
    re-check inputs each come from their own seed drawn now (from ``settings.seed`` instead with
    ``settings.fixed_inputs``, for reproducible offline runs).
    """
    next_seed = _seed_source(settings)
    weight_seed = next_seed()
    seed_cpu(weight_seed)
    reference = set_module_mode(task_module.Model(*task_module.get_init_inputs()), settings.module_mode).to(device)
    # where drawn sets stay: host memory, or (GiB-sized sets drawn when used, on a GPU with room)
    # the GPU they were drawn on (below)
    stays = {"on_device": device != "cpu", "set_bytes": 0}

    def draw(scale: float, with_expected: bool = True, seed: int | None = None) -> InputSet:
        seed = next_seed() if seed is None else seed
        on_device = bool(stays["on_device"]) and _device_has_room(device, int(stays["set_bytes"]))
        inputs = draw_inputs(task_module, seed, scale, device)  # on the reference's device
        expected = _reference_output(reference, inputs, device, to_host=not on_device) if with_expected else None
        drawn = InputSet(inputs, expected)
        # else the judge places inputs in the runner's shared buffer from host memory
        return drawn if on_device else _on_host(drawn)

    scales = [settings.input_scales[t % len(settings.input_scales)] for t in range(settings.correctness_trials)]
    first_seed = next_seed()
    first = draw(scales[0], seed=first_seed)
    assert first.expected is not None
    set_bytes = _nbytes(first.inputs) + tensor_nbytes(first.expected)
    # Large tasks (published shapes: one level-1 set can be 12 GiB with its expected output): every
    # set, the first and the timing sets included, is drawn when used and dropped after its last
    # use, so the judge holds one set at a time. Seeds are fixed here in the eager plan's order.
    deferred = set_bytes * (len(scales) + 1) > EAGER_TRIAL_BYTES
    # A GPU backend's drawn-when-used sets stay on the GPU: the inputs go from there straight into
    # the shared buffer, the expected output is compared there, and nothing GiB-sized crosses host
    # memory on the judge's side but the buffer itself (a 6 GiB set took four host copies a call).
    # Eager sets (small, many held at once) live in host memory.
    stays.update(on_device=deferred and device != "cpu", set_bytes=set_bytes)
    if not stays["on_device"]:
        first = _on_host(first)
    sizes = _shapes_only(first)

    def later(scale: float, with_expected: bool = True) -> InputSet | DeferredInputSet:
        if not deferred:
            return draw(scale, with_expected)
        seed = next_seed()  # fixed now, drawn when used
        like = sizes if with_expected else InputSet(sizes.inputs, None)
        return DeferredInputSet(lambda: draw(scale, with_expected, seed=seed), like=like)

    opening: InputSet | DeferredInputSet = first
    if deferred:
        opening = DeferredInputSet(lambda: draw(scales[0], seed=first_seed), like=first, drawn=first)
    trials: list[tuple[float, InputSet | DeferredInputSet]] = [(scales[0], opening)]
    trials += [(scale, later(scale)) for scale in scales[1:]]
    plan = ReferencePlan(weight_seed, trials, later(1.0), draw=draw, device=device)
    del first, opening  # a deferred plan holds the first set only through its DeferredInputSet
    if settings.measure_time and not paired:  # paired rounds draw their sets as they go
        timing_trials = max(1, settings.timing_trials)
        calls = settings.warmup_runs + timing_trials + max(1, timing_trials // 3)  # room for the guarded calls
        if simulated:
            calls = 2  # a simulated latency is deterministic: two calls check that it repeats
        budget = TIMING_SET_BYTES
        for _ in range(calls):
            if budget >= set_bytes or len(plan.timing_sets) < 2:  # one to warm up on, one timed at least
                plan.timing_sets.append(later(1.0))  # drawn with its expected output
            elif set_bytes <= DEFERRED_TIMING_SET_BYTES or stays["on_device"]:
                # past the memory budget the rest are drawn when used, one at a time, so every timed
                # call still has a set of its own (cut to two sets, a task was timed by one call);
                # sets that stay on the GPU cost a draw there and the buffer's copies (a 6 GiB set
                # about a second on an H200), so they get every call too
                plan.timing_sets.append(later(1.0) if deferred else _drawn_when_used(draw, next_seed(), sizes))
            else:
                break  # GiB-sized sets in host memory: each draw and copy costs seconds
            budget -= set_bytes  # every draw of a task has the same sizes
        if not simulated:  # a simulated backend estimates the reference instead of running it
            # The reference is trusted and caches nothing: one draw, timed repeatedly, is enough.
            # Its inputs are never the answer's, which come from their own seeds.
            # (one draw: as many calls as warm-up and trials need, whatever the budget allowed the answer)
            calls = max(len(plan.timing_sets), settings.warmup_runs + timing_trials)
            plan.reference_timing_sets = [later(1.0, with_expected=False)] * calls
    return plan


def _on_host(s: InputSet) -> InputSet:
    """The set with its tensors in host memory (those there already as they are)."""

    def host(x: Any) -> Any:
        return x.cpu() if isinstance(x, torch.Tensor) else x

    return InputSet([host(x) for x in s.inputs], None if s.expected is None else host(s.expected))


#: GPU memory a drawn set may leave free at least (the answer's runner shares the GPU)
DEVICE_SET_HEADROOM = 4 << 30


def _device_has_room(device: str, set_bytes: int) -> bool:
    """Whether a set of ``set_bytes`` (inputs and expected output) can stay on ``device``, with room
    for the runner's copies of it beside (its inputs, a pristine copy, the output) and a margin."""
    if device == "cpu":
        return False
    d = torch.device(device)
    free, _ = torch.cuda.mem_get_info(d)
    free += torch.cuda.memory_reserved(d) - torch.cuda.memory_allocated(d)  # released sets, cached here
    return free >= 3 * set_bytes + DEVICE_SET_HEADROOM


def _drawn_when_used(draw: Callable[..., InputSet], seed: int, like: InputSet) -> DeferredInputSet:
    """A set of the plan's draw at ``seed`` (fixed now), drawn when the call that uses it comes."""
    return DeferredInputSet(lambda: draw(1.0, seed=seed), like=like)


class CallSlots:
    """Layout of the shared buffer: the inputs of one call, then room for its output."""

    def __init__(self, link: RunnerLink, plan: ReferencePlan) -> None:
        sets = [s for _, s in plan.trials] + [plan.recheck] + plan.timing_sets + plan.reference_timing_sets
        drawn = [s.like if isinstance(s, DeferredInputSet) else s for s in sets]  # sizes without drawing
        self.input_bytes = max(_aligned_sizes(s.inputs) for s in drawn)
        outputs = [tensor_nbytes(s.expected) for s in drawn if s.expected is not None]
        self.out_offset = _align(self.input_bytes)
        self.out_capacity = max(outputs) + 64
        self.link = link
        self.device = plan.device  # where outputs are compared
        link.buffer.resize(self.out_offset + self.out_capacity)
        if self.device != "cpu":  # inputs are copied in from the GPU, outputs out to it
            link.buffer.pin_for_cuda()
        link.request({"op": "shm", "size": link.buffer.size})

    def place(self, inputs: list[Any], write: bool = True) -> list[dict[str, Any]]:
        """Write a call's inputs into the buffer (same offsets every call: same pointers, new values);
        ``write=False``: describe them only (they are there already)."""
        described, offset = [], 0
        for x in inputs:
            if isinstance(x, torch.Tensor):
                if write:
                    slot = self.link.buffer.write(offset, x)
                else:
                    slot = TensorSlot(offset, str(x.dtype).removeprefix("torch."), tuple(x.shape))
                described.append({"slot": slot.to_dict()})
                offset = _align(offset + tensor_nbytes(x))
            else:
                described.append({"value": x})
        return described

    def inputs_intact(self, inputs: list[Any], described: list[dict[str, Any]]) -> bool:
        for x, d in zip(inputs, described, strict=True):
            if "slot" in d:
                now = self.link.buffer.view(TensorSlot.from_dict(d["slot"]))
                if not _bitwise_equal(now, x.contiguous()):
                    return False
        return True

    def call(
        self, inputs: list[Any], record: bool, guard: bool = True, fill: bool = True, repeat: bool = False
    ) -> tuple[list[dict[str, Any]], dict[str, Any], CallTiming]:
        """One call of the loaded model on ``inputs``. ``repeat``: the trusted reference's timing
        only, before any answer code is loaded: the inputs of the previous call again, left where
        they are (the buffer, the runner's device copies), and no output handed back."""
        described = self.place(inputs, write=not repeat)
        msg = {
            "op": "call",
            "inputs": described,
            "out_offset": self.out_offset,
            "out_capacity": self.out_capacity,
            "record": record,
            "guard": guard,
            "fill": fill,
        }
        if repeat:
            msg.update(reuse_inputs=True, return_output=False)
        reply, timing = self.link.timed_call(msg)
        return described, reply, timing

    def output(self, reply: dict[str, Any], expected: torch.Tensor) -> torch.Tensor:
        """The runner's output, read with the expected dtype/shape once its claims check out."""
        shape, dtype = tuple(reply.get("shape", ())), str(reply.get("dtype"))
        want = str(expected.dtype).removeprefix("torch.")
        if shape != tuple(expected.shape):
            raise StageFailure("shape_mismatch", f"output shape {shape} != reference shape {tuple(expected.shape)}")
        if dtype != want:
            raise StageFailure("dtype_mismatch", f"output dtype torch.{dtype} != reference dtype {expected.dtype}")
        stride = reply.get("stride", [])
        # A reply without strides (an empty list) skips the layout check. Strides other than the
        # reference's are fine where every element has its own memory (a permuted or sliced tensor:
        # KernelBench's answers return those); elements sharing memory (an expanded or overlapping
        # view) mean fewer elements were computed than the output holds.
        if stride and _elements_share_memory(tuple(expected.shape), tuple(stride)):
            raise StageFailure(
                "hacked",
                f"output strides {tuple(stride)} make elements share memory (an expanded or aliased view, "
                f"not a fresh tensor; the reference's are {tuple(expected.stride())})",
                hack_rule="output_layout",
            )
        if not reply.get("written"):
            raise StageFailure(
                "runtime_error", "the output could not be handed over (larger than the reference's output)"
            )
        slot = TensorSlot(self.out_offset, want, tuple(expected.shape))
        if expected.device.type != "cpu":  # compared where the expectation lives: one copy, the judge's own
            return self.link.buffer.view(slot).to(expected.device, copy=True)
        return self.link.buffer.read(slot)


def _elements_share_memory(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Whether a tensor of these sizes and strides (elements) maps two indices to one address.

    Dimensions of size 1 take no part; the others, by increasing stride, must each step past the
    whole extent of the smaller ones (sufficient for no overlap, and what every dense or sliced
    layout satisfies; interleaved layouts that avoid overlap otherwise count as overlapping).
    """
    if len(stride) != len(shape):
        return True
    dims = sorted((abs(int(st)), int(n)) for n, st in zip(shape, stride, strict=True) if n > 1)
    extent = 0  # the largest offset reached by the dimensions so far
    for st, n in dims:
        if st <= extent:
            return True
        extent += st * (n - 1)
    return False


def _align(n: int) -> int:
    return (n + 63) // 64 * 64


def _aligned_sizes(inputs: list[Any]) -> int:
    return sum(_align(tensor_nbytes(x)) for x in inputs if isinstance(x, torch.Tensor))


def judge_output(
    out: torch.Tensor,
    expected: torch.Tensor,
    settings: VerifySettings,
    what: str,
    stats: dict[str, Any] | None = None,
    device: str = "cpu",
) -> None:
    atol, rtol = settings.tolerances(str(expected.dtype).removeprefix("torch."))
    cmp = compare_outputs(out, expected, atol, rtol, device)
    if stats is not None:
        for key in ("max_abs_error", "max_rel_error"):
            value = getattr(cmp, key)
            if value is not None:
                stats[key] = max(stats.get(key) or 0.0, value)
    if not cmp.ok:
        raise StageFailure(
            cmp.error_class,
            f"{what}: {cmp.message}",
            first_mismatch_index=cmp.first_mismatch_index,
            mismatch_fraction=cmp.mismatch_fraction,
            hack_rule=cmp.hack_rule,
        )


def _checked_call(
    slots: CallSlots,
    inputs: list[Any],
    expected: torch.Tensor,
    settings: VerifySettings,
    what: str,
    record: bool,
    stats: dict[str, Any] | None = None,
    guard: bool = True,
    fill: bool = True,
    keep_stopped: bool = False,
) -> tuple[torch.Tensor, dict[str, Any], CallTiming]:
    described, reply, timing = slots.call(inputs, record, guard, fill)
    try:
        if not slots.inputs_intact(inputs, described):
            raise StageFailure("hacked", f"{what}: the forward modified its inputs", hack_rule="input_mutation")
        out = slots.output(reply, expected)
    finally:
        if not keep_stopped:  # paired timing: stopped until its next call, while the reference is timed
            slots.link.resume()
    try:
        judge_output(out, expected, settings, what, stats, slots.device)
    except StageFailure as failure:
        warnings = (reply.get("simulated") or {}).get("warnings") or []
        if not warnings:
            raise
        # the simulated NPU ran on where the kernel broke a rule (as the hardware does): say so
        raise StageFailure(
            failure.error_class,
            f"{failure.message}. The simulated NPU warned: " + "; ".join(str(w)[:300] for w in warnings[:6]),
            **failure.extra,
        ) from None
    return out, reply, timing


def check_correctness(
    slots: CallSlots, plan: ReferencePlan, settings: VerifySettings, stats: dict[str, Any], record: bool
) -> None:
    """The correctness trials. An output identical to the previous trial's while the
    reference's changed is a cached or constant result, even within tolerance."""
    previous: tuple[bytes, bytes] | None = None  # fingerprints of the last trial's output and expectation
    keyed_on = None if plan.device == "cpu" else torch.device(plan.device)  # outputs are compared there
    for trial, (scale, s) in enumerate(plan.trials):
        assert s.expected is not None
        stats["trials_run"] = trial + 1
        out, reply, _ = _checked_call(
            slots, s.inputs, s.expected, settings, f"trial {trial} (input scale {scale:g})", record, stats
        )
        if reply.get("torch_ops"):  # torch_ops="beside_kernel": the torch ops beside the answer's code
            stats.setdefault("details", {})["torch_ops"] = reply["torch_ops"]
        now = (_fingerprint(out, keyed_on), _fingerprint(s.expected, keyed_on))
        if previous is not None and now[0] == previous[0] and now[1] != previous[1]:
            raise StageFailure(
                "hacked",
                f"trial {trial}: the output is identical to the previous trial's "
                "although the inputs and the reference's output changed",
                hack_rule="stale_or_constant_output",
            )
        slots.link.request({"op": "audit"})
        stats["trials_passed"] = trial + 1
        previous = now
        del out
        release_set(s)  # not used again


_EQUAL_CHUNK = 1 << 24  # elements: the comparison's temporaries stay small for GiB-sized tensors


def _fingerprint(t: torch.Tensor, keyed_on: torch.device | None = None) -> bytes:
    """A digest of the tensor's shape, dtype and bytes, so a trial keeps 32 bytes of the last trial
    instead of its GiB-sized output and expectation. Equal digests mean bitwise-identical tensors
    (what a cached or constant output is); outputs that differ in a bit differ, as they would under
    a value comparison that changes one last place. BLAKE2b over blocks on several threads
    (hashlib releases the GIL; a 6 GiB output takes about a second on 16 cores), or with
    ``keyed_on`` a keyed hash computed on that device (``_keyed_digest``): where the judge compares
    outputs on a GPU, the tensors live there and copying them out is what cost seconds. Every
    fingerprint of one verification is taken the same way, so any two of them compare."""
    header = f"{tuple(t.shape)}|{t.dtype}".encode()
    x = t.detach().reshape(-1)
    if x.dtype == torch.bool:
        x = x.to(torch.uint8)
    if keyed_on is not None:
        return hashlib.blake2b(header + _keyed_digest(x, keyed_on), digest_size=32).digest()
    x = x.cpu()

    def block(i: int) -> bytes:
        u = x[i : i + _EQUAL_CHUNK].contiguous().view(torch.uint8)
        return hashlib.blake2b(u.numpy().data, digest_size=32).digest()  # the array's buffer, no copy

    starts = range(0, x.numel(), _EQUAL_CHUNK)
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1, max(1, len(starts)))) as pool:
        blocks = list(pool.map(block, starts))
    return hashlib.blake2b(header + b"".join(blocks), digest_size=32).digest()


# The keyed digest's keys: drawn once per judge process. A stale output has the same digest under
# any key; the random keys make a collision of two honest, different outputs as unlikely as chance.
_DIGEST_KEYS = tuple(int.from_bytes(os.urandom(8), "little") for _ in range(2))
_M64 = (1 << 64) - 1


def _as_int64(v: int) -> int:
    v &= _M64
    return v - (1 << 64) if v >> 63 else v


_MIX1, _MIX2 = _as_int64(0xBF58476D1CE4E5B9), _as_int64(0x94D049BB133111EB)


def _srl(z: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int64 words (torch's ``>>`` is arithmetic)."""
    return (z >> bits) & ((1 << (64 - bits)) - 1)


def _mix64(z: torch.Tensor) -> torch.Tensor:
    """SplitMix64's finaliser on int64 words (wrapping arithmetic), in place."""
    z ^= _srl(z, 30)
    z *= _MIX1
    z ^= _srl(z, 27)
    z *= _MIX2
    z ^= _srl(z, 31)
    return z


def _keyed_digest(x: torch.Tensor, device: torch.device) -> bytes:
    """Two 64-bit sums over the tensor's 8-byte words (its bytes where length or alignment do not
    allow words) of mix(word ^ mix(index + key)), one per random key, on ``device``, in blocks.
    Each word meets a pseudo-random function of its position, so two different tensors agree in
    both sums with probability about 2^-128. The sums are taken by 32-bit halves, which no block
    can overflow."""
    words = _words(x.view(torch.uint8)) if x.numel() else torch.zeros(0, dtype=torch.int64)
    n = words.numel()
    totals = [0, 0]
    for i in range(0, n, _EQUAL_CHUNK):
        w = words[i : i + _EQUAL_CHUNK].to(device).to(torch.int64)  # bytes widened a block at a time
        index = torch.arange(i, i + w.numel(), dtype=torch.int64, device=device)
        for k, key in enumerate(_DIGEST_KEYS):
            h = _mix64(_mix64(index + _as_int64(key)) ^ w)
            low = int((h & 0xFFFFFFFF).sum())
            high = int(_srl(h, 32).sum())
            totals[k] = (totals[k] + low + (high << 32)) & _M64
    return n.to_bytes(8, "little") + b"".join(v.to_bytes(8, "little") for v in totals)


def _bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same shape, dtype and bytes (an input the answer left alone is bit for bit what the judge
    wrote), compared in blocks of 8-byte words (bytes where the length or alignment does not allow
    words): one pass, no temporaries, for GiB-sized inputs too. Tensors on different devices (the
    shared buffer and the judge's GPU copy) are compared block by block on the device."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    x, y = _words(a.reshape(-1).view(torch.uint8)), _words(b.reshape(-1).view(torch.uint8))
    if x.dtype != y.dtype:
        x, y = x.view(torch.uint8), y.view(torch.uint8)
    step = _EQUAL_CHUNK * 4 // x.element_size()
    on = y.device if y.device.type != "cpu" else x.device
    return all(torch.equal(x[i : i + step].to(on), y[i : i + step].to(on)) for i in range(0, x.numel(), step))


def _words(x: torch.Tensor) -> torch.Tensor:
    """Flat bytes viewed as 8-byte words where their length and alignment allow: torch.equal
    compares bytes half as fast as words (2 GiB inputs on every call of a published-shape task)."""
    if x.numel() % 8 or x.data_ptr() % 8:
        return x
    return x.view(torch.int64)


_FLUSH: dict[int, torch.Tensor] = {}


def _flush_caches(megabytes: int) -> None:
    """Write a buffer larger than the last-level cache share, so both sides start cold alike."""
    if megabytes <= 0:
        return
    buf = _FLUSH.get(megabytes)
    if buf is None:
        buf = _FLUSH[megabytes] = torch.empty(megabytes * (1 << 20) // 4, dtype=torch.float32)
    buf.fill_(1.0)


def _timing_summary(samples: list[float], threads: int, timings: list[CallTiming]) -> dict[str, Any]:
    ordered = sorted(samples)
    return {
        "trials": len(samples),
        "min_s": ordered[0],
        "max_s": ordered[-1],
        "iqr_s": ordered[(3 * len(ordered)) // 4] - ordered[len(ordered) // 4],
        "cpu_bound_calls": sum(1 for t in timings if t.cpu_s / threads > t.wall_s),
        "clock": "judge wall clock; CPU time of all the runner's threads / threads when larger",
    }


def timing_schedule(sets: int, warmup: int, simulated: bool = False) -> tuple[list[int], int]:
    """The input set of each timing call of the answer, and how many leading calls warm up. Each
    call has a set of its own when the memory budget held enough of them; with fewer (published
    shapes: a set can be hundreds of MB) the warm-up calls reuse the first set and each other set is
    timed once, so there is always a timed call."""
    if simulated or sets > warmup:
        return list(range(sets)), min(warmup, sets)
    return [0] * warmup + list(range(1, max(sets, 2))), warmup


def time_reference(
    backend: Backend,
    link: RunnerLink,
    slots: CallSlots,
    plan: ReferencePlan,
    settings: VerifySettings,
    task_module: Any,
) -> tuple[float, dict[str, Any]]:
    """The reference's latency, before the answer is loaded: in the runner with the protocol the
    answer is timed with (wall-clock backends), or the backend's estimate (simulated ones)."""
    if backend.simulated:
        seed_cpu(plan.weight_seed)
        model = set_module_mode(task_module.Model(*task_module.get_init_inputs()), settings.module_mode)
        return backend.time_reference(lambda: None, model, plan.timing_sets[0].inputs, settings)
    link.request({"op": "load_reference"})
    samples, timings, reports = [], [], []
    # On a GPU the reference's inputs stay on the device between its calls (one draw; the L2 is
    # flushed before every timed call): re-placing a GiB-sized set in host memory and copying it
    # over again took 45 of a 6 GiB task's 240 s. On the CPU each call writes them anew, as the
    # answer's calls do, so both sides meet their inputs equally warm in the caches.
    repeat_on_device = plan.device != "cpu"
    previous = None
    for j, s in enumerate(plan.reference_timing_sets):
        _flush_caches(settings.flush_cache_mb)
        repeat = repeat_on_device and s is previous
        previous = s
        _, reply, timing = slots.call(s.inputs, record=False, fill=False, repeat=repeat)
        link.resume()
        if j >= settings.warmup_runs:
            samples.append(_call_latency(backend, reply, timing, settings))
            timings.append(timing)
            reports.append(reply.get("device_timing") or {})
    for s in plan.reference_timing_sets:
        release_set(s)
    details = _timing_summary(samples, settings.threads, timings)
    return statistics.median(samples), {**details, **_device_summary(backend, reports), "samples_s": samples}


def _call_latency(backend: Backend, reply: dict[str, Any], timing: CallTiming, settings: VerifySettings) -> float:
    """The backend's latency of one timed call (the judge's clock, or a device's report it checks)."""
    from kernel_gym.backends import TimingRejected

    try:
        # the run-queue wait (other processes holding the CPU) is not the call's; CPU time floors it
        return backend.call_latency(reply, timing.wall_s - timing.delay_s, timing.cpu_s / settings.threads)
    except TimingRejected as exc:
        raise StageFailure("hacked", str(exc), hack_rule=exc.hack_rule) from None


def _device_summary(backend: Backend, reports: list[dict[str, Any]]) -> dict[str, Any]:
    from kernel_gym.backends import TimingRejected

    try:
        return backend.summarize_timing(reports)
    except TimingRejected as exc:
        raise StageFailure("hacked", str(exc), hack_rule=exc.hack_rule) from None


def _pin_judge(cpus: list[int] | None) -> None:
    if cpus:
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            pass


def setup_reference_runner(link: RunnerLink, init: dict[str, Any], plan: ReferencePlan) -> CallSlots:
    """The reference's own runner (host-timed backends): same task, seed and options as the answer's."""
    link.measure_delay = True
    link.request(init)
    slots = CallSlots(link, plan)
    link.request({"op": "load_reference"})
    return slots


def _reference_call(ref: CallSlots, inputs: list[Any]) -> CallTiming:
    """One timed reference call in its own runner, left stopped until its next call."""
    ref.link.resume()  # whoever stopped it meanwhile, it runs now
    try:
        _, _, timing = ref.call(inputs, record=False, fill=False)
    except StageFailure as failure:
        raise StageFailure(
            failure.error_class if failure.error_class == "timeout" else "crash",
            f"the reference's runner failed while timed beside the answer ({failure.message})",
        ) from None
    return timing


# A call was preempted when its run-queue wait is beyond what waking the runner costs (tens of
# microseconds): another process held the CPU. More than this fraction of calls preempted: contended.
PREEMPTED_WAIT_S = 100e-6
CONTENDED_FRACTION = 0.25


def _preempted(timing: CallTiming) -> bool:
    return timing.delay_s > max(PREEMPTED_WAIT_S, 0.1 * timing.wall_s)


def measure_paired(
    backend: Backend,
    slots: CallSlots,
    ref: CallSlots,
    plan: ReferencePlan,
    settings: VerifySettings,
    guard_all: bool = False,
) -> tuple[list[float], list[float], dict[str, Any]]:
    """Reference and answer timed in alternating rounds on the same fresh input values, each call's
    run-queue wait taken out; rounds are added until the speedup's interval is within
    ``timing_target`` or ``timing_budget_s`` is spent. Every answer output is checked, and a random
    quarter of the rounds (after the warm-up) are guarded answer calls, left out of the samples;
    with ``guard_all`` (torch calls in the answer's forward) every answer call is guarded.

    Returns the reference's and the answer's per-round latencies (paired) and the details."""
    assert plan.draw is not None
    cpus = timing_cpus(settings.threads)
    _pin_judge(cpus)
    slots.link.stop()  # the answer's process runs only during its own calls from here on
    chooser = random.SystemRandom()
    ref_s: list[float] = []
    ans_s: list[float] = []
    delays: list[float] = []
    preempted = 0
    steal0 = steal_seconds()
    started = time.perf_counter()
    interval: tuple[float, float] | None = None
    done = False
    j = 0
    max_rounds = MAX_ROUNDS_FACTOR * max(1, settings.timing_trials)
    next_check = min(max(3, settings.timing_trials), max_rounds)
    while not done:
        s = plan.draw(1.0)
        assert s.expected is not None
        watched = j >= settings.warmup_runs and chooser.random() < 0.25
        what = f"timed call {j + 1}"
        ref_timing = None
        answer_timing = reply = None
        for side in ("answer", "reference") if j % 2 else ("reference", "answer"):
            if side == "reference":
                if not watched:
                    _flush_caches(settings.flush_cache_mb)
                    ref_timing = _reference_call(ref, s.inputs)
                continue
            _flush_caches(settings.flush_cache_mb)
            slots.link.resume()
            try:
                _, reply, answer_timing = _checked_call(
                    slots,
                    s.inputs,
                    s.expected,
                    settings,
                    what,
                    False,
                    guard=watched or guard_all,
                    fill=watched,
                    keep_stopped=True,
                )
            except StageFailure as failure:
                if failure.error_class in ("numerical_mismatch", "shape_mismatch", "dtype_mismatch"):
                    raise StageFailure(
                        "nondeterministic",
                        f"the output was wrong while timed although the correctness trials passed; {failure.message}",
                    ) from None
                raise
        j += 1
        if j <= settings.warmup_runs or watched:
            continue
        assert ref_timing is not None and answer_timing is not None and reply is not None
        ref_s.append(_call_latency(backend, {}, ref_timing, settings))
        ans_s.append(_call_latency(backend, reply, answer_timing, settings))
        delays.extend((ref_timing.delay_s, answer_timing.delay_s))
        preempted += sum(1 for t in (ref_timing, answer_timing) if _preempted(t))
        n = len(ans_s)
        if n >= next_check:  # the bootstrap costs more as rounds grow: check at growing steps
            next_check = min(n + max(5, n // 5), max_rounds)
            interval = speedup_interval(ref_s, ans_s, paired=True)
            speedup = statistics.median(ref_s) / statistics.median(ans_s)
            contended = preempted > CONTENDED_FRACTION * 2 * n
            done = (
                (converged(speedup, interval, settings.timing_target) and not contended)
                or time.perf_counter() - started > settings.timing_budget_s
                or n >= max_rounds
            )
    slots.link.resume()
    ref.link.resume()
    steal1 = steal_seconds()
    speedup = statistics.median(ref_s) / statistics.median(ans_s)
    contended = preempted > CONTENDED_FRACTION * 2 * len(ans_s)
    details = {
        "rounds": len(ans_s),
        "outputs_checked": j,
        # a machine busy enough to preempt many calls leaves more than the interval shows (shared
        # caches, memory bandwidth): such a result never counts as converged
        "converged": converged(speedup, interval, settings.timing_target) and not contended,
        "contended": contended,
        "preempted_calls": preempted,
        "target": settings.timing_target,
        "seconds": time.perf_counter() - started,
        "cpus": cpus,
        # run-queue wait taken out of the calls: wake-ups cost some on an idle machine, more under load
        "median_wait_s": statistics.median(delays) if delays else 0.0,
        "max_wait_s": max(delays, default=0.0),
        "steal_s": None if steal0 is None or steal1 is None else steal1 - steal0,
        "perf_counters": perf_counters_available(),
    }
    return ref_s, ans_s, details


def measure_latency(
    backend: Backend, slots: CallSlots, plan: ReferencePlan, settings: VerifySettings, guard_all: bool = False
) -> tuple[float, dict[str, Any]]:
    """Median latency over distinct input sets, every timed output checked (a wrong output
    while timed fails the answer). Simulated backends report the simulated latency, which must
    not fall below the memory-traffic floor the judge computes itself. ``guard_all``: every call
    runs under the compute guard and counts (the answer's forward calls torch: the guard's cost
    is the answer's)."""
    samples, timings, simulated, reports = [], [], [], []
    # The in-process compute guard costs a Python dispatch per torch op, which the reference does
    # not pay: it watches a random quarter of the timed calls (left out of the samples), which
    # the answer cannot tell from the others, so torch compute used only while timed is caught.
    # Watched calls are drawn after the warm-up, exactly as many as the extra sets, so the
    # number of samples is always the requested trials.
    schedule, warm = timing_schedule(len(plan.timing_sets), settings.warmup_runs, backend.simulated)
    timed = range(warm, len(schedule))
    extra = len(timed) - max(1, settings.timing_trials)
    if backend.simulated:
        extra = 0  # every simulated call is guarded
    elif extra <= 0:  # sets cut by the memory budget: still watch some
        extra = max(1, len(timed) // 4) if len(timed) > 1 else 0
    watched = set(random.SystemRandom().sample(timed, extra)) if extra else set()
    last_use = {index: j for j, index in enumerate(schedule)}
    for j, index in enumerate(schedule):
        if j and last_use[schedule[j - 1]] == j - 1:  # a drawn-when-used set is dropped after its last call
            release_set(plan.timing_sets[schedule[j - 1]])
        s = plan.timing_sets[index]
        assert s.expected is not None
        _flush_caches(0 if backend.simulated else settings.flush_cache_mb)
        what = f"timed call {j + 1}"
        guard = backend.simulated or j in watched
        try:
            _, reply, timing = _checked_call(
                slots,
                s.inputs,
                s.expected,
                settings,
                what,
                record=backend.simulated,
                guard=guard or guard_all,
                fill=guard,
            )
        except StageFailure as failure:
            if failure.error_class in ("numerical_mismatch", "shape_mismatch", "dtype_mismatch"):
                raise StageFailure(
                    "nondeterministic",
                    f"the output was wrong while timed although the correctness trials passed; {failure.message}",
                ) from None
            raise
        if (j < warm or guard) and not backend.simulated:
            continue
        if backend.simulated:
            sim = reply.get("simulated") or {}
            latency = sim.get("latency_s")
            if not isinstance(latency, (int, float)) or not latency > 0 or int(sim.get("launches", 0)) < 1:
                raise StageFailure("runtime_error", backend.no_launch_message)
            floor = backend.latency_floor_s(s.inputs, s.expected)
            if latency < floor:
                raise StageFailure(
                    "hacked",
                    f"simulated latency {latency * 1e6:.3f} us is below the memory-traffic "
                    f"floor of {floor * 1e6:.3f} us for the task's inputs and output",
                    hack_rule="timing_forgery",
                )
            simulated.append(sim)
            samples.append(float(latency))
            if len(samples) >= 2:
                break  # deterministic: a second call checks repeatability
        else:
            samples.append(_call_latency(backend, reply, timing, settings))
            timings.append(timing)
            reports.append(reply.get("device_timing") or {})
    for s in plan.timing_sets:
        release_set(s)
    slots.link.request({"op": "audit"})  # a patch made while timed shows here
    if backend.simulated:
        details = {
            "simulated": True,
            "repeatable": len(set(samples)) == 1,
            "launches": simulated[-1]["launches"],
            "per_launch": simulated[-1].get("per_launch", []),
            "outputs_checked": len(samples),
        }
        if simulated[-1].get("warnings"):
            details["warnings"] = simulated[-1]["warnings"]
        return samples[-1], {**details, **backend.timing_details()}
    details = {**_timing_summary(samples, settings.threads, timings), **_device_summary(backend, reports)}
    details["input_sets"] = len(plan.timing_sets)
    details["outputs_checked"] = len(plan.timing_sets)
    details["samples_s"] = samples  # for the interval; run_job takes it out of the details
    return statistics.median(samples), details


def _published_windows(spans: Any, numel: int, budget: int, most: int = 32) -> list[tuple[int, int]]:
    """Windows [first, end) of the output to compare, within ``budget`` elements: up to ``most``
    of the spans the sampled blocks stored, each whole or a window of it at a place drawn here
    (the runner cannot know which)."""
    if not isinstance(spans, list) or not spans:
        return []
    found = []
    for row in spans:
        if not (isinstance(row, list) and len(row) == 3 and all(isinstance(v, int) for v in row)):
            raise StageFailure("hacked", "malformed written spans from the runner", hack_rule="protocol")
        _, lo, hi = row
        if not 0 <= lo < hi <= numel:
            raise StageFailure("hacked", "written spans outside the output", hack_rule="protocol")
        found.append((lo, hi))
    rng = random.SystemRandom()
    chosen = found if len(found) <= most else rng.sample(found, most)
    per = max(1, budget // len(chosen))
    windows = []
    for lo, hi in chosen:
        start = lo if hi - lo <= per else rng.randrange(lo, hi - per + 1)
        windows.append((start, min(hi, start + per)))
    return sorted(windows)


def check_published(
    backend: Backend, link: RunnerLink, slots: CallSlots, task: TaskSpec, plan: ReferencePlan, settings: VerifySettings
) -> dict[str, Any]:
    """The answer at the task's published shapes, under sampled simulation: its latency (with the
    bracket the sampling leaves), the reference's estimate there, and the sampled blocks' output
    compared with the reference computed here on the same lazy inputs (same seeds). Both models
    are built with their large parameters lazy from one seed (``Backend.lazy_parameters``), or
    both eagerly where the answer's draws are not the reference's. A mismatch fails the answer;
    what could not be checked is said in the returned record."""
    from kernel_gym.ascendc.sampling import input_specs, is_lazy, spec_bytes
    from kernel_gym.tasks.spec import load_task_module
    from kernel_gym.verify.correctness import published_parameter_seed, sampled_reference

    assert task.published_source is not None
    module = load_task_module(task.published_source, "published")
    init = list(module.get_init_inputs())
    specs = input_specs(module.get_inputs, seed=_seed_source(settings)() % (1 << 31))
    try:
        with torch.device("meta"), torch.no_grad():
            meta_inputs = [
                torch.empty(sp["shape"], dtype=getattr(torch, sp["dtype"])) if "shape" in sp else sp["value"]
                for sp in specs
            ]
            meta_model = set_module_mode(module.Model(*init), settings.module_mode)
            meta_out = meta_model(*meta_inputs)
    except Exception as exc:  # noqa: BLE001 - an operator without a meta kernel: nothing to size it by
        return {"ok": False, "error": f"the reference cannot run on the meta device: {type(exc).__name__}: {exc}"}
    if not isinstance(meta_out, torch.Tensor):
        return {"ok": False, "error": "the reference returns no single tensor at published shapes"}
    # the parameters too: lazy ones reserve their whole size, as the inputs do
    state = itertools.chain(meta_model.parameters(), meta_model.buffers())
    need = spec_bytes(specs) + meta_out.numel() * meta_out.element_size() + sum(tensor_nbytes(t) for t in state)
    if need + (1 << 30) > settings.memory_limit_mb << 20:
        return {
            "ok": False,
            "error": f"the published tensors take {need >> 20} MiB of address space: set memory_limit_mb to at "
            f"least {(need >> 20) + 2048} (it is {settings.memory_limit_mb})",
        }

    floor = backend.latency_floor_s(meta_inputs, meta_out)
    want = str(meta_out.dtype).removeprefix("torch.")

    def run(loop_sampling: bool, lazy: bool = True) -> dict[str, Any]:
        reply = link.request(
            {
                "op": "published_call",
                "task_source": task.published_source,
                "inputs": specs,
                "blocks": settings.sampled_blocks,
                "loop_sampling": loop_sampling,
                "lazy_parameters": lazy,
            }
        )
        if tuple(reply.get("shape", ())) != tuple(meta_out.shape) or reply.get("dtype") != want:
            raise StageFailure(
                "shape_mismatch",
                f"at published shapes the output is {reply.get('dtype')} {tuple(reply.get('shape', ()))}, "
                f"the reference's {want} {tuple(meta_out.shape)}",
            )
        sim = reply.get("simulated") or {}
        latency = sim.get("latency_s")
        if not isinstance(latency, (int, float)) or not latency > 0 or int(sim.get("launches", 0)) < 1:
            raise StageFailure("runtime_error", f"at published shapes: {backend.no_launch_message}")
        if latency < floor:
            raise StageFailure(
                "hacked",
                f"simulated latency {latency * 1e6:.3f} us at published shapes is below the memory-traffic floor "
                f"of {floor * 1e6:.3f} us",
                hack_rule="timing_forgery",
            )
        return reply

    reply = run(True)
    try:
        reference_latency = backend.estimate_reference_meta(meta_model, meta_inputs)
    except Exception as exc:  # noqa: BLE001
        return {"ok": False, "error": f"the reference's estimate failed on meta tensors: {type(exc).__name__}: {exc}"}
    record: dict[str, Any] = {"ok": True, "reference_latency_s": reference_latency, "tensor_bytes": need}

    def adopt(reply: dict[str, Any]) -> dict[str, Any]:
        """The record's figures from this run of the answer (a rerun's replace the first's)."""
        sim = reply.get("simulated") or {}
        record.update(
            latency_s=float(sim["latency_s"]),
            latency_bracket_s=[sim.get("latency_lo_s"), sim.get("latency_hi_s")],
            speedup=reference_latency / float(sim["latency_s"]),
            blocks_run=sim.get("blocks_run"),
            blocks_skipped=sim.get("blocks_skipped"),
            loop_sampled_blocks=sim.get("loop_sampled_blocks"),
        )
        _set_speedup_interval(record, sim, reference_latency)
        return sim

    sim = adopt(reply)
    # correctness of the sampled share, against the reference built here as the runner built the
    # answer: the same weight seed, large parameters lazy from the same parameter seed (never
    # drawn in full; only what the reference reads is resident, within the lazy cap)
    seed_cpu(plan.weight_seed)
    with backend.lazy_parameters(published_parameter_seed(plan.weight_seed)) as lazy:
        reference = module.Model(*init)
    ours, theirs = _random_draws(lazy.draws), _random_draws(reply.get("parameter_draws"))
    lazily = ours is not None and theirs == ours
    if not lazily:
        # ModelNew drew its large parameters otherwise than Model (a weight in two pieces, another
        # order): lazy, those are other values where plain builds seeded alike can be equal (they
        # were at the verified shapes). Both models are built eagerly then, as before lazy
        # parameters: the answer's deviation costs memory, never a verdict. The runner's list
        # (it may say anything) only chooses this; the verdict is still the comparison here.
        record["eager_parameters"] = _draws_differ(theirs, ours)
        del reference, lazy
        reply = run(True, lazy=False)
        sim = adopt(reply)
        seed_cpu(plan.weight_seed)
        reference = module.Model(*init)
    reference = set_module_mode(reference, settings.module_mode)
    state = itertools.chain(reference.parameters(), reference.buffers())
    record["lazy_parameter_bytes"] = sum(tensor_nbytes(t) for t in state if is_lazy(t))
    inputs = backend.lazy_inputs(specs)
    rows, unchecked = sampled_reference(reference, inputs)
    if rows is None:
        if not reply.get("spans"):
            raise StageFailure(
                "numerical_mismatch", "at published shapes the sampled blocks stored nothing into the output"
            )
        record["checked_elements"] = 0
        record["unchecked"] = unchecked
        return _with_peak_rss(record, link)
    try:
        _check_published_share(link, slots, reply, meta_out, rows, inputs, settings, record)
    except StageFailure as failure:
        if failure.error_class != "numerical_mismatch" or not sim.get("loop_sampled_blocks"):
            raise
        # Loop sampling skipped iterations of the blocks checked; its known limits can leave stale
        # values in a checked span (docs/timing_fidelity.md, "Sampled vs full"). A mismatch fails
        # the answer only once a run without loop sampling confirms it; the figures are that run's.
        reply = run(False, lazy=lazily)
        adopt(reply)
        record.update(loop_sampled_blocks=0, loop_sampling_mismatch=failure.message[:300])
        _check_published_share(link, slots, reply, meta_out, rows, inputs, settings, record)
    return _with_peak_rss(record, link)


def _random_draws(draws: Any) -> list[Any] | None:
    """The random lazy regions of a build (:class:`~kernel_gym.ascendc.sampling.LazyParameters`'
    ``draws``, or the runner's JSON of them) as ``[shape, dtype, fill, seed]`` lists; constant
    regions left out (a zero or one region is the same whatever its seed). None for a malformed list."""
    if not isinstance(draws, list) or len(draws) > 256:  # 256 lazy regions live at most
        return None
    out = []
    for d in draws:
        if not (isinstance(d, (list, tuple)) and len(d) == 4 and isinstance(d[0], (list, tuple))):
            return None
        if d[3] is not None:
            out.append([list(d[0]), d[1], d[2], d[3]])
    return out


def _draws_differ(theirs: list[Any] | None, ours: list[Any] | None) -> str:
    """Where the answer's random lazy draws part from the reference's, in words."""
    if theirs is None or ours is None:
        return "the runner gave no readable list of its parameter draws"

    def show(d: list[Any]) -> str:
        return f"{d[2]} {d[1]} {tuple(d[0])}"[:120]

    at = next((i for i, (a, b) in enumerate(zip(theirs, ours, strict=False)) if a != b), min(len(theirs), len(ours)))
    return (
        f"ModelNew drew {len(theirs)} random parameters of 16 MiB or more where Model drew {len(ours)}: "
        f"the answer's #{at + 1} is {show(theirs[at]) if at < len(theirs) else 'missing'}, "
        f"the reference's {show(ours[at]) if at < len(ours) else 'missing'}; both built eagerly"
    )


def _peak_rss_mb(pid: int | str = "self") -> float | None:
    """A process's peak resident memory so far (Linux ``VmHWM``), MiB; None where /proc does not say."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(ln.split()[1]) / 1024 for ln in f if ln.startswith("VmHWM:")), None)
    except (OSError, ValueError, IndexError):
        return None


def _with_peak_rss(record: dict[str, Any], link: RunnerLink) -> dict[str, Any]:
    """``record`` with the peak resident memory of the judge and of the runner, as read here
    (whole lives: the verified shapes' stages too)."""
    record["peak_rss_mb"] = {"judge": _peak_rss_mb(), "runner": _peak_rss_mb(link.pid)}
    return record


def _set_speedup_interval(record: dict[str, Any], sim: dict[str, Any], reference_latency: float) -> None:
    """The sampling bracket of the answer's latency, as an interval of the speedup (none without one)."""
    lo, hi = sim.get("latency_lo_s"), sim.get("latency_hi_s")
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and 0 < lo <= hi:
        record["speedup_interval"] = [reference_latency / float(hi), reference_latency / float(lo)]
    else:
        record.pop("speedup_interval", None)  # a rerun without a bracket keeps no stale interval


def _check_published_share(
    link: RunnerLink,
    slots: CallSlots,
    reply: dict[str, Any],
    meta_out: torch.Tensor,
    rows: Callable[[int, int], torch.Tensor],
    inputs: list[Any],
    settings: VerifySettings,
    record: dict[str, Any],
) -> None:
    """Compare the output spans a published-shape run stored with the reference on their rows;
    ``record`` gets the count checked (or why the rest is unchecked). Raises on a mismatch."""
    numel = meta_out.numel()
    max_rows = reference_rows_per_call(inputs, meta_out)
    windows = _published_windows(reply.get("spans"), numel, slots.out_capacity // meta_out.element_size())
    if not windows:
        raise StageFailure(
            "numerical_mismatch", "at published shapes the sampled blocks stored nothing into the output"
        )
    link.request(
        {"op": "published_read", "windows": windows, "out_offset": slots.out_offset, "out_capacity": slots.out_capacity}
    )
    total = sum(hi - lo for lo, hi in windows)
    want = str(meta_out.dtype).removeprefix("torch.")
    got = link.buffer.read(TensorSlot(slots.out_offset, want, (total,)))
    row = max(1, numel // meta_out.shape[0]) if meta_out.dim() > 0 else 1
    at = 0
    slab = getattr(rows, "slab", None) if meta_out.dim() >= 2 else None
    inner = max(1, numel // max(1, meta_out.shape[0] * meta_out.shape[1])) if slab is not None else 1
    pieces = _row_pieces(windows, row, max_rows)
    block: tuple[int, torch.Tensor] | None = None  # (first row, the reference's rows from it, flat)
    for i, (lo, hi) in enumerate(pieces):
        r0, r1 = lo // row, -(-hi // row)
        if time.monotonic() > link.deadline:
            # a reference call can take many seconds (a lazy weight past the cap regenerated):
            # stopped here, the record says so and the verdict stands, where running on would
            # have the verification killed as a whole
            raise StageFailure("timeout", f"the reference's check stopped at rows [{r0}, {r1})")
        try:
            if slab is not None and r1 == r0 + 1:
                ref = _reference_piece(rows, slab, row, inner, lo, hi)
            else:
                if block is None or not (block[0] * row <= lo and hi <= block[0] * row + block[1].numel()):
                    block = None  # released before the next rows are computed
                    # one call for every later piece within max_rows rows: a reference whose call
                    # reads a large parameter whole (a lazy 4 GiB nn.Linear weight, regenerated
                    # past the lazy cap) pays per call, not per row
                    end = max(-(-h // row) for _, h in pieces[i:] if -(-h // row) <= r0 + max_rows)
                    block = (r0, rows(r0, end).reshape(-1))
                ref = block[1][lo - block[0] * row : hi - block[0] * row]
        except Exception as exc:  # noqa: BLE001 - the reference itself failed on these rows
            record["checked_elements"] = at
            record["unchecked"] = f"the reference failed on rows [{r0}, {r1}): {type(exc).__name__}: {exc}"
            return
        judge_output(got[at : at + hi - lo], ref, settings, f"at published shapes, output elements [{lo}, {hi})")
        del ref  # before the next piece's reference rows are computed
        at += hi - lo
    record["checked_elements"] = total


def _reference_piece(
    rows: Callable[[int, int], torch.Tensor], slab: Any, row: int, inner: int, lo: int, hi: int
) -> torch.Tensor:
    """The reference's output elements [lo, hi) (flat), from rows of ``row`` elements, or where
    ``slab`` is given and the piece lies in one row, from the dim-1 range (of ``inner`` elements
    each) it touches: a window of a pooling's 1 GiB row needs a few of its channels."""
    r0, r1 = lo // row, -(-hi // row)
    if slab is not None and r1 == r0 + 1:
        c0, c1 = (lo - r0 * row) // inner, (hi - 1 - r0 * row) // inner + 1
        first = lo - r0 * row - c0 * inner
        return slab(r0, r1, c0, c1).reshape(-1)[first : first + hi - lo]
    return rows(r0, r1).reshape(-1)[lo - r0 * row : hi - r0 * row]


def _row_pieces(windows: list[tuple[int, int]], row: int, max_rows: int) -> list[tuple[int, int]]:
    """``windows`` (element ranges of the output, in order) cut where they span more than
    ``max_rows`` rows of ``row`` elements, so that no reference call computes more: a window of
    a published-shape conv can cover the whole batch, several GiB of reference at once."""
    pieces = []
    for lo, hi in windows:
        while lo < hi:
            cut = min(hi, (lo // row + max_rows) * row)
            pieces.append((lo, cut))
            lo = cut
    return pieces


# ------------------------------------------------------------------------------ driver
def _compiler_versions(backend: Backend) -> dict[str, str]:
    """Versions of the compilers the backend builds with (the runner cannot run them to ask)."""
    from kernel_gym.native import CompileError

    versions = {}
    for c in dict.fromkeys(("g++", *backend.compilers)):
        try:
            versions[c] = compiler_version(c)
        except CompileError:
            if c == "g++":
                raise
    return versions


def _uncertainty(
    backend: Backend,
    reference_latency: float,
    latency: float,
    answer: tuple[list[float], dict[str, Any]],
    reference: tuple[list[float], dict[str, Any]],
    paired: dict[str, Any] | None,
) -> dict[str, Any]:
    """The result's spread, 95 % interval, convergence and clock fields for the timed samples."""
    speedup = reference_latency / latency
    if backend.simulated:  # one deterministic model run: nothing was sampled
        return {
            "speedup_ci": [speedup, speedup],
            "latency_iqr_s": 0.0,
            "reference_latency_iqr_s": 0.0,
            "timing_converged": True,
            "timing_clock": "simulated (deterministic)",
        }
    interval = speedup_interval(reference[0], answer[0], paired=paired is not None)
    if interval is not None and paired is not None and paired.get("contended"):
        # other processes held the CPU through many calls: what they do to caches and memory
        # bandwidth moves the point estimate more than resampling shows, so the interval takes in
        # the middle half of the rounds' own ratios too
        q1, q3 = statistics.quantiles([r / a for r, a in zip(reference[0], answer[0], strict=True)], n=4)[::2]
        interval = (min(interval[0], q1), max(interval[1], q3))
    if interval is not None:  # a percentile interval of a skewed ratio can miss the estimate itself
        interval = (min(interval[0], speedup), max(interval[1], speedup))
    return {
        "speedup_ci": None if interval is None else list(interval),
        "latency_iqr_s": spread(answer[0])["iqr_s"],
        "reference_latency_iqr_s": spread(reference[0])["iqr_s"],
        "timing_converged": bool(paired["converged"]) if paired is not None else None,
        "timing_clock": str(answer[1].get("clock", "")),
    }


_HOST_CLOCK = (
    "judge wall clock minus the run-queue wait of runner and judge (schedstat), at least the CPU time of all "
    "the runner's threads / threads; pinned to cpus"
)
_HOST_CLOCK_PLAIN = "judge wall clock; CPU time of all the runner's threads / threads when larger"


def run_job(
    job: dict[str, Any],
    link_factory: Callable[[], RunnerLink],
    reference_link_factory: Callable[[], RunnerLink] | None = None,
) -> dict[str, Any]:
    """Verify one answer; always returns a result dict (never raises for the answer's doing).

    ``reference_link_factory``: the reference's own runner, for a host-timed backend's paired
    timing (``Backend.host_clock``); without it the reference is timed first in the answer's runner.
    """
    task = TaskSpec.from_dict(job["task"])
    settings = VerifySettings.from_kwargs(**job["settings"])
    # torch calls in the answer's forward (static_checks.watched_torch_calls): every call guarded
    guard_all = bool(job.get("watched_torch_calls"))
    backend = get_backend(job["backend"], job.get("backend_target"))
    result: dict[str, Any] = {
        "task_id": task.id,
        "backend": backend.name,
        "compiled": False,
        "correct": False,
        "trials_passed": 0,
        "trials_run": 0,
    }
    stage_seconds: dict[str, float] = {}
    clock: dict[str, Any] = {"stage": "", "t": time.perf_counter()}

    def progress(stage: str) -> None:
        now = time.perf_counter()
        if clock["stage"]:
            stage_seconds[str(clock["stage"])] = now - float(clock["t"])
        clock.update(stage=stage, t=now)
        result["stage"] = stage

    try:
        backend.setup_judge({"threads": settings.threads, **settings.backend_options})
        untimed = backend.untimed_reason(dict(settings.backend_options))
        if untimed and settings.measure_time:  # e.g. an interpreter: functional checks only
            settings = VerifySettings.from_kwargs(**{**job["settings"], "measure_time": False})
            result["details"] = {"untimed": untimed}
        task_module = task.module()
        progress("reference")
        paired = bool(backend.host_clock and reference_link_factory is not None and settings.measure_time)
        # a GPU backend's expected outputs come from the judge's own run of the reference on the GPU
        device = "cuda" if backend.device == "cuda" and torch.cuda.is_available() else "cpu"
        plan = prepare_reference(task_module, settings, backend.simulated, paired, device)
        link = link_factory()
        init = {
            "op": "init",
            "task_source": task.source,
            "backend": backend.name,
            "backend_target": job.get("backend_target"),
            "threads": settings.threads,
            "backend_options": settings.backend_options,
            "weight_seed": plan.weight_seed,
            "compiler_versions": _compiler_versions(backend),
            "torch_ops": settings.torch_ops,
            "module_mode": settings.module_mode,
        }
        link.request(init)
        slots = CallSlots(link, plan)
        reference_latency = None
        ref_slots = None
        if paired:
            assert reference_link_factory is not None
            progress("reference_timing")
            link.measure_delay = True
            ref_slots = setup_reference_runner(reference_link_factory(), init, plan)
        elif settings.measure_time:
            progress("reference_timing")
            reference_latency, reference_details = time_reference(backend, link, slots, plan, settings, task_module)
        progress("load")
        link.request({"op": "load_answer", "source": job["answer"]})
        result["compiled"] = True
        progress("correctness")
        check_correctness(slots, plan, settings, result, record=backend.simulated)
        result["correct"] = True
        if settings.measure_time:
            progress("timing")
            paired_details = None
            if ref_slots is not None:
                ref_samples, samples, paired_details = measure_paired(
                    backend, slots, ref_slots, plan, settings, guard_all
                )
                slots.link.request({"op": "audit"})  # a patch made while timed shows here
                used = _HOST_CLOCK if slots.link._delays() is not None else _HOST_CLOCK_PLAIN
                details = {
                    **spread(samples),
                    "trials": len(samples),
                    "clock": used,
                    "input_sets": paired_details["outputs_checked"],
                    "outputs_checked": paired_details["outputs_checked"],
                    "paired": paired_details,
                }
                reference_details = {**spread(ref_samples), "trials": len(ref_samples), "clock": used}
                latency, reference_latency = statistics.median(samples), statistics.median(ref_samples)
            else:
                latency, details = measure_latency(backend, slots, plan, settings, guard_all)
                samples = details.pop("samples_s", [])
                ref_samples = reference_details.pop("samples_s", [])
            assert reference_latency is not None
            result.update(
                latency_s=latency,
                reference_latency_s=reference_latency,
                speedup=reference_latency / latency if latency > 0 else None,
                details={
                    **result.get("details", {}),  # what the correctness stage recorded (torch_ops)
                    "answer_timing": details,
                    "reference_timing": reference_details,
                },
            )
            if latency > 0:
                result.update(
                    _uncertainty(
                        backend,
                        reference_latency,
                        latency,
                        (samples, details),
                        (ref_samples, reference_details),
                        paired_details,
                    )
                )
            progress("recheck")
            assert plan.recheck.expected is not None
            try:
                _checked_call(
                    slots,
                    plan.recheck.inputs,
                    plan.recheck.expected,
                    settings,
                    "after timing",
                    record=backend.simulated,
                )
            except StageFailure as failure:
                if failure.error_class in ("numerical_mismatch", "shape_mismatch", "dtype_mismatch"):
                    raise StageFailure("nondeterministic", failure.message) from None
                raise
            release_set(plan.recheck)
            if settings.published_shapes and task.published_source and backend.published_shapes:
                progress("published")
                try:
                    published = check_published(backend, link, slots, task, plan, settings)
                except StageFailure as failure:
                    if failure.error_class != "timeout":
                        raise
                    # too long at scale says nothing against the answer checked and timed above:
                    # the record says so and the result stays feasible at the verified shapes
                    published = {"ok": False, "error": f"timeout at published shapes: {failure.message}"}
                result.setdefault("details", {})["published"] = published
        result["error_class"] = "ok"
        if guard_all:
            result.setdefault("details", {})["torch_calls_guarded"] = list(job["watched_torch_calls"])[:20]
    except StageFailure as failure:
        result["error_class"] = failure.error_class
        result["message"] = failure.message
        if failure.error_class == "hacked":
            result["hacked"] = True
            result["correct"] = False
        if failure.error_class in ("nondeterministic", "numerical_mismatch", "shape_mismatch", "dtype_mismatch"):
            result["correct"] = False  # also when the published-shape run finds the answer wrong at scale
        for key, value in failure.extra.items():
            if value is not None:
                result[key] = value
    except (torch.OutOfMemoryError, MemoryError) as exc:
        # the judge's own memory (drawing sets, the reference, comparing): on a GPU or host shared by
        # several verifications a contention, not the answer's doing; memory_limit is never cached
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        result["error_class"] = "memory_limit"
        result["message"] = (
            f"the judge ran out of memory in stage {result.get('stage')!r} ({first_line}): other verifications "
            "share the machine or its GPU; verify fewer at once, or raise memory_limit_mb"
        )
    result.setdefault("details", {})["stage"] = result.get("stage")
    progress("done")
    result["details"]["stage_seconds"] = stage_seconds
    return result
