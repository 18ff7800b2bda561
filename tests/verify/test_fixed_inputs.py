"""VerifySettings.fixed_inputs: the judge draws weights and inputs from ``seed``, so a failing
answer's message (which quotes values) repeats; by default the draws come from OS entropy."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_gym.tasks import get_task
from kernel_gym.verify import verify

ROOT = Path(__file__).resolve().parents[2]
# the reference ReLU with a wrong negative branch: a numerical mismatch whose message quotes values
WRONG = (ROOT / "solutions/cpu/level1/021_relu.py").read_text().replace("x[i] : 0.f", "x[i] : 0.5f * x[i]")


def test_fixed_inputs_repeat_the_failure_message_entropy_does_not():
    task = get_task("level1/021_relu")
    fast = dict(correctness_trials=1, timing_trials=1, warmup_runs=0, use_cache=False)

    def message(**kw):
        r = verify(task, WRONG, backend="cpu", **fast, **kw)
        assert r.error_class == "numerical_mismatch", r.summary()
        return r.message

    fixed = {message(fixed_inputs=True, seed=7) for _ in range(2)}
    assert len(fixed) == 1
    assert message(fixed_inputs=True, seed=8) not in fixed  # another seed, other inputs
    assert len({message() for _ in range(2)}) == 2  # OS entropy: values differ run to run
    with pytest.raises(ValueError, match="fixed_inputs must be true or false"):
        verify(task, WRONG, backend="cpu", fixed_inputs="yes")


def test_sets_of_large_tasks_are_drawn_when_used_with_the_same_values(monkeypatch):
    """Above EAGER_TRIAL_BYTES every set (trials, re-check, timing sets, the reference's timing
    set) is drawn when used and dropped after (at published shapes one set can be GiBs); their
    seeds are fixed up front, so the values are the eager plan's."""
    import torch

    from kernel_gym.verify import judge
    from kernel_gym.verify.settings import VerifySettings

    module = get_task("level1/021_relu").module()
    settings = VerifySettings(fixed_inputs=True, seed=11, timing_trials=2, warmup_runs=0)  # timing sets drawn too
    eager = judge.prepare_reference(module, settings)
    monkeypatch.setattr(judge, "EAGER_TRIAL_BYTES", 0)
    lazy = judge.prepare_reference(module, settings)
    everything = [s for _, s in lazy.trials] + [lazy.recheck] + lazy.timing_sets + lazy.reference_timing_sets
    assert all(isinstance(s, judge.DeferredInputSet) for s in everything)
    assert not any(isinstance(s, judge.DeferredInputSet) for _, s in eager.trials)
    assert len(lazy.timing_sets) == len(eager.timing_sets) >= 2
    pairs = list(zip(eager.trials, lazy.trials, strict=True))
    pairs += [((1.0, a), (1.0, b)) for a, b in zip(eager.timing_sets, lazy.timing_sets, strict=True)]
    for (scale_a, a), (scale_b, b) in pairs:
        assert scale_a == scale_b
        assert torch.equal(a.inputs[0], b.inputs[0]) and torch.equal(a.expected, b.expected)
    ref_a, ref_b = eager.reference_timing_sets[0], lazy.reference_timing_sets[0]
    assert ref_b.expected is None and torch.equal(ref_a.inputs[0], ref_b.inputs[0])
    for deferred, eager_set in ((lazy.trials[0][1], eager.trials[0][1]), (lazy.trials[1][1], eager.trials[1][1])):
        deferred.release()
        assert deferred._set is None  # nothing held after its use
        assert deferred.like.inputs[0].device.type == "meta"  # sizes only
        assert torch.equal(deferred.inputs[0], eager_set.inputs[0])  # drawn again, same seed
    assert torch.equal(lazy.recheck.expected, eager.recheck.expected)


def test_timing_sets_past_the_memory_budget_are_drawn_when_used(monkeypatch):
    """A task whose sets outgrow the timing budget still gets a set of its own for every timed
    call (cut to two sets, a published-shape task was timed by a single call: no spread), the
    sets past the budget drawn when used with the values an unlimited budget would give;
    GiB-sized sets stay cut to two."""
    import torch

    from kernel_gym.verify import judge
    from kernel_gym.verify.settings import VerifySettings

    module = get_task("level1/021_relu").module()
    settings = VerifySettings(fixed_inputs=True, seed=5, timing_trials=6, warmup_runs=1)
    monkeypatch.setattr(judge, "TIMING_SET_BYTES", 1 << 40)
    roomy = judge.prepare_reference(module, settings)
    monkeypatch.setattr(judge, "TIMING_SET_BYTES", 0)
    tight = judge.prepare_reference(module, settings)
    assert len(tight.timing_sets) == len(roomy.timing_sets) == 1 + 6 + 2
    assert not any(isinstance(s, judge.DeferredInputSet) for s in tight.timing_sets[:2])
    assert all(isinstance(s, judge.DeferredInputSet) for s in tight.timing_sets[2:])
    for a, b in zip(roomy.timing_sets, tight.timing_sets, strict=True):
        assert torch.equal(a.inputs[0], b.inputs[0]) and torch.equal(a.expected, b.expected)
    monkeypatch.setattr(judge, "DEFERRED_TIMING_SET_BYTES", 0)  # every set "GiB-sized"
    assert len(judge.prepare_reference(module, settings).timing_sets) == 2
