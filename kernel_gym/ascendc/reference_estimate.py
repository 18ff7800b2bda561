"""Latency estimate of the eager-PyTorch reference on an Ascend NPU, per aten operator.

Eager PyTorch on an NPU (torch_npu) runs each aten op as its own kernel: it reads its
inputs from HBM, writes its output back, and pays a launch cost. The estimate traces the
reference forward's aten ops (a TorchDispatchMode) and charges each one

    launch + max(bytes moved / HBM bandwidth, compute time on all cores),

where compute time uses the same per-class vector rates as the simulator's timing model
and the cube's peak for matmul-like ops. View and metadata ops are free. So a fused custom
kernel can legitimately beat the reference (one launch, one pass over memory), and a
kernel that is slower than eager execution shows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from kernel_gym.dispatch_mode import PlainDispatchMode

__all__ = ["OpEstimate", "estimate_reference", "EAGER_OP_CLASSES"]

# Ops that move no data on the device (views, metadata, allocation).
_FREE = {
    "view",
    "_unsafe_view",
    "reshape",
    "_reshape_alias",
    "t",
    "transpose",
    "permute",
    "expand",
    "unsqueeze",
    "squeeze",
    "select",
    "slice",
    "alias",
    "detach",
    "as_strided",
    "unbind",
    "split",
    "split_with_sizes",
    "narrow",
    "empty",
    "empty_like",
    "empty_strided",
    "lift_fresh",
    "_to_copy_noop",
    "view_as",
    "expand_as",
    "flatten",
    "unflatten",
    "size",
    "stride",
    "numel",
    "new_empty",
    "new_empty_strided",
    "_local_scalar_dense",
    "scalar_tensor",
}
_CUBE = {
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "matmul",
    "linear",
    "convolution",
    "_convolution",
    "addmv",
    "mv",
    "dot",
    "addbmm",
}
# Vector work per element, in "simple op" units (one unit = one pass at the simple-op rate).
EAGER_OP_CLASSES: dict[str, float] = {
    # transcendental-heavy (rate 32/cycle vs 64: 2 units per op, several ops per activation)
    "exp": 2,
    "log": 2,
    "sqrt": 2,
    "rsqrt": 1,
    "div": 2,
    "reciprocal": 1,
    "pow": 4,
    "tanh": 6,
    "sigmoid": 4,
    "gelu": 8,
    "silu": 5,
    "softplus": 6,
    "elu": 4,
    "selu": 5,
    "mish": 10,
    "erf": 6,
    "log_sigmoid_forward": 6,
    "hardswish": 3,
    "hardsigmoid": 2,
    "_softmax": 6,
    "_log_softmax": 7,
    "native_layer_norm": 8,
    "native_group_norm": 8,
    "_native_batch_norm_legit_no_training": 4,
    "native_batch_norm": 4,
    "nll_loss_forward": 1,
    "mse_loss": 3,
    "smooth_l1_loss": 4,
    "huber_loss": 4,
    "kl_div": 4,
    "cumsum": 3,
    "cumprod": 3,
    "logsumexp": 8,
    # reductions: repeat-wise reductions run at ~1/7 of the simple rate (spec)
    "sum": 7,
    "mean": 7,
    "amax": 7,
    "amin": 7,
    "max": 7,
    "min": 7,
    "argmax": 7,
    "argmin": 7,
    "prod": 7,
    "norm": 8,
    "linalg_vector_norm": 8,
    "var": 9,
    "std": 9,
    "var_mean": 9,
    "max_pool2d_with_indices": 9,
    "max_pool1d": 3,
    "avg_pool2d": 9,
    "avg_pool1d": 3,
    "max_pool1d_with_indices": 3,
}
_DEFAULT_UNITS = 1.0


@dataclass(frozen=True)
class OpEstimate:
    op: str
    bytes_moved: int
    seconds: float
    bound: str  # "launch", "hbm", "vector", "cube", "free"


def _tensor_bytes(obj: Any) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, (list, tuple)):
        return sum(_tensor_bytes(o) for o in obj)
    return 0


def _matmul_flops(name: str, args: tuple, out: Any) -> float:
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if name in ("convolution", "_convolution") and len(tensors) >= 2:
        weight = tensors[1]
        return 2.0 * _first(out).numel() * weight[0].numel()
    if len(tensors) < 2:
        return 0.0
    a, b = (tensors[-2], tensors[-1]) if name in ("addmm", "baddbmm", "addmv", "addbmm") else (tensors[0], tensors[1])
    k = a.shape[-1] if a.dim() else 1
    return 2.0 * _first(out).numel() * k


def _first(out: Any) -> torch.Tensor:
    return out[0] if isinstance(out, (list, tuple)) else out


def _profile_value(profile: Any, name: str, default: float) -> float:
    value = getattr(profile, name, default)
    return float(getattr(value, "value", value))


def estimate_reference(model: torch.nn.Module, inputs: list[Any], profile: Any) -> tuple[float, list[OpEstimate]]:
    """Estimated eager latency (seconds) of ``model(*inputs)`` on ``profile``'s SoC, and per-op details."""
    clock_hz = _profile_value(profile, "clock_hz", 1.85e9)
    cores = _profile_value(profile, "aiv_cores", 48)
    cube_cores = _profile_value(profile, "aic_cores", 24)
    hbm = _profile_value(profile, "hbm_bytes_per_s", 1.6e12)
    launch = _profile_value(profile, "eager_op_launch_s", 8e-6)
    simple_rate = {4: 64.0, 2: 128.0}  # elements / cycle / core by element size
    ops: list[OpEstimate] = []

    class _Trace(PlainDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            out = func(*args, **(kwargs or {}))
            name = func.overloadpacket.__name__
            if name in _FREE or (
                name == "_to_copy"
                and args
                and isinstance(args[0], torch.Tensor)
                and kwargs
                and kwargs.get("dtype") in (None, args[0].dtype)
            ):
                ops.append(OpEstimate(f"aten.{name}", 0, 0.0, "free"))
                return out
            moved = _tensor_bytes(args) + _tensor_bytes(out)
            hbm_s = moved / hbm
            if name in _CUBE:
                el = _first(out).element_size()
                macs_per_cycle = 4096.0 if el == 2 else 2048.0  # 16x16x16 fp16; fp32 via hf32 at half
                compute_s = _matmul_flops(name, args, out) / 2.0 / (macs_per_cycle * cube_cores * clock_hz)
                kind = "cube"
            else:
                biggest = max(
                    [a for a in (*args, _first(out)) if isinstance(a, torch.Tensor)],
                    key=lambda t: t.numel(),
                    default=None,
                )
                elems = biggest.numel() if biggest is not None else 0
                el = biggest.element_size() if biggest is not None else 4
                units = EAGER_OP_CLASSES.get(name, _DEFAULT_UNITS)
                compute_s = elems * units / (simple_rate.get(el, 64.0) * cores * clock_hz)
                kind = "vector"
            body = max(hbm_s, compute_s)
            bound = "hbm" if hbm_s >= compute_s else kind
            if launch > body:
                bound = "launch"
            ops.append(OpEstimate(f"aten.{name}", moved, launch + body, bound))
            return out

    with torch.no_grad(), _Trace():
        model(*inputs)
    total = math.fsum(op.seconds for op in ops)
    return total, ops
