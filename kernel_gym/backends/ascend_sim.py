"""The ``ascend_sim`` backend: Ascend C compiled against the project's CPU simulator.

Latencies are simulated, not measured: the answer's latency is the sum of the simulated
latencies of the kernel launches its forward makes (kernel_gym.ascendc's pipe-level
timing model of the chosen SoC), and the reference's is the eager-PyTorch estimate of
kernel_gym.ascendc.reference_estimate on the same SoC. Both are deterministic, so one timed
forward suffices; a second one checks that the simulation is repeatable.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel_gym.backends.base import Backend, BackendUnavailable, SandboxPolicy

if TYPE_CHECKING:  # imported on use: registering the backend must not import torch
    import torch

__all__ = ["AscendSimBackend", "ASCEND_ANSWER_FORMAT"]


class AscendSimBackend(Backend):
    name = "ascend_sim"
    language = "ascendc"
    simulated = True
    published_shapes = True
    compile_kinds = ("ascendc",)  # a plain C++ module would compute outside the simulated clock
    answer_formats = ("python", "six_string")  # six_string: a MultiKernelBench answer
    env_id = "KernelBench-Ascend-v0"
    answer_imports = {"kernel_gym.ascendc": None}
    compile_source_rules = {"ascendc": "simulator"}  # kernel code may not reach the simulator's accounting
    sandbox = SandboxPolicy(env_vars=("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"))
    no_launch_message = (
        "ModelNew.forward launched no Ascend C kernel: build the kernel with kernel_gym.ascendc.load "
        "and call its host function"
    )

    def seed_items(self) -> list[dict[str, Any]]:
        from kernel_gym.backends.seeds.ascendc_vector import SEED_ITEMS

        return SEED_ITEMS

    def compile_flags(self, cache_subdir: str) -> tuple[str, ...]:
        """Kernel code always carries the scalar instrumentation (the simulated clock of scalar code)."""
        from kernel_gym.ascendc.loader import SCALAR_INSTRUMENTATION

        return tuple(SCALAR_INSTRUMENTATION) if cache_subdir == "ascendc" else ()

    def trusted_compile_sources(self, cache_subdir: str) -> frozenset[str]:
        """The simulator's own runtime sources, which the loader sends to be built verbatim."""
        return _runtime_source_digests() if cache_subdir == "ascendc" else frozenset()

    def launch_recorder(self) -> Any:
        import kernel_gym.ascendc as asc

        return asc.record_launches()

    def answer_source(self, answer: str, answer_format: str = "python") -> str:
        self.check_answer_format(answer_format)
        if answer_format == "six_string":
            from kernel_gym.ascendc.multikernelbench import six_string_answer_source

            return six_string_answer_source(answer)
        return answer

    def __init__(self) -> None:
        self.soc = "Ascend910B2"
        # what the hardware does; "strict" makes the 32-byte DataCopy rule and accesses past a
        # tensor (inside the memory the NPU maps) faults
        self.align_mode = "npu"
        self.bounds_mode = "npu"

    def check_available(self) -> None:
        if shutil.which("g++") is None:
            raise BackendUnavailable("ascend_sim compiles Ascend C with g++; install it (Debian: apt-get install g++)")

    def setup_worker(self, options: dict[str, Any]) -> None:
        import torch

        import kernel_gym.ascendc as asc

        torch.set_num_threads(int(options.get("threads", 1)))
        self.soc = options.get("soc", self.soc)
        self.align_mode = options.get("align_mode", self.align_mode)
        self.bounds_mode = options.get("bounds_mode", self.bounds_mode)
        if self.soc not in asc.SOC_PROFILES:
            raise ValueError(f"unknown SoC {self.soc!r}; choose one of {', '.join(asc.SOC_PROFILES)}")
        asc.set_default_options(soc=self.soc, align_mode=self.align_mode, bounds_mode=self.bounds_mode)

    def setup_judge(self, options: dict[str, Any]) -> None:
        import kernel_gym.ascendc as asc

        self.setup_worker(options)
        asc.warmup()  # runtime library and precompiled header, built by the judge only

    def lock_options(self) -> None:
        """Answers cannot choose the SoC or relax the simulator: compile_module refuses it."""
        from kernel_gym.ascendc import loader

        original = loader.compile_module
        locked = {
            "soc",
            "soc_overrides",
            "align_mode",
            "bounds_mode",
            "watchdog_calls",
            "watchdog_s",
            "watchdog_cycles",
            "sync_check",
            "race_check",
            "check_uninit",
            "extra_flags",
            "include_dirs",
            "use_pch",
        }

        def compile_module(sources: Any, *, soc: Any = None, align_mode: Any = None, **opts: Any) -> Any:
            chosen = sorted(k for k in locked & set(opts) if opts[k])
            if soc is not None and soc != self.soc:
                chosen.append("soc")
            if align_mode is not None and align_mode != self.align_mode:
                chosen.append("align_mode")
            if chosen:
                error = RuntimeError(
                    f"the answer set simulator option(s) {', '.join(chosen)}; the verifier "
                    "chooses the SoC and the simulator's checks"
                )
                # a plain RuntimeError (its name is in the verdict) tagged for the runner's getattr
                error.error_class = "hacked"  # type: ignore[attr-defined]
                raise error
            return original(sources, **opts)

        import kernel_gym.ascendc.op_project  # noqa: F401 - loaded now, so its binding is replaced too

        for name, module in list(sys.modules.items()):
            if name.startswith("kernel_gym.ascendc") and getattr(module, "compile_module", None) is original:
                module.compile_module = compile_module  # type: ignore[attr-defined]  # typeshed: ModuleType has no __setattr__

    def latency_floor_s(self, inputs: list[Any], expected: torch.Tensor) -> float:
        """Every output byte crosses HBM once: bytes / HBM bandwidth, plus the launch overhead."""
        import kernel_gym.ascendc as asc

        profile = asc.SOC_PROFILES[self.soc]
        out_bytes = expected.numel() * expected.element_size()
        return out_bytes / float(profile.hbm_bytes_per_s) + float(profile.launch_base_s)

    def timing_details(self) -> dict[str, Any]:
        return {"soc": self.soc}

    def time_answer(self, run: Callable[[], Any], settings: Any) -> tuple[float, dict[str, Any]]:
        import kernel_gym.ascendc as asc

        samples = []
        last = None
        after_call = getattr(run, "after_call", None)  # the verifier checks timed outputs there
        for _ in range(2):
            with asc.record_launches() as rec:
                out = run()
            samples.append(rec.total_latency_s)
            last = rec
            if after_call is not None:
                after_call(out)
            del out
        assert last is not None  # the loop ran
        if not last.launches:
            raise RuntimeError(self.no_launch_message)
        details = {
            "simulated": True,
            "soc": self.soc,
            "launches": len(last.launches),
            "repeatable": samples[0] == samples[1],
            "per_launch": [_launch_summary(r) for r in last.launches[:8]],
        }
        return samples[-1], details

    def time_reference(
        self, run: Callable[[], Any], model: torch.nn.Module, inputs: list[Any], settings: Any
    ) -> tuple[float, dict[str, Any]]:
        import kernel_gym.ascendc as asc
        from kernel_gym.ascendc.reference_estimate import estimate_reference

        seconds, ops = estimate_reference(model, inputs, asc.SOC_PROFILES[self.soc])
        return seconds, {
            "simulated": True,
            "soc": self.soc,
            "estimate": "eager per-op",
            "ops": [(o.op, round(o.seconds * 1e6, 3), o.bound) for o in ops if o.bound != "free"][:16],
        }

    def lazy_inputs(self, specs: list[dict[str, Any]]) -> list[Any]:
        from kernel_gym.ascendc.sampling import lazy_inputs

        return lazy_inputs(specs)

    def lazy_parameters(self, seed: int) -> Any:
        from kernel_gym.ascendc.sampling import LazyParameters

        # only random regions take seeds: a constant buffer the answer allocates and the reference
        # does not (a workspace) leaves the weights after it as an eager build would
        return LazyParameters(seed=seed, seed_constants=False)

    def run_sampled(
        self, forward: Callable[[], Any], blocks: int, loop_sampling: bool = True
    ) -> tuple[Any, dict[str, Any], list[list[int]]]:
        import torch

        import kernel_gym.ascendc as asc
        from kernel_gym.ascendc.sampling import (
            CHECKABLE_FALLBACK_ORDER,
            LOOP_FALLBACK_ORDER,
            LazyOutputs,
            run_with_loop_fallback,
            sampled_simulation,
            untracked_store_bytes,
            written_spans,
        )

        def attempt(loops: bool | str) -> tuple[Any, Any, list[list[int]], int]:
            # 1 GiB of clean input chunks: with the process itself, under the 2 GiB a published-shape run may hold
            with sampled_simulation(blocks=blocks, resident_cap_bytes=1 << 30, loops=loops):
                with asc.record_launches() as rec, LazyOutputs():
                    out = forward()
                is_tensor = isinstance(out, torch.Tensor)
                spans = [[uid, lo, hi] for uid, lo, hi, _ in written_spans(out)] if is_tensor else []
                late = untracked_store_bytes(out) if is_tensor and not spans else 0
            return out, rec, spans, late

        # loops sampled in every block (block 0 too); blocks that wait for each other rerun with less
        order = LOOP_FALLBACK_ORDER if loop_sampling else (False,)
        (out, rec, spans, late), loops = run_with_loop_fallback(attempt, order)
        if late and loops == "all":
            # every sampled block stored its output only after skipping loop iterations (a reduction that
            # accumulates over a loop and stores once): none of it is checkable, and taking that as
            # "unchecked" would let an answer dodge the check. Block 0 keeping its work until its first
            # store makes those stores checkable; block 0 in full where even that leaves none.
            del out
            (out, rec, spans, late), loops = run_with_loop_fallback(attempt, CHECKABLE_FALLBACK_ORDER)
            if late and loops == "all_checked":
                del out
                (out, rec, spans, late), loops = run_with_loop_fallback(attempt, CHECKABLE_FALLBACK_ORDER[1:])
        if not rec.launches:
            raise RuntimeError(self.no_launch_message)
        summary = {
            "latency_s": rec.total_latency_s,
            "latency_lo_s": sum(r.latency_lo_s for r in rec.launches) + rec.host_s,
            "latency_hi_s": sum(r.latency_hi_s for r in rec.launches) + rec.host_s,
            "launches": len(rec.launches),
            "blocks_run": sum(r.blocks_run for r in rec.launches),
            "blocks_skipped": sum(r.blocks_skipped for r in rec.launches),
            "loops": loops,
            "loop_sampled_blocks": sum(r.loop_sampled_blocks for r in rec.launches),
            "loop_fallback": next((r.loop_fallback for r in rec.launches if r.loop_fallback), ""),
            "per_launch": [_launch_summary(r) for r in rec.launches[:8]],
        }
        return out, summary, spans

    def estimate_reference_meta(self, model: Any, inputs: list[Any]) -> float:
        import kernel_gym.ascendc as asc
        from kernel_gym.ascendc.reference_estimate import estimate_reference

        return estimate_reference(model, inputs, asc.SOC_PROFILES[self.soc])[0]

    def answer_format(self) -> str:
        return ASCEND_ANSWER_FORMAT


