"""A concurrency limit shared by every process on one machine: the copies of a vector env (each a
subprocess with its own generator) keep ``max_concurrency`` requests in flight together, not each.

:class:`SharedSlots` is a counting semaphore made of ``n`` slot files locked with ``flock``: a
holder owns one slot file's lock; the kernel drops the lock when the holder's file closes, so a
killed process never leaks a slot. Locks belong to open file descriptions, so threads of one
process exclude each other too.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["SharedSlots", "slots_for_group"]


class SharedSlots:
    """At most ``n`` holders at once across processes that use the same ``directory``.

    Args:
        directory: where the slot files live (created); one directory per shared limit.
        n: number of slots (>= 1).
        poll_s: seconds between attempts while every slot is taken (jittered).
    """

    def __init__(self, directory: str | os.PathLike[str], n: int, poll_s: float = 0.02) -> None:
        if int(n) < 1:
            raise ValueError(f"the number of slots must be >= 1, got {n}")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.n = int(n)
        self.poll_s = float(poll_s)
        self._rng = random.Random()

    def acquire(self, timeout_s: float | None = None) -> int:
        """Take a slot; returns a file descriptor to pass to :meth:`release`. Raises TimeoutError
        after ``timeout_s`` seconds without a free slot (None: wait as long as it takes)."""
        deadline = None if timeout_s is None else time.monotonic() + float(timeout_s)
        while True:
            for i in self._rng.sample(range(self.n), self.n):  # random order: no slot is favoured
                fd = os.open(self.directory / f"slot-{i}.lock", os.O_RDWR | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                return fd
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"no free slot of {self.n} in {self.directory} within {timeout_s} s")
            time.sleep(self.poll_s * (0.5 + self._rng.random()))

    @staticmethod
    def release(fd: int) -> None:
        """Give back the slot held through ``fd``."""
        os.close(fd)  # closing the file drops its lock

    @contextlib.contextmanager
    def hold(self, timeout_s: float | None = None) -> Iterator[None]:
        """``with slots.hold():`` runs its body holding one slot (safe from several threads)."""
        fd = self.acquire(timeout_s)
        try:
            yield
        finally:
            self.release(fd)


def slots_for_group(group: str, n: int) -> SharedSlots:
    """The machine-wide slots of concurrency group ``group`` (under the kernel_gym cache root)."""
    from kernel_gym.native import cache_root

    digest = hashlib.sha256(group.encode()).hexdigest()[:16]
    return SharedSlots(cache_root() / "llm_slots" / f"{digest}-{int(n)}", n)
