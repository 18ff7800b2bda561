"""SoC profiles of the Atlas A2 (Ascend 910B, arch 2201) family for the simulator.

Each constant is a :class:`Const` carrying its value, unit and ``source``: the project's
specification (``docs/ascendc_simulator.md``, quoted as "simulator spec"), a
public CANN document, or the word "assumed" where nothing public pins it down. The
runtime receives the profile as a flat list of numbers (see ``to_config``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

__all__ = ["Const", "SocProfile", "SOC_PROFILES", "get_profile"]

SPEC = "simulator spec (docs/ascendc_simulator.md)"
CANN_DOC = "CANN Ascend C API docs (asc-devkit)"
# CANN's per-SoC platform files (data/platform_config/<SoC>.ini), as printed publicly in the
# huawei-csl/pto-dsl matmul optimisation guide; docs/ascendc_simulator.md lists the sources.
_PLATFORM_INI = "CANN platform config"


@dataclass(frozen=True)
class Const:
    value: float
    source: str
    unit: str = ""

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class SocProfile:
    """One SoC: ``profile.clock_hz`` reads a value, ``profile.constants[name]`` the Const."""

    name: str
    constants: Mapping[str, Const] = field(default_factory=dict)

    def __getattr__(self, item: str) -> float:
        consts = self.__dict__.get("constants", {})
        if item in consts:
            return consts[item].value
        raise AttributeError(f"SoC profile {self.__dict__.get('name')!r} has no constant {item!r}")

    def __iter__(self) -> Iterator[tuple[str, Const]]:
        return iter(self.constants.items())

    def source(self, name: str) -> str:
        return self.constants[name].source

    def with_overrides(self, **values: float) -> SocProfile:
        """A copy with some constants replaced (their source becomes 'override')."""
        consts = dict(self.constants)
        for k, v in values.items():
            if k not in consts:
                raise KeyError(f"unknown SoC constant {k!r}")
            consts[k] = replace(consts[k], value=float(v), source="override")
        return SocProfile(self.name, consts)

    @property
    def usable_ub_bytes(self) -> float:
        c = self.constants
        return c["ub_bytes"].value - c["ub_reserved_bytes"].value - c["ub_compiler_reserved_bytes"].value

    def to_config(self) -> dict[str, float]:
        d = {k: c.value for k, c in self.constants.items()}
        d["usable_ub_bytes"] = self.usable_ub_bytes
        return d


def _common() -> dict[str, Const]:
    C = Const
    return {
        # memories (per core)
        "ub_bytes": C(192 * 1024, SPEC + " (SoC table: UB 192 KB)", "B"),
        "l1_bytes": C(512 * 1024, SPEC + " (SoC table: L1 512 KB)", "B"),
        "l0a_bytes": C(64 * 1024, SPEC + " (SoC table: L0A 64 KB)", "B"),
        "l0b_bytes": C(64 * 1024, SPEC + " (SoC table: L0B 64 KB)", "B"),
        "l0c_bytes": C(128 * 1024, SPEC + " (SoC table: L0C 128 KB)", "B"),
        "l2_bytes": C(192 * 1024 * 1024, _PLATFORM_INI + " Ascend910B2.ini l2_size=201326592", "B"),
        "hbm_bytes": C(64 * 1024**3, _PLATFORM_INI + " Ascend910B2.ini memory_size (64 GB)", "B"),
        # The whole UB is usable: docs/ascendc_simulator.md ("Usable UB: the whole 192 KB (196,608 B) by default";
        # a published kernel that allocates all of it ran on a 910B). CANN's PlatformAscendC::ReserveLocalMemory
        # (8/16/32 KB) is the documented way to reserve UB, and only on request; both knobs default to 0.
        "ub_reserved_bytes": C(0, SPEC + " (usable UB is the whole 192 KB; reservation knob, default 0)", "B"),
        "ub_compiler_reserved_bytes": C(
            0,
            SPEC
            + " (no compiler reservation by default; "
            + CANN_DOC
            + " ReserveLocalMemory reserves 8/16/32 KB only when called; knob)",
            "B",
        ),
        "ub_align": C(32, SPEC + " (alignment: UB 32 B)", "B"),
        "l0ab_align": C(512, SPEC + " (alignment: L0A/L0B 512 B)", "B"),
        "l0c_align": C(64, SPEC + " (alignment: L0C 64 B)", "B"),
        "vec_block_bytes": C(32, SPEC + " (vector: 32 B blocks)", "B"),
        "vec_repeat_bytes": C(256, SPEC + " (vector: 256 B per repeat)", "B"),
        "max_repeat": C(255, SPEC + " (repeat count <= 255)", "repeats"),
        "max_buffers": C(64, SPEC + " (at most 64 buffers per kernel); " + CANN_DOC + " TPipe::InitBuffer", "buffers"),
        "max_tensors_per_position": C(
            8, CANN_DOC + " TQue::AllocTensor (<= 8 tensors per TPosition on Atlas A2)", "tensors"
        ),
        "clock_hz": C(1.85e9, SPEC + " (SoC table: 1.85 GHz)", "Hz"),
        # vector unit
        "vec_simple_bytes_per_cycle": C(256, SPEC + " (simple ops: 128 half / 64 float elements per cycle)", "B/cycle"),
        "vec_transcendental_elems_per_cycle": C(32, SPEC + " (Exp, Ln, Sqrt, Div: 32)", "elements/cycle"),
        "vec_cast_elems_per_cycle": C(64, SPEC + " (Cast half<->float: 64)", "elements/cycle"),
        "vec_reduce_cycles_per_repeat": C(7, SPEC + " (repeat-wise reductions: 128/7 half, 64/7 float)", "cycles"),
        "vec_gather_elems_per_cycle": C(5, SPEC + " (Gather 5)", "elements/cycle"),
        "vec_sort_elems_per_cycle": C(2, SPEC + " (Sort 2)", "elements/cycle"),
        "vec_issue_cycles": C(16, "assumed (spec: 'a small issue overhead' per vector instruction)", "cycles"),
        "ub_copy_bytes_per_cycle": C(128, "assumed (UB->UB DataCopy on the vector pipe)", "B/cycle"),
        # scalar unit
        "scalar_issue_cycles": C(12, "assumed (scalar-unit cost of issuing one API instruction)", "cycles"),
        "scalar_ub_access_cycles": C(8, "assumed (LocalTensor GetValue/SetValue)", "cycles"),
        # In-order scalar unit: a UB load issued right after a UB store waits for the store's UB access
        # (no store-to-load forwarding is documented); its length is the one scalar UB constant the
        # fit split pins down.
        "scalar_ub_store_load_cycles": C(
            24,
            "fitted: a scalar UB load right after a scalar UB store waits for it (no store-to-load "
            "forwarding is documented, no latency published); over waits of 0-64 cycles the fit split's "
            "67 scalar-bound kernels' Huber loss is lowest at 24 (9.63, against 9.89 at 8 = one UB access): "
            "docs/timing_fidelity.md",
            "cycles",
        ),
        "scalar_block_cycles": C(
            4,
            "assumed (one basic block of kernel scalar code, about 4 instructions at "
            "one per cycle on the in-order scalar unit)",
            "cycles",
        ),
        "sync_all_cycles": C(
            1000,
            "assumed (SyncAll: a cross-core barrier through GM flags, about a GM round trip "
            "after the last block arrives)",
            "cycles",
        ),
        "host_block_s": C(
            1e-9, "assumed (host CPU: one basic block of a kernel file's host C++ code in about 1 ns)", "s"
        ),
        "scalar_gm_access_cycles": C(
            100,
            "assumed (a scalar GM access that misses the data cache: one 64-byte line filled from L2/HBM)",
            "cycles",
        ),
        "scalar_dcache_bytes": C(
            16 * 1024,
            "CANN Ascend C programming guide, Compute Units (Scalar: the DCache caches data, e.g. 16 KB)",
            "B",
        ),
        "scalar_dcache_line_bytes": C(
            64,
            "CANN Ascend C programming guide, Compute Units (DCache loads in 64-byte cache lines); "
            + CANN_DOC
            + " GlobalTensor::SetValue (written out per 64-byte cache line)",
            "B",
        ),
        "scalar_dcache_ways": C(
            4,
            "fitted: the associativity and set index of the scalar data cache are not published; over {0 (fully "
            "associative), 4, 8} ways (set = line number mod sets), 4 fits the fit split's seven scalar-loop "
            "convolutions (KernelBench level 2) best: mean squared log ratio to the 910B 0.23, against 0.93 "
            "fully associative (every one 0.16-0.78x) and 0.41 for 8 ways",
            "ways",
        ),
        "scalar_gm_outstanding_misses": C(
            1,
            "assumed (line fills of the scalar data cache that overlap: those issued in one basic block, "
            "before a branch that uses them, up to this many at a time; the scalar unit's miss handling "
            "is not published; 2 made the fit split worse: docs/timing_fidelity.md)",
            "fills",
        ),
        "scalar_dcache_hit_cycles": C(
            4,
            "assumed (a scalar load or store that hits the core's data cache: a few cycles of the in-order "
            "scalar pipeline; CANN doc 'Reading/Writing Data by the Scalar Unit': hits need no GM access)",
            "cycles",
        ),
        # data movement
        "mte2_theoretical_bytes_per_cycle": C(128, SPEC + " (GM->UB about 128 B/cycle theoretical)", "B/cycle"),
        "mte2_bytes_per_cycle": C(78, SPEC + " (GM->UB measured plateau near 78 B/cycle)", "B/cycle"),
        "mte2_startup_cycles": C(
            500,
            "assumed (spec: fixed copy start-up, a profile constant; modelled as GM latency that later copies overlap)",
            "cycles",
        ),
        "mte2_unaligned_efficiency": C(
            0.7,
            "CANN Ascend C best practices, 'GM addresses 512 B aligned' (Atlas A2): GM -> local copies from "
            "32 B-aligned addresses reach as little as 70 % of the 512 B-aligned bandwidth",
            "ratio",
        ),
        "mte3_bytes_per_cycle": C(80, SPEC + " (UB->GM ramps to about 80 B/cycle)", "B/cycle"),
        # One core's own path to HBM: a launch's memory time is at least its busiest core's GM bytes at
        # this rate, besides the whole launch's bytes at hbm_bytes_per_s. CANN's tiling code reads the
        # same field as a per-core rate (ops-nn weight_quant_batch_matmul_v2 tiling: HBM bandwidth =
        # cube_freq x ai_core_cnt x ddr_rate), so fewer than hbm / (32 B x clock) = 27 streaming cores
        # cannot reach the HBM bound. (The same section's l2_rate=110 is the rate from L2.)
        "gm_port_bytes_per_cycle": C(
            32, _PLATFORM_INI + " Ascend910B1.ini [AICoreMemoryRates] ddr_rate=32 (per AI Core)", "B/cycle"
        ),
        # A launch's body is the p-norm of its three bounds (the critical core's pipes, HBM, the busiest
        # core's GM port), not their maximum: bounds that are nearly reached queue behind each other.
        "overlap_norm": C(
            8,
            "assumed (two equal bounds cost 2^(1/8) = 1.09x one; not constrained by the fit split, where "
            "no launch has a second bound within 30 % of its largest; <= 0 gives the plain maximum)",
            "exponent",
        ),
        "mte3_startup_cycles": C(400, "assumed (spec: fixed copy start-up; write completion latency)", "cycles"),
        "dma_issue_cycles": C(24, "assumed (pipe occupancy per DataCopy instruction)", "cycles"),
        "dma_burst_cycles": C(2, "assumed (pipe occupancy per burst of a multi-block DataCopy)", "cycles"),
        # cube unit (kgsim/cube.h, src/rt_cube.cpp). Memories: the L1/L0 sizes above; the bias table and
        # fixpipe buffer sizes are not in the A2 API docs (the MmadMx doc quotes a 4 KB BT for Ascend 950).
        "bt_bytes": C(
            1024,
            "assumed (public 910B descriptions: 1 KB BiasTable per AIC; "
            + CANN_DOC
            + " Mmad: bias in BT Buffer, TPosition C2)",
            "B",
        ),
        "fb_bytes": C(
            7168,
            "CANN's matmul template library (catlass, arch/arch.hpp: AtlasA2 FIXBUF_SIZE = 7 KB, which its "
            "kernels allocate whole at TPosition C2PIPE2GM; 2 KB was assumed before and faulted them)",
            "B",
        ),
        "l1_align": C(32, CANN_DOC + " (matrix input constraints: L1 Buffer 32 B aligned)", "B"),
        "bt_align": C(64, CANN_DOC + " (data movement constraints: BiasTable Buffer 64 B aligned)", "B"),
        "fb_align": C(128, CANN_DOC + " (data movement constraints: Fixpipe Buffer 128 B aligned)", "B"),
        # 16x16x16 fp16 MACs per cycle per AIC: 24 AIC x 1.85 GHz x 4096 x 2 = 363.7 TFLOPS, the published fp16
        # peak class of the 910B2 (about 350-376 TFLOPS in public spec sheets). bf16 alike; fp32 (k0 = 8) at half,
        # int8 (k0 = 32) at twice this rate: one 16 x k0 x 16 fractal product per cycle.
        "cube_fp16_macs_per_cycle": C(16 * 16 * 16, SPEC + " (16x16x16 fp16 MACs per cycle per AIC)", "MAC/cycle"),
        "cube_issue_cycles": C(8, "assumed (M pipe start-up per Mmad instruction)", "cycles"),
        "l1_to_l0a_bytes_per_cycle": C(256, SPEC + " (L1->L0A 256 B/cycle)", "B/cycle"),
        "l1_to_l0b_bytes_per_cycle": C(128, SPEC + " (L1->L0B 128 B/cycle)", "B/cycle"),
        "mte1_issue_cycles": C(8, "assumed (MTE1 pipe occupancy per LoadData / L1 -> BT copy instruction)", "cycles"),
        "mte1_latency_cycles": C(30, "assumed (L1->L0 LoadData completion latency)", "cycles"),
        "fix_bytes_per_cycle": C(128, "assumed (FIX pipe: L0C -> GM/L1 output bytes per cycle)", "B/cycle"),
        "fix_startup_cycles": C(200, "assumed (Fixpipe write completion latency to GM)", "cycles"),
        # launch
        "launch_base_s": C(3e-6, "assumed (kernel launch overhead on the device)", "s"),
        # The simulator's watchdog bound (loader option watchdog_cycles defaults to this at clock_hz): a
        # block that runs longer would be killed on the NPU too, anything shorter is a valid kernel.
        "op_timeout_s": C(
            1091,
            "CANN aclrtSetOpExecuteTimeOut (default AI Core operator execution timeout, Atlas A2 training "
            "series: 1091 s)",
            "s",
        ),
        "launch_per_core_s": C(3e-8, "assumed (spec: launch overhead grows with the number of cores used)", "s/core"),
        # reference (eager PyTorch) estimate
        "eager_op_launch_s": C(
            8e-6, "assumed (per-operator launch cost of eager PyTorch on the NPU; reference_estimate.py)", "s"
        ),
    }


def _profile(
    name: str,
    aic: int,
    aiv: int,
    hbm: float,
    *,
    clock_source: str,
    hbm_source: str,
    core_source: str,
    overrides: Mapping[str, Const] | None = None,
) -> SocProfile:
    consts = _common()
    consts.update(overrides or {})
    consts["aic_cores"] = Const(aic, core_source, "cores")
    consts["aiv_cores"] = Const(aiv, core_source, "cores")
    consts["hbm_bytes_per_s"] = Const(hbm, hbm_source, "B/s")
    consts["clock_hz"] = Const(1.85e9, clock_source, "Hz")
    return SocProfile(name, consts)


_B123_HBM = SPEC + " (HBM bandwidth not published officially; 1.6 TB/s default for B1-B3: assumed/unofficial)"
SOC_PROFILES: dict[str, SocProfile] = {
    "Ascend910B1": _profile(
        "Ascend910B1",
        24,
        48,
        1.6e12,
        clock_source=SPEC + " (SoC table: 1.85 GHz)",
        hbm_source=_B123_HBM,
        core_source=SPEC + " (SoC table: 24 AIC / 48 AIV)",
    ),
    "Ascend910B2": _profile(
        "Ascend910B2",
        24,
        48,
        1.6e12,
        clock_source=SPEC + " (SoC table: 1.85 GHz)",
        hbm_source=_B123_HBM,
        core_source=SPEC + " (SoC table: 24 AIC / 48 AIV)",
    ),
    "Ascend910B3": _profile(
        "Ascend910B3",
        20,
        40,
        1.6e12,
        clock_source="assumed (" + SPEC + ": 1.85 GHz assumed)",
        hbm_source=_B123_HBM,
        core_source=SPEC + " (SoC table: 20 AIC / 40 AIV)",
    ),
    "Ascend910B4": _profile(
        "Ascend910B4",
        20,
        40,
        0.8e12,
        clock_source="assumed (" + SPEC + ": 1.85 GHz assumed)",
        hbm_source=SPEC + " (0.8 TB/s default for B4: assumed/unofficial)",
        core_source=SPEC + " (SoC table: 20 AIC / 40 AIV)",
        # the B4 is the smaller part: its own platform file halves L2 and HBM capacity
        overrides={
            "l2_bytes": Const(96 * 1024 * 1024, _PLATFORM_INI + " Ascend910B4.ini l2_size=100663296", "B"),
            "hbm_bytes": Const(32 * 1024**3, _PLATFORM_INI + " Ascend910B4.ini memory_size (32 GB)", "B"),
        },
    ),
}


def get_profile(soc: str | SocProfile) -> SocProfile:
    if isinstance(soc, SocProfile):
        return soc
    try:
        return SOC_PROFILES[soc]
    except KeyError:
        raise ValueError(f"unknown SoC {soc!r}; choose one of {', '.join(SOC_PROFILES)}") from None
