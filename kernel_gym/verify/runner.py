"""The answer runner: the only process that executes answer code, inside the sandbox.

It obeys the judge (``kernel_gym.verify.judge``) over two pipes and a shared buffer and
decides nothing: it loads a model, calls it on the inputs the judge placed in the buffer and
writes the output back. Whatever it reports can only count against the answer (an exception,
a hack its in-process guards saw); correctness, timing and the verdict are the judge's.
Kernels are compiled by the judge on request (``compile`` message), so this process never
runs the compiler and cannot write the compile cache.

Messages from the judge (each answered with ``{"ok": true, ...}`` or an ``error``):
``init`` (task source, backend, options), ``shm`` (buffer size), ``load_reference``,
``load_answer`` (source), ``call`` (input slots, output offset and capacity, ``record``).
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
import types
from typing import Any

import torch
import torch.utils.deterministic

from kernel_gym.backends import get_backend
from kernel_gym.backends.base import OwnCodeCalls
from kernel_gym.tasks.spec import load_task_module
from kernel_gym.verify.channel import ChannelClosed, SharedBuffer, TensorSlot, recv_message, send_message
from kernel_gym.verify.correctness import published_parameter_seed, seed_cpu
from kernel_gym.verify.settings import set_module_mode

__all__ = ["ANSWER_FILENAME", "serve"]

ANSWER_FILENAME = "<answer>"


class CompileRefused(RuntimeError):
    """The judge refused to compile a source (a hack rule); carries the error class and rule."""

    def __init__(self, error_class: str, hack_rule: str | None, message: str) -> None:
        super().__init__(message)
        self.error_class, self.hack_rule = error_class, hack_rule


class _Refused(Exception):
    def __init__(self, error_class: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.error_class, self.message, self.extra = error_class, message, extra


def _describe(exc: BaseException) -> str:
    """The exception and the answer's own frames (not the harness's)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == ANSWER_FILENAME]
    where = f" (answer line {frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"[:2000]


def _classify(exc: BaseException, default: str) -> _Refused:
    from kernel_gym.native import CompileError

    if isinstance(exc, _Refused):
        return exc
    cls = getattr(exc, "error_class", None)
    log = (getattr(exc, "log", "") or "")[-4000:]
    if isinstance(cls, str):
        extra: dict[str, Any] = {"compiled": cls not in ("compile_error", "unsupported_dtype"), "compile_log": log}
        hack_rule = getattr(exc, "hack_rule", None)
        if hack_rule:
            extra["hack_rule"] = hack_rule
        return _Refused(cls, _describe(exc), **extra)
    if isinstance(exc, CompileError):
        return _Refused("compile_error", _describe(exc), compiled=False, compile_log=log)
    text = str(exc)
    # a GPU out of memory too: on a shared GPU it may be other tenants' doing, and memory_limit
    # results are never cached, so a rerun alone gets its own verdict
    out_of_memory = isinstance(exc, (MemoryError, torch.OutOfMemoryError)) or "CUDA out of memory" in text
    if out_of_memory or "can't allocate memory" in text or "bad_alloc" in text:
        return _Refused("memory_limit", _describe(exc))
    return _Refused(default, _describe(exc))


