"""answer_format=six_string: the env verifies MultiKernelBench answers, prompts ask for them, and
combinations that cannot work are refused with one clear error."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import kernel_gym  # noqa: F401  (registers the ids)
from kernel_gym.llm.base import GenerationRequest
from kernel_gym.llm.prompting import build_messages
from kernel_gym.tasks import get_task
from tests.ascendc.compat.six_string_answers import LEAKY_RELU_TEXT

FAST = {"correctness_trials": 2, "timing_trials": 3}
LEAKY = "level1/022_leaky_relu"


def test_env_verifies_six_string_answers(tmp_path):
    env = gym.make("KernelBench-Ascend-v0", memory=str(tmp_path / "m.db"), generator="code", tasks=[LEAKY],
                   budget=2, verify_settings=FAST, answer_format="six_string")
    env.reset(seed=0)
    _, r, _, _, info = env.step({"select": np.zeros(16, np.int8), "parent": 0, "code": LEAKY_RELU_TEXT})
    assert r == 1.0, info
    # the same text in the python format is not a module defining ModelNew
    env2 = gym.make("KernelBench-Ascend-v0", memory=str(tmp_path / "m2.db"), generator="code", tasks=[LEAKY],
                    budget=2, verify_settings=FAST)
    env2.reset(seed=0)
    _, r2, *_ = env2.step({"select": np.zeros(16, np.int8), "parent": 0, "code": LEAKY_RELU_TEXT})
    assert r2 == -1.0
    env.close()
    env2.close()


@pytest.mark.parametrize("kwargs, message", [
    ({"backend": "cpu", "answer_format": "six_string"}, "accepts answer_format python"),
    ({"generator": "synthetic", "answer_format": "six_string"}, "writes answer_format python"),
    ({"answer_format": "yaml"}, "python or six_string"),
])
def test_impossible_combinations_are_one_clear_error(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("KernelBench-Ascend-v0", memory=str(tmp_path / "m.db"), tasks=[LEAKY], **kwargs)


def test_prompt_describes_the_six_string_format():
    task = get_task(LEAKY)
    six = build_messages(GenerationRequest(task=task, backend="ascend_sim", answer_format="six_string"))
    plain = build_messages(GenerationRequest(task=task, backend="ascend_sim"))
    text6, text = six[-1]["content"], plain[-1]["content"]
    for key in ("project_json_src", "python_bind_src", "EXEC_NPU_CMD", "custom_ops_lib"):
        assert key in text6 and key not in text
    assert "kernel_gym.ascendc.load" in text and "kernel_gym.ascendc.load" not in text6
