"""Helpers run in child processes by the memory tests (importable under spawn)."""

from __future__ import annotations

import sys


def concurrent_writer(path: str, worker: int, n: int, shared_id: int) -> None:
    from kernel_gym.memory import MemoryItem, MemoryStore

    with MemoryStore(path, save_index_on_close=False) as store:
        for i in range(n):
            [new_id] = store.add([MemoryItem(kind="trace", text=f"worker {worker} step {i} softmax kernel",
                                             task_id=f"w{worker}", payload={"i": i})])
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
            ids = store.add([MemoryItem(kind="experience_success", text=f"{text} {i}", task_id="sub",
                                        payload={"n": i}) for i in range(n)])
            print(",".join(map(str, ids)))
        elif cmd == "mutate":
            delete_id, edit_id = int(sys.argv[3]), int(sys.argv[4])
            store.delete(delete_id)
            store.update(edit_id, text="layer norm rsqrt variance gamma beta", category="normalization")
            new = store.add(MemoryItem(kind="best_practice", text="zebra giraffe unusual words"))
            print(new)


if __name__ == "__main__":
    main()
