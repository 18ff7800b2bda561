"""experiments.calibrate_timing on a tiny dataset of our own: three elementwise operator projects
laid out like the published one, with made-up "measured" latencies."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from experiments import calibrate_timing as C
from kernel_gym.ascendc.soc import get_profile
from kernel_gym.ascendc.timing import overlapped_bounds

_TILING = """#ifndef {guard}
#define {guard}
#include "register/tilingdata_base.h"
namespace optiling {{
BEGIN_TILING_DATA_DEF({op}TilingData)
  TILING_DATA_FIELD_DEF(uint32_t, total);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS({op}, {op}TilingData)
}}
#endif
"""

_HOST = """#include "{snake}_tiling.h"
#include "register/op_def_registry.h"
namespace optiling {{
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{{
    {op}TilingData tiling;
    tiling.set_total(context->GetInputShape(0)->GetStorageShape().GetShapeSize());
    context->SetBlockDim(1);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* ws = context->GetWorkspaceSizes(1);
    ws[0] = 0;
    return ge::GRAPH_SUCCESS;
}}
}}
namespace ops {{
class {op} : public OpDef {{
public:
    explicit {op}(const char* name) : OpDef(name)
    {{
        this->Input("a").ParamType(REQUIRED).DataType({{ge::DT_FLOAT}}).Format({{ge::FORMAT_ND}});
        this->Input("b").ParamType(REQUIRED).DataType({{ge::DT_FLOAT}}).Format({{ge::FORMAT_ND}});
        this->Output("y").ParamType(REQUIRED).DataType({{ge::DT_FLOAT}}).Format({{ge::FORMAT_ND}});
        this->AICore().SetTiling(optiling::TilingFunc);
        this->AICore().AddConfig("ascend910b");
    }}
}};
OP_ADD({op});
}}
"""

_KERNEL = """#include "kernel_operator.h"
using namespace AscendC;
extern "C" __global__ __aicore__ void {snake}(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR ws, GM_ADDR tiling)
{{
    GET_TILING_DATA(t, tiling);
    GlobalTensor<float> ag, bg, yg;
    ag.SetGlobalBuffer((__gm__ float*)a, t.total);
    bg.SetGlobalBuffer((__gm__ float*)b, t.total);
    yg.SetGlobalBuffer((__gm__ float*)y, t.total);
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> qa, qb;
    TQue<QuePosition::VECOUT, 1> qy;
    pipe.InitBuffer(qa, 1, t.total * sizeof(float));
    pipe.InitBuffer(qb, 1, t.total * sizeof(float));
    pipe.InitBuffer(qy, 1, t.total * sizeof(float));
    LocalTensor<float> la = qa.AllocTensor<float>();
    LocalTensor<float> lb = qb.AllocTensor<float>();
    DataCopy(la, ag, t.total);
    DataCopy(lb, bg, t.total);
    qa.EnQue(la);
    qb.EnQue(lb);
    la = qa.DeQue<float>();
    lb = qb.DeQue<float>();
    LocalTensor<float> ly = qy.AllocTensor<float>();
    {vec}(ly, la, lb, t.total);
    qy.EnQue(ly);
    qa.FreeTensor(la);
    qb.FreeTensor(lb);
    ly = qy.DeQue<float>();
    DataCopy(yg, ly, t.total);
    qy.FreeTensor(ly);
}}
"""

_BIND = """#include <torch/extension.h>
#include "pytorch_npu_helper.hpp"
at::Tensor {snake}_impl_npu(const at::Tensor& a, const at::Tensor& b)
{{
    TORCH_CHECK(a.sizes() == b.sizes(), "a and b must have the same shape");
    at::Tensor y = at::empty_like(a);
    EXEC_NPU_CMD(aclnn{op}, a, b, y);
    return y;
}}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{
    m.def("{snake}", &{snake}_impl_npu, "{op}");
}}
"""

# (folder, op, vector API, reference folder, reference file, reference text, made-up ms); the
# level-2 project is the level-1 one under another folder (one compile fewer: the test stays fast)
_TWO_INPUTS = "def get_inputs():\n    return [torch.rand(8, 256), torch.rand(8, 256)]\n"
_KERNELS = [
    (
        "ops-kernelbench-910b",
        "PlusCustom",
        "Add",
        "KernelBench/level1",
        "1_Plus.py",
        "class Model(torch.nn.Module):\n    def forward(self, a, b):\n        return a + b\n" + _TWO_INPUTS,
        0.004,
    ),
    (
        "ops-kernelbench-910b",
        "BiasPlusCustom",
        "Add",
        "KernelBench/level2",
        "7_Bias_Plus.py",
        "class Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.bias = torch.nn.Parameter(torch.randn(8, 256))\n"
        "    def forward(self, x):\n        return x + self.bias\n"
        "def get_inputs():\n    return [torch.rand(8, 256)]\n",
        0.005,
    ),
    (
        "ops-attention-910b",
        "GateCustom",
        "Mul",
        "Attention",
        "3_Gate.py",
        "class Model(torch.nn.Module):\n    def forward(self, a, b):\n        return a * b\n" + _TWO_INPUTS,
        0.006,
    ),
]


def _snake(op: str) -> str:
    return "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(op))


def _dataset(root: Path, kernels: list[tuple[str, str, str, str, str, str, float]] = _KERNELS) -> Path:
    data = root / "EvoKernel"
    for folder, op, vec, ref_dir, ref_file, ref_text, ms in kernels:
        proj = data / folder / op
        op = op.replace("BiasPlus", "Plus")
        snake = _snake(op)
        for sub in ("op_host", "op_kernel", "CppExtension/csrc"):
            (proj / sub).mkdir(parents=True, exist_ok=True)
        fmt = {"op": op, "snake": snake, "vec": vec, "guard": snake.upper() + "_TILING_H"}
        (proj / "op_host" / f"{snake}_tiling.h").write_text(_TILING.format(**fmt))
        (proj / "op_host" / f"{snake}.cpp").write_text(_HOST.format(**fmt))
        (proj / "op_kernel" / f"{snake}.cpp").write_text(_KERNEL.format(**fmt))
        (proj / "CppExtension" / "csrc" / "op.cpp").write_text(_BIND.format(**fmt))
        (proj / f"{snake}.json").write_text(json.dumps([{"op": op}]))
        result = {"compiled": True, "correctness": True, "performance": {"mean": ms}}
        (proj / "result.json").write_text(json.dumps(result))
        ref = data / "pytorch-references" / ref_dir / ref_file
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text("import torch\n" + ref_text + "def get_init_inputs():\n    return []\n")
    meta = {"ops": {"1_Plus": {"level": "level1", "category": "elementwise"}}}
    (data / "pytorch-references" / "KernelBench" / "dataset.json").write_text(json.dumps(meta))
    return data


@pytest.mark.slow  # builds and simulates three operator projects in child processes: minutes on 2 cores
def test_harness_runs_fits_without_validation_and_reports(tmp_path: Path) -> None:
    data = _dataset(tmp_path)
    specs = {s.name: s for s in C.discover(data)}
    assert specs["PlusCustom"].split == "validation" and specs["PlusCustom"].category == "elementwise"
    assert specs["BiasPlusCustom"].split == "fit" and specs["GateCustom"].split == "fit"
    assert abs((specs["GateCustom"].measured_s or 0) - 6e-6) < 1e-12  # the dataset's ms -> s

    out, report = tmp_path / "out", tmp_path / "fidelity.md"
    assert C.main(["--data", str(tmp_path), "--out", str(out), "--report", str(report), "--inline"]) == 0
    rows = {r["name"]: r for r in C._read_jsonl(out / C.RESULTS_DEFAULT)}
    assert set(rows) == {"PlusCustom", "BiasPlusCustom", "GateCustom"}
    for r in rows.values():
        assert r["status"] == "ok", r
        assert r["simulated_s"] > 0 and r["launches"]
        assert r["sampled"], r  # by default every kernel runs as the judge runs published shapes
    assert rows["BiasPlusCustom"]["mapping"] == "by name"  # the weight comes from the model, matched by name

    prov = json.loads((out / C.PROVENANCE).read_text())
    assert prov["fit_kernels"] == ["BiasPlusCustom", "GateCustom"] and prov["n_fit"] == 2  # level 1 excluded
    overrides = json.loads((out / C.OVERRIDES).read_text())
    assert all(isinstance(v, float) for v in overrides.values())
    lo, hi = C.PARAM_BOUNDS["hbm_bytes_per_s"]
    assert lo <= prov["params"]["hbm_bytes_per_s"] <= hi
    if overrides:  # the fitted profile was run on the kernels that passed
        assert {r["name"] for r in C._read_jsonl(out / C.RESULTS_FITTED)} == set(rows)
    text = report.read_text()
    assert "Validation set" in text and "| default | 1 |" in text
    assert str(tmp_path) not in text  # the report names no local path


# a reference whose forward kills its own process, except on the meta device (the parent's sizing)
_DYING = (
    "import os, signal\n"
    "class Model(torch.nn.Module):\n    def forward(self, a, b):\n"
    "        if a.device.type != 'meta':\n            os.kill(os.getpid(), signal.SIGKILL)\n"
    "        return a + b\n"
)


@pytest.mark.slow  # builds and simulates two operator projects in child processes, forked and fresh
def test_each_kernel_runs_in_a_child_and_a_child_that_dies_is_a_row(tmp_path: Path) -> None:
    plus = _KERNELS[0]
    dying = (plus[0], "DyingPlusCustom", plus[2], plus[3], "2_DyingPlus.py", _DYING + _TWO_INPUTS, 0.004)
    _dataset(tmp_path, [plus, dying])
    out = tmp_path / "out"
    args = ["--data", str(tmp_path), "--out", str(out), "--stages", "run", "--max-bytes", "1024"]
    rows = {}
    for workers in ("fork", "fresh"):
        assert C.main([*args, "--workers", workers, "--fresh"]) == 0
        rows[workers] = {r["name"]: r for r in C._read_jsonl(out / C.RESULTS_DEFAULT)}
        ok, died = rows[workers]["PlusCustom"], rows[workers]["DyingPlusCustom"]
        assert ok["status"] == "ok" and ok["cpu_s"] > 0 and ok["peak_rss_mb"] > 0, ok
        assert died["status"] == "error" and died["cause"] == "crash" and "exit -9" in died["detail"], died
    # the same simulation either way; the forked child skips the interpreter's imports
    assert rows["fork"]["PlusCustom"]["simulated_s"] == rows["fresh"]["PlusCustom"]["simulated_s"]


@pytest.mark.slow  # builds and simulates three operator projects
def test_kernels_over_the_bound_run_at_their_shapes_under_sampled_simulation(tmp_path: Path) -> None:
    _dataset(tmp_path)
    out = tmp_path / "out"
    args = ["--data", str(tmp_path), "--out", str(out), "--inline", "--stages", "run", "--max-bytes", "1024"]
    assert C.main(args) == 0
    rows = {r["name"]: r for r in C._read_jsonl(out / C.RESULTS_DEFAULT)}
    for r in rows.values():  # 8 KiB of tensors each: over the bound, so sampled
        assert r["sampled"] and r["simulated_s"] > 0, r
        assert r["latency_bracket_s"][0] <= r["simulated_s"] <= r["latency_bracket_s"][1]
        assert r["sim_peak_rss_mb"] > 0 and r["check_peak_rss_mb"] > 0 and r["check_cpu_s"] >= 0  # stages apart
    assert rows["PlusCustom"]["status"] == rows["GateCustom"]["status"] == "ok"
    assert rows["PlusCustom"]["checked_fraction"] == 1.0  # one launch of few blocks: all of it ran
    # x + bias with a bias of the batch's shape: the reference cannot be computed on rows alone, so
    # (its inputs far under FULL_REFERENCE_BYTES) it runs in full and the sampled share is checked
    assert rows["BiasPlusCustom"]["status"] == "ok" and rows["BiasPlusCustom"]["checked_fraction"] > 0
    assert C.main([*args, "--sampled-blocks", "0", "--fresh"]) == 0
    assert {r["cause"] for r in C._read_jsonl(out / C.RESULTS_DEFAULT)} == {"too_large"}


@pytest.mark.slow  # builds and simulates one operator project, twice
def test_an_output_stored_only_after_loop_skips_is_checked_on_a_rerun(tmp_path: Path) -> None:
    """A kernel whose loop skips before its first output store leaves nothing checkable under
    --loops all (RmsNorm at its published shape): the harness reruns with loops="all_checked" (block
    0 keeps its work until its first store), as the judge does, and checks that block's stores."""
    warm_up = "for (int i = 0; i < 16; ++i) Add(ly, la, lb, t.total);\n    Add"  # a loop before the store
    plus = _KERNELS[0]
    _dataset(tmp_path, [(plus[0], "WarmPlusCustom", warm_up, plus[3], "2_WarmPlus.py", plus[5], 0.004)])
    out = tmp_path / "out"
    args = ["--data", str(tmp_path), "--out", str(out), "--inline", "--stages", "run", "--max-bytes", "1024"]
    assert C.main(args) == 0
    [row] = C._read_jsonl(out / C.RESULTS_DEFAULT)
    assert row["status"] == "ok" and row["checked_fraction"] == 1.0, row
    assert row["loops"] == "all_checked" and row["first_run"]["loops"] == "all"
    assert "only after skipping loop iterations" in row["first_run"]["detail"]