class _Runner:
    def __init__(self, commands: int, replies: int, shared: int) -> None:
        self.commands, self.replies = commands, replies
        self.buffer = SharedBuffer(shared)
        self.task: types.ModuleType | None = None
        self.backend: Any = None
        self.model: Any = None
        self.init_inputs: list[Any] = []
        self.weight_seed = 0
        self.guards: Any = None
        self.session: Any = None  # a device backend's: places models/inputs and times calls there
        self.answer_cls: Any = None  # ModelNew, for the published-shape run's own instance
        self.published_out: torch.Tensor | None = None

    # ------------------------------------------------------------------ compile through the judge
    def compile_remote(
        self,
        sources: Any,
        *,
        flags: Any = ("-O2",),
        compiler: str = "g++",
        cache_subdir: str = "native",
        depends_on: Any = (),
        timeout_s: float = 120.0,
    ) -> Any:
        from pathlib import Path

        from kernel_gym.native import CompileError

        if isinstance(sources, str):
            sources = {"kernel.cpp": sources}
        send_message(
            self.replies,
            {
                "op": "compile",
                "sources": dict(sources),
                "flags": [str(f) for f in flags],
                "compiler": compiler,
                "cache_subdir": cache_subdir,
                "depends_on": [str(p) for p in depends_on],
                "timeout_s": float(timeout_s),
            },
        )
        reply = recv_message(self.commands)
        if reply.get("error_class") == "compile_error":
            raise CompileError(reply.get("message", "compilation failed"), reply.get("log", ""))
        if reply.get("error_class"):
            # not a CompileError: loaders must not turn a refusal into an ordinary compile failure
            raise CompileRefused(reply["error_class"], reply.get("hack_rule"), reply.get("message", "refused"))
        return Path(reply["path"])

    def build_extension_remote(self, extension: dict[str, Any]) -> Any:
        """A ``load_inline`` of the answer, built by the judge (kernel_gym.backends.cuda_extension)."""
        from pathlib import Path

        from kernel_gym.native import CompileError

        send_message(self.replies, {"op": "compile", "kind": "torch_extension", "extension": extension})
        reply = recv_message(self.commands)
        if reply.get("error_class") == "compile_error":
            raise CompileError(reply.get("message", "compilation failed"), reply.get("log", ""))
        if reply.get("error_class"):
            raise CompileRefused(reply["error_class"], reply.get("hack_rule"), reply.get("message", "refused"))
        return Path(reply["path"])

    # ------------------------------------------------------------------ messages
    def init(self, msg: dict[str, Any]) -> dict[str, Any]:
        from kernel_gym.native import compile as native_compile

        native_compile.set_compile_service(self.compile_remote)
        native_compile.KNOWN_COMPILER_VERSIONS.update(msg.get("compiler_versions", {}))
        self.backend = get_backend(msg["backend"], msg.get("backend_target"))
        self.backend.setup_worker({"threads": int(msg.get("threads", 1)), **msg.get("backend_options", {})})
        if "torch_ext" in self.backend.compile_kinds:
            # before any answer code: the answer's torch.utils.cpp_extension is the judge's build
            from kernel_gym.backends.cuda_extension import install_shim

            install_shim(self.build_extension_remote)
        self.session = self.backend.device_session()
        if self.backend.sandbox.runner_exec:
            from kernel_gym.verify.runtime_guards import allow_backend_programs

            allow_backend_programs(self.backend.sandbox.runner_programs)
        lock = getattr(self.backend, "lock_options", None)
        if lock is not None:
            lock()
        _poison_uninitialized_memory()
        self.task = load_task_module(msg["task_source"], "task")
        self.init_inputs = list(self.task.get_init_inputs())
        self.weight_seed = int(msg["weight_seed"])
        self.torch_ops_policy = str(msg.get("torch_ops", "refuse"))
        self.module_mode = str(msg.get("module_mode", "eval"))
        self.torch_ops_first: list[str] | None = None  # beside_kernel: the first guarded call's torch ops
        return {}

    def load_reference(self, msg: dict[str, Any]) -> dict[str, Any]:
        assert self.task is not None
        seed_cpu(self.weight_seed)
        self.model = set_module_mode(self.task.Model(*self.init_inputs), self.module_mode)
        if self.session is not None:
            self.model = self.session.place_model(self.model)
        return {}

    def load_answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        from kernel_gym.verify.runtime_guards import AuditGuard, PatchSnapshot

        self.model = None
        audit = AuditGuard.install()
        self.guards = (audit, PatchSnapshot())
        audit.armed = True
        import linecache

        # the source is findable by inspect (Triton's @jit reads it) and shows in tracebacks
        linecache.cache[ANSWER_FILENAME] = (len(msg["source"]), None, msg["source"].splitlines(True), ANSWER_FILENAME)
        try:
            code = compile(msg["source"], ANSWER_FILENAME, "exec")
        except SyntaxError as exc:
            raise _Refused("syntax_error", f"line {exc.lineno}: {exc.msg}") from None
        module = types.ModuleType("answer")
        module.__file__ = ANSWER_FILENAME
        try:
            exec(code, module.__dict__)  # noqa: S102 - this process is the sandbox
        except BaseException as exc:  # noqa: BLE001
            raise self._audited(_classify(exc, "import_error")) from None
        model_new = module.__dict__.get("ModelNew")
        if not isinstance(model_new, type):
            raise _Refused("no_model_new", "the answer defines no class ModelNew")
        self.answer_cls = model_new
        seed_cpu(self.weight_seed)  # the reference's weights come from the same seed
        try:
            answer = model_new(*self.init_inputs)
        except BaseException as exc:  # noqa: BLE001
            raise self._audited(_classify(exc, "init_error")) from None
        self.model = set_module_mode(answer, self.module_mode) if isinstance(answer, torch.nn.Module) else answer
        if self.session is not None:
            try:
                self.model = self.session.place_model(self.model)
            except BaseException as exc:  # noqa: BLE001
                raise self._audited(_classify(exc, "init_error")) from None
        self._raise_guard_findings()
        return {}

    def call(self, msg: dict[str, Any]) -> dict[str, Any]:
        from kernel_gym.verify.runtime_guards import ComputeGuard

        host_inputs = [
            self.buffer.view(TensorSlot.from_dict(x["slot"])) if "slot" in x else x["value"] for x in msg["inputs"]
        ]
        # a device backend's copies live at the same device addresses every call, like the buffer's.
        # The judge repeats the reference's timing calls on the same inputs (``reuse_inputs``, with
        # no output handed back); once answer code is loaded the device copies are its to change,
        # so every call stages and returns again.
        repeat = self.guards is None and bool(msg.get("reuse_inputs"))
        if self.session is None:
            inputs = host_inputs
        else:
            inputs = self.session.restage(host_inputs) if repeat else self.session.stage(host_inputs)
        device_report: dict[str, Any] | None = None
        guarded = self.guards is not None and bool(msg.get("guard", True))
        threads_before = threading.active_count()
        recorder = rec = None
        if msg.get("record"):
            recorder = self.backend.launch_recorder()
        guard = ComputeGuard() if guarded else None
        own_calls_before = OwnCodeCalls.count
        # timed calls of distinct input sets, every output checked: the NaN fill of torch.empty
        # (a pass over each output that the reference's own allocations skip) is off
        torch.utils.deterministic.fill_uninitialized_memory = bool(msg.get("fill", True))  # type: ignore[attr-defined]  # torch sets it through a module-class property that mypy cannot see
        try:
            with torch.no_grad():
                if recorder is not None:
                    rec = recorder.__enter__()
                try:

                    def forward() -> Any:
                        if guard is not None:
                            with guard:
                                return self.model(*inputs)
                        return self.model(*inputs)

                    if self.session is not None:
                        out, device_report = self.session.run(forward)
                    else:
                        out = forward()
                finally:
                    torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]  # torch sets it through a module-class property that mypy cannot see
                    if recorder is not None:
                        recorder.__exit__(None, None, None)
        except BaseException as exc:  # noqa: BLE001
            raise self._audited(_classify(exc, "runtime_error")) from None
        torch_ops: list[str] = []
        if guarded:
            if guard is not None and (guard.violations or self.torch_ops_first):
                torch_ops = self._torch_ops_allowed(guard.violations, OwnCodeCalls.count - own_calls_before)
            if threading.active_count() > threads_before:
                raise _Refused("hacked", "the forward left threads running", hack_rule="threads_or_streams")
        if not isinstance(out, torch.Tensor):
            raise _Refused("runtime_error", f"forward returned {type(out).__name__}, expected a torch.Tensor")
        if type(out) is not torch.Tensor:
            raise _Refused(
                "hacked", f"forward returned a {type(out).__name__}, a tensor subclass", hack_rule="tensor_subclass"
            )
        reply: dict[str, Any] = {
            "dtype": str(out.dtype).removeprefix("torch."),
            "shape": list(out.shape),
            "stride": list(out.stride()),
        }
        if torch_ops:
            reply["torch_ops"] = torch_ops[:20]
        if repeat and msg.get("return_output") is False:
            reply["device_timing"] = device_report
            return reply  # the reference timed again: nothing to hand back
        if self.session is not None:  # the output comes back, the inputs go back (mutations show)
            try:
                out = self.session.to_host(out, inputs, host_inputs)
            except BaseException as exc:  # noqa: BLE001
                raise self._audited(_classify(exc, "runtime_error")) from None
            reply["device_timing"] = device_report
        nbytes = out.numel() * out.element_size()
        if nbytes <= int(msg["out_capacity"]) and (out.device.type == "cpu" or self.session is not None):
            try:  # from a device: one copy into the buffer, no host tensor between
                self.buffer.write(int(msg["out_offset"]), out)
            except BaseException as exc:  # noqa: BLE001 - a fault the copy surfaces is the answer's
                raise self._audited(_classify(exc, "runtime_error")) from None
            reply["written"] = True
        if rec is not None:
            reply["simulated"] = {
                "latency_s": rec.total_latency_s,
                "launches": len(rec.launches),
                "per_launch": [_launch_summary(r) for r in rec.launches[:8]],
                "warnings": simulator_warnings(rec.launches),
            }
        return reply

    def _torch_ops_allowed(self, violations: list[str], own_calls: int) -> list[str]:
        """The torch compute ops one guarded forward ran, if the policy allows them; else refused.
        ``beside_kernel``: the forward also called the answer's own code, and runs no op the first
        guarded call did not (torch work that appears once the calls are timed is refused)."""
        ops = list(dict.fromkeys(violations))
        if self.torch_ops_policy != "beside_kernel":
            raise _Refused(
                "hacked",
                f"ModelNew.forward ran torch ops {', '.join(ops)}; compute in the kernel (KernelBench's rule, "
                "torch beside the answer's own kernels, is torch_ops='beside_kernel')",
                hack_rule="torch_compute",
            )
        if ops and own_calls == 0:
            raise _Refused(
                "hacked",
                f"ModelNew.forward ran torch ops {', '.join(ops)} and none of the answer's own compiled functions",
                hack_rule="torch_compute",
            )
        if self.torch_ops_first is None:
            self.torch_ops_first = ops
        new = [op for op in ops if op not in self.torch_ops_first]
        if new:
            raise _Refused(
                "hacked",
                f"ModelNew.forward ran torch ops {', '.join(new)} that its first checked call did not run "
                f"({', '.join(self.torch_ops_first) or 'none'})",
                hack_rule="torch_compute",
            )
        return ops

    def published_call(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The answer at the task's published shapes (a ModelNew of its own, from that source's
        init inputs and the weight seed) on lazy inputs, under sampled simulation; the output stays
        here for ``published_read``."""
        from kernel_gym.verify.runtime_guards import ComputeGuard

        if self.answer_cls is None or self.backend is None or not self.backend.published_shapes:
            raise _Refused("runtime_error", "published_call before an answer was loaded on a published-shape backend")
        module = load_task_module(msg["task_source"], "task_published")
        init = list(module.get_init_inputs())
        seed_cpu(self.weight_seed)
        # large parameters lazy, seeded as the judge seeds the reference's: the same layers built
        # in the same order hold the same values, and only what the sampled blocks read is ever
        # resident (a 4 GiB nn.Linear weight is not drawn). The judge asks for an eager build where
        # this one's draws were not the reference's
        lazy = msg.get("lazy_parameters", True) is not False
        mode = self.backend.lazy_parameters(published_parameter_seed(self.weight_seed)) if lazy else None
        try:
            with mode or contextlib.nullcontext():
                model = self.answer_cls(*init)
        except BaseException as exc:  # noqa: BLE001
            raise self._audited(_classify(exc, "init_error")) from None
        draws = list(getattr(mode, "draws", []))
        inputs = self.backend.lazy_inputs(msg["inputs"])
        guard = ComputeGuard()
        # outputs are poisoned lazily (LazyOutputs): NaN-filling torch.empty would touch every byte
        torch.utils.deterministic.fill_uninitialized_memory = False  # type: ignore[attr-defined]  # torch sets it through a module-class property that mypy cannot see
        try:
            with torch.no_grad():

                def forward() -> Any:
                    with guard:
                        return model(*inputs)

                loop_sampling = bool(msg.get("loop_sampling", True))
                out, summary, spans = self.backend.run_sampled(forward, int(msg["blocks"]), loop_sampling)
        except BaseException as exc:  # noqa: BLE001
            raise self._audited(_classify(exc, "runtime_error")) from None
        finally:
            torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]  # torch sets it through a module-class property that mypy cannot see
        if guard.violations:
            ops = ", ".join(dict.fromkeys(guard.violations))
            raise _Refused(
                "hacked", f"ModelNew.forward ran torch ops {ops}; compute in the kernel", hack_rule="torch_compute"
            )
        if type(out) is not torch.Tensor:
            raise _Refused("runtime_error", f"forward returned {type(out).__name__}, expected a torch.Tensor")
        if not out.is_contiguous() or out.device.type != "cpu":
            raise _Refused("runtime_error", "at published shapes the output must be a contiguous CPU tensor")
        self.published_out = out.reshape(-1)
        return {
            "dtype": str(out.dtype).removeprefix("torch."),
            "shape": list(out.shape),
            "spans": spans,
            "simulated": summary,
            "parameter_draws": [[list(shape), dtype, what, seed] for shape, dtype, what, seed in draws[:256]],
        }

    def published_read(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Copy the judge's windows [first, end) of the published output into the shared buffer."""
        out = self.published_out
        if out is None:
            raise _Refused("runtime_error", "published_read before published_call")
        windows = [(int(lo), int(hi)) for lo, hi in msg["windows"]]
        if any(not 0 <= lo < hi <= out.numel() for lo, hi in windows):
            raise _Refused("runtime_error", "a window outside the published output")
        values = torch.cat([out[lo:hi] for lo, hi in windows])
        if values.numel() * values.element_size() > int(msg["out_capacity"]):
            raise _Refused("runtime_error", "the windows exceed the shared buffer")
        self.buffer.write(int(msg["out_offset"]), values)
        return {"elements": int(values.numel())}

    def shm(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Map the shared tensor buffer at the size the judge asks for."""
        self.buffer.remap(int(msg["size"]))
        if self.session is not None:
            self.buffer.pin_for_cuda()  # inputs are staged from it and outputs written into it every call
        return {}

    def audit(self, msg: dict[str, Any]) -> dict[str, Any]:
        """The in-process guards' findings since the answer was loaded (untimed)."""
        if self.guards is not None:
            self._raise_guard_findings()
        return {}

    def _audited(self, failure: _Refused) -> _Refused:
        """The refused operation, not the error it caused."""
        if self.guards is not None:
            found = self.guards[0].failure()
            if found is not None:
                from kernel_gym.verify.static_checks import RULES

                rule, what = found
                return _Refused("hacked", f"{RULES.get(rule, rule)}: {what} (refused at run time)", hack_rule=rule)
        return failure

    def _raise_guard_findings(self) -> None:
        audit, patches = self.guards
        failure = self._audited(_Refused("ok", ""))
        if failure.error_class == "hacked":
            raise failure
        patched = patches.changed()
        if patched:
            raise _Refused("hacked", f"patched: {', '.join(patched[:8])}", hack_rule="monkey_patch")

    def serve(self) -> None:
        handlers = {
            "init": self.init,
            "load_reference": self.load_reference,
            "load_answer": self.load_answer,
            "call": self.call,
            "audit": self.audit,
            "shm": self.shm,
            "published_call": self.published_call,
            "published_read": self.published_read,
        }
        while True:
            try:
                msg = recv_message(self.commands)
            except (ChannelClosed, ValueError):
                return
            started = time.perf_counter()
            try:
                reply = {"ok": True, **handlers[msg["op"]](msg)}
            except _Refused as refused:
                reply = {"ok": False, "error_class": refused.error_class, "message": refused.message, **refused.extra}
            except BaseException as exc:  # noqa: BLE001 - reported, never raised
                reply = {"ok": False, **_error_reply(_classify(exc, "runtime_error"))}
            reply["runner_seconds"] = time.perf_counter() - started
            send_message(self.replies, reply)


def _error_reply(refused: _Refused) -> dict[str, Any]:
    return {"error_class": refused.error_class, "message": refused.message, **refused.extra}


def _launch_summary(report: Any) -> dict[str, Any]:
    keys = ("latency_s", "num_blocks", "bound", "per_pipe_busy", "gm_bytes")
    return {k: getattr(report, k, None) for k in keys}


def simulator_warnings(launches: list[Any], limit: int = 6) -> list[str]:
    """What the simulated NPU did without stopping (a DataCopy rounded down to whole 32-byte
    blocks, a queue tensor never freed): ``"class: message (file:line)"``, each once."""
    out: list[str] = []
    for report in launches:
        for w in getattr(report, "warnings", None) or []:
            where = f" ({w.get('file')}:{w.get('line')})" if w.get("file") else ""
            text = f"{w.get('error_class')}: {w.get('message')}{where}"
            if text not in out:
                out.append(text)
            if len(out) >= limit:
                return out
    return out


def _poison_uninitialized_memory() -> None:
    """Make torch.empty & co. return NaN / max-int filled memory (deterministic mode).

    Calls the C switch directly: torch.use_deterministic_algorithms imports torch._inductor
    (about 1.7 s), which would dominate a verification.
    """
    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is not None:
        setter(True, warn_only=True)
    else:
        torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]  # torch sets it through a module-class property that mypy cannot see


def serve(commands: int, replies: int, shared: int) -> None:
    _Runner(commands, replies, shared).serve()
