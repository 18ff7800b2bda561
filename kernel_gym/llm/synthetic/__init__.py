"""The offline synthetic coder: a seeded, context-dependent stand-in for an LLM kernel writer.

See ``docs/synthetic_coder.md``. ``SyntheticCoder(seed=0).generate(request)`` returns a
:class:`~kernel_gym.llm.base.Generation` whose ``notes`` list the skills found, the faults
committed and the tactics applied.
"""

from kernel_gym.llm.synthetic.coder import SyntheticCoder
from kernel_gym.llm.synthetic.skills import PRIORS, SKILLS, TACTICS

__all__ = ["PRIORS", "SKILLS", "SyntheticCoder", "TACTICS"]
