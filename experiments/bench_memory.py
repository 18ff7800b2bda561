"""Benchmark of the memory store: add throughput and recall latency at 10k / 100k / 1M items.

    python experiments/bench_memory.py                      # sizes 10000,100000,1000000
    python experiments/bench_memory.py --sizes 10000,100000 --queries 200
    python experiments/bench_memory.py --concurrency [--writers 8] [--duration 60] [--dsn postgresql://...]

Items are synthetic random texts (words drawn from a Zipf-like vocabulary of pseudo-words and
Ascend C identifiers) embedded with the default HashingEmbedder(512) in batches. Above
``--embed-limit`` items (default 200k) precomputed random unit vectors are inserted instead of
embedding the texts (the table says which). Recall: 200 queries, k=20, every query timed,
without a filter, with a kind filter (~20 % of items) and with a task filter (~0.1 %). Text
queries include embedding the query. "load avg" is the 1-minute load average of the machine
during the recall timing (other processes compete for the cores; the search threads are
sensitive to it). "add items/s" includes embedding the texts.

``--concurrency``: ``--writers`` processes (8) write one store for ``--duration`` seconds (60), on
SQLite and on PostgreSQL (``--dsn``; without it a throwaway server is started with the test suite's
helper, tests/memory/pg_server.py). Each writer loops over one agent step's memory traffic: add an
item, a Monte-Carlo Q step and a use-count increment of one hot item every writer shares, and a
recall every 10th step. Afterwards the store is audited: every acknowledged item must be stored once
(lost = acknowledged and missing, duplicated = stored twice), the hot item's use count must equal
the acknowledged increments, and its Q-value must equal that many sequential steps (with reward 1
from q = 0, q = 1 - (1 - alpha)^K: K is read back and compared; lost Q updates = acknowledged - K).
"retries" are SQLite's ``BEGIN IMMEDIATE`` attempts that found another writer's lock past the busy
timeout, and PostgreSQL's transactions rerun after a lost connection (writers wait on a row lock
instead: no conflicts to retry). Then recall latency at ``--recall-items`` (100k) items on each.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

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


HOT_ALPHA = 1e-4  # small, so that (1 - alpha)^K stays well inside float64 for K in the tens of thousands


def _writer(location: str, schema: str | None, worker: int, hot: int, duration: float, out: Any) -> None:
    """One writer process: a step's memory traffic in a loop until ``duration`` s pass (see --concurrency)."""
    store = MemoryStore(location, save_index_on_close=False, schema=schema)
    acked: list[int] = []
    q_steps = increments = 0
    lat: list[float] = []
    deadline = time.monotonic() + duration
    i = 0
    while time.monotonic() < deadline:
        t0 = time.perf_counter()
        new_id = store.add(
            MemoryItem(kind="trace", text=f"writer {worker} step {i} softmax tile", payload={"w": worker, "i": i})
        )
        acked.append(int(cast(int, new_id)))
        store.mc_update([hot], reward=1.0, alpha=HOT_ALPHA, stage="drafting")
        q_steps += 1
        store.increment([hot], "use_count", 1)
        increments += 1
        if i % 10 == 0:
            store.recall(f"writer {worker} softmax tile", k=5)
        lat.append(time.perf_counter() - t0)
        i += 1
    backend = store.backend
    retries = int(getattr(backend, "busy_retries", 0)) + int(getattr(backend, "retries", 0))
    store.close()
    out.put({"worker": worker, "acked": acked, "q_steps": q_steps, "increments": increments, "lat": lat,
             "retries": retries})  # fmt: skip


