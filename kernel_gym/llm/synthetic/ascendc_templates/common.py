"""Pieces every Ascend C template of the synthetic coder shares: the Python wrapper around a
kernel source, GM types, the block split, copy helpers, queue protocol lines and the launcher.
"""

from __future__ import annotations

import json
import textwrap

from kernel_gym.llm.synthetic.analysis import Plan
from kernel_gym.llm.synthetic.faults import Knobs

_HEADER = """#include "kernel_operator.h"
using namespace AscendC;
"""


def _py(plan: Plan, knobs: Knobs, source: str, call: str, out_expr: str, extra_init: str = "") -> str:
    args = ", ".join(f"x{i}" for i in range(plan.n_inputs))
    sig = f", {plan.init_sig}" if plan.init_sig else ""
    body = textwrap.indent(textwrap.dedent(plan.init_src), " " * 8) if plan.init_src else ""
    note = json.dumps({"tile": knobs.tile, "blocks": knobs.blocks, "bufn": knobs.bufn}, sort_keys=True)
    return f'''"""Ascend C kernel for {plan.recipe} (written by the synthetic coder)."""
import torch
import torch.nn as nn
import kernel_gym.ascendc as asc

# synthetic-coder knobs: {note}
SOURCE = r"""
{source}
"""


class ModelNew(nn.Module):
    def __init__(self{sig}):
        super().__init__()
{body}
{extra_init}        self.mod = asc.load(SOURCE)

    def forward(self, {args}):
        y = {out_expr}
        {call}
        return y
'''


def _types(plan: Plan, knobs: Knobs) -> tuple[str, bool]:
    """GM element type and whether the compute goes through float casts."""
    if plan.dtype == "half" and not knobs.half_as_float:
        return "half", True
    return "float", False


def _split(knobs: Knobs) -> str:
    """Init code that sets start/len of this block's slice of `total` elements."""
    if knobs.blocks == 1 and not knobs.use_block_idx:
        return "        uint32_t start = 0; len = total;\n"
    if knobs.unaligned:  # naive even split in elements
        return (
            "        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();\n"
            "        uint32_t per = (total + nb - 1) / nb;\n"
            "        uint32_t start = bi * per;\n"
            "        len = start >= total ? 0 : (total - start < per ? total - start : per);\n"
        )
    if knobs.no_tail:  # assumes total divides evenly
        return (
            "        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();\n"
            "        uint32_t per = total / nb;\n"
            "        uint32_t start = bi * per; len = per;\n"
        )
    return (
        "        uint32_t nb = GetBlockNum(), bi = GetBlockIdx();\n"
        "        uint32_t units = (total + ALIGN - 1) / ALIGN, per = units / nb, rem = units % nb;\n"
        "        uint32_t su = bi * per + (bi < rem ? bi : rem), cu = per + (bi < rem ? 1 : 0);\n"
        "        uint32_t start = su * ALIGN, end = (su + cu) * ALIGN;\n"
        "        if (end > total) end = total;\n"
        "        len = end > start ? end - start : 0;\n"
    )


def _copy_helpers(T: str, knobs: Knobs) -> str:
    """Load/Store helpers: DataCopy for 32 B multiples, DataCopyPad for tails (if known)."""
    if knobs.unaligned:
        return (
            "template <class Tt> __aicore__ inline void Load(LocalTensor<Tt>& l, GlobalTensor<Tt>& g, uint64_t off, "
            "uint32_t n) { DataCopy(l, g[off], n); }\n"
            "template <class Tt> __aicore__ inline void Store(GlobalTensor<Tt>& g, uint64_t off, LocalTensor<Tt>& "
            "l, uint32_t n) { DataCopy(g[off], l, n); }\n"
        )
    if knobs.no_tail:  # knows the 32 B rule but not DataCopyPad: rounds the count up
        return (
            "template <class Tt> __aicore__ inline void Load(LocalTensor<Tt>& l, GlobalTensor<Tt>& g, uint64_t off, "
            "uint32_t n) {\n"
            "    uint32_t a = 32 / sizeof(Tt); DataCopy(l, g[off], (n + a - 1) / a * a); }\n"
            "template <class Tt> __aicore__ inline void Store(GlobalTensor<Tt>& g, uint64_t off, LocalTensor<Tt>& "
            "l, uint32_t n) {\n"
            "    uint32_t a = 32 / sizeof(Tt); DataCopy(g[off], l, (n + a - 1) / a * a); }\n"
        )
    return (
        "template <class Tt> __aicore__ inline void Load(LocalTensor<Tt>& l, GlobalTensor<Tt>& g, uint64_t off, "
        "uint32_t n) {\n"
        "    if ((n * sizeof(Tt)) % 32 == 0) { DataCopy(l, g[off], n); return; }\n"
        "    DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(Tt)), 0, 0, 0};\n"
        "    DataCopyPadExtParams<Tt> pad{false, 0, 0, 0};\n"
        "    DataCopyPad(l, g[off], p, pad);\n}\n"
        "template <class Tt> __aicore__ inline void Store(GlobalTensor<Tt>& g, uint64_t off, LocalTensor<Tt>& l, "
        "uint32_t n) {\n"
        "    if ((n * sizeof(Tt)) % 32 == 0) { DataCopy(g[off], l, n); return; }\n"
        "    DataCopyExtParams p{1, static_cast<uint32_t>(n * sizeof(Tt)), 0, 0, 0};\n"
        "    DataCopyPad(g[off], l, p);\n}\n"
    )


_SCALAR_OF = """__aicore__ inline float ScalarOf(LocalTensor<float>& r) {
    SetFlag<HardEvent::V_S>(0);
    WaitFlag<HardEvent::V_S>(0);
    float v = r.GetValue(0);
    SetFlag<HardEvent::S_V>(0);
    WaitFlag<HardEvent::S_V>(0);
    return v;
}
"""


def _split_units(knobs: Knobs, first: str, count: str, total: str) -> list[str]:
    """This block's share [first, first + count) of `total` independent units (rows, planes)."""
    if knobs.blocks == 1 and not knobs.use_block_idx:
        return [f"        {first} = 0; {count} = {total};"]
    out = [f"        uint32_t nb = GetBlockNum(), bi = GetBlockIdx(), per = {total} / nb, rem = {total} % nb;"]
    if knobs.no_tail:
        out.append(f"        {first} = bi * per; {count} = per;")
    else:
        out.append(f"        {first} = bi * per + (bi < rem ? bi : rem); {count} = per + (bi < rem ? 1 : 0);")
    return out


def _q_in(knobs: Knobs, q: str, var: str, ind: str) -> list[str]:
    return [] if knobs.skip_enque else [f"{ind}{q}.EnQue({var});"]


def _q_free(knobs: Knobs, q: str, var: str, ind: str) -> list[str]:
    return [] if knobs.leak else [f"{ind}{q}.FreeTensor({var});"]


def _launcher(name: str, params: list[str], knobs: Knobs, units: int) -> str:
    gm = ", ".join(f"GM_ADDR {p}" if not p.startswith("uint") else p for p in params)
    names = ", ".join(p.split()[-1] for p in params)
    host = ", ".join(f"uint8_t* {p}" if not p.startswith("uint") else p for p in params)
    b = max(1, min(knobs.blocks, units))
    return (
        f'extern "C" __global__ __aicore__ void {name}_kernel({gm}) {{\n'
        f"    Kernel op;\n    op.Init({names});\n    op.Process();\n}}\n"
        f'extern "C" void {name}_do({host}) {{\n'
        f"    {name}_kernel<<<{b}, nullptr, nullptr>>>({names});\n}}"
    )
