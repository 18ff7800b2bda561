"""FixedGenerator: replays given answer sources. For tests, demos of the env's mechanics and
replaying a logged run; it reads nothing from the request but the step index."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kernel_gym.llm.base import Generation, GenerationRequest, Usage

__all__ = ["FixedGenerator"]


class FixedGenerator:
    """Returns ``sources[i % len(sources)]`` on the i-th call, or ``fn(request)`` when given a function."""

    name = "fixed"

    def __init__(self, sources: Sequence[str] | Callable[[GenerationRequest], str]) -> None:
        self._fn: Callable[[GenerationRequest], str] | None
        if callable(sources):
            self._fn = sources
            self._sources: list[str] = []
        else:
            self._sources = list(sources)
            if not self._sources:
                raise ValueError("FixedGenerator needs at least one source")
            self._fn = None
        self.calls = 0

    def generate(self, request: GenerationRequest) -> Generation:
        src = self._fn(request) if self._fn is not None else self._sources[self.calls % len(self._sources)]
        self.calls += 1
        return Generation(source=src, usage=Usage(model=self.name))
