"""Host cost of filling lazy inputs (docs/benchmarks.md, "Simulator host speed"): a published-shape
reduction reads 5 to 20 GiB of them, each chunk drawn when first touched.

    python -m experiments.bench_lazy_fill [--gib 1] [--repeats 3]

For each fill and dtype, a fresh lazy tensor of ``--gib`` GiB is touched chunk by chunk (a slice's
sum: the fills plus a cheap read) and the process CPU seconds are taken, best of ``--repeats``.
The digest of the first 64 MiB lets two revisions of the runtime be compared value for value
(run it under each and compare the column).
"""

from __future__ import annotations

import argparse
import hashlib
import time

import torch

from kernel_gym.ascendc.sampling import lazy_tensor

CASES = (
    ("normal", torch.float32),
    ("uniform", torch.float32),
    ("randint", torch.float32),
    ("normal", torch.float16),
)


def touch(x: torch.Tensor, rows_per_slice: int) -> float:
    t0 = time.process_time()
    for r in range(0, x.shape[0], rows_per_slice):
        x[r : r + rows_per_slice].sum()
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=1.0, help="size of each lazy tensor (GiB)")
    ap.add_argument("--repeats", type=int, default=3, help="fresh tensors per case; the best is shown")
    args = ap.parse_args()
    torch.set_num_threads(1)  # the judge's child runs one torch thread; more spin on page faults
    cols = 1 << 20
    print("| fill | dtype | GiB | CPU s (best) | ns per element | digest of the first 64 MiB |")
    print("|---|---|---|---|---|---|")
    for fill, dtype in CASES:
        esize = torch.empty((), dtype=dtype).element_size()
        rows = max(1, int(args.gib * 2**30 / (cols * esize)))
        best = float("inf")
        digest = ""
        for k in range(args.repeats):
            x = lazy_tensor((rows, cols), dtype, fill, seed=11 + k)
            best = min(best, touch(x, 16))
            if k == 0:
                head = x.view(-1)[: (64 << 20) // esize].contiguous()
                digest = hashlib.sha256(head.view(torch.uint8).numpy().tobytes()).hexdigest()[:16]
            del x
        per = best / (rows * cols) * 1e9
        print(
            f"| {fill} | {str(dtype).removeprefix('torch.')} | {rows * cols * esize / 2**30:.2f} | {best:.2f} | "
            f"{per:.2f} | {digest} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