def bench_concurrency(name: str, location: str, schema: str | None, args: argparse.Namespace) -> dict[str, Any]:
    """``args.writers`` writer processes on one store for ``args.duration`` s, then the audit."""
    import multiprocessing as mp

    with MemoryStore(location, save_index_on_close=False, schema=schema) as store:
        hot = cast(int, store.add(MemoryItem(kind="best_practice", text="hot item every writer steps")))
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(location, schema, w, hot, args.duration, out)) for w in range(args.writers)
    ]
    for p in procs:
        p.start()
    reports = [out.get(timeout=args.duration + 600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    with MemoryStore(location, save_index_on_close=False, schema=schema) as store:
        stored: dict[int, list[int]] = {}
        for it in store.iterate("trace"):
            stored.setdefault(int(it.payload["w"]), []).append(int(cast(int, it.id)))
        hot_item = store.get(hot)
    acked = sum(len(r["acked"]) for r in reports)
    lost = sum(len(set(r["acked"]) - set(stored.get(r["worker"], []))) for r in reports)
    duplicated = sum(len(v) - len(set(v)) for v in stored.values()) + sum(
        len(set(stored.get(r["worker"], [])) - set(r["acked"])) for r in reports
    )
    q_acked = sum(r["q_steps"] for r in reports)
    q_applied = round(math.log1p(-hot_item.q1) / math.log1p(-HOT_ALPHA)) if hot_item.q1 < 1 else -1
    lat = [x for r in reports for x in r["lat"]]
    return {
        "store": name,
        "items": acked,
        "per_s": acked / args.duration,
        "lost": lost,
        "duplicated": duplicated,
        "retries": sum(r["retries"] for r in reports),
        "q_lost": q_acked - q_applied,
        "count_lost": sum(r["increments"] for r in reports) - hot_item.use_count,
        "p50": pct(lat, 50),
        "p95": pct(lat, 95),
    }


def recall_at(location: str, schema: str | None, n: int, args: argparse.Namespace) -> tuple[float, float]:
    """Recall latency (median, p95 ms; k = args.k, no filter) on a store filled to ``n`` items."""
    rng = np.random.default_rng(n)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = IDENTS + ["".join(rng.choice(letters, size=rng.integers(3, 9))) for _ in range(20_000)]
    with MemoryStore(location, save_index_on_close=False, schema=schema) as store:
        store.sync_index()
        have = store.count()
        for start in range(have, n, args.batch):
            m = min(args.batch, n - start)
            store.add([MemoryItem(kind="trace", text=t, task_id=f"task{start + i}") for i, t in
                       enumerate(make_texts(rng, m, vocab))])  # fmt: skip
        queries = make_texts(rng, args.queries, vocab)
        store.recall(queries[0], k=args.k)  # the index is caught up before the clock starts
        times = []
        for q in queries:
            t0 = time.perf_counter()
            store.recall(q, k=args.k)
            times.append(time.perf_counter() - t0)
    return pct(times, 50), pct(times, 95)


def concurrency(args: argparse.Namespace, workdir: Path) -> None:
    """The --concurrency benchmark on SQLite and PostgreSQL; prints its tables."""
    server = None
    dsn = args.dsn
    if dsn is None:
        from tests.memory import pg_server  # the test suite's throwaway server (a checkout, not a wheel)

        bindir = pg_server.find_bindir()
        if bindir is None:
            raise SystemExit("no PostgreSQL server binaries found: pass --dsn postgresql://... or install postgresql")
        server = pg_server.start_server(bindir, durable_commits=True)
        dsn = server.new_database()
    try:
        stores = [("SQLite (WAL)", str(workdir / "concurrency.db"), None), ("PostgreSQL", dsn, "kg_bench_writers")]
        rows = [bench_concurrency(name, loc, schema, args) for name, loc, schema in stores]
        recall_rows = []
        if args.recall_items:  # stores of their own, filled to exactly that many items
            for name, loc, schema in [("SQLite (WAL)", str(workdir / "recall.db"), None),
                                      ("PostgreSQL", dsn, "kg_bench_recall")]:  # fmt: skip
                recall_rows.append((name, *recall_at(loc, schema, args.recall_items, args)))
    finally:
        if server is not None:
            server.stop()
    print(
        f"# memory concurrency: {args.writers} writer processes x {args.duration:g} s, {os.cpu_count()} cores, "
        f"python {platform.python_version()}, load avg {os.getloadavg()[0]:.1f} at the end "
        f"({time.strftime('%Y-%m-%d')})"
    )
    print(
        "| store | items written | items/s | items lost | duplicated | retries | Q-update lost updates | "
        "use-count lost | step p50 / p95 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['store']} | {r['items']:,} | {r['per_s']:.1f} | {r['lost']} | {r['duplicated']} | {r['retries']} | "
            f"{r['q_lost']} | {r['count_lost']} | {r['p50']:.1f} / {r['p95']:.1f} |"
        )
    if recall_rows:
        print(f"\n| store | items | recall p50 ms | recall p95 ms |  (k={args.k}, {args.queries} queries, no filter)")
        print("|---|---:|---:|---:|")
        for name, p50, p95 in recall_rows:
            print(f"| {name} | {args.recall_items:,} | {p50:.2f} | {p95:.2f} |")


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
    ap.add_argument("--concurrency", action="store_true", help="concurrent writers on SQLite and PostgreSQL")
    ap.add_argument("--writers", type=int, default=8, help="--concurrency: writer processes")
    ap.add_argument("--duration", type=float, default=60.0, help="--concurrency: seconds of writing")
    ap.add_argument("--dsn", default=None, help="--concurrency: PostgreSQL database (default: a throwaway server)")
    ap.add_argument("--recall-items", type=int, default=100_000, help="--concurrency: recall timed at this size")
    args = ap.parse_args()
    workdir = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="kg_bench_memory_"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.concurrency:
        try:
            concurrency(args, workdir)
        finally:
            if not args.dir and not args.keep:
                shutil.rmtree(workdir, ignore_errors=True)
        return
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