def test_fit_ignores_validation_rows() -> None:
    norm = get_profile("Ascend910B2").overlap_norm
    row = {
        "status": "ok",
        "simulated_s": overlapped_bounds(7e-6, 1e-6, 0.0, norm) + 3e-6,  # as the runtime combines the bounds
        "host_side_s": 0.0,
        "launches": [{"compute_s": 7e-6, "hbm_s": 1e-6, "launch_s": 3e-6, "busy": {"V": 100.0}}],
    }
    rows = [
        {**row, "name": "a", "split": "fit", "measured_s": 2e-5},
        {**row, "name": "b", "split": "validation", "measured_s": 1.0},
    ]
    info = C.fit(rows)
    assert info["fit_kernels"] == ["a"]
    assert info["surrogate_max_rel_dev_at_defaults"] < 1e-9
    only_fit = C.fit(rows[:1])
    assert info["params"] == only_fit["params"]  # the validation row changed nothing


def test_fit_leaves_out_a_measurement_faster_than_the_kernels_own_traffic() -> None:
    """A 910B figure ten times under the HBM time of what the simulated launches move (9 us for a
    matmul's 137 GB) times other work: it stays out of the fit, which would chase it, and says so."""
    norm = get_profile("Ascend910B2").overlap_norm
    row = {
        "status": "ok",
        "split": "fit",
        "simulated_s": overlapped_bounds(7e-6, 1e-6, 0.0, norm) + 3e-6,
        "host_side_s": 0.0,
        "launches": [{"compute_s": 7e-6, "hbm_s": 1e-6, "launch_s": 3e-6, "busy": {"V": 100.0}}],
    }
    rows = [
        {**row, "name": "a", "measured_s": 2e-5},
        {**row, "name": "l2_hits", "measured_s": 0.9e-6},  # under its HBM time, within the L2's margin
        {**row, "name": "other_work", "measured_s": 0.9e-7},
    ]
    info = C.fit(rows)
    assert info["fit_kernels"] == ["a", "l2_hits"]
    assert info["implausible_measurements"] == ["other_work"]
    assert info["params"] == C.fit(rows[:2])["params"]


