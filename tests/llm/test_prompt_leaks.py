"""Prompts leak no task: the answer-format examples compute an operator that no task of any suite
computes (checked numerically against every task's reference), are valid answers to their own
operator (verified on each backend), and no prompt of one task names another task."""

from __future__ import annotations

import re

import pytest
import torch

from kernel_gym.backends import BACKENDS, BackendUnavailable, get_backend
from kernel_gym.llm import GenerationRequest
from kernel_gym.llm.extract import find_code_blocks
from kernel_gym.llm.prompting import answer_format, build_messages
from kernel_gym.tasks import TaskSpec, load_suite
from kernel_gym.verify import verify

#: What every format example computes (its prompt says so).
EXAMPLE_SOURCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 2 * x + 1


def get_inputs():
    return [torch.randn(8 * 2048 * 4)]


def get_init_inputs():
    return []
'''


def example(backend: str, form: str = "python") -> str:
    (block,) = [b for b in find_code_blocks(answer_format(backend, form)) if b.defines_model_new]
    return block.code


@pytest.fixture(scope="module")
def tasks() -> list[TaskSpec]:
    return load_suite("all")


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_format_example_is_a_valid_answer_to_its_own_operator(backend):
    own = TaskSpec(id="format_example/scale_shift", level=1, category="elementwise", dtype="float32",
                   source=EXAMPLE_SOURCE, description="y = 2 x + 1")
    impl = get_backend(backend)
    try:
        impl.check_available()
    except BackendUnavailable as exc:
        pytest.skip(f"{backend} cannot run here: {exc}")
    answer = impl.answer_source(example(backend), "python")
    result = verify(own, answer, backend=backend)
    assert result.feasible, (result.error_class, result.message)


def test_six_string_format_example_is_a_valid_answer_to_its_own_operator():
    own = TaskSpec(id="format_example/scale_shift", level=1, category="elementwise", dtype="float32",
                   source=EXAMPLE_SOURCE, description="y = 2 x + 1")
    answer = get_backend("ascend_sim").answer_source(example("ascend_sim", "six_string"), "six_string")
    result = verify(own, answer, backend="ascend_sim")
    assert result.feasible, (result.error_class, result.message)


def test_format_examples_match_no_task(tasks):
    """Every task whose forward takes one tensor gives something else than 2x + 1 on its inputs,
    so no format example is an answer to any task (the others differ in signature)."""
    checked = 0
    for task in tasks:
        torch.manual_seed(0)
        model, inputs = task.build(0)
        if len(inputs) != 1 or not torch.is_tensor(inputs[0]):
            continue
        with torch.no_grad():
            out = model(*inputs)
        x = inputs[0]
        same = torch.is_tensor(out) and out.shape == x.shape and torch.allclose(out.float(), (2 * x + 1).float(),
                                                                                   rtol=1e-2, atol=1e-2)
        assert not same, f"the format example computes {task.id}"
        checked += 1
    assert checked > 20


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_no_prompt_names_another_task(tasks, backend):
    names = {t.name: t for t in tasks}
    words = {re.sub(r"^\d+_", "", n).replace("_fp16", "") for n in names}  # relu, leaky_relu, ...
    fmt = answer_format(backend)
    assert not [t.id for t in tasks if t.id in fmt or t.name in fmt]
    for word in words:  # the format's code calls none of the tasks' operators by name
        if len(word) > 3:
            assert not re.search(rf"\b{re.escape(word)}(_kernel|_do)\b", fmt, re.IGNORECASE), word
    for task in tasks[:: max(1, len(tasks) // 8)]:
        user = build_messages(GenerationRequest(task=task, backend=backend))[1]["content"]
        others = [t.id for t in tasks if t.id != task.id and t.id in user]
        assert not others, f"the prompt of {task.id} names {others}"
