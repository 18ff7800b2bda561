"""Sequential vs concurrent candidate generation through the real litellm path.

A loopback OpenAI-compatible server (kernel_gym.llm.loopback) answers every request after an
artificial latency; LiteLLMGenerator asks for k candidates per step one after another
(``generate``) or at once (``generate_many``, at most ``max_concurrency`` in flight). Prints a
Markdown table of wall time per step and the speedup.

    python -m experiments.bench_llm_concurrency                      # 200 ms, k = 1, 2, 4, 8
    python -m experiments.bench_llm_concurrency --latency-ms 500 --steps 3
"""

from __future__ import annotations

import argparse
import os
import time

REPLY = (
    "```python\nimport torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n```"
)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency-ms", type=float, default=200.0, help="server latency per request")
    ap.add_argument("--candidates", type=int, nargs="+", default=[1, 2, 4, 8], help="candidates per step")
    ap.add_argument("--steps", type=int, default=5, help="steps timed per configuration")
    ap.add_argument("--max-concurrency", type=int, default=8)
    args = ap.parse_args(argv)

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["KG_BENCH_LOOPBACK_KEY"] = "loopback"  # not a real key: the server ignores it
    from kernel_gym.llm import GenerationRequest
    from kernel_gym.llm.litellm_generator import LiteLLMGenerator
    from kernel_gym.llm.loopback import LoopbackServer
    from kernel_gym.tasks import get_task

    task = get_task("level1/021_relu")
    rows = ["| candidates / step | sequential s / step | concurrent s / step | speedup |", "|---|---|---|---|"]
    with LoopbackServer(reply=REPLY, latency_s=args.latency_ms / 1000) as srv:
        gen = LiteLLMGenerator(
            "openai/gpt-4o-mini",
            api_base=srv.api_base,
            api_key_env="KG_BENCH_LOOPBACK_KEY",
            use_cache=False,
            max_concurrency=args.max_concurrency,
        )
        seed = 0

        def requests(k: int) -> list[GenerationRequest]:
            nonlocal seed
            seed += k
            return [GenerationRequest(task=task, backend="ascend_sim", seed=seed + i) for i in range(k)]

        gen.generate_many(requests(2))  # warm the connection pool
        for k in args.candidates:
            t0 = time.perf_counter()
            for _ in range(args.steps):
                for r in requests(k):
                    gen.generate(r)
            seq = (time.perf_counter() - t0) / args.steps
            t0 = time.perf_counter()
            for _ in range(args.steps):
                outs = gen.generate_many(requests(k))
                assert all(not isinstance(o, Exception) for o in outs), outs
            conc = (time.perf_counter() - t0) / args.steps
            rows.append(f"| {k} | {seq:.3f} | {conc:.3f} | {seq / conc:.2f}x |")
    print(
        f"loopback server latency {args.latency_ms:.0f} ms, {args.steps} steps each, "
        f"max_concurrency {args.max_concurrency}, {len(srv.requests)} requests"
    )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
