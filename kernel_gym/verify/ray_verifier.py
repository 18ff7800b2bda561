"""Verification on a Ray cluster: a pool of actors, each a warm sandboxed verification server.

Each actor is one process that calls :func:`kernel_gym.verify.verify` (the same static checks,
sandbox, judge and result cache as local verification; isolation is per actor, as it is per
process locally). GPU backends' jobs go to actors that hold one GPU each (``num_gpus=1``), so two
timed runs never share a device; other jobs go to CPU actors. At most ``max_in_flight`` jobs are
submitted at once (back-pressure). An actor that dies mid-job (killed, node lost) is replaced and
its job run once more; a second loss is reported as ``internal_error`` (an infrastructure error,
never a wrong answer).

``pip install "kernel-gym[ray]"``; ``verifier=ray verifier.address=auto`` joins a running cluster,
``address=null`` starts a local one.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from typing import Any

from kernel_gym.verify.result import VerifyResult
from kernel_gym.verify.verifiers import VerifyJob

__all__ = ["RayVerifier"]


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError(
            "verifier=ray needs Ray: pip install 'kernel-gym[ray]' (or pip install ray), or use verifier=local"
        ) from None
    return ray


class _VerifyWorker:
    """The actor's body: one process holding a warm verification server."""

    def __init__(self, backends: dict[str, str]) -> None:
        from kernel_gym.backends import BACKENDS, register_backend

        for name, target in backends.items():  # plug-in backends registered in the driver
            if name not in BACKENDS:
                register_backend(name, target)

    def pid(self) -> int:
        return os.getpid()

    def run(self, job: VerifyJob) -> VerifyResult:
        from kernel_gym.verify.pipeline import verify

        return verify(job.task, job.answer_source, job.backend, **dict(job.settings))


