"""Properties of the pipe-level timing model."""

import pytest
import torch

import kernel_gym.ascendc as asc
from kernel_gym.ascendc.timing import overlapped_bounds
from tests.ascendc import kernels


@pytest.fixture(scope="module")
def tp_mod():
    return asc.load(kernels.THROUGHPUT, name="throughput.cpp")


# (op, elements, spec rate in elements per cycle)
RATES = [
    (0, 16320, 64, "Add float (simple)"),
    (1, 32640, 128, "Add half (simple)"),
    (8, 16320, 64, "Muls float (simple)"),
    (2, 16320, 32, "Exp float"),
    (3, 32640, 32, "Exp half"),
    (4, 16320, 32, "Div float"),
    (9, 32640, 32, "Sqrt half"),
    (5, 16320, 64, "Cast float->half"),
    (6, 16320, 64 / 7, "WholeReduceSum float"),
    (7, 32640, 128 / 7, "WholeReduceSum half"),
]


@pytest.mark.parametrize("op,n,rate,label", RATES, ids=[r[3] for r in RATES])
def test_long_vector_throughput_matches_the_spec(tp_mod, op, n, rate, label):
    iters = 20
    tp_mod.tp(op, n, iters)
    base = tp_mod.last_run.per_pipe_busy["V"]
    tp_mod.tp(op, n, 2 * iters)
    v_cycles = tp_mod.last_run.per_pipe_busy["V"] - base  # the extra `iters` instructions
    measured = iters * n / v_cycles
    assert measured == pytest.approx(rate, rel=0.10), label


def test_double_buffering_beats_single_buffering(stream_mod):
    n = 8 * 64 * 4096
    x, y, z = torch.randn(n), torch.randn(n), torch.empty(n)
    for tile in (2048, 4096):
        stream_mod.add_single(8, x, y, z, n, tile)
        single = stream_mod.last_run
        stream_mod.add_double(8, x, y, z, n, tile)
        double = stream_mod.last_run
        torch.testing.assert_close(z, x + y)
        ratio = single.compute_s / double.compute_s
        assert 1.5 <= ratio <= 3.0, (tile, ratio)
        assert double.warnings == [] and single.warnings == []


def test_more_blocks_scale_until_the_hbm_bound(stream_mod):
    n = 48 * 16 * 4096
    x, y, z = torch.randn(n), torch.randn(n), torch.empty(n)
    lat = {}
    for blocks in (1, 2, 4, 8, 16, 24, 48):
        stream_mod.add_double(blocks, x, y, z, n, 4096)
        lat[blocks] = stream_mod.last_run
    assert lat[2].latency_s < 0.6 * lat[1].latency_s
    assert lat[4].latency_s < 0.6 * lat[2].latency_s
    # one core's stream: its GM port (32 B/cycle) is slower than its MTE2 pipe (78 B/cycle)
    assert lat[1].bound == "gm_port" and lat[48].bound == "hbm"
    prof = asc.SOC_PROFILES["Ascend910B2"]
    hbm = (3 * 4 * n) / prof.hbm_bytes_per_s
    assert lat[48].hbm_s == pytest.approx(hbm, rel=1e-6)
    # 24 cores at CANN's per-core ddr_rate (32 B/cycle) stream 1.42 TB/s, under the 1.6 TB/s HBM:
    # each core's own GM port bounds the launch, at its share of the bytes
    port = (3 * 4 * n / 24) / (prof.gm_port_bytes_per_cycle * prof.clock_hz)
    assert lat[24].bound == "gm_port" and port > hbm
    assert lat[24].gm_port_s == pytest.approx(port, rel=1e-6)
    for blocks in (24, 48):  # the body is the bounds' p-norm (overlap_norm), as the report's figures give it
        r = lat[blocks]
        body = overlapped_bounds(r.compute_s, r.hbm_s, r.gm_port_s, prof.overlap_norm)
        assert r.latency_s == pytest.approx(body + r.launch_s, rel=1e-9)
        assert max(r.compute_s, r.hbm_s, r.gm_port_s) < body < 1.1 * max(r.compute_s, r.hbm_s, r.gm_port_s)


def test_streaming_cores_near_the_hbm_bound_pay_for_it(stream_mod):
    """32 and 48 streaming cores both reach the HBM bound; the 32, whose GM ports run closer to
    their own bound, take longer (the 910B's order). With overlap_norm <= 0 (the plain maximum)
    they tie and only the launch cost per core separates them, the other way."""
    n = 48 * 32 * 4096
    x, y, z = torch.randn(n), torch.randn(n), torch.empty(n)
    lat = {}
    for blocks in (32, 48):
        stream_mod.add_double(blocks, x, y, z, n, 4096)
        lat[blocks] = stream_mod.last_run
    assert lat[32].bound == lat[48].bound == "hbm"
    assert lat[48].latency_s < lat[32].latency_s
    plain = asc.load(kernels.STREAM_ADD, name="stream_add.cpp", soc_overrides={"overlap_norm": 0})
    flat = {}
    for blocks in (32, 48):
        plain.add_double(blocks, x, y, z, n, 4096)
        flat[blocks] = plain.last_run
        assert flat[blocks].latency_s == pytest.approx(flat[blocks].hbm_s + flat[blocks].launch_s, rel=1e-9)
    assert flat[48].latency_s > flat[32].latency_s
    assert flat[48].latency_s < lat[48].latency_s < lat[32].latency_s


def test_tiny_tiles_pay_per_instruction_costs(stream_mod):
    n = 8 * 64 * 4096
    x, y, z = torch.randn(n), torch.randn(n), torch.empty(n)
    stream_mod.add_double(8, x, y, z, n, 64)
    tiny = stream_mod.last_run.compute_s
    stream_mod.add_double(8, x, y, z, n, 4096)
    big = stream_mod.last_run.compute_s
    assert tiny > 5 * big


def test_slower_soc_is_slower():
    src = kernels.STREAM_ADD
    n = 48 * 8 * 4096
    x, y, z = torch.randn(n), torch.randn(n), torch.empty(n)
    b2 = asc.load(src, soc="Ascend910B2", name="stream_add.cpp")
    b4 = asc.load(src, soc="Ascend910B4", name="stream_add.cpp")
    b2.add_double(48, x, y, z, n, 4096)
    b4.add_double(48, x, y, z, n, 4096)
    assert b4.last_run.latency_s > 1.5 * b2.last_run.latency_s  # half the HBM bandwidth
    assert b4.last_run.waves == 2 and b2.last_run.waves == 1  # 40 AIV cores on B4


def test_simulation_is_deterministic(stream_mod):
    n = 8 * 8 * 4096
    x, y, z = torch.randn(n), torch.randn(n), torch.empty(n)
    with asc.record_launches() as rec:
        stream_mod.add_double(8, x, y, z, n, 4096)
        stream_mod.add_double(8, x, y, z, n, 4096)
    a, b = rec.launches
    assert a.latency_s == b.latency_s and a.per_pipe_busy == b.per_pipe_busy
