"""Generators: the litellm client, the offline synthetic coder, prompts, code extraction."""

from kernel_gym.llm.base import (
    STAGES,
    BudgetExhausted,
    Generation,
    GenerationError,
    GenerationRequest,
    Generator,
    ParentKernel,
    Usage,
)

__all__ = [
    "STAGES",
    "BudgetExhausted",
    "Generation",
    "GenerationError",
    "GenerationRequest",
    "Generator",
    "ParentKernel",
    "Usage",
]