class RayVerifier:
    """Verification jobs on Ray actors.

    Args:
        address: the cluster to join (``"auto"``, ``"ray://host:10001"``); None starts a local
            cluster in this process (or uses the one already initialised).
        num_workers: CPU actors (each takes one CPU of the cluster).
        num_gpu_workers: GPU actors for GPU backends' jobs (each takes one GPU); created on first use.
            None: one per GPU of the cluster.
        max_in_flight: most jobs submitted at once (None: one per actor).
        max_retries: reruns of a job whose actor died (then ``internal_error``).
        init_kwargs: more ``ray.init`` arguments for a local cluster (e.g. ``num_cpus``).
        actor_start_timeout_s: seconds an actor may wait for the cluster's resources before a
            clear error (a cluster with no free CPU would otherwise hang the run).
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        num_workers: int = 2,
        num_gpu_workers: int | None = None,
        max_in_flight: int | None = None,
        max_retries: int = 1,
        init_kwargs: dict[str, Any] | None = None,
        actor_start_timeout_s: float = 120.0,
    ) -> None:
        for label, value in (("num_workers", num_workers), ("num_gpu_workers", num_gpu_workers)):
            if label == "num_gpu_workers" and value is None:
                continue
            if not isinstance(value, int) or value < (1 if label == "num_workers" else 0):
                raise ValueError(f"{label} must be a positive integer, got {value!r}")
        if max_in_flight is not None and (not isinstance(max_in_flight, int) or max_in_flight < 1):
            raise ValueError(f"max_in_flight must be a positive integer or null, got {max_in_flight!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries!r}")
        ray = _ray()
        self._started_ray = False
        if not ray.is_initialized():
            from kernel_gym.native import cache_root

            env = {"KERNEL_GYM_CACHE": str(cache_root())}
            env.update({k: os.environ[k] for k in ("KERNEL_GYM_ISOLATION",) if k in os.environ})
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, **(init_kwargs or {})}
            kwargs.setdefault("runtime_env", {"env_vars": env})
            ray.init(address=address, **kwargs)
            self._started_ray = True
        # a cluster started here shares this host's build cache: a step's extensions are built here,
        # in parallel, before its jobs are spread over the actors (a joined cluster builds in each actor)
        self._shares_cache = address is None
        self.num_workers = num_workers
        self.num_gpu_workers = num_gpu_workers
        self.max_in_flight = max_in_flight
        self.max_retries = max_retries
        self.actor_start_timeout_s = float(actor_start_timeout_s)
        self._pools: dict[bool, list[Any]] = {}
        self.replaced = 0  # actors replaced after dying

    # ---------------------------------------------------------------- actors
    def _new_actor(self, gpu: bool) -> Any:
        from kernel_gym.backends import BACKENDS

        ray = _ray()
        cls = ray.remote(num_cpus=1, num_gpus=1 if gpu else 0, max_restarts=0)(_VerifyWorker)
        actor = cls.remote(dict(BACKENDS))
        try:  # an actor the cluster has no room for would wait forever: say so instead
            ray.get(actor.pid.remote(), timeout=self.actor_start_timeout_s)
        except ray.exceptions.GetTimeoutError:
            ray.kill(actor)
            need = "1 GPU and 1 CPU" if gpu else "1 CPU"
            raise RuntimeError(
                f"the Ray cluster started no verification actor within {self.actor_start_timeout_s:g} s: each "
                f"needs {need} free ({ray.available_resources()} available); lower verifier.num_workers "
                "or add resources to the cluster"
            ) from None
        return actor

    def _pool(self, gpu: bool) -> list[Any]:
        if gpu not in self._pools:
            n = self.num_gpu_workers if gpu else self.num_workers
            if n is None:  # one actor per GPU of the cluster
                n = int(_ray().cluster_resources().get("GPU", 0)) or 1
            if n < 1:
                raise ValueError("a GPU backend's job needs num_gpu_workers >= 1")
            pool: list[Any] = []
            try:
                for _ in range(n):
                    pool.append(self._new_actor(gpu))
            except BaseException:
                for actor in pool:  # no half-made pool holds the cluster's resources
                    _ray().kill(actor)
                raise
            self._pools[gpu] = pool
        return self._pools[gpu]

    @staticmethod
    def _needs_gpu(backend: str) -> bool:
        from kernel_gym.backends import backend_class

        return backend_class(backend).device == "cuda"

    def actors(self) -> list[Any]:
        """The live actors (CPU pool first)."""
        return [a for gpu in sorted(self._pools) for a in self._pools[gpu]]

    # ---------------------------------------------------------------- jobs
    def verify_many(self, jobs: Sequence[VerifyJob]) -> list[VerifyResult]:
        """Run ``jobs`` on the pools; results in job order."""
        ray = _ray()
        if self._shares_cache:
            from kernel_gym.verify.verifiers import prebuild_extensions

            prebuild_extensions(jobs)
        results: list[VerifyResult | None] = [None] * len(jobs)
        attempts = [0] * len(jobs)
        waiting: dict[bool, deque[int]] = {}
        for i, job in enumerate(jobs):
            waiting.setdefault(self._needs_gpu(job.backend), deque()).append(i)
        free: dict[bool, deque[Any]] = {gpu: deque(self._pool(gpu)) for gpu in waiting}
        limit = self.max_in_flight or sum(len(v) for v in free.values())
        running: dict[Any, tuple[int, bool, Any]] = {}  # object ref -> (job, gpu pool, actor)

        def submit() -> None:
            for gpu, queue in waiting.items():
                while queue and free[gpu] and len(running) < limit:
                    i = queue.popleft()
                    actor = free[gpu].popleft()
                    attempts[i] += 1
                    running[actor.run.remote(jobs[i])] = (i, gpu, actor)

        submit()
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            ref = done[0]
            i, gpu, actor = running.pop(ref)
            try:
                results[i] = ray.get(ref)
                free[gpu].append(actor)
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as exc:
                replacement = self._replace(gpu, actor)
                free[gpu].append(replacement)
                if attempts[i] <= self.max_retries:
                    waiting[gpu].appendleft(i)
                else:
                    results[i] = self._lost(jobs[i], exc, attempts[i])
            submit()
        assert all(r is not None for r in results)
        return [r for r in results if r is not None]

    def _replace(self, gpu: bool, dead: Any) -> Any:
        pool = self._pools[gpu]
        fresh = self._new_actor(gpu)
        pool[pool.index(dead)] = fresh
        self.replaced += 1
        return fresh

    @staticmethod
    def _lost(job: VerifyJob, exc: BaseException, attempts: int) -> VerifyResult:
        why = " ".join(str(exc).split())[:300]
        return VerifyResult(
            job.task.id,
            job.backend,
            error_class="internal_error",
            message=(
                f"infrastructure error, not the answer's doing: the verification worker was lost "
                f"{attempts} time(s) ({type(exc).__name__}: {why})"
            ),
            details={"infrastructure_error": True, "attempts": attempts},
        )

    def close(self) -> None:
        """Kill the actors (and shut down the local cluster this verifier started)."""
        ray = _ray()
        for actor in self.actors():
            ray.kill(actor)
        self._pools.clear()
        if self._started_ray and ray.is_initialized():
            ray.shutdown()
