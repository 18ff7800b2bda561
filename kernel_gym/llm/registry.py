"""Generators by name: ``get_generator("synthetic")``, ``get_generator("litellm:gpt-4o-mini")``."""

from __future__ import annotations

from typing import Any

from kernel_gym.llm.base import Generator

__all__ = ["GENERATOR_NAMES", "get_generator"]

GENERATOR_NAMES: tuple[str, ...] = ("synthetic", "litellm:<model>")


def get_generator(spec: str | Generator | dict[str, Any], **kwargs: Any) -> Generator:
    """Build a generator.

    Args:
        spec: ``"synthetic"`` (the offline SyntheticCoder), ``"litellm:<model>"`` (any litellm
            model string, e.g. ``"litellm:openai/gpt-4o-mini"``), a dict ``{"name": ..., **options}``,
            or an object that already implements the Generator protocol (returned unchanged).
        kwargs: constructor options (e.g. ``seed``, ``temperature``, ``cache_dir``).
    """
    if isinstance(spec, dict):
        opts = dict(spec)
        name = opts.pop("name", None)
        if name is None:
            raise ValueError("a generator dict needs a 'name' key, e.g. {'name': 'synthetic'}")
        return get_generator(name, **{**opts, **kwargs})
    if not isinstance(spec, str):
        if isinstance(spec, Generator):
            return spec
        raise TypeError(f"generator must be a name, a dict or a Generator, got {type(spec).__name__}")
    if spec == "synthetic":
        from kernel_gym.llm.synthetic import SyntheticCoder

        return SyntheticCoder(**kwargs)
    if spec.startswith("litellm:"):
        model = spec.split(":", 1)[1]
        if not model:
            raise ValueError("give a model after 'litellm:', e.g. 'litellm:openai/gpt-4o-mini'")
        from kernel_gym.llm.litellm_generator import LiteLLMGenerator

        kwargs.pop("seed", None) if "seed" in kwargs and kwargs["seed"] is None else None
        return LiteLLMGenerator(model=model, **kwargs)
    raise ValueError(f"unknown generator {spec!r}; use one of {', '.join(GENERATOR_NAMES)}")
