"""Errors raised by the Ascend C simulator.

Every fault the NPU would show (or silently suffer) is a distinct exception class with a
snake_case ``error_class``; all derive from :class:`AscendCFault`. Compilation problems raise
:class:`AscendCCompileError` (a :class:`kernel_gym.native.CompileError`).
"""

from __future__ import annotations

from typing import Any

from kernel_gym.native import CompileError

__all__ = [
    "AscendCFault",
    "AscendCCompileError",
    "UnsupportedDtypeError",
    "FAULT_CLASSES",
    "fault_from_record",
    "UBOverflow",
    "LocalMemoryOverflow",
    "MisalignedCopy",
    "MisalignedCount",
    "UnalignedLocalTensor",
    "RepeatOutOfRange",
    "MaskOutOfRange",
    "GMOutOfBounds",
    "LocalOutOfBounds",
    "QueueMisuse",
    "QueueFull",
    "QueueEmpty",
    "ForeignFree",
    "TensorLeak",
    "TooManyTensors",
    "UninitializedRead",
    "GMRace",
    "PipeRace",
    "CubeMemoryOverflow",
    "UnalignedCubeTensor",
    "WrongPosition",
    "FractalLayoutError",
    "BadLaunch",
    "Watchdog",
    "SyncAllDeadlock",
    "CrossCoreDeadlock",
    "InvalidArgument",
    "InvalidTensor",
    "UnsupportedAPI",
    "RuntimeUnsupportedDtype",
    "KernelAssert",
    "KernelTrap",
    "KernelException",
    "HostException",
]


class AscendCFault(RuntimeError):
    """A fault detected while simulating a kernel launch.

    Attributes: ``error_class`` (class attribute), ``message``, ``file``/``line`` of the
    offending source line when known, ``block`` (block index, -1 if none), ``kernel``.
    """

    error_class = "ascendc_fault"
    category = "ascendc_fault"
    host_return: Any = None  # the host function's return value when it ran on past the fault

    def __init__(
        self, message: str, *, file: str = "", line: int = 0, block: int = -1, kernel: str = "", report: Any = None
    ) -> None:
        where = f" (at {file}:{line})" if file and line else ""
        blk = f" [block {block}]" if block >= 0 else ""
        super().__init__(f"{self.error_class}: {message}{where}{blk}")
        self.message = message
        self.file = file
        self.line = line
        self.block = block
        self.kernel = kernel
        self.report = report


def _fault(
    name: str, cls: str, doc: str, base: type[AscendCFault] = AscendCFault, category: str | None = None
) -> type[AscendCFault]:
    return type(name, (base,), {"error_class": cls, "category": category or cls, "__doc__": doc})


