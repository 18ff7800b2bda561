"""The machine-wide concurrency limit: slots shared by processes, released by a killed holder, and
the copies of a vector env keeping an LLM generator's max_concurrency together against a real
(loopback) OpenAI-compatible server."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import gymnasium as gym
import pytest

import kernel_gym  # noqa: F401  (registers the ids)
from kernel_gym.llm.concurrency import SharedSlots
from kernel_gym.llm.loopback import LoopbackServer

KEY_VAR = "KG_LOOPBACK_CONCURRENCY_KEY"
BROKEN = "```python\nclass ModelNew(torch.nn.Module:\n    pass\n```"  # verifies fast: a syntax error


def _hold(directory: str, n: int, hold_s: float, log: str) -> None:
    slots = SharedSlots(directory, n)
    with slots.hold():
        start = time.monotonic()
        time.sleep(hold_s)
        end = time.monotonic()
    with open(log, "a") as fh:
        fh.write(f"{start} {end}\n")


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    now = peak = 0
    for _, delta in events:
        now += delta
        peak = max(peak, now)
    return peak


def test_processes_share_the_slots(tmp_path):
    ctx = mp.get_context("fork")  # the children run only this module's stdlib code
    log = tmp_path / "log.txt"
    procs = [ctx.Process(target=_hold, args=(str(tmp_path / "slots"), 2, 0.4, str(log))) for _ in range(5)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    intervals = [tuple(map(float, line.split())) for line in log.read_text().splitlines()]
    assert len(intervals) == 5
    assert _max_overlap(intervals) == 2  # two at once, never three


def _take_and_wait(directory: str, ready: str) -> None:
    SharedSlots(directory, 1).acquire()
    open(ready, "w").close()
    time.sleep(60)


def test_a_killed_holder_frees_its_slot(tmp_path):
    ctx = mp.get_context("fork")  # the children run only this module's stdlib code
    ready = tmp_path / "ready"
    p = ctx.Process(target=_take_and_wait, args=(str(tmp_path / "slots"), str(ready)))
    p.start()
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert time.monotonic() < deadline and p.is_alive()
        time.sleep(0.05)
    slots = SharedSlots(tmp_path / "slots", 1)
    with pytest.raises(TimeoutError):
        slots.acquire(timeout_s=0.3)  # held by the child
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    fd = slots.acquire(timeout_s=5)  # the kernel dropped the dead holder's lock
    slots.release(fd)


def test_bad_slot_count_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=">= 1"):
        SharedSlots(tmp_path, 0)


@pytest.mark.slow  # two spawned env processes: about a minute on 2 cores
def test_vector_env_copies_share_max_concurrency(tmp_path, monkeypatch):
    """Two copies in subprocesses, each asking for 2 candidates per step at once: with
    max_concurrency=2 shared, the server never sees more than 2 requests in flight (4 without)."""
    monkeypatch.setenv(KEY_VAR, "sk-loopback")
    with LoopbackServer(reply=BROKEN, latency_s=0.3) as srv:
        venv = gym.make_vec(
            "KernelBench-Ascend-v0",
            num_envs=2,  # kernel_gym's vector env: copies in spawned subprocesses
            memory=str(tmp_path / "mem.db"),
            tasks=["level1/021_relu", "level1/036_relu6"],
            budget=2,
            candidates_per_step=2,
            generator={
                "name": "litellm:openai/loopback",
                "api_base": srv.api_base,
                "api_key_env": KEY_VAR,
                "use_cache": False,
                "max_retries": 0,
                "max_concurrency": 2,
            },
        )
        try:
            venv.reset(seed=0)
            for _ in range(2):
                venv.step(venv.action_space.sample())
        finally:
            venv.close()
        assert len(srv.requests) == 8  # 2 copies x 2 steps x 2 candidates
        assert srv.max_in_flight == 2
