"""experiments.calibrate_npu: the rank-correlation table, and the refusal without an NPU."""

from __future__ import annotations

import pytest

from experiments.calibrate_npu import average_ranks, main, rank_correlation_table
from kernel_gym.backends.ascend_npu import missing_requirements


def test_average_ranks_ties():
    assert average_ranks([3.0, 1.0, 2.0]) == [3.0, 1.0, 2.0]
    assert average_ranks([1.0, 2.0, 2.0, 5.0]) == [1.0, 2.5, 2.5, 4.0]


def test_rank_correlation_table():
    sim = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0, "only_sim": 9.0}
    npu = {"a": 10.0, "b": 30.0, "c": 20.0, "d": 40.0}
    t = rank_correlation_table(sim, npu)
    assert t["n"] == 4
    # d = rank differences (0, 1, -1, 0): rho = 1 - 6 * 2 / (4 * 15) = 0.8
    assert t["rho"] == pytest.approx(0.8)
    assert [r["task"] for r in t["rows"]] == ["a", "c", "b", "d"]
    assert rank_correlation_table(sim, {k: -v for k, v in sim.items()})["rho"] == pytest.approx(-1.0)
    assert rank_correlation_table({"a": 1.0}, {"a": 2.0}) == {
        "n": 1,
        "rho": None,
        "rows": [{"task": "a", "sim_s": 1.0, "npu_s": 2.0, "sim_rank": 1.0, "npu_rank": 1.0}],
    }


@pytest.mark.skipif(not missing_requirements(), reason="this machine has an NPU")
def test_refuses_without_npu(capsys):
    assert main(["--answers", "level1", "--tasks", "001_add"]) == 2
    err = capsys.readouterr().err
    assert "ascend_npu" in err and "lacks" in err