UBOverflow = _fault("UBOverflow", "ub_overflow", "The InitBuffer allocations exceed the usable Unified Buffer.")
LocalMemoryOverflow = _fault("LocalMemoryOverflow", "local_memory_overflow", "L1/L0 allocations exceed the memory.")
MisalignedCopy = _fault(
    "MisalignedCopy",
    "misaligned_copy",
    "DataCopy whose byte count is not a multiple of 32 (strict mode), or a misaligned GM address.",
)
MisalignedCount = _fault(
    "MisalignedCount",
    "misaligned_count",
    "A vector count that must cover whole 256-byte repeats does not (strict mode).",
)
UnalignedLocalTensor = _fault(
    "UnalignedLocalTensor", "unaligned_local_tensor", "A LocalTensor operand does not start on a 32-byte boundary."
)
RepeatOutOfRange = _fault("RepeatOutOfRange", "repeat_out_of_range", "repeatTime outside [0, 255].")
MaskOutOfRange = _fault("MaskOutOfRange", "mask_out_of_range", "A vector mask outside the repeat's element range.")
GMOutOfBounds = _fault("GMOutOfBounds", "gm_out_of_bounds", "A GM access outside the buffers passed to the launch.")
LocalOutOfBounds = _fault("LocalOutOfBounds", "local_out_of_bounds", "A LocalTensor access beyond its buffer.")
QueueMisuse = _fault("QueueMisuse", "queue_misuse", "TQue/TBuf used against its protocol.")
QueueFull = _fault(
    "QueueFull", "queue_full", "AllocTensor on a queue whose buffers are all in use.", QueueMisuse, "queue_misuse"
)
QueueEmpty = _fault("QueueEmpty", "queue_empty", "DeQue on an empty queue.", QueueMisuse, "queue_misuse")
ForeignFree = _fault(
    "ForeignFree",
    "foreign_free",
    "FreeTensor of a tensor not owned by the queue (or freed twice).",
    QueueMisuse,
    "queue_misuse",
)
TensorLeak = _fault(
    "TensorLeak", "tensor_leak", "A queue tensor was not freed before the kernel ended.", QueueMisuse, "queue_misuse"
)
TooManyTensors = _fault(
    "TooManyTensors",
    "too_many_tensors",
    "More than 8 tensors allocated at once at one position, or more than 64 buffers.",
    QueueMisuse,
    "queue_misuse",
)
# The cube unit (kgsim/cube.h): its memories (L1, L0A, L0B, L0C, bias table, fixpipe buffer) and operands.
CubeMemoryOverflow = _fault(
    "CubeMemoryOverflow",
    "cube_memory_overflow",
    "Allocations in L1/L0A/L0B/L0C/BT/FB exceed the memory, or a cube instruction's operand extends beyond it.",
    LocalMemoryOverflow,
    "local_memory_overflow",
)
UnalignedCubeTensor = _fault(
    "UnalignedCubeTensor",
    "unaligned_cube_tensor",
    "A cube-memory tensor off its memory's alignment (L1 32 B, L0A/L0B 512 B, L0C 64 B, BT 64 B, FB 128 B).",
    UnalignedLocalTensor,
    "unaligned_local_tensor",
)
WrongPosition = _fault(
    "WrongPosition",
    "wrong_position",
    "An operand at a TPosition the instruction cannot read or write (e.g. Mmad into UB).",
)
FractalLayoutError = _fault(
    "FractalLayoutError",
    "fractal_layout",
    "Parameters that describe an impossible fractal layout (overlapping NZ fractals, a "
    "transpose the data type does not support).",
)
UninitializedRead = _fault("UninitializedRead", "uninitialized_read", "A read of UB bytes never written.")
GMRace = _fault("GMRace", "gm_race", "Two blocks access the same GM bytes (one writing) without atomics.")
PipeRace = _fault("PipeRace", "pipe_race", "Two pipes touch the same UB bytes without synchronisation.")
BadLaunch = _fault(
    "BadLaunch", "bad_launch", "Invalid launch (block count outside [1, 65535] or API outside a launch)."
)
Watchdog = _fault("Watchdog", "watchdog", "Endless loop or deadlock (API-call, cycle or time budget exhausted).")
SyncAllDeadlock = _fault(
    "SyncAllDeadlock",
    "syncall_deadlock",
    "SyncAll that can never complete (a block ends without reaching it, or the launch has more blocks than cores).",
)
CrossCoreDeadlock = _fault(
    "CrossCoreDeadlock",
    "crosscore_deadlock",
    "A block waits forever: a CrossCoreWaitFlag or IBWait whose flag no core will set (the NPU would hang).",
)
InvalidArgument = _fault("InvalidArgument", "invalid_argument", "An API argument outside its documented range.")
InvalidTensor = _fault("InvalidTensor", "invalid_tensor", "A LocalTensor that is not live in this block.")
UnsupportedAPI = _fault("UnsupportedAPI", "unsupported_api", "An API the simulator cannot model in this situation.")
RuntimeUnsupportedDtype = _fault(
    "RuntimeUnsupportedDtype",
    "unsupported_dtype",
    "A data type/mode combination not supported on the SoC, detected at run time.",
)
KernelAssert = _fault("KernelAssert", "kernel_assert", "ASSERT(...) failed in the kernel.")
# AscendC::Trap() aborts the AI Core; CANN's CPU debug build treats it as a failed assert, hence the base.
KernelTrap = _fault("KernelTrap", "kernel_trap", "The kernel called AscendC::Trap().", KernelAssert, "kernel_assert")
KernelException = _fault("KernelException", "kernel_exception", "The kernel threw a C++ exception.")
HostException = _fault("HostException", "host_exception", "The host function threw a C++ exception.")

FAULT_CLASSES: dict[str, type[AscendCFault]] = {
    c.error_class: c
    for c in (
        UBOverflow,
        LocalMemoryOverflow,
        MisalignedCopy,
        MisalignedCount,
        UnalignedLocalTensor,
        RepeatOutOfRange,
        MaskOutOfRange,
        GMOutOfBounds,
        LocalOutOfBounds,
        QueueMisuse,
        QueueFull,
        QueueEmpty,
        ForeignFree,
        TensorLeak,
        TooManyTensors,
        CubeMemoryOverflow,
        UnalignedCubeTensor,
        WrongPosition,
        FractalLayoutError,
        UninitializedRead,
        GMRace,
        PipeRace,
        BadLaunch,
        Watchdog,
        SyncAllDeadlock,
        CrossCoreDeadlock,
        InvalidArgument,
        InvalidTensor,
        UnsupportedAPI,
        RuntimeUnsupportedDtype,
        KernelAssert,
        KernelTrap,
        KernelException,
        HostException,
    )
}


def fault_from_record(rec: dict, kernel: str = "", report: Any = None) -> AscendCFault:
    """Build the exception for one fault record of the runtime's JSON report."""
    cls = FAULT_CLASSES.get(rec.get("error_class", ""))
    if cls is None:
        cls = _fault(
            "AscendCFault_" + rec.get("error_class", "unknown"),
            rec.get("error_class", "unknown"),
            "A fault class without a dedicated exception.",
        )
    return cls(
        rec.get("message", ""),
        file=rec.get("file", ""),
        line=int(rec.get("line", 0) or 0),
        block=int(rec.get("block", -1)),
        kernel=kernel,
        report=report,
    )


class AscendCCompileError(CompileError):
    """g++ rejected the Ascend C source. ``log`` holds the compiler output."""

    error_class = "compile_error"

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message, log)


class MissingApiError(AscendCCompileError):
    """The source uses a name the simulator's headers do not provide (an API, a header, a member):
    ``missing_api: <name> (file:line): <the compiler's line>``. ``api`` is the name, ``where`` the
    source position. Its error class stays ``compile_error`` (what the verifier and agents key on)."""

    def __init__(self, message: str, log: str = "", api: str = "", where: str = "") -> None:
        super().__init__(message, log)
        self.api = api
        self.where = where


class UnsupportedDtypeError(AscendCCompileError):
    """An API was instantiated with a data type the SoC does not support (a compile error, as on CANN)."""

    error_class = "unsupported_dtype"
