"""The speedup's interval, the judge's clock and paired cpu timing under load (kernel_gym.verify.timing)."""

from __future__ import annotations

import multiprocessing
import os
import random

import pytest

from kernel_gym.tasks import get_task
from kernel_gym.verify import verify
from kernel_gym.verify.timing import converged, run_delay_s, speedup_interval, timing_cpus


def test_paired_interval_cancels_drift_that_unpaired_resampling_cannot():
    rng = random.Random(1)
    # both sides slow down together (load coming and going); the true ratio is 1.2 throughout
    drift = [1.0 + 0.5 * (i % 10) / 10 for i in range(60)]
    ref = [1.2e-3 * d * (1 + rng.uniform(-0.01, 0.01)) for d in drift]
    ans = [1.0e-3 * d * (1 + rng.uniform(-0.01, 0.01)) for d in drift]
    paired = speedup_interval(ref, ans, paired=True)
    unpaired = speedup_interval(ref, ans, paired=False)
    assert paired is not None and unpaired is not None
    assert paired[0] <= 1.2 <= paired[1]
    assert paired[1] - paired[0] < (unpaired[1] - unpaired[0]) / 2


def test_interval_needs_three_samples_and_converged_needs_the_target():
    assert speedup_interval([1.0, 1.0], [1.0, 1.0], paired=True) is None
    assert converged(1.0, (0.96, 1.04), 0.05)
    assert not converged(1.0, (0.94, 1.04), 0.05)
    assert not converged(1.0, None, 0.05)


def test_scheduler_statistics_are_read_for_this_thread():
    wait = run_delay_s()
    if wait is None:
        pytest.skip("this kernel keeps no per-task schedstat (CONFIG_SCHED_INFO off)")
    assert wait >= 0.0
    assert run_delay_s(os.getpid()) is not None


def _spin() -> None:
    while True:
        pass


def test_loaded_machine_says_so_instead_of_a_tight_wrong_interval(relu_answer):
    """Spinners on every CPU the runners may use: the calls are preempted, and the result must not
    claim a converged (trustworthy) measurement."""
    cpus = timing_cpus(1)
    if cpus is None or run_delay_s() is None:
        pytest.skip("needs 2+ CPUs and schedstat: runners cannot be pinned or preemption measured")
    ctx = multiprocessing.get_context("spawn")
    spinners = [ctx.Process(target=_spin, daemon=True) for _ in range(len(os.sched_getaffinity(0)))]
    for p in spinners:
        p.start()
    try:
        for p, cpu in zip(spinners, sorted(os.sched_getaffinity(0)), strict=True):
            os.sched_setaffinity(p.pid, [cpu])
        result = verify(
            get_task("relu"),
            relu_answer,
            backend="cpu",
            use_cache=False,
            correctness_trials=2,
            warmup_runs=1,
            timing_trials=10,
            timing_budget_s=1.0,
        )
    finally:
        for p in spinners:
            p.kill()
            p.join()
    assert result.feasible, result.message
    paired = result.details["answer_timing"]["paired"]
    assert paired["preempted_calls"] > 0
    assert paired["contended"] is True
    assert result.timing_converged is False
    lo, hi = result.speedup_ci
    assert lo <= result.speedup <= hi


def test_a_timed_runner_cannot_signal_renice_or_repin_another_process():
    """The reference's runner is timed beside the answer's: the answer's filter refuses calls aimed
    at any process but its own (a SIGSTOP to the reference would inflate its time)."""
    pytest.importorskip("pyseccomp")
    from kernel_gym.verify.isolation import install_runner_filter

    other = multiprocessing.get_context("spawn").Process(target=_spin, daemon=True)
    other.start()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child installs the filter and reports what it could do
        os.close(read)
        outcome = []
        try:
            install_runner_filter(self_only=True)
            for name, call in (
                ("kill_other", lambda: os.kill(other.pid, 0)),
                ("renice_other", lambda: os.setpriority(os.PRIO_PROCESS, other.pid, 19)),
                ("repin_self", lambda: os.sched_setaffinity(0, os.sched_getaffinity(0))),
                ("signal_self", lambda: os.kill(os.getpid(), 0)),
            ):
                try:
                    call()
                    outcome.append(f"{name}:ok")
                except PermissionError:
                    outcome.append(f"{name}:denied")
        finally:
            os.write(write, " ".join(outcome).encode())
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    got = os.read(read, 4096).decode().split()
    os.close(read)
    other.kill()
    other.join()
    assert got == ["kill_other:denied", "renice_other:denied", "repin_self:denied", "signal_self:ok"]