def test_families_shares_and_host_figures_of_the_report(tmp_path: Path) -> None:
    # names first (the dataset files Argmax under convolution), else the dataset's category
    assert C.op_family("ArgmaxOverADimensionCustom", "convolution") == "reduction"
    assert C.op_family("MinGptNewGeluCustom", "convolution") == "elementwise"
    assert C.op_family("MaxPooling3dCustom", "pooling") == "pooling"
    assert C.op_family("LogSoftmaxCustom", "activation") == "norm"
    assert C.op_family("MatrixScalarMultiplicationCustom", "matmul") == "elementwise"
    assert C.op_family("MatrixVectorMultiplicationCustom", "matmul") == "matmul/conv"
    assert C.op_family("SomethingNew", "") == "other"

    def row(name: str, sim: float, host: float, rss: float, status: str = "ok") -> dict:
        return {
            "name": name,
            "category": "",
            "split": "validation",
            "status": status,
            "simulated_s": sim,
            "measured_s": 1.0,
            "host_s": host,
            "cpu_s": host / 2,
            "peak_rss_mb": rss,
        }

    rows = [
        row("ReluCustom", 1.0, 10, 300),
        row("TanhCustom", 3.0, 20, 500),
        row("GeluCustom", 0.5, 30, 400),
        # a sampled run whose simulation fits in 2 GiB and whose check does not
        {**row("SeluCustom", 0.1, 40, 4500), "sim_peak_rss_mb": 1500.0, "check_peak_rss_mb": 4500.0},
    ]
    assert C.within_share(rows) == 0.5  # 1.0 and 0.5 inside [0.5, 2], 3.0 and 0.1 outside
    skipped = {"name": "X", "split": "validation", "status": "skipped", "cause": "too_long", "host_s": 300}
    hf = C.host_figures([*rows, skipped])
    assert hf["n"] == 4 and hf["too_long"] == 1 and hf["host_median"] == 25 and hf["host_max"] == 40
    assert hf["rss_max_mb"] == 4500 and hf["rss_median_mb"] == 450 and hf["rss_within_2gib"] == 3
    # CPU seconds (wall time is inflated by other jobs): 5, 10, 15, 20
    assert hf["cpu_median"] == 12.5 and hf["cpu_max"] == 20 and hf["cpu_within_20s"] == 4
    assert (hf["sim_rss_n"], hf["sim_rss_within_2gib"], hf["sim_rss_max_mb"]) == (1, 1, 1500)
    assert (hf["check_rss_n"], hf["check_rss_within_2gib"], hf["check_rss_max_mb"]) == (1, 0, 4500)
    report = tmp_path / "r.md"
    C.write_report(report, [*rows, skipped], [], None, "cmd")
    text = report.read_text()
    assert "Within [0.5x, 2x] of the 910B: 50 %" in text
    assert "| elementwise | 4 |" in text
    assert (
        "| 4 | 25 | 38.5 | 40 | 12.5 | 19.2 | 20 | 4 of 4 | 450 | 4500 | 3 of 4 | 1 of 1 | 0 of 1 (4500) | 1 |" in text
    )


