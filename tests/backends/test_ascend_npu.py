"""The ascend_npu backend: registration, env id and the availability message (no NPU here)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import kernel_gym  # noqa: F401 - registers the env ids
from kernel_gym.backends import BACKENDS, BackendUnavailable, get_backend
from kernel_gym.backends.ascend_npu import missing_requirements


def test_registered_with_env_id_and_formats():
    assert BACKENDS["ascend_npu"] == "kernel_gym.backends.ascend_npu:AscendNpuBackend"
    b = get_backend("ascend_npu")
    assert b.language == "ascendc" and b.env_id == "KernelBench-AscendNPU-v0"
    assert b.env_id in gym.registry
    assert set(b.answer_formats) == {"python", "six_string"}
    assert b.answer_source("x = 1\n") == "x = 1\n"


@pytest.mark.skipif(not missing_requirements(), reason="this machine has CANN, torch_npu and an NPU")
def test_unavailable_message_names_what_is_missing():
    with pytest.raises(BackendUnavailable) as info:
        get_backend("ascend_npu").check_available()
    msg = str(info.value)
    assert "ascend_npu" in msg and "ascend_sim" in msg
    assert any(word in msg for word in ("ASCEND_HOME_PATH", "torch_npu", "/dev/davinci"))
