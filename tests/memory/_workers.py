"""Helpers run in child processes by the memory tests (importable under spawn)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_worker(*args: str) -> str:
    """Run ``python -m tests.memory._workers ARGS`` in a fresh process; its stdout, stripped."""
    out = subprocess.run(
        [sys.executable, "-m", "tests.memory._workers", *args],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return out.stdout.strip()


def concurrent_writer(path: str, worker: int, n: int, shared_id: int) -> None:
    from kernel_gym.memory import MemoryItem, MemoryStore

    with MemoryStore(path, save_index_on_close=False) as store:
        for i in range(n):
            [new_id] = store.add(
                [
                    MemoryItem(
                        kind="trace",
                        text=f"worker {worker} step {i} softmax kernel",
                        task_id=f"w{worker}",
                        payload={"i": i},
                    )
                ]
            )
            store.update_q([new_id], q1=0.5, q2=float(i))
            store.increment([shared_id], "use_count", 1)
            store.mc_update([shared_id], reward=1.0, alpha=0.0)  # a no-op Q step, still a write
            if i % 50 == 0:
                store.recall("softmax kernel", k=5, task_id=f"w{worker}")


def main() -> None:
    """``python -m tests.memory._workers add PATH N TEXT`` adds N items; ``mutate PATH`` adds, deletes, edits."""
    from kernel_gym.memory import MemoryItem, MemoryStore

    cmd, path = sys.argv[1], sys.argv[2]
    with MemoryStore(path, save_index_on_close=False) as store:
        if cmd == "add":
            n, text = int(sys.argv[3]), sys.argv[4]
            ids = store.add(
                [
                    MemoryItem(kind="experience_success", text=f"{text} {i}", task_id="sub", payload={"n": i})
                    for i in range(n)
                ]
            )
            print(",".join(map(str, ids)))
        elif cmd == "mutate":
            delete_id, edit_id = int(sys.argv[3]), int(sys.argv[4])
            store.delete(delete_id)
            store.update(edit_id, text="layer norm rsqrt variance gamma beta", category="normalization")
            new = store.add(MemoryItem(kind="best_practice", text="zebra giraffe unusual words"))
            print(new)


def backend_value_steps(backend_name: str, location: str, item_id: int, n: int, reward: float, alpha: float) -> None:
    """``n`` single-item Q steps and counter increments through a storage backend (one transaction each)."""
    from tests.memory.backends import open_backend

    backend = open_backend(backend_name, location)
    try:
        for _ in range(n):
            backend.step_values("q1", [item_id], reward, alpha)
            backend.add_to_counter("use_count", [item_id], 1)
    finally:
        backend.close()


def store_value_steps(path: str, item_id: int, n: int, reward: float, alpha: float) -> None:
    """``n`` Monte-Carlo updates and use_count increments of one item through MemoryStore."""
    from kernel_gym.memory import MemoryStore

    with MemoryStore(path, save_index_on_close=False) as store:
        for _ in range(n):
            store.mc_update([item_id], reward=reward, alpha=alpha, stage="refining")
            store.increment([item_id], "use_count", 1)


if __name__ == "__main__":
    main()
