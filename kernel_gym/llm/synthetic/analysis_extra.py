"""Plans for scan, pooling, the statistics normalizations and matmul (read from the reference source).

Same rules as :mod:`.analysis`: only the task's reference source, its init inputs, traced ops
and input shapes are read. Each function returns a :class:`~.analysis.Plan` or ``None`` (the
caller then falls back to ``unsupported``).
"""

from __future__ import annotations

import math
import re
from typing import Any

from kernel_gym.llm.synthetic.analysis import Plan

__all__ = ["analyze_scan", "analyze_pool", "analyze_norm", "analyze_matmul"]


def analyze_scan(src: str, fwd: str, ops: tuple[str, ...], shapes: list, nums: list[float], init: list,
                 base: dict[str, Any]) -> Plan | None:
    shp = shapes[0] if shapes else ()
    if len(shp) < 1:
        return None
    d = int(nums[0]) % len(shp) if nums else len(shp) - 1
    if d != len(shp) - 1:
        return None
    if "cumprod" in ops:
        rec = "cumprod"
    elif "cumsum" not in ops:
        return None
    elif "flip" in ops:
        rec = "revcumsum"
    elif ops == ("cumsum", "sub"):
        rec = "exclusive"
    elif ops == ("mul", "cumsum") and len(shapes) == 2:
        rec = "masked"
    elif ops == ("cumsum",):
        rec = "cumsum"
    else:
        return None
    cols = shp[-1]
    return Plan(kind="scan", recipe=rec, out_shape=shp, rows=int(math.prod(shp)) // cols, cols=cols, **base)


def analyze_pool(src: str, fwd: str, ops: tuple[str, ...], shapes: list, nums: list[float], init: list,
                 base: dict[str, Any]) -> Plan | None:
    shp = shapes[0] if shapes else ()
    one_d = "pool1d" in fwd
    if (one_d and len(shp) != 3) or (not one_d and len(shp) != 4) or len(nums) < 2:
        return None
    op = "max" if "max_pool" in fwd else ("avg" if "avg_pool" in fwd else None)
    if op is None or "ceil_mode=True" in fwd.replace(" ", ""):
        return None
    k, s = int(nums[0]), int(nums[1])
    third = int(nums[2]) if len(nums) > 2 else 0
    dil, pad = (third, 0) if "dilation" in fwd else (1, third)
    if one_d:
        H, W = 1, shp[-1]
        KH, SH, PH, DH = 1, 1, 0, 1
    else:
        H, W = shp[-2], shp[-1]
        KH, SH, PH, DH = k, s, pad, dil
    Ho = (H + 2 * PH - DH * (KH - 1) - 1) // SH + 1
    Wo = (W + 2 * pad - dil * (k - 1) - 1) // s + 1
    planes = int(math.prod(shp[:-2 if not one_d else -1]))
    out = tuple(shp[:-1]) + (Wo,) if one_d else tuple(shp[:-2]) + (Ho, Wo)
    ex = dict(op=op, H=H, W=W, Ho=Ho, Wo=Wo, KH=KH, KW=k, SH=SH, SW=s, PH=PH, PW=pad, DH=DH, DW=dil,
              planes=planes, div=float(KH * k))
    return Plan(kind="pool", recipe=f"{op}pool", out_shape=out, rows=planes, cols=H * W, extra=ex, **base)


def _attr(src: str, cls: str) -> str | None:
    m = re.search(r"self\.(\w+)\s*=\s*nn\." + cls, src)
    return m.group(1) if m else None


def analyze_norm(src: str, fwd: str, ops: tuple[str, ...], shp: tuple, nums: list[float], init: list,
                 base: dict[str, Any]) -> Plan | None:
    """LayerNorm / GroupNorm / InstanceNorm / BatchNorm (eval) / Frobenius: per group statistics
    over `L` contiguous elements, then y = x * a + b per segment of `S` elements."""
    if not shp:
        return None
    total = int(math.prod(shp))
    eps = 1e-5
    ex: dict[str, Any] = {"eps": eps, "C": 1, "attr": None, "affine": None, "stats": True}
    if "native_layer_norm" in ops:
        attr = _attr(src, "LayerNorm")
        ns = init[0] if init else shp[-1]
        L = int(math.prod(ns)) if isinstance(ns, (tuple, list)) else int(ns)
        ex.update(mode="layer", L=L, S=L, attr=attr, affine="elem" if attr and "elementwise_affine=False" not in src else None)
    elif "native_group_norm" in ops and len(shp) >= 3:
        attr = _attr(src, "GroupNorm")
        g = int(nums[0]) if nums else 1
        C, HW = shp[1], int(math.prod(shp[2:]))
        if C % g:
            return None
        ex.update(mode="group", L=(C // g) * HW, S=HW, C=C, attr=attr, affine="chan" if attr and "affine=False" not in src else None)
    elif "InstanceNorm" in src and len(shp) >= 3:
        attr = _attr(src, r"InstanceNorm\dd")
        C, HW = shp[1], int(math.prod(shp[2:]))
        ex.update(mode="instance", L=HW, S=HW, C=C, attr=attr, affine="chan" if attr and "affine=True" in src else None)
    elif "native_batch_norm" in ops and "training=False" in fwd.replace(" ", "") and len(shp) >= 2:
        attr = _attr(src, r"BatchNorm\dd")
        if attr is None:
            return None
        C, S = shp[1], int(math.prod(shp[2:])) if len(shp) > 2 else 1
        ex.update(mode="batch", L=S, S=S, C=C, attr=attr, affine="bn", stats=False)
    elif ops == ("linalg_vector_norm", "div") and "fro" in fwd:
        S = int(math.prod(shp[-2:])) if len(shp) >= 2 else total
        ex.update(mode="frobenius", L=total, S=S)
    else:
        return None
    if total % ex["L"] or total % ex["S"]:
        return None
    return Plan(kind="norm", recipe=ex["mode"] + "norm", out_shape=shp, rows=total // ex["S"], cols=ex["S"],
                consts={"a": eps}, extra=ex, **base)


def analyze_matmul(src: str, fwd: str, ops: tuple[str, ...], shapes: list, nums: list[float], init: list,
                   base: dict[str, Any]) -> Plan | None:
    f = fwd.split("return", 1)[-1]
    if ops == ("mul",) and len(shapes) == 1:
        shp = shapes[0]
        return Plan(kind="map", recipe="muls", out_shape=shp, consts={"a": nums[0] if nums else 1.0},
                    rows=int(math.prod(shp)) // shp[-1], cols=shp[-1], **base)
    if len(shapes) != 2:
        return None
    sa, sb = shapes
    if ops == ("unsqueeze", "mul") and len(sa) == 1 and len(sb) == 2 and sa[0] == sb[0]:
        return Plan(kind="matmul", recipe="diag", out_shape=sb, rows=sb[0], cols=sb[1],
                    extra=dict(mode="diag", batch=1, M=sb[0], K=1, N=sb[1]), **base)
    if not ({"mm", "bmm"} & set(ops)):
        return None
    ta = bool(re.search(r"\bA\.T\b|\bA\.t\(\)|A\.transpose", f))
    tb = bool(re.search(r"\bB\.T\b|\bB\.t\(\)|B\.transpose", f))
    tril = "tril" in ops
    if len(sa) == 3 and len(sb) == 3:
        if ta or tb or sa[0] != sb[0]:
            return None
        batch, M, K, N = sa[0], sa[1], sa[2], sb[2]
        sbatch = True
    elif len(sb) == 2 and len(sa) >= 2:
        batch, sbatch = 1, False
        if ta:
            if len(sa) != 2:
                return None
            K, M = sa
        else:
            M, K = int(math.prod(sa[:-1])), sa[-1]
        N = sb[0] if tb else sb[1]
        if (sb[1] if tb else sb[0]) != K:
            return None
    else:
        return None
    out = (tuple(sa[:-1]) + (N,)) if not ta else (M, N)
    if len(sa) == 3 and len(sb) == 3:
        out = (batch, M, N)
    form = "dot" if (tb or N == 1) else "axpy"
    return Plan(kind="matmul", recipe=f"mm_{form}", out_shape=out, rows=batch * M, cols=N,
                extra=dict(mode=form, batch=batch, M=M, K=K, N=N, ta=ta, tril=tril, sbatch=sbatch), **base)
