"""The verification pipeline: static checks, sandbox, correctness, timing, feedback."""

from kernel_gym.verify.pipeline import sandbox_stage, static_stage, verify
from kernel_gym.verify.result import ERROR_CLASSES, VerifyResult
from kernel_gym.verify.settings import TOLERANCE_PRESETS, VerifySettings
from kernel_gym.verify.static_checks import RULES, Violation, check_answer_source

__all__ = [
    "ERROR_CLASSES",
    "RULES",
    "TOLERANCE_PRESETS",
    "VerifyResult",
    "VerifySettings",
    "Violation",
    "check_answer_source",
    "sandbox_stage",
    "static_stage",
    "verify",
]
