"""load_kernelbench_dir on a synthetic KernelBench-style checkout (files written here)."""

import textwrap

import torch

from kernel_gym.tasks import load_kernelbench_dir, load_task_module, shrink_task_source

HUGE_ELEMENTWISE = textwrap.dedent('''
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x):
            return torch.sigmoid(x) * 2.0

    batch_size = 4096
    dim = 393216  # as large as KernelBench's biggest inputs

    def get_inputs():
        return [torch.randn(batch_size, dim)]

    def get_init_inputs():
        return []
''')

POOL_WITH_SETTINGS = textwrap.dedent('''
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, kernel_size, stride):
            super().__init__()
            self.pool = nn.MaxPool2d(kernel_size, stride)

        def forward(self, x):
            return self.pool(x)

    batch_size = 64
    channels = 128
    height = 1024
    width = 1024
    kernel_size = 3
    stride = 2

    def get_inputs():
        return [torch.randn(batch_size, channels, height, width)]

    def get_init_inputs():
        return [kernel_size, stride]
''')

MATMUL_SMALL = textwrap.dedent('''
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, a, b):
            return a @ b

    M = 64
    K = 32
    N = 48

    def get_inputs():
        return [torch.randn(M, K), torch.randn(K, N)]

    def get_init_inputs():
        return []
''')


def _checkout(tmp_path):
    level = tmp_path / "level1"
    level.mkdir()
    (level / "1_Huge_Sigmoid.py").write_text(HUGE_ELEMENTWISE)
    (level / "2_Max_Pooling_2D.py").write_text(POOL_WITH_SETTINGS)
    (level / "10_Small_Matmul.py").write_text(MATMUL_SMALL)
    (level / "3_Broken.py").write_text("def broken(:\n")
    (level / "4_No_Inputs.py").write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n")
    return tmp_path


def test_loads_shrinks_and_reports(tmp_path):
    result = load_kernelbench_dir(_checkout(tmp_path), level=1, max_elements=1_000_000)
    names = [t.name for t in result]
    assert names == ["1_Huge_Sigmoid", "2_Max_Pooling_2D", "10_Small_Matmul"]  # numeric order
    failed = {f.path.name: f.reason for f in result.failures}
    assert set(failed) == {"3_Broken.py", "4_No_Inputs.py"}
    assert "syntax error" in failed["3_Broken.py"]
    assert "missing get_inputs" in failed["4_No_Inputs.py"]
    assert "2 failure(s)" in result.report()
    assert "10_Small_Matmul" not in result.shrunk  # already small: untouched
    for task in result:
        mod = load_task_module(task.source)
        for x in mod.get_inputs():
            assert x.numel() <= 1_000_000
        torch.manual_seed(0)
        out = mod.Model(*mod.get_init_inputs())(*mod.get_inputs())
        assert torch.isfinite(out).all()
    pool = next(t for t in result if t.name == "2_Max_Pooling_2D")
    mod = load_task_module(pool.source)
    assert (mod.kernel_size, mod.stride) == (3, 2), "operator settings must not be shrunk"
    assert pool.category == "pooling" and pool.dtype == "float32" and pool.level == 1


def test_without_shrink_oversized_tasks_are_failures(tmp_path):
    result = load_kernelbench_dir(_checkout(tmp_path), level="level1", max_elements=1_000_000, shrink=False)
    reasons = {f.path.name: f.reason for f in result.failures}
    assert "max_elements" in reasons["1_Huge_Sigmoid.py"]


def test_shrink_keeps_the_rest_of_the_source():
    source, changed = shrink_task_source(HUGE_ELEMENTWISE, max_elements=100_000)
    assert "# as large as KernelBench's biggest inputs" in source
    assert set(changed) <= {"batch_size", "dim"} and changed
    mod = load_task_module(source)
    assert mod.batch_size * mod.dim <= 100_000


def test_missing_folder_names_the_fix(tmp_path):
    import pytest

    with pytest.raises(FileNotFoundError, match="checkout root"):
        load_kernelbench_dir(tmp_path / "nowhere", level=2)
