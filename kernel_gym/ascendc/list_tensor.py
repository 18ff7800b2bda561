"""Host side of Ascend C dynamic tensor lists (``ListTensorDesc`` in kernels).

``pack_list_tensor(tensors)`` lays the tensors out the way the CANN framework hands a dynamic input
list to a kernel (see ``include/kernel_operator_list_tensor_intf.h``): a header with the offset of the
pointer array, one descriptor per tensor (dimension count and index, then the shape), the data
pointers, and here also the tensors' data, all in one byte buffer. Passing that buffer as one GM
argument registers the whole list, so the kernel's reads through the pointers are bounds-checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

__all__ = ["ListTensorBuffer", "pack_list_tensor"]

_ALIGN = 512  # each tensor's data starts 512-byte aligned, as the framework's allocations do


@dataclass
class ListTensorBuffer:
    buffer: torch.Tensor  # uint8: pass it where the kernel takes the list's GM_ADDR
    tensors: list[torch.Tensor]  # views of the data inside ``buffer`` (read results back from them)


def pack_list_tensor(tensors: Sequence[torch.Tensor], with_shapes: bool = True) -> ListTensorBuffer:
    """One buffer holding the list layout and the tensors' data; all tensors must have the same rank
    when ``with_shapes`` (the layout has one dimension count)."""
    ts = [t.detach().contiguous().cpu() for t in tensors]
    if not ts:
        raise ValueError("a tensor list needs at least one tensor")
    dim = ts[0].dim() if with_shapes else 0
    if with_shapes and (dim == 0 or any(t.dim() != dim for t in ts)):
        raise ValueError("with_shapes needs tensors of one rank >= 1")
    desc_words = 1 + dim if dim else 2
    n = len(ts)
    ptr_off = 8 + 8 * desc_words * (n if dim else 1)
    meta = ptr_off + 8 * n
    offsets, pos = [], (meta + _ALIGN - 1) // _ALIGN * _ALIGN
    for t in ts:
        offsets.append(pos)
        pos = (pos + t.numel() * t.element_size() + _ALIGN - 1) // _ALIGN * _ALIGN
    buf = torch.zeros(pos + _ALIGN, dtype=torch.uint8)
    base = (buf.data_ptr() + _ALIGN - 1) // _ALIGN * _ALIGN - buf.data_ptr()  # a 512-byte aligned start
    buf = buf[base : base + pos]
    words = [ptr_off]
    if dim:
        for i, t in enumerate(ts):
            words += [dim | (i << 32), *t.shape]
    else:
        words += [0, 0xFFFFFFFF]
    words += [buf.data_ptr() + o for o in offsets]
    buf[:meta].view(torch.int64).copy_(torch.tensor([w if w < 2**63 else w - 2**64 for w in words], dtype=torch.int64))
    views = []
    for t, o in zip(ts, offsets, strict=True):
        nbytes = t.numel() * t.element_size()
        region = buf[o : o + nbytes]
        region.copy_(t.reshape(-1).view(torch.uint8))
        views.append(region.view(t.dtype).view(t.shape))
    return ListTensorBuffer(buf, views)
