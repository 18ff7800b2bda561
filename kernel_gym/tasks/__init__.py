"""Tasks: PyTorch reference operators in KernelBench's file format."""

from kernel_gym.tasks.kernelbench import KernelBenchLoad, LoadFailure, load_kernelbench_dir, shrink_task_source
from kernel_gym.tasks.spec import TaskFormatError, TaskSpec, load_task_module
from kernel_gym.tasks.suite import get_task, load_suite, suite_names

__all__ = [
    "KernelBenchLoad",
    "LoadFailure",
    "TaskFormatError",
    "TaskSpec",
    "get_task",
    "load_kernelbench_dir",
    "load_suite",
    "load_task_module",
    "shrink_task_source",
    "suite_names",
]
