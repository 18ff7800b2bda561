"""kernel-gym: LLM kernel synthesis as a Gymnasium environment."""

__version__ = "0.1.0"
