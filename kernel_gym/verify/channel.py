"""The judge <-> answer-runner channel: framed JSON messages over pipes, tensors in shared memory.

Nothing the runner sends is ever unpickled or evaluated by the judge: a message is a 4-byte
length and a JSON object of at most ``MAX_MESSAGE_BYTES``; tensor data travels through a
shared memory file (memfd) as raw bytes that the judge reinterprets with a dtype and shape it
chose itself (the expected output's), never the runner's.
"""

from __future__ import annotations

import json
import mmap
import os
import select
import struct
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

__all__ = [
    "ChannelClosed",
    "ChannelTimeout",
    "MAX_MESSAGE_BYTES",
    "SharedBuffer",
    "TensorSlot",
    "recv_message",
    "send_message",
    "tensor_nbytes",
]

MAX_MESSAGE_BYTES = 8 << 20  # compile requests carry sources; anything larger is refused
_HEADER = struct.Struct("<I")


class ChannelClosed(EOFError):
    """The other end closed its pipe (it exited or died)."""


class ChannelTimeout(TimeoutError):
    """No complete message arrived before the deadline."""


def send_message(fd: int, message: dict[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":"), default=str).encode()
    if len(data) > MAX_MESSAGE_BYTES:
        raise ValueError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE_BYTES}")
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise ChannelTimeout(f"no message within the deadline ({got} of {n} bytes read)")
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise ChannelClosed("the other end closed the channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_message(fd: int, timeout_s: float | None = None) -> dict[str, Any]:
    """One message; raises ChannelTimeout, ChannelClosed, or ValueError for a malformed one."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    if size > MAX_MESSAGE_BYTES:
        raise ValueError(f"message of {size} bytes exceeds {MAX_MESSAGE_BYTES}")
    message = json.loads(_read_exact(fd, size, deadline))
    if not isinstance(message, dict):
        raise ValueError("a message must be a JSON object")
    return message


def tensor_nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


@dataclass(frozen=True)
class TensorSlot:
    """Where a tensor lies in the shared buffer: byte offset, dtype name, shape."""

    offset: int
    dtype: str
    shape: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"offset": self.offset, "dtype": self.dtype, "shape": list(self.shape)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TensorSlot:
        return cls(int(d["offset"]), str(d["dtype"]), tuple(int(s) for s in d["shape"]))


def _torch_dtype(name: str) -> torch.dtype:
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return dtype


class SharedBuffer:
    """A memfd mapped by both processes; grows on demand (the judge truncates, both remap)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.size = 0
        self.map: mmap.mmap | None = None
        self._pinned = 0  # the address registered with CUDA (page-locked), 0 when none

    def resize(self, size: int) -> None:
        """Judge side: make the file ``size`` bytes and map it."""
        os.ftruncate(self.fd, size)
        self.remap(size)

    def remap(self, size: int) -> None:
        if self.map is not None and self.size == size:
            return
        if self.map is not None:
            self._unpin()
            self.map.close()
        self.map = mmap.mmap(self.fd, size) if size else None
        self.size = size

    def pin_for_cuda(self) -> bool:
        """Page-lock this process's mapping for CUDA (``cudaHostRegister``), so copies between the
        buffer and a GPU run at the bus's speed instead of through the driver's pageable staging
        (several times slower for the GiB-sized sets of published shapes). Best effort: False where
        CUDA or the registration is refused (a memory-lock limit), and copies stay pageable."""
        if self._pinned or self.map is None or not torch.cuda.is_available():
            return bool(self._pinned)
        import ctypes

        try:
            # the driver API: a refusal there leaves no error behind for the runtime's next check
            libcuda = ctypes.CDLL("libcuda.so.1")
        except OSError:
            return False
        torch.cuda.current_stream().synchronize()  # the primary context is current in this thread
        view = ctypes.c_char.from_buffer(self.map)
        address = ctypes.addressof(view)
        del view  # no export may outlive this call: the mapping is closed on a resize
        status = libcuda.cuMemHostRegister_v2(ctypes.c_void_p(address), ctypes.c_size_t(self.size), ctypes.c_uint(0))
        if status != 0:
            return False
        self._pinned = address
        return True

    def _unpin(self) -> None:
        if self._pinned:
            import ctypes

            ctypes.CDLL("libcuda.so.1").cuMemHostUnregister(ctypes.c_void_p(self._pinned))
            self._pinned = 0

    def view(self, slot: TensorSlot) -> torch.Tensor:
        """A tensor over the slot's bytes (no copy)."""
        dtype = _torch_dtype(slot.dtype)
        count = int(np.prod(slot.shape, dtype=np.int64)) if slot.shape else 1
        nbytes = count * torch.empty((), dtype=dtype).element_size()
        if slot.offset < 0 or slot.offset + nbytes > self.size or self.map is None:
            raise ValueError(f"slot {slot} lies outside the shared buffer of {self.size} bytes")
        if count == 0:
            return torch.empty(slot.shape, dtype=dtype)
        flat = torch.frombuffer(self.map, dtype=dtype, count=count, offset=slot.offset)
        return flat.view(slot.shape)

    def write(self, offset: int, t: torch.Tensor) -> TensorSlot:
        slot = TensorSlot(offset, str(t.dtype).removeprefix("torch."), tuple(t.shape))
        if t.numel():
            self.view(slot).copy_(t.detach().contiguous())
        return slot

    def read(self, slot: TensorSlot) -> torch.Tensor:
        """A private copy of the slot's bytes (the other side can no longer change it)."""
        return self.view(slot).clone()

    def close(self) -> None:
        if self.map is not None:
            self._unpin()
            self.map.close()
            self.map = None
