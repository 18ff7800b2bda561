"""Timing calls when the judge's memory budget holds fewer input sets than warm-up plus trials
(published shapes: one set of an 8192 x 8192 task is half a GB with its expected output)."""

from __future__ import annotations

from kernel_gym.verify.judge import timing_schedule


def test_enough_sets_each_call_its_own():
    assert timing_schedule(8, 3) == ([0, 1, 2, 3, 4, 5, 6, 7], 3)


def test_few_sets_warm_up_on_the_first_and_time_the_others():
    schedule, warm = timing_schedule(2, 3)
    assert schedule == [0, 0, 0, 1] and warm == 3
    assert len(schedule) - warm == 1  # a timed call, never none (the reference's summary had no sample)
    schedule, warm = timing_schedule(3, 10)
    assert schedule[warm:] == [1, 2]


def test_simulated_backends_keep_their_two_calls():
    assert timing_schedule(2, 3, simulated=True) == ([0, 1], 2)
