"""Verification on a local Ray cluster: the same verdicts as local verification, a killed worker
replaced and its job rerun, a second loss reported as an infrastructure error, clear config errors."""

from __future__ import annotations

import os
import threading
import time

import pytest

from kernel_gym.tasks import get_task
from kernel_gym.verify.verifiers import LocalVerifier, VerifyJob, get_verifier
from solutions import reference_answer

ray = pytest.importorskip("ray", reason="Ray is an optional dependency (pip install 'kernel-gym[ray]')")
pytestmark = pytest.mark.slow  # a local Ray cluster and a sandbox server per actor: minutes on 2 cores

RELU = get_task("level1/021_relu")
GOOD = reference_answer("level1/021_relu", "cpu")
WRONG = GOOD.replace("x[i] > 0.f ?", "x[i] < 0.f ?")
SETTINGS = {"correctness_trials": 2, "timing_trials": 3, "use_cache": False}


@pytest.fixture(scope="module")
def verifier():
    v = get_verifier({"name": "ray", "num_workers": 2, "init_kwargs": {"num_cpus": 2}})
    yield v
    v.close()


def _jobs() -> list[VerifyJob]:
    return [
        VerifyJob(RELU, GOOD, "cpu", SETTINGS),
        VerifyJob(RELU, WRONG, "cpu", SETTINGS),
        VerifyJob(RELU, "import subprocess\n" + GOOD, "cpu", SETTINGS),  # a static rule
        VerifyJob(RELU, "class ModelNew(:\n", "cpu", SETTINGS),
    ]


def test_ray_verdicts_match_local_verification(verifier):
    jobs = _jobs()
    on_ray = verifier.verify_many(jobs)
    local = LocalVerifier().verify_many(jobs)
    assert [r.error_class for r in on_ray] == [r.error_class for r in local]
    assert [r.error_class for r in on_ray] == ["ok", "numerical_mismatch", "hacked", "syntax_error"]
    pids = set(ray.get([a.pid.remote() for a in verifier.actors()]))
    assert len(pids) == 2 and os.getpid() not in pids  # two actor processes, none of them this one


def _kill_all_soon(v, delay_s: float) -> threading.Thread:
    def kill() -> None:
        time.sleep(delay_s)
        for actor in v.actors():
            ray.kill(actor)

    t = threading.Thread(target=kill)
    t.start()
    return t


def test_a_killed_worker_is_replaced_and_its_job_rerun(verifier):
    verifier.verify_many([VerifyJob(RELU, GOOD, "cpu", SETTINGS)])  # warm: the actors exist
    replaced = verifier.replaced
    killer = _kill_all_soon(verifier, 0.5)
    jobs = [VerifyJob(RELU, GOOD, "cpu", {**SETTINGS, "timing_trials": 30}) for _ in range(2)]
    results = verifier.verify_many(jobs)
    killer.join()
    assert verifier.replaced >= replaced + 1
    assert [r.error_class for r in results] == ["ok", "ok"]


def test_a_job_lost_twice_is_an_infrastructure_error(verifier):
    verifier.max_retries = 0  # the first loss is final
    try:
        killer = _kill_all_soon(verifier, 0.5)
        [r] = verifier.verify_many([VerifyJob(RELU, GOOD, "cpu", {**SETTINGS, "timing_trials": 60})])
        killer.join()
        assert r.error_class == "internal_error" and r.details["infrastructure_error"]
        assert "not the answer's doing" in r.message
    finally:
        verifier.max_retries = 1


def test_an_actor_the_cluster_has_no_room_for_is_a_clear_error(verifier):
    # three more one-CPU actors on a two-CPU cluster whose CPUs the module's verifier holds
    crowded = get_verifier({"name": "ray", "num_workers": 3, "actor_start_timeout_s": 5})
    try:
        with pytest.raises(RuntimeError, match="lower verifier.num_workers"):
            crowded.verify_many([VerifyJob(RELU, GOOD, "cpu", SETTINGS)])
    finally:
        crowded.close()


def test_bad_verifier_config_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown verifier 'rey'"):
        get_verifier("rey")
    with pytest.raises(ValueError, match="num_workers must be a positive integer"):
        get_verifier({"name": "ray", "num_workers": 0})
    with pytest.raises(ValueError, match="takes no options"):
        get_verifier({"name": "local", "num_workers": 2})
