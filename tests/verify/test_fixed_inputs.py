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


def test_trials_of_large_tasks_are_drawn_when_used_with_the_same_values(monkeypatch):
    """Above EAGER_TRIAL_BYTES the trials after the first are drawn when used (at published shapes
    one input set can be GiBs); their seeds are fixed up front, so the values are the eager plan's."""
    import torch

    from kernel_gym.verify import judge
    from kernel_gym.verify.settings import VerifySettings

    module = get_task("level1/021_relu").module()
    settings = VerifySettings(fixed_inputs=True, seed=11, timing_trials=2, warmup_runs=0)  # timing sets drawn too
    eager = judge.prepare_reference(module, settings)
    monkeypatch.setattr(judge, "EAGER_TRIAL_BYTES", 0)
    lazy = judge.prepare_reference(module, settings)
    assert not isinstance(lazy.trials[0][1], judge.DeferredInputSet)  # the first sizes the buffer
    assert all(isinstance(s, judge.DeferredInputSet) for _, s in lazy.trials[1:])
    assert isinstance(lazy.recheck, judge.DeferredInputSet)
    for (scale_a, a), (scale_b, b) in zip(eager.trials, lazy.trials, strict=True):
        assert scale_a == scale_b
        assert torch.equal(a.inputs[0], b.inputs[0]) and torch.equal(a.expected, b.expected)
    deferred = lazy.trials[1][1]
    deferred.release()
    assert torch.equal(deferred.inputs[0], eager.trials[1][1].inputs[0])  # drawn again, same seed
    assert torch.equal(lazy.recheck.expected, eager.recheck.expected)
