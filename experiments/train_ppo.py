"""Train a PPO retrieval policy (stable-baselines3) on vectorised KernelSynthesisEnv copies.

    python -m experiments.train_ppo total_timesteps=2000 n_envs=4 vec_env=subproc
    python -m experiments.run experiment=none agent=ppo agent.kwargs.checkpoint=<run dir>/ppo_final.zip

The policy sees the flat numeric view (FlatKernelEnv: task embedding, stage, budget, per-candidate
and per-parent features) and outputs which candidates to put in the context and which parent to
refine; the generator and verifier are the env's. All copies share one memory store (SQLite), so
the memory grows as in a normal run. Checkpoints and TensorBoard logs go to the run directory.
"""

from __future__ import annotations

import json
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf


def make_env_fn(cfg: DictConfig, memory_path: str | Path, index: int):
    def _make():
        from stable_baselines3.common.monitor import Monitor

        from experiments.run import env_kwargs
        from kernel_gym.envs import FlatKernelEnv, KernelSynthesisEnv

        kw = env_kwargs(cfg, cfg.seed + index)
        kw["task_stream"] = "mixed"  # each copy sees the tasks in its own order
        return Monitor(FlatKernelEnv(KernelSynthesisEnv(memory=str(memory_path), **kw)))

    return _make


@hydra.main(config_path="../conf", config_name="train_ppo", version_base="1.3")
def main(cfg: DictConfig) -> None:
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import CheckpointCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv

    from experiments.run import config_dict, memory_location

    out = Path(HydraConfig.get().runtime.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, out / "config.yaml", resolve=True)
    memory_path = memory_location(cfg, out)
    fns = [make_env_fn(cfg, memory_path, i) for i in range(cfg.n_envs)]
    venv: VecEnv
    if cfg.vec_env == "subproc":
        venv = SubprocVecEnv(fns, start_method="spawn")
    elif cfg.vec_env == "dummy":
        venv = DummyVecEnv(fns)
    else:
        raise ValueError(f"vec_env must be 'dummy' or 'subproc', got {cfg.vec_env!r}")
    venv.seed(cfg.seed)

    model = PPO(
        cfg.policy,
        venv,
        seed=cfg.seed,
        verbose=1,
        tensorboard_log=str(out / "tb"),
        device="cpu",
        **config_dict(cfg.ppo),
    )
    checkpoints = CheckpointCallback(
        save_freq=max(1, cfg.checkpoint_every // cfg.n_envs), save_path=str(out / "checkpoints"), name_prefix="ppo"
    )
    model.learn(total_timesteps=cfg.total_timesteps, callback=checkpoints, progress_bar=False)
    model.save(out / "ppo_final")
    venv.close()
    (out / "train_summary.json").write_text(
        json.dumps(
            {
                "total_timesteps": int(model.num_timesteps),
                "checkpoint": str(out / "ppo_final.zip"),
                "n_envs": cfg.n_envs,
            },
            indent=1,
        )
    )
    print(
        f"saved {out / 'ppo_final.zip'}\nevaluate with: python -m experiments.run experiment=none agent=ppo "
        f"agent.kwargs.checkpoint={out / 'ppo_final.zip'} env.budget={cfg.env.budget}"
    )


if __name__ == "__main__":
    main()
