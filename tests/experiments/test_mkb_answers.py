"""experiments.mkb_answers: published six-string answers (fence and prose included) run against their
references, one process each; a broken answer, a wrong one and one without a reference are records."""

from __future__ import annotations

import json
from pathlib import Path

from experiments.mkb_answers import main
from tests.ascendc.compat.six_string_answers import LEAKY_RELU_TEXT

REFERENCE = """
import torch
import torch.nn.functional as F

class Model(torch.nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)

batch_size = 512
dim = 1024

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return [0.2]
"""


def test_answers_as_published_are_built_run_and_checked(tmp_path: Path, capsys) -> None:
    answers, refs = tmp_path / "answers" / "run0", tmp_path / "reference" / "activation"
    answers.mkdir(parents=True)
    refs.mkdir(parents=True)
    (refs / "leaky_relu.py").write_text(REFERENCE)
    (refs / "leaky_relu_wrong.py").write_text(REFERENCE.replace("self.negative_slope)", "0.5)"))
    (refs / "leaky_relu_broken.py").write_text(REFERENCE)
    (answers / "leaky_relu.txt").write_text(f"Here is the kernel.\n\n```python\n{LEAKY_RELU_TEXT}\n```\nDone.\n")
    (answers / "leaky_relu_wrong.txt").write_text(LEAKY_RELU_TEXT)
    (answers / "leaky_relu_broken.txt").write_text(LEAKY_RELU_TEXT.replace("kernel_src", "kernel_text"))
    (answers / "no_such_op.txt").write_text(LEAKY_RELU_TEXT)
    out = tmp_path / "results.jsonl"
    assert main(["--answers", str(tmp_path / "answers"), "--references", str(tmp_path / "reference"),
                 "--out", str(out), "--shrink", "4", "--timeout-s", "300"]) == 0
    recs = {r["op"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert recs["leaky_relu"]["status"] == "ok" and recs["leaky_relu"]["shrink"] == 4
    assert recs["leaky_relu_wrong"]["status"] == "mismatch" and "max abs diff" in recs["leaky_relu_wrong"]["error"]
    assert recs["leaky_relu_broken"]["status"] == "parse_error" and "kernel_src" in recs["leaky_relu_broken"]["error"]
    assert recs["no_such_op"]["status"] == "no_reference"
    table = capsys.readouterr().out
    assert "| ok | 1 |" in table and "| mismatch | 1 |" in table
