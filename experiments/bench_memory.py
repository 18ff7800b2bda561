"""Benchmark of the memory store: add throughput and recall latency at 10k / 100k / 1M items.

    python experiments/bench_memory.py                      # sizes 10000,100000,1000000
    python experiments/bench_memory.py --sizes 10000,100000 --queries 200

Items are synthetic random texts (words drawn from a Zipf-like vocabulary of pseudo-words and
Ascend C identifiers) embedded with the default HashingEmbedder(512) in batches. Above
``--embed-limit`` items (default 200k) precomputed random unit vectors are inserted instead of
embedding the texts (the table says which). Recall: 200 queries, k=20, every query timed,
without a filter, with a kind filter (~20 % of items) and with a task filter (~0.1 %). Text
queries include embedding the query. "load avg" is the 1-minute load average of the machine
during the recall timing (other processes compete for the cores; the search threads are
sensitive to it). "add items/s" includes embedding the texts.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel_gym.memory import MemoryItem, MemoryStore  # noqa: E402

KIND_P = {
    "trace": 0.40,
    "experience_success": 0.20,
    "experience_failure": 0.20,
    "best_practice": 0.10,
    "api_template": 0.05,
    "validity_rule": 0.05,
}
IDENTS = [
    "DataCopy",
    "DataCopyPad",
    "TQue",
    "TPipe",
    "InitBuffer",
    "ReduceSum",
    "WholeReduceSum",
    "Exp",
    "Muls",
    "Adds",
    "GetBlockIdx",
    "SetAtomicAdd",
    "Cast",
    "Select",
    "Compare",
    "tileLength",
    "BUFFER_NUM",
]


def make_texts(rng: np.random.Generator, n: int, vocab: list[str]) -> list[str]:
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks
    p /= p.sum()
    lengths = rng.integers(20, 60, size=n)
    words = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    out, pos = [], 0
    for L in lengths:
        out.append(" ".join(vocab[w] for w in words[pos : pos + L]))
        pos += L
    return out


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs) * 1e3, q))


def bench_size(n: int, args: argparse.Namespace, workdir: Path) -> dict:
    rng = np.random.default_rng(n)
    path = workdir / f"bench_{n}.db"
    for suffix in ("", "-wal", "-shm", ".faiss"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = IDENTS + ["".join(rng.choice(letters, size=rng.integers(3, 9))) for _ in range(20_000)]
    embed = n <= args.embed_limit
    kinds = list(KIND_P)
    n_tasks = 1000
    store = MemoryStore(path)
    store.sync_index()  # keep the in-memory index updated by our own adds
    t_add = 0.0
    batch = args.batch
    for start in range(0, n, batch):
        m = min(batch, n - start)
        texts = make_texts(rng, m, vocab) if embed else [f"synthetic item {start + i}" for i in range(m)]
        ks = rng.choice(len(kinds), size=m, p=list(KIND_P.values()))
        tasks = rng.integers(n_tasks, size=m)
        items = [
            MemoryItem(
                kind=kinds[k],
                text=t,
                task_id=f"task{tk}",
                level=int(tk % 3) + 1,
                category=["softmax", "reduction", "elementwise", "normalization"][tk % 4],
                backend="ascend_sim",
                payload={"reward": float(i % 3) - 1.0},
            )
            for i, (t, k, tk) in enumerate(zip(texts, ks, tasks, strict=True))
        ]
        vecs = None
        if not embed:
            vecs = rng.standard_normal((m, store.dim), dtype=np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        t0 = time.perf_counter()
        store.add(items, embeddings=vecs)
        t_add += time.perf_counter() - t0
    # cold paths: rebuild from SQLite, save, load from file
    t0 = time.perf_counter()
    store.sync_index(rebuild=True)
    t_rebuild = time.perf_counter() - t0
    t0 = time.perf_counter()
    store.save_index(force=True)
    t_save = time.perf_counter() - t0
    store.close()
    store = MemoryStore(path)
    t0 = time.perf_counter()
    store.sync_index()
    t_load = time.perf_counter() - t0

    if embed:
        queries: list = make_texts(rng, args.queries, vocab)
    else:
        qv = rng.standard_normal((args.queries, store.dim), dtype=np.float32)
        queries = list(qv / np.linalg.norm(qv, axis=1, keepdims=True))
    results = {}
    load = os.getloadavg()[0]
    for name, filt in [("none", {}), ("kind", {"kinds": "experience_success"}), ("task", {"task_id": "task7"})]:
        store.recall(queries[0], k=args.k, **filt)  # warm-up
        times = []
        for q in queries:
            t0 = time.perf_counter()
            got = store.recall(q, k=args.k, **filt)
            times.append(time.perf_counter() - t0)
            assert len(got) == args.k or name == "task"
        results[name] = (pct(times, 50), pct(times, 95))
    db_mb = sum(os.path.getsize(str(path) + s) for s in ("", "-wal") if os.path.exists(str(path) + s)) / 2**20
    idx_mb = os.path.getsize(str(path) + ".faiss") / 2**20
    store.close()
    if not args.keep:
        for suffix in ("", "-wal", "-shm", ".faiss"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    return {
        "n": n,
        "embedded": embed,
        "add_per_s": n / t_add,
        "rebuild_s": t_rebuild,
        "save_s": t_save,
        "load_s": t_load,
        "recall": results,
        "db_mb": db_mb,
        "idx_mb": idx_mb,
        "loadavg": (load + os.getloadavg()[0]) / 2,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated item counts")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--batch", type=int, default=10_000, help="items per add() transaction")
    ap.add_argument(
        "--embed-limit",
        type=int,
        default=200_000,
        help="above this many items insert random unit vectors instead of embedding texts",
    )
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the databases")
    args = ap.parse_args()
    workdir = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="kg_bench_memory_"))
    workdir.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(
        f"# memory bench: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"python {platform.python_version()}, k={args.k}, {args.queries} queries, HashingEmbedder(512), "
        f"fp16 faiss shards + exact rerank"
    )
    header = (
        "| items | vectors | add items/s | rebuild s | load s | recall p50/p95 ms: no filter | "
        "kind filter (20%) | task filter (0.1%) | db MB | index MB | load avg |"
    )
    rows = []
    for n in sizes:
        r = bench_size(n, args, workdir)
        rec = r["recall"]
        rows.append(
            f"| {n:,} | {'embedded texts' if r['embedded'] else 'random unit vectors'} | "
            f"{r['add_per_s']:,.0f} | {r['rebuild_s']:.1f} | {r['load_s']:.1f} | "
            f"{rec['none'][0]:.2f} / {rec['none'][1]:.2f} | {rec['kind'][0]:.2f} / {rec['kind'][1]:.2f} | "
            f"{rec['task'][0]:.2f} / {rec['task'][1]:.2f} | "
            f"{r['db_mb']:,.0f} | {r['idx_mb']:,.0f} | {r['loadavg']:.1f} |"
        )
        print(f"done {n:,} items", file=sys.stderr, flush=True)
    print(header)
    print("|" + "|".join(["---"] * (header.count("|") - 1)) + "|")
    for row in rows:
        print(row)
    if not args.dir and not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
