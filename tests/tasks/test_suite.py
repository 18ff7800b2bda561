"""The built-in task suite: sizes, metadata, KernelBench format, shapes."""

import pytest
import torch

from kernel_gym.tasks import TaskFormatError, get_task, load_suite, load_task_module

LEVEL1 = load_suite("level1")
LEVEL2 = load_suite("level2")
MAX_ELEMENTS = 2_000_000
LEVEL1_CATEGORIES = {"elementwise", "activation", "reduction", "normalization", "softmax", "loss",
                     "matmul", "pooling", "scan"}
LEVEL2_CATEGORIES = {"matmul_epilogue", "norm_activation", "residual_norm", "attention_softmax",
                     "elementwise_reduction", "elementwise_chain"}


def test_suite_sizes_and_order():
    assert len(LEVEL1) >= 60
    assert len(LEVEL2) >= 30
    assert load_suite("all") == LEVEL1 + LEVEL2
    ids = [t.id for t in load_suite("all")]
    assert len(ids) == len(set(ids)), "task ids must be unique"


def test_unknown_suite_names_the_choices():
    with pytest.raises(ValueError, match="level1, level2, all"):
        load_suite("level9")


def test_metadata():
    for task in LEVEL1 + LEVEL2:
        assert task.level in (1, 2)
        assert task.category in (LEVEL1_CATEGORIES if task.level == 1 else LEVEL2_CATEGORIES), task.id
        assert task.dtype in ("float32", "float16"), task.id
        assert task.description, task.id
        assert task.id.startswith(f"level{task.level}/")
    assert {t.category for t in LEVEL1} == LEVEL1_CATEGORIES
    assert {t.category for t in LEVEL2} == LEVEL2_CATEGORIES
    assert sum(t.dtype == "float16" for t in LEVEL1 + LEVEL2) >= 6


@pytest.mark.parametrize("task", LEVEL1 + LEVEL2, ids=lambda t: t.id)
def test_reference_runs_with_declared_dtype_and_bounded_shapes(task):
    mod = load_task_module(task.source, task.name)
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs())
    inputs = mod.get_inputs()
    first_float = next(x for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point())
    assert str(first_float.dtype) == f"torch.{task.dtype}"
    for x in inputs:
        if isinstance(x, torch.Tensor):
            assert x.numel() <= MAX_ELEMENTS, f"{task.id}: input of {x.numel()} elements"
    for p in model.state_dict().values():
        assert p.numel() <= MAX_ELEMENTS
    with torch.no_grad():
        out = model(*inputs)
    assert isinstance(out, torch.Tensor)
    assert out.numel() <= MAX_ELEMENTS
    assert torch.isfinite(out.float()).all(), f"{task.id}: non-finite reference output"


def test_torch_ops_are_traced():
    assert get_task("level1/021_relu").torch_ops == ("aten.relu",)
    ops = get_task("level2/001_matmul_bias_relu").torch_ops
    assert "aten.addmm" in ops and "aten.relu" in ops


def test_get_task_by_short_name_and_errors():
    assert get_task("relu").id == "level1/021_relu"
    with pytest.raises(KeyError, match="no task"):
        get_task("does_not_exist")


def test_task_format_errors_are_clear():
    with pytest.raises(TaskFormatError, match="missing get_inputs"):
        load_task_module("import torch\nclass Model: pass\ndef get_init_inputs(): return []\n")
    with pytest.raises(TaskFormatError, match="syntax error at line 1"):
        load_task_module("def (:\n")


def test_spec_roundtrip():
    task = get_task("relu")
    again = type(task).from_dict(task.to_dict())
    assert again == task and again.source_hash == task.source_hash
