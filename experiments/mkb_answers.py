"""MultiKernelBench six-string answers on the Ascend C simulator, as published: each answer file
(the model's reply as MultiKernelBench stores it, fence and prose included) is built with
``kernel_gym.ascendc.load_multikernelbench`` and its ``ModelNew`` is run against the reference
``Model`` of the same op, both built from ``get_init_inputs()`` under one seed (parameters the two
share by name and shape are copied from the reference), on the reference's ``get_inputs()``.

    python -m experiments.mkb_answers --answers <dir of answer .txt files> --references <dir of <op>.py> \
        [--out results.jsonl] [--timeout-s 240] [--shrink 8] [--names op ...]

One answer at a time, each in a fresh process with a time limit. ``--shrink N`` divides the
reference's module-level integer sizes of 256 and more by N before its inputs are drawn, for
references too large to simulate in full here (the result line records it). Prints a line per
answer and the count per status; an answer's file stem names its op (``gelu.txt`` -> ``gelu.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

_MARK = "KG_MKB_RESULT "


def _status_of(exc: BaseException) -> str:
    from kernel_gym.ascendc import errors

    if isinstance(exc, ValueError) and "six-string" in str(exc):
        return "parse_error"
    if isinstance(exc, errors.MissingApiError):
        return "missing_api"
    if isinstance(exc, errors.AscendCCompileError):
        return "compile_error"
    if isinstance(exc, errors.AscendCFault):
        return f"fault:{getattr(exc, 'error_class', type(exc).__name__)}"
    return f"error:{type(exc).__name__}"


def _close(got: Any, want: Any) -> bool:
    import torch

    return (
        isinstance(got, torch.Tensor)
        and got.shape == want.shape
        and torch.allclose(got.float(), want.float(), rtol=1e-2, atol=1e-2)
    )


def run_one(answer: Path, reference: Path, shrink: int) -> dict[str, Any]:
    """Build, run and check one answer in this process; the record of what happened."""
    import importlib.util

    import torch

    import kernel_gym.ascendc as asc

    rec: dict[str, Any] = {"answer": answer.name, "op": answer.stem, "shrink": shrink, "stage": "build"}
    try:
        op = asc.load_multikernelbench(answer.read_text(encoding="utf-8"))
        rec["stage"] = "reference"
        spec = importlib.util.spec_from_file_location(f"mkb_ref_{answer.stem}", reference)
        assert spec is not None and spec.loader is not None
        ref = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ref)
        if shrink > 1:
            for name, value in vars(ref).items():
                if type(value) is int and value >= 256 and not name.startswith("_"):
                    setattr(ref, name, value // shrink)
        torch.manual_seed(0)
        model = ref.Model(*ref.get_init_inputs())
        torch.manual_seed(0)
        new = op.ModelNew(*ref.get_init_inputs())
        ours = new.state_dict()
        shared = {k: v for k, v in model.state_dict().items() if k in ours and ours[k].shape == v.shape}
        new.load_state_dict(shared, strict=False)
        torch.manual_seed(1)
        inputs = ref.get_inputs()
        with torch.no_grad():
            want = model(*inputs)
            rec["stage"] = "run"
            got = new(*inputs)
        rec["stage"] = "compare"
        pairs = list(zip(want, got, strict=True)) if isinstance(want, (tuple, list)) else [(want, got)]
        bad = [
            i
            for i, (w, g) in enumerate(pairs)
            if not (
                isinstance(g, torch.Tensor) and g.shape == w.shape and torch.allclose(g.float(), w.float(), 1e-2, 1e-2)
            )
        ]
        rec["status"] = "mismatch" if bad else "ok"
        if bad:
            w, g = pairs[bad[0]]
            rec["error"] = (
                f"output {bad[0]}: shape {tuple(getattr(g, 'shape', ()))} vs {tuple(w.shape)}"
                if not isinstance(g, torch.Tensor) or g.shape != w.shape
                else f"output {bad[0]}: max abs diff {float((g.float() - w.float()).abs().max()):.3g}"
            )
    except Exception as exc:  # a broken answer is a record, not a crash of the run
        rec["status"] = _status_of(exc)
        rec["error"] = str(exc)[:600]
    return rec


def _child(answer: Path, reference: Path, shrink: int, timeout_s: float) -> dict[str, Any]:
    cmd = [
        sys.executable,
        "-m",
        "experiments.mkb_answers",
        "--one",
        str(answer),
        str(reference),
        "--shrink",
        str(shrink),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return {"answer": answer.name, "op": answer.stem, "shrink": shrink, "status": "timeout", "host_s": timeout_s}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(_MARK)]
    rec = (
        json.loads(lines[-1][len(_MARK) :])
        if lines
        else {
            "answer": answer.name,
            "op": answer.stem,
            "shrink": shrink,
            "status": f"crash:{proc.returncode}",
            "error": proc.stderr[-600:],
        }
    )
    rec["host_s"] = round(time.monotonic() - t0, 1)
    return rec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--answers", type=Path, help="directory searched for answer .txt files")
    ap.add_argument("--references", type=Path, help="directory searched for the <op>.py references")
    ap.add_argument("--out", type=Path, default=None, help="JSON lines, one per answer")
    ap.add_argument("--timeout-s", type=float, default=240.0)
    ap.add_argument("--shrink", type=int, default=1)
    ap.add_argument("--names", nargs="*", default=None, help="only these ops (file stems)")
    ap.add_argument("--one", nargs=2, type=Path, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(_MARK + json.dumps(run_one(a.one[0], a.one[1], a.shrink)), flush=True)
        return 0
    if a.answers is None or a.references is None:
        ap.error("--answers and --references are required")
    refs = {p.stem: p for p in sorted(a.references.rglob("*.py"))}
    answers = sorted(p for p in a.answers.rglob("*.txt") if not a.names or p.stem in a.names)
    if not answers:
        ap.error(f"no answer .txt files under {a.answers}")
    counts: Counter[str] = Counter()
    out = a.out.open("a") if a.out else None
    for k, answer in enumerate(answers, 1):
        ref = refs.get(answer.stem)
        rec = (
            _child(answer, ref, a.shrink, a.timeout_s)
            if ref
            else {"answer": answer.name, "op": answer.stem, "status": "no_reference"}
        )
        rec["path"] = str(answer.relative_to(a.answers))
        counts[rec["status"].split(":")[0]] += 1
        print(f"[{k}/{len(answers)}] {rec['path']}: {rec['status']} {rec.get('error', '')[:160]}", flush=True)
        if out:
            out.write(json.dumps(rec) + "\n")
            out.flush()
    if out:
        out.close()
    print("\n| status | answers |\n|---|---|")
    for status, n in counts.most_common():
        print(f"| {status} | {n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
