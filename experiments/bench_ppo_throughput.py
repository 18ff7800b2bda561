"""PPO training throughput on the numeric view when verification is served from the cache.

    python -m experiments.bench_ppo_throughput [--steps 600] [--tasks 4]

Question: is PPO bounded by verification or by the env? A FlatKernelEnv over KernelBench-Ascend-v0
with a FixedGenerator cycling through known answers (generation ~0); a warm-up pass fills the
verifier's result cache, so every training step's verification is a cache hit. Then
``PPO.learn`` runs for ``--steps`` env steps (MlpPolicy, n_steps=64, 4 epochs) and the table
prints env steps per second of the whole loop (env + policy rollouts + gradient updates) and of the
env alone (rollout with random actions). Target (issue 17): >= 50 env steps/s for PPO.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from kernel_gym.envs import FlatKernelEnv, KernelSynthesisEnv
from kernel_gym.llm.fixed import FixedGenerator
from solutions import available_answers, reference_answer


def make_env(memory: Path, tasks: list[str]) -> FlatKernelEnv:
    sources = [reference_answer(t, "ascend_sim") or "" for t in tasks]
    naive = [reference_answer(t, "ascend_sim_naive") or "" for t in tasks]
    env = KernelSynthesisEnv(
        tasks=tasks,
        memory=str(memory),
        budget=10,
        generator=FixedGenerator(sources + naive),
        verify_settings={"timing_trials": 1, "correctness_trials": 1},
    )
    return FlatKernelEnv(env)


def env_rate(env: FlatKernelEnv, steps: int) -> float:
    env.reset(seed=0)
    env.action_space.seed(0)
    t0 = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=640, help="PPO env steps to time")
    ap.add_argument("--tasks", type=int, default=4, help="tasks with reference answers to cycle through")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    import torch
    from stable_baselines3 import PPO

    torch.set_num_threads(1)  # a 64-unit MLP: intra-op threads cost more than they save on few cores

    tasks = [t for t in available_answers("ascend_sim") if t.startswith("level1/")][: args.tasks]
    with tempfile.TemporaryDirectory() as tmp:
        env = make_env(Path(tmp) / "mem.db", tasks)
        # warm-up: every answer verified once, so training steps hit the result cache
        warm = env_rate(env, 4 * len(tasks))
        env_rates = [env_rate(env, args.steps // 2) for _ in range(args.repeats)]
        ppo_rates = []
        for r in range(args.repeats):
            model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=4, seed=r, device="cpu", verbose=0)
            t0 = time.perf_counter()
            model.learn(total_timesteps=args.steps)
            ppo_rates.append(model.num_timesteps / (time.perf_counter() - t0))
        env.close()
    print(
        f"# {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}, "
        f"{len(tasks)} tasks, warm-up {warm:.1f} steps/s"
    )
    print(f"command: python -m experiments.bench_ppo_throughput --steps {args.steps} --tasks {args.tasks}")
    print(f"| loop | env steps/s (median of {args.repeats}) | min | max |")
    print("|---|---:|---:|---:|")
    for name, rates in (
        ("env alone, random actions", env_rates),
        ("PPO.learn (MlpPolicy, n_steps=64, 4 epochs)", ppo_rates),
    ):
        print(f"| {name} | {statistics.median(rates):.1f} | {min(rates):.1f} | {max(rates):.1f} |")


if __name__ == "__main__":
    main()
