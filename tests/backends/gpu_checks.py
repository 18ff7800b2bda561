"""What the cuda and triton tests check on a GPU, once for both backends: a reference answer
verifies and is device-timed, an exploit answer is rejected, and an episode runs under the env id."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_gym.tasks import get_task
from solutions import reference_answer

GPU_SETTINGS = {"correctness_trials": 3, "warmup_runs": 3, "timing_trials": 20, "memory_limit_mb": 16384}


def check_reference_answer(backend: str, task_id: str) -> None:
    from kernel_gym.verify import verify

    answer = reference_answer(task_id, backend)
    assert answer is not None
    result = verify(get_task(task_id), answer, backend=backend, use_cache=False, **GPU_SETTINGS)
    assert result.correct, (result.error_class, result.message)
    timing = result.details["answer_timing"]
    for key in ("device_median_s", "device_iqr_s", "device_trials", "gpu", "sync_check"):
        assert key in timing, key
    assert result.latency_s == pytest.approx(timing["device_median_s"])
    assert "device_median_s" in result.details["reference_timing"]
    print(
        task_id,
        f"{result.latency_s * 1e6:.1f} us vs eager {result.reference_latency_s * 1e6:.1f} us",
        f"speedup {result.speedup:.2f}",
        timing["gpu"],
        timing.get("sm_clock_mhz"),
    )


def check_exploit_rejected(backend: str, name: str, exploit: tuple[str, str, set[str], dict[str, object]]) -> None:
    from kernel_gym.verify import verify

    task_id, answer, accepted, extra = exploit
    result = verify(get_task(task_id), answer, backend=backend, use_cache=False, **{**GPU_SETTINGS, **extra})
    assert not result.correct, name
    assert {result.error_class, result.hack_rule} & accepted, (
        name,
        result.error_class,
        result.hack_rule,
        result.message,
    )
    print(name, "->", result.error_class, result.hack_rule, (result.message or "")[:160])


def check_episode(env_id: str, backend: str, tmp_path: Path) -> None:
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("faiss")
    from kernel_gym.llm.fixed import FixedGenerator

    answer = reference_answer("level1/021_relu", backend)
    env = gym.make(
        env_id,
        tasks=["level1/021_relu"],
        budget=1,
        memory=str(tmp_path / "mem.db"),
        generator=FixedGenerator([answer]),
        verify_settings=GPU_SETTINGS,
    )
    env.reset(seed=0)
    _, reward, _, _, info = env.step(env.action_space.sample())
    assert reward == 1.0 and info["best_speedup"] > 0
    env.close()