@functools.lru_cache(maxsize=1)
def _runtime_source_digests() -> frozenset[str]:
    root = Path(__file__).resolve().parent.parent / "ascendc" / "src"
    return frozenset(hashlib.sha256(p.read_bytes()).hexdigest() for p in root.iterdir() if p.is_file())


def _launch_summary(report: Any) -> dict[str, Any]:
    keys = ("latency_s", "num_blocks", "bound", "per_pipe_busy", "gm_bytes")
    return {k: getattr(report, k, None) for k in keys}


ASCEND_ANSWER_FORMAT = '''\
A simulated Huawei Ascend AI Core (Ascend C vector programming, one kernel launched over several
AI-core blocks). Latency is the simulated time of the kernel.

Answer: one Python file defining `class ModelNew(nn.Module)` with the same constructor and
forward signatures as the reference `Model`. The computation runs in an Ascend C kernel
(vector API: TPipe, TQue, GlobalTensor/LocalTensor, DataCopy, Add/Mul/Exp/...), launched
from an `extern "C"` host function with `kernel<<<blockDim, nullptr, stream>>>(...)`.
ModelNew builds it with `kernel_gym.ascendc.load` and its forward only allocates outputs
and calls the host function. No torch compute, no try/except, no threads, no OS access.

For example, for a reference whose forward returns `2 * x + 1` (an illustration of the form; no
task asks for it):

```python
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

SOURCE = r"""
#include "kernel_operator.h"
using namespace AscendC;
constexpr int32_t TILE = 2048;   // elements per tile (8 KB of float: 32-byte aligned)

class KernelScaleShift {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t total) {
        uint32_t per = total / GetBlockNum();
        xGm.SetGlobalBuffer((__gm__ float*)x + per * GetBlockIdx(), per);
        yGm.SetGlobalBuffer((__gm__ float*)y + per * GetBlockIdx(), per);
        tiles = per / TILE;
        pipe.InitBuffer(inQ, 2, TILE * sizeof(float));   // 2 buffers: double buffering
        pipe.InitBuffer(outQ, 2, TILE * sizeof(float));
    }
    __aicore__ inline void Process() {
        for (uint32_t i = 0; i < tiles; ++i) {
            LocalTensor<float> xl = inQ.AllocTensor<float>();
            DataCopy(xl, xGm[i * TILE], TILE);
            inQ.EnQue(xl);
            LocalTensor<float> xin = inQ.DeQue<float>();
            LocalTensor<float> yl = outQ.AllocTensor<float>();
            Muls(yl, xin, 2.0f, TILE);          // y = 2x
            Adds(yl, yl, 1.0f, TILE);           // y = 2x + 1
            outQ.EnQue(yl);
            inQ.FreeTensor(xin);
            LocalTensor<float> yout = outQ.DeQue<float>();
            DataCopy(yGm[i * TILE], yout, TILE);
            outQ.FreeTensor(yout);
        }
    }
private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inQ;
    TQue<QuePosition::VECOUT, 2> outQ;
    GlobalTensor<float> xGm, yGm;
    uint32_t tiles;
};

extern "C" __global__ __aicore__ void scale_shift_kernel(GM_ADDR x, GM_ADDR y, uint32_t total) {
    KernelScaleShift op;
    op.Init(x, y, total);
    op.Process();
}

extern "C" void scale_shift_do(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* y, uint32_t total) {
    scale_shift_kernel<<<blockDim, nullptr, stream>>>(x, y, total);
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = asc.load(SOURCE)

    def forward(self, x):
        y = torch.empty_like(x)
        self.mod.scale_shift_do(8, None, x, y, x.numel())  # assumes numel divisible by 8 * TILE
        return y
```
Sizes that do not divide evenly need tail handling (DataCopyPad or a last partial tile).

Ascend C rules the simulator enforces: Unified Buffer (UB) allocations made with
`pipe.InitBuffer` must fit in the UB; `DataCopy` between global memory and UB moves whole
32-byte blocks, so use `DataCopyPad` (or a padded tile) for lengths that are not a multiple of
32 bytes; every tensor taken with `AllocTensor`/`DeQue` must be released with `FreeTensor`; use
only the dtypes the vector instructions support.
'''
