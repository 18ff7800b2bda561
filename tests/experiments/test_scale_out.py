"""Scale-out acceptance: ``experiments.run verifier=ray memory.backend=postgres`` (a local Ray cluster,
a real PostgreSQL server) gives the same per-step results as the embedded defaults (local verifier,
SQLite) for a multi-agent comparison with the same seeds and the synthetic coder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.memory import pg_server

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # two runs, one on a local Ray cluster: 1.5 min on 2 lightly loaded cores, 3 at load 8

# Everything a step's outcome is made of (timings excluded: wall clock differs by where it ran).
STEP_FIELDS = ("episode", "task_id", "step", "stage", "context_ids", "parent_id", "trace_id", "experience_id",
               "code_hash", "reward", "feasible", "speedup", "best_speedup", "compiled", "correct", "hacked",
               "error_class", "latency_s", "reference_latency_s")
COMMON = ["compare=[qmemory,random]", "compare_seeds=[0]", "env.budget=2",
          "tasks.ids=[level1/021_relu,level1/001_add]",
          # every answer is verified where the run says (a result-cache hit would hide the Ray path)
          "+backend.verify.use_cache=false", "progress=false"]


@pytest.fixture(scope="module")
def postgres():
    pytest.importorskip("ray", reason="Ray is an optional dependency (pip install 'kernel-gym[ray]')")
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e .[postgres]")
    bindir = pg_server.find_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found: apt-get install postgresql")
    server = pg_server.start_server(bindir)
    yield server
    server.stop()


def _run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "experiments.run", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600)


def _steps(run_dir: Path) -> list[dict]:
    rows = [json.loads(x) for x in (run_dir / "steps.jsonl").read_text().splitlines() if x.strip()]
    return [{k: r[k] for k in STEP_FIELDS} for r in rows]


def test_ray_and_postgres_give_the_embedded_defaults_results(postgres, tmp_path):
    import psycopg

    dsn = postgres.new_database()
    local, scaled = tmp_path / "local", tmp_path / "scaled"
    p = _run([*COMMON, f"hydra.run.dir={local}"])
    assert p.returncode == 0, p.stderr[-3000:]
    # the spelling; a DSN holding '=' is quoted for Hydra's override parser
    p = _run([*COMMON, "verifier=ray", "verifier.num_workers=2", "memory.backend=postgres", f"memory.dsn='{dsn}'",
              f"hydra.run.dir={scaled}"])
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Started a local Ray instance" in p.stderr  # the verifications did go through Ray
    for agent in ("qmemory", "random"):
        a, b = _steps(local / agent), _steps(scaled / agent)
        assert len(a) == 4 and a == b, agent
        episodes = [(local if i == 0 else scaled) / agent / "episodes.jsonl" for i in range(2)]
        assert episodes[0].read_text() == episodes[1].read_text()
        sa, sb = (json.loads(((d / agent) / "summary.json").read_text()) for d in (local, scaled))
        assert sa["rounds"] == sb["rounds"]  # the per-round metrics of the report
    # each agent had a fresh store of its own in the database (a schema per run directory), as the
    # SQLite runs had a file each, holding exactly the logged traces
    with psycopg.connect(dsn, autocommit=True) as conn:
        schemas = sorted(r[0] for r in conn.execute(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'kg_run_%'"))
        assert len(schemas) == 2
        for agent in ("qmemory", "random"):
            import yaml

            schema = yaml.safe_load((scaled / agent / "config.yaml").read_text())["memory"]["schema"]
            assert schema in schemas
            traces = {r[0] for r in conn.execute(f"SELECT id FROM {schema}.kg_items WHERE kind = 'trace'")}
            assert traces == {s["trace_id"] for s in _steps(scaled / agent)}