def test_a_regenerated_report_keeps_the_sampled_vs_full_section(tmp_path: Path) -> None:
    # bench_sampled --projects writes that section by hand into the report; regenerating the
    # report must not drop it, nor keep the generated sections twice
    report = tmp_path / "r.md"
    C.write_report(report, [], [], None, "cmd")
    first = report.read_text()
    assert "## Sampled vs full" not in first
    report.write_text(first + "\n## Sampled vs full\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    C.write_report(report, [], [], None, "cmd2")
    again = report.read_text()
    assert again.count("## Sampled vs full") == 1 and "| 1 | 2 |" in again
    assert again.count("## What the model cannot capture") == 1 and "cmd2" in again
    assert again.index("## What the model cannot capture") < again.index("## Sampled vs full")


def test_sampled_runs_step_down_through_the_loop_modes() -> None:
    # --loops all: block 0 loop-samples too; a refusal (blocks that wait for each other) reruns with
    # block 0 in full, then without loop sampling
    assert C._loop_modes("all") == ("all", True, False)
    assert C._loop_modes("on") == (True, False)
    assert C._loop_modes("off") == (False,)


def test_the_sampled_check_bounds_the_reference_rows_by_bytes() -> None:
    import torch

    from kernel_gym.verify.correctness import reference_rows_per_call

    small = [torch.empty((64, 1024)), 3]  # 4 KiB rows: the 16-row cap
    big = [torch.empty((4, 64, 1024, 1024), device="meta"), torch.empty((4, 8), device="meta")]  # 256 MiB rows
    assert reference_rows_per_call(small) == 16
    assert reference_rows_per_call(big) == 1
    assert reference_rows_per_call([torch.empty((8, 4 << 20), device="meta")]) == 8  # 16 MiB rows, 128 MiB
    # a conv's output rows dwarf its input rows (3 -> 64 channels): they count twice (a CPU
    # convolution peaks at about twice its output), so 16 rows of 3 MiB in, 58 MiB out become 1
    x = torch.empty((16, 3, 64, 64, 64), device="meta")
    y = torch.empty((16, 64, 62, 62, 62), device="meta")
    assert reference_rows_per_call([x]) == 16 and reference_rows_per_call([x], y) == 1
    assert reference_rows_per_call(small, torch.empty((64, 1024))) == 16  # small rows stay at the cap
    # an output whose dim 0 is not the batch is no row of it
    assert reference_rows_per_call([x], torch.empty((8, 1 << 30), device="meta")) == 16


def test_the_check_keeps_the_lazy_inputs_every_reference_call_reads_whole() -> None:
    # a matmul's B (dim 0 not the rows') is read whole by each reference call: under the check's
    # cap alone every call refilled it; row-sliced, eager and over-1-GiB inputs add nothing more
    import torch

    from kernel_gym.ascendc.sampling import lazy_tensor

    a = lazy_tensor((256, 4096), torch.float32, "uniform", seed=1)
    b = lazy_tensor((4096, 256), torch.float32, "uniform", seed=2)  # 4 MiB
    same_rows = lazy_tensor((256, 8), torch.float32, "uniform", seed=3)
    assert C._check_lazy_cap([a, b]) == C._CHECK_LAZY_CAP + (4 << 20)
    assert C._check_lazy_cap([a, same_rows, 2.0]) == C._CHECK_LAZY_CAP
    assert C._check_lazy_cap([a, torch.empty((4096, 256))]) == C._CHECK_LAZY_CAP
    huge = lazy_tensor((1 << 30, 1), torch.float32, "uniform", seed=4)  # 4 GiB, reserved only
    assert C._check_lazy_cap([a, huge]) == C._CHECK_LAZY_MAX
    # a 1 GiB B stays resident whole beside the cap: at 1 GiB in all, each call evicted and refilled it
    gib = lazy_tensor((1 << 28, 1), torch.float32, "uniform", seed=5)
    assert C._check_lazy_cap([a, gib]) == C._CHECK_LAZY_CAP + (1 << 30) <= C._CHECK_LAZY_MAX
    assert C._check_lazy_cap([]) == C._CHECK_LAZY_CAP


def test_the_stage_peaks_are_read_and_a_reset_keeps_the_earlier_peak() -> None:
    if not os.access("/proc/self/clear_refs", os.W_OK):
        pytest.skip("needs Linux's resettable VmHWM")
    import torch

    buf = torch.ones(64 << 20)  # 256 MiB resident, then given back
    del buf
    first = C._peak_rss_mb(reset=True)
    assert first is not None and C._PEAK_BEFORE_RESET_MB >= first - 0.1  # (first is rounded)
    after = C._peak_rss_mb()
    assert after is not None and after < first - 200  # afresh from the resident size, without the buffer


def test_of_two_references_of_one_name_the_one_whose_shapes_the_project_uses(tmp_path: Path) -> None:
    proj = tmp_path / "ConvCustom"
    (proj / "CppExtension" / "csrc").mkdir(parents=True)
    (proj / "CppExtension" / "csrc" / "op.cpp").write_text('TORCH_CHECK(x.size(1) == 16 && x.size(2) == 1024, "");')
    first, second = tmp_path / "50_conv.py", tmp_path / "63_conv.py"
    first.write_text("batch_size = 10\nin_channels = 3\nheight = 224\n")
    second.write_text("batch_size = 16\nin_channels = 16\nheight = 1024\n")
    found = [(first, "level1", "convolution"), (second, "level1", "convolution")]
    assert C._likeliest_reference(proj, found)[0] == second
    assert C._likeliest_reference(proj, found[:1])[0] == first


def test_where_a_watchdog_stopped_names_the_loop_and_whether_it_is_scalar(tmp_path: Path) -> None:
    from experiments.calibrate_timing import where_stuck

    kernel = tmp_path / "op_kernel"
    kernel.mkdir()
    (kernel / "k.cpp").write_text(
        "__aicore__ void Process() {\n"
        "    for (uint32_t t = 0; t < tiles; ++t) {\n"
        "        DataCopy(xl, xGm[t * 64], 64);\n"
        "        for (uint32_t i = 0; i < 64; ++i) {\n"
        "            acc += xGm.GetValue(t * 64 + i);  // scalar, element by element\n"
        "        }\n"
        "    }\n"
        "}\n"
    )
    by_cycles = (
        "watchdog: block 0 has run for more than 2e+09 simulated cycles (watchdog_cycles): (at op_kernel/k.cpp:5)"
    )
    got = where_stuck(tmp_path, by_cycles)
    assert got == {
        "stuck_at": "op_kernel/k.cpp:5",
        "stuck_by": "cycles",
        "stuck_loop": "4: for (uint32_t i = 0; i < 64; ++i) {",
        "stuck_scalar": True,
    }
    # stopped on the copy: the enclosing loop issues an API call, loop sampling's kind of loop
    by_host = "watchdog: the launch ran for more than 60 s of host time (watchdog_s) (at op_kernel/k.cpp:3)"
    got = where_stuck(tmp_path, by_host)
    assert got["stuck_by"] == "host_s" and got["stuck_loop"].startswith("2: for (uint32_t t")
    assert got["stuck_scalar"] is False
    assert where_stuck(tmp_path, "watchdog: no place named") == {}


def test_a_killed_child_says_whether_the_binding_took_its_arguments() -> None:
    from experiments.calibrate_timing import _progress, _stuck_in

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        _progress("calling", "by name")
    got = _stuck_in(buf.getvalue().encode())
    assert got["mapping"] == "by name" and "took the arguments of mapping 'by name'" in got["detail"]
    with contextlib.redirect_stdout(buf):
        _progress("returned", "by name")
    assert "checking the output" in _stuck_in(buf.getvalue())["detail"]
    assert "before any binding call" in _stuck_in(None)["detail"]


def test_a_reference_splits_after_its_leading_layer_only_where_that_layer_runs_first() -> None:
    """An epilogue-only project's binding takes the output of the reference's leading convolution
    (EvoKernel's ModelNew runs it in PyTorch): the split must reproduce the model exactly and
    refuse models whose first step is not that layer."""
    import torch

    class ConvGeluGroupNorm(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv_transpose = torch.nn.ConvTranspose2d(4, 8, 3)
            self.group_norm = torch.nn.GroupNorm(2, 8)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.group_norm(torch.nn.functional.gelu(self.conv_transpose(x)))

    class ScaleThenConv(ConvGeluGroupNorm):  # the layer is not the first step
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.conv_transpose(x * 2.0)

    class NormFirst(torch.nn.Module):  # the first child is no convolution or linear layer
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.GroupNorm(2, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.norm(x)

    torch.manual_seed(0)
    x = torch.rand(3, 4, 5, 5)
    model = ConvGeluGroupNorm()
    split = C.epilogue_split(model, [x])
    assert split is not None and split.name == "conv_transpose" and split.head_row_shape == (1, 8, 7, 7)
    with torch.no_grad():
        assert torch.allclose(split.tail(split.head(x)), model(x), atol=1e-6)
    assert [n for n, _ in split.tail.named_parameters()] == ["group_norm.weight", "group_norm.bias"]
    assert C.epilogue_split(ScaleThenConv(), [x]) is None
    assert C.epilogue_split(NormFirst(), [x]) is None


def test_a_binding_given_none_of_the_leading_layers_weights_tries_the_epilogue_mapping_first() -> None:
    """Conv3dMishTanh's binding takes one tensor: mapped to the model's input it cannot compute the
    convolution (no weights), and simulating that mapping first cost a whole published-shape run."""
    import torch

    class ConvMish(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(4, 8, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.mish(self.conv(x))

    torch.manual_seed(0)
    model, x = ConvMish(), torch.rand(2, 4, 6, 6)
    order = [label for label, *_ in C._mappings(["tensor"], [x], model, [], None)]
    assert order == ["conv in PyTorch, then inputs", "inputs"]
    # a binding that takes the weights (x, weight, bias) computes the layer itself: its own mapping first
    order = [label for label, *_ in C._mappings(["tensor"] * 3, [x], model, [], None)]
    assert order[0] == "inputs+parameters"
    # no leading layer: the own mappings alone
    assert [label for label, *_ in C._mappings(["tensor"], [x], torch.nn.ReLU(), [], None)] == ["inputs"]


# x + bias after a linear layer the binding does not take: the Plus project gets the layer's output
_LINEAR_THEN_BIAS = (
    "class Model(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.linear = torch.nn.Linear(256, 256)\n"
    "        self.bias = torch.nn.Parameter(torch.randn(8, 256))\n"
    "    def forward(self, x):\n        return self.linear(x) + self.bias\n"
    "def get_inputs():\n    return [torch.rand(8, 256)]\n"
)


@pytest.mark.slow  # builds and simulates one operator project, in full and sampled
def test_an_epilogue_project_is_fed_the_output_of_the_leading_layer(tmp_path: Path) -> None:
    plus = _KERNELS[0]
    _dataset(
        tmp_path,
        [(plus[0], "BiasPlusCustom", "Add", "KernelBench/level2", "7_Bias_Plus.py", _LINEAR_THEN_BIAS, 0.004)],
    )
    out = tmp_path / "out"
    args = ["--data", str(tmp_path), "--out", str(out), "--inline", "--stages", "run"]
    # in full (its tensors within --max-bytes), then sampled with a lazy layer output
    for bound in (1 << 30, 1024):
        assert C.main([*args, "--max-bytes", str(bound), "--fresh"]) == 0
        [row] = C._read_jsonl(out / C.RESULTS_DEFAULT)
        assert row["status"] == "ok", row
        assert row["mapping"].startswith("linear in PyTorch, then "), row
        assert bool(row.get("sampled")) == (bound == 1024)
        # the dataset's figure times the whole model, the layer too: kept apart, not compared
        assert row["measured_s"] is None and row["measured_model_s"] == pytest.approx(4e-6)


def test_the_report_names_files_without_this_machines_paths():
    from experiments.calibrate_timing import _portable

    msg = "compilation failed: /home/u/x/kernel_gym/ascendc/include/kgsim/base.h:41:24: error (from /d/EvoKernel/ops-kernelbench-910b/G/op_kernel/g.cpp:3)"
    assert _portable(msg) == (
        "compilation failed: kernel_gym/ascendc/include/kgsim/base.h:41:24: error "
        "(from ops-kernelbench-910b/G/op_kernel/g.cpp:3)"
    )


def test_the_check_keeps_the_models_lazy_parameters_resident() -> None:
    # a published-shape nn.Linear's weight, built lazily, is read whole by every reference call
    import torch

    from kernel_gym.ascendc.sampling import LazyParameters, lazy_tensor

    a = lazy_tensor((256, 1024), torch.float32, "uniform", seed=1)
    with LazyParameters(seed=3, min_bytes=1 << 20):
        model = torch.nn.Linear(1024, 1024)  # a 4 MiB lazy weight, a 4 KiB eager bias
    assert C._check_lazy_cap([a], model) == C._CHECK_LAZY_CAP + (4 << 20)
    assert C._check_lazy_cap([a], torch.nn.Linear(8, 8)) == C._CHECK_LAZY_CAP


_WIDE_REFERENCE = """import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(8, 4096)
    def forward(self, x):
        return (self.up(x) * 2.0).amax(dim=1, keepdim=True)
def get_inputs():
    return [torch.rand(64, 8)]
def get_init_inputs():
    return []
"""


def test_a_reference_with_a_large_intermediate_runs_on_batch_rows_in_turn(tmp_path: Path) -> None:
    # KernelBench level-2 #89/#96: 25-33 MiB of inputs and outputs, but a ConvTranspose3d output of
    # 1 GiB inside the forward took the full reference to 3.4 GiB resident. The meta run finds the
    # largest tensor the forward makes, and the reference then runs on rows that keep it in budget,
    # every output row still computed
    import torch

    ref = tmp_path / "wide.py"
    ref.write_text(_WIDE_REFERENCE)
    total, largest = C._reference_sizes(str(ref))
    assert largest == 64 * 4096 * 4  # the linear layer's output (1 MiB), not the 256 B output
    assert total == 64 * 8 * 4 + (8 * 4096 + 4096) * 4 + 64 * 4
    ns: dict = {}
    exec(_WIDE_REFERENCE, ns)  # noqa: S102
    torch.manual_seed(0)
    model, x = ns["Model"](), torch.rand(64, 8)
    seen: list[int] = []
    model.up.register_forward_hook(lambda _m, args, _out: seen.append(args[0].shape[0]))
    with torch.no_grad():
        want = model(x)
        seen.clear()
        got = C._reference_output(model, [x], largest, budget=largest // 4)
    assert torch.equal(got, want)
    assert seen[-4:] == [16, 16, 16, 16]  # after the separability probe: 4 calls of 16 rows
    seen.clear()
    with torch.no_grad():
        C._reference_output(model, [x], largest)  # within the budget: one call, as before
    assert seen == [64]


def test_soc_overrides_must_name_known_constants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _dataset(tmp_path)
    cases = {
        "unknown.json": ('{"no_such_constant": 2}', "no constant no_such_constant"),
        "nested.json": ('{"scalar_block_cycles": {"value": 2}}', "flat object"),
        "broken.json": ("{", "cannot read it as JSON"),
    }
    for name, (text, said) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(SystemExit) as e:
            C.main(["--data", str(tmp_path), "--out", str(tmp_path / "out"), "--soc-overrides", str(tmp_path / name)])
        assert e.value.code == 2 and said in capsys.readouterr().err, name
    assert not (tmp_path / "out").exists()  # refused before anything ran


@pytest.mark.slow  # builds and simulates one operator project, twice
def test_soc_overrides_time_every_row_with_the_variant_and_say_so(tmp_path: Path) -> None:
    _dataset(tmp_path, _KERNELS[:1])
    variant = tmp_path / "variant.json"
    variant.write_text('{"launch_base_s": 0.001}')  # a millisecond per launch: far over the kernel's own time
    args = ["--data", str(tmp_path), "--inline", "--stages", "run"]
    assert C.main([*args, "--out", str(tmp_path / "a")]) == 0
    assert C.main([*args, "--out", str(tmp_path / "b"), "--soc-overrides", str(variant)]) == 0
    [plain] = C._read_jsonl(tmp_path / "a" / C.RESULTS_DEFAULT)
    [varied] = C._read_jsonl(tmp_path / "b" / C.RESULTS_DEFAULT)
    assert plain["status"] == varied["status"] == "ok"
    assert "soc_overrides" not in plain and varied["soc_overrides"] == {"launch_base_s": 0.001}
    assert varied["simulated_s"] >= 0.001 > plain["simulated_s"]


def test_the_child_takes_the_reference_sizes_the_parent_computed(tmp_path: Path) -> None:
    """The parent sizes every reference on the meta device to order the run; the child takes its
    figures instead of a second meta forward (0.8 CPU s of a matmul's child)."""
    from dataclasses import asdict

    spec = asdict({s.name: s for s in C.discover(_dataset(tmp_path))}["PlusCustom"])
    opts = {"max_bytes": 1, "sampled_blocks": 0, "max_sampled_bytes": 1 << 40}  # every kernel over it
    own = C._run_one(spec, opts)  # sized by the child itself
    assert own["status"] == "skipped" and 0 < own["input_bytes"] < (1 << 20)
    told = C._run_one(spec, {**opts, "reference_sizes": [5 << 30, 0]})
    assert told["status"] == "skipped" and told["cause"] == "too_large"
    assert told["input_bytes"] == 5 << 30
