"""bench_sampled's verdict on a sampled run against the full one."""

from __future__ import annotations

import pytest

from experiments.bench_sampled import bracket_verdict


def test_bracket_verdict_says_how_far_outside_the_full_latency_lies() -> None:
    sampled = {"lo": 10e-6, "hi": 12e-6, "latency_s": 11e-6}
    assert bracket_verdict(sampled, {"latency_s": 11.5e-6}) == (True, True, 0.0)
    own, inside, outside = bracket_verdict(sampled, {"latency_s": 12.1e-6})
    assert own and not inside and outside == pytest.approx(0.1e-6)
    own, inside, outside = bracket_verdict(sampled, {"latency_s": 9.0e-6})
    assert not inside and outside == pytest.approx(1e-6)
    # a zero-width bracket: the sampled figure is inside its own, the full one only when equal
    flat = {"lo": 5e-6, "hi": 5e-6, "latency_s": 5e-6}
    assert bracket_verdict(flat, {"latency_s": 5e-6})[:2] == (True, True)
    assert bracket_verdict(flat, {"latency_s": 5.0000002e-6})[1] is False
    assert bracket_verdict({"lo": 1.0, "hi": 2.0, "latency_s": 3.0}, {"latency_s": 1.5})[0] is False
