"""The judge times the reference on a GPU by repeating one call on the same inputs (no re-copy,
no output handed back: ``CallSlots.call(repeat=True)``). That shortcut is for the trusted
reference only: once answer code is loaded, the runner ignores it and every call stages its
inputs and hands its output back. Run in a child process: loading an answer installs audit hooks
that stay for the life of the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

TASK = """
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x * 2
def get_inputs():
    return [torch.rand(64)]
def get_init_inputs():
    return []
"""

ANSWER = """
import torch
import torch.nn as nn
class ModelNew(nn.Module):
    def forward(self, x):
        return x + x
"""

CHILD = textwrap.dedent(
    """
    import json, os, sys
    import torch
    import torch._dynamo  # preloaded as the sandbox host does (the compute guard imports it lazily)
    from kernel_gym.verify.channel import TensorSlot
    from kernel_gym.verify.runner import _Runner

    task, answer = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    runner = _Runner(-1, -1, os.memfd_create("kg-test"))
    runner.buffer.resize(4096)
    x = torch.arange(64, dtype=torch.float32)
    slot = runner.buffer.write(0, x).to_dict()
    call = {"op": "call", "inputs": [{"slot": slot}], "out_offset": 1024, "out_capacity": 1024,
            "record": False, "guard": False, "fill": False, "reuse_inputs": True, "return_output": False}
    runner.init({"op": "init", "task_source": task, "backend": "cpu", "weight_seed": 1})
    runner.load_reference({})
    before = runner.call(dict(call))
    runner.load_answer({"source": answer})
    after = runner.call(dict(call))
    out = runner.buffer.view(TensorSlot(1024, "float32", (64,)))
    print(json.dumps({"before": bool(before.get("written")), "after": bool(after.get("written")),
                      "out_ok": bool(torch.equal(out, x * 2))}))
    """
)


def test_the_repeat_shortcut_is_ignored_once_answer_code_is_loaded():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(TASK), json.dumps(ANSWER)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen == {"before": False, "after": True, "out_ok": True}, seen
