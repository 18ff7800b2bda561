"""Where verifications run: one interface, two engines.

:class:`LocalVerifier` (the default) runs each job through :func:`kernel_gym.verify.verify` in this
process's own sandboxed verification server. :class:`~kernel_gym.verify.ray_verifier.RayVerifier`
runs them on a pool of Ray actors (a local or remote cluster), each holding a warm sandboxed
server of its own, so a vector env or a population agent keeps many workers busy. Both return the
same :class:`VerifyResult` for the same job: only where it runs differs.

``get_verifier("local" | "ray" | {"name": "ray", "address": "auto", ...} | Verifier)`` builds one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kernel_gym.tasks.spec import TaskSpec
from kernel_gym.verify.result import VerifyResult

__all__ = ["LocalVerifier", "Verifier", "VerifyJob", "VERIFIER_NAMES", "get_verifier"]

VERIFIER_NAMES = ("local", "ray")


@dataclass(frozen=True)
class VerifyJob:
    """One verification: the arguments of :func:`kernel_gym.verify.verify`.

    Attributes:
        task: the task the answer solves.
        answer_source: the answer as a Python module defining ``ModelNew``.
        backend: the backend's registry name.
        settings: keyword settings of :class:`~kernel_gym.verify.VerifySettings`.
    """

    task: TaskSpec
    answer_source: str
    backend: str = "cpu"
    settings: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Verifier(Protocol):
    """Runs verification jobs; results come back in job order, one per job, never an exception
    for anything an answer does (a lost worker is an ``internal_error`` result)."""

    name: str

    def verify_many(self, jobs: Sequence[VerifyJob]) -> list[VerifyResult]: ...

    def close(self) -> None: ...


class LocalVerifier:
    """Jobs one after another in this process's verification server (today's default)."""

    name = "local"

    def verify_many(self, jobs: Sequence[VerifyJob]) -> list[VerifyResult]:
        from kernel_gym.verify.pipeline import verify

        prebuild_extensions(jobs)
        return [verify(j.task, j.answer_source, j.backend, **dict(j.settings)) for j in jobs]

    def close(self) -> None:
        """Nothing to release: the sandbox server ends with the process."""


def prebuild_extensions(jobs: Sequence[VerifyJob]) -> None:
    """Build the torch extensions (KernelBench's load_inline) of a batch's cuda answers in parallel
    before verifying them one by one: a cold build is tens of seconds, mostly one core's."""
    answers = [j.answer_source for j in jobs if j.backend == "cuda" and "load_inline" in j.answer_source]
    if len(answers) > 1:
        import torch

        from kernel_gym.verify.compile_service import prebuild_extensions as prebuild

        if not torch.cuda.is_available():
            return  # verify() says the backend is unavailable; nothing to link against here

        prebuild(answers)


def get_verifier(spec: str | Mapping[str, Any] | Verifier | None = "local") -> Verifier:
    """A verifier from its name, a dict ``{"name": ..., **options}`` or an object; None = local.

    Options of ``"ray"``: see :class:`~kernel_gym.verify.ray_verifier.RayVerifier`."""
    if spec is None:
        return LocalVerifier()
    if isinstance(spec, Verifier) and not isinstance(spec, (str, Mapping)):
        return spec
    options: dict[str, Any] = {}
    if isinstance(spec, Mapping):
        options = dict(spec)
        name = options.pop("name", None)
    else:
        name = spec
    if name == "local":
        if options:
            raise ValueError(f"the local verifier takes no options, got {sorted(options)}")
        return LocalVerifier()
    if name == "ray":
        from kernel_gym.verify.ray_verifier import RayVerifier

        return RayVerifier(**options)
    raise ValueError(f"unknown verifier {name!r}; use one of {', '.join(VERIFIER_NAMES)} (verifier=local|ray)")
