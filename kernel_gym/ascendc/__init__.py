"""The Ascend C CPU simulator (kgsim).

Real Ascend C kernel source compiles with g++ against the headers in ``include/`` and runs on
the CPU with the NPU's results, the NPU's faults reported as distinct exceptions, and a
latency estimate from a pipe-level timing model of an Ascend 910B SoC::

    import kernel_gym.ascendc as asc
    mod = asc.load(source, soc="Ascend910B2", align_mode="npu")
    mod.add_do(8, None, x, y, z, n)          # host function; tensors -> GM buffers
    mod.last_run.latency_s                   # simulated seconds of the launch
    with asc.record_launches() as rec:
        model(*inputs)
    rec.total_latency_s

See README.md in this directory for the supported API, the faults and the timing model.
"""

from kernel_gym.ascendc.errors import *  # noqa: F401,F403  (the fault classes)
from kernel_gym.ascendc.errors import (
    FAULT_CLASSES,
    AscendCCompileError,
    AscendCFault,
    UnsupportedDtypeError,
    fault_from_record,
)
from kernel_gym.ascendc.loader import (
    INCLUDE_DIR,
    AscendCModule,
    compile_module,
    default_options,
    load,
    rewrite_source,
    runtime_library,
    set_default_options,
    warmup,
)
from kernel_gym.ascendc.multikernelbench import MultiKernelBenchOp, load_multikernelbench
from kernel_gym.ascendc.op_project import load_op_project  # operator projects
from kernel_gym.ascendc.sample import SampleRun, run_sample  # direct-launch samples
from kernel_gym.ascendc.soc import SOC_PROFILES, Const, SocProfile, get_profile
from kernel_gym.ascendc.timing import LaunchRecorder, LaunchReport, record_launches

__all__ = [
    "load",
    "compile_module",
    "AscendCModule",
    "set_default_options",
    "default_options",
    "rewrite_source",
    "runtime_library",
    "warmup",
    "INCLUDE_DIR",
    "record_launches",
    "LaunchRecorder",
    "LaunchReport",
    "SOC_PROFILES",
    "SocProfile",
    "Const",
    "get_profile",
    "AscendCFault",
    "AscendCCompileError",
    "UnsupportedDtypeError",
    "FAULT_CLASSES",
    "fault_from_record",
    "load_op_project",
    "run_sample",
    "SampleRun",
    "load_multikernelbench",
    "MultiKernelBenchOp",
]
