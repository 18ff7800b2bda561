"""CANN's matmul template library (catlass) as a corpus: each basic matmul example of the Atlas A2
list, built unmodified against the simulator (headers, ACL shim) and run with its own golden check.

    python -m experiments.catlass_corpus --root DIR [--examples 00_basic_matmul ...] [--jobs 2]
        [--json out.json]

DIR is a work tree of catlass at the pinned commit (CATLASS_COMMIT), e.g. from a bare mirror:
``git --git-dir=<mirror> archive <commit> | tar -x -C DIR``. Each example is built as its CMake
target is (CATLASS_ARCH=2201, its include directories, the kernel type its target names: cube,
mix or vec) from the example's .cpp files, catlass's include/ and examples/common/; it runs with a
small problem shape and passes when its own comparison prints "Compare success." (the golden
matmul of examples/common/golden). The table lists build / match / blocker per example.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

CATLASS_COMMIT = "b71539e306ca29f82a6f55282e867b8a1f8e0b97"
CATLASS_REPO = "mirror-cann/catlass"

# The basic matmul examples: those of catlass's Atlas A2 example list (examples/CMakeLists.txt,
# EXAMPLE_ATLASA2) named *matmul* without quantisation (not the quant / dequant / fp8 / w8a16 /
# w4a8 / w4a4 / sparse ones, nor the dynamic-tiling 102/103, which are not plain CMake targets),
# with the arguments they run with (the Options type each parses; small shapes, kept short).
GEMM_ARGS = ("256", "512", "384")
GROUPED_ARGS = ("2", "256", "512", "384")
BASIC_MATMUL_EXAMPLES: dict[str, tuple[str, ...]] = {
    "00_basic_matmul": GEMM_ARGS,
    "01_batched_matmul": GROUPED_ARGS,
    "02_grouped_matmul_slice_m": GROUPED_ARGS,
    "03_matmul_add": GEMM_ARGS,
    "04_padding_matmul": GEMM_ARGS,
    "05_grouped_matmul_slice_k": GROUPED_ARGS,
    "06_optimized_matmul": GEMM_ARGS,
    "08_grouped_matmul": GROUPED_ARGS,
    "09_splitk_matmul": GEMM_ARGS,
    "13_basic_matmul_tla": GEMM_ARGS,
    "14_optimized_matmul_tla": GEMM_ARGS,
    "20_matmul_bias": GEMM_ARGS,
    "21_basic_matmul_preload_zN": GEMM_ARGS,
    "22_padding_splitk_matmul": GEMM_ARGS,
    "25_matmul_full_loadA": GEMM_ARGS,
    "26_matmul_relu": GEMM_ARGS,
    "27_matmul_gelu": GEMM_ARGS,
    "28_matmul_silu": GEMM_ARGS,
    "31_small_matmul": ("256", "512", "256"),  # its README: k <= L1TileShape::K, tiles <= cube cores
    "34_single_core_splitk_matmul": GEMM_ARGS,
    "37_streamk_matmul": GEMM_ARGS,
    "45_strided_batched_matmul_tla": GROUPED_ARGS,
}
# The rest of the A2 list's matmul examples (quantised, fp8, int4, sparse): run with --all, tabulated
# apart; the target counts the basic ones.
OTHER_MATMUL_EXAMPLES: dict[str, tuple[str, ...]] = {
    "07_grouped_matmul_slice_m_per_token_dequant_moe": GROUPED_ARGS,
    "10_grouped_matmul_slice_m_per_token_dequant": GROUPED_ARGS,
    "11_grouped_matmul_slice_k_per_token_dequant": GROUPED_ARGS,
    "12_quant_matmul": GEMM_ARGS,
    "29_a2_fp8_e4m3_matmul": GEMM_ARGS,
    "30_w8a16_matmul": GEMM_ARGS,
    "32_w4a8_matmul": GEMM_ARGS,
    "38_w4a4_matmul_per_token_per_channel_dequant": GEMM_ARGS,
    "41_sparse_matmul_tla": GEMM_ARGS,
    "42_quant_optimized_matmul_tla": GEMM_ARGS,
    "44_quant_matmul_full_loadA_tla": GEMM_ARGS,
    "52_quant_multi_core_splitk_matmul_tla": GEMM_ARGS,
}
_KERNEL_TYPES = {"cube": "KERNEL_TYPE_AIC_ONLY", "mix": "KERNEL_TYPE_MIX_AIC_1_2", "vec": "KERNEL_TYPE_AIV_ONLY"}
_TARGET = re.compile(r"catlass_example_add_executable\(\s*(\S+)\s+(\w+)\s+([^)]*)\)")
_SUCCESS = "Compare success."
DOC = Path(__file__).resolve().parent.parent / "docs" / "ascendc_compat.md"
SECTION_BEGIN = "<!-- catlass corpus: begin (python -m experiments.catlass_corpus --write-doc) -->"
SECTION_END = "<!-- catlass corpus: end -->"


def library_files(root: Path) -> dict[str, str]:
    """catlass's headers and the examples' common headers, at the paths the build's -I gives them."""
    files: dict[str, str] = {}
    for base in (root / "include", root / "examples" / "common"):
        for p in sorted(base.rglob("*")):
            if p.suffix in (".hpp", ".h") and p.is_file():
                files[str(p.relative_to(base))] = p.read_text(errors="replace")
    return files


def example_target(root: Path, name: str) -> tuple[str, list[str]]:
    """(kernel type, source files) of an example's CMake target."""
    cmake = (root / "examples" / name / "CMakeLists.txt").read_text()
    m = _TARGET.search(cmake)
    if m is None:
        raise ValueError(f"{name}: no catlass_example_add_executable target in its CMakeLists.txt")
    optype, sources = m.group(2), m.group(3).split()
    if optype not in _KERNEL_TYPES or any("$" in s for s in sources):
        raise ValueError(f"{name}: target type {optype!r} / sources {sources} not handled")
    return _KERNEL_TYPES[optype], sources


def _blocker(text: str) -> str:
    """The first line that names what stopped an example (a compile error, a fault)."""
    for pat in (r"missing_api: [^\n]*", r"error: [^\n]*", r"kernel fault: [^\n]*", r"Compare failed[^\n]*"):
        m = re.search(pat, text)
        if m:
            return m.group(0)[:240]
    return text.strip().splitlines()[-1][:240] if text.strip() else "no output"


def run_example(root: Path, name: str, library: dict[str, str], timeout_s: float = 600.0) -> dict[str, object]:
    """Build and run one example; its row of the table."""
    from kernel_gym.ascendc.errors import AscendCCompileError
    from kernel_gym.ascendc.sample import run_sample

    row: dict[str, object] = {"example": name, "build": False, "match": False, "blocker": ""}
    t0 = time.perf_counter()
    try:
        ktype, sources = example_target(root, name)
        files = dict(library)
        example_dir = root / "examples" / name
        for p in sorted(example_dir.rglob("*")):
            rel = str(p.relative_to(example_dir))
            if p.is_file() and (rel in sources or p.suffix in (".hpp", ".h")):
                files[rel] = p.read_text(errors="replace")
        defines: dict[str, str | int] = {"CATLASS_ARCH": 2201, "CATLASS_EXAMPLE_NAME": name, "KGSIM_KERNEL_TYPE": ktype}
        args = BASIC_MATMUL_EXAMPLES.get(name) or OTHER_MATMUL_EXAMPLES.get(name, GEMM_ARGS)
        run = run_sample(files, argv=args, defines=defines, timeout_s=timeout_s)
        row["build"] = True
        row["match"] = run.ok and _SUCCESS in run.stdout
        if not row["match"]:
            row["blocker"] = _blocker((run.error or "") + "\n" + run.stderr + "\n" + run.stdout)
        row["pipe_race_warnings"] = sum(
            1 for r in run.launches for w in r.warnings if w.get("error_class") == "pipe_race"
        )
    except AscendCCompileError as exc:
        row["blocker"] = _blocker(str(exc))
    except ValueError as exc:
        row["blocker"] = str(exc)
    row["seconds"] = round(time.perf_counter() - t0, 1)
    return row


def table(rows: Sequence[dict[str, object]]) -> str:
    lines = ["| example | build | match | blocker |", "|---|---|---|---|"]
    for r in rows:
        blocker = str(r["blocker"]).replace("|", "\\|")
        lines.append(
            f"| {r['example']} | {'yes' if r['build'] else 'no'} | {'yes' if r['match'] else 'no'} | {blocker} |"
        )
    built = sum(1 for r in rows if r["build"])
    matched = sum(1 for r in rows if r["match"])
    lines.append(
        f"\nbuilt {built}/{len(rows)}, matched {matched}/{len(rows)} ({100.0 * matched / max(1, len(rows)):.0f} %)"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, required=True, help=f"catlass work tree at commit {CATLASS_COMMIT}")
    ap.add_argument("--examples", nargs="*", default=list(BASIC_MATMUL_EXAMPLES), help="example directories")
    ap.add_argument("--all", action="store_true", help="also the quantised / fp8 / int4 / sparse matmul examples")
    ap.add_argument("--jobs", type=int, default=1, help="examples built at once")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument("--write-doc", action="store_true", help="write the table into docs/ascendc_compat.md")
    ap.add_argument("--render", type=Path, help="only write the doc from this --json file (no runs)")
    args = ap.parse_args(argv)
    if not (args.root / "include" / "catlass").is_dir():
        print(f"--root {args.root}: not a catlass work tree (no include/catlass); extract commit {CATLASS_COMMIT}")
        return 2
    if args.render:
        write_doc(json.loads(args.render.read_text())["rows"])
        return 0
    if args.all:
        args.examples = [*args.examples, *(n for n in OTHER_MATMUL_EXAMPLES if n not in args.examples)]
    library = library_files(args.root)
    t0 = time.perf_counter()
    done: dict[str, dict[str, object]] = {}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_example, args.root, n, library): n for n in args.examples}
        for fut in as_completed(futures):
            row = fut.result()
            done[str(row["example"])] = row
            print(f"{row['example']}: build={row['build']} match={row['match']} {row['blocker']}", flush=True)
    rows = [done[n] for n in args.examples]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    head = f"catlass {CATLASS_REPO}@{CATLASS_COMMIT[:12]}, {len(rows)} examples"
    wall = f"wall {time.perf_counter() - t0:.0f} s, child CPU {usage.ru_utime + usage.ru_stime:.0f} s"
    print(head)
    print(table(rows))
    print(wall)
    if args.json:
        args.json.write_text(json.dumps({"commit": CATLASS_COMMIT, "rows": rows}, indent=1))
    if args.write_doc:
        write_doc(rows)
    return 0


NOTES = """What the simulator does for catlass (details: docs/ascendc_simulator.md, "Template library kernels"):
per-core-type member specialisations and `g_coreType` constants rewritten line for line
(`kernel_gym/ascendc/core_type_dispatch.py`), in-class class-template specialisations turned into partial
ones, `<<<>>>` in headers, the kernel type from the CMake target (`KGSIM_KERNEL_TYPE`), `op::fp16_t` /
`op::bfloat16`, `aclrtGetHardwareSyncAddr`, the 7 KB fixpipe buffer, `unitFlag` Mmad -> Fixpipe handover,
the L1 -> bias table move with fp16 -> fp32 conversion, and integer division by zero in kernel code
(no exception on the AI Core; catlass's preload kernels compute `x % 0` for a block that does not exist).

Not in this corpus: the quantised A2 matmul examples (07, 10, 11, 12, 29, 30, 32, 38, 42, 44, 52: they need
`SetFixPipeConfig` / per-channel quantisation in the fixpipe buffer, int4 and fp8 paths, declared here but an
`unsupported_api` fault when called), the sparse one (41: `LoadDataWithSparse`, declared, unsupported), the
dynamic-tiling 102/103 (no plain CMake target), and the Ascend 950 examples (another architecture).
Blockers of the other matmul examples, for the next step: the simulator's `TPipe` is not copyable (CANN's is),
and kernels that hold `Arch::Resource` (which holds a TPipe) by value are copied or assigned (10, 12, 30, 32);
the tla quantised kernels (42, 44, 52) and the sparse one (41) fail overload resolution in their own
argument types (not yet analysed); 38 copies int4 through `DataCopy(Nd2NzParams)`, which the simulator
refuses for int4b_t.
Known partial models: `SetHF32Mode` keeps fp32 operands (at least as accurate), the L1 -> BT move's MTE1 time
is not charged, a `unitFlag` Fixpipe waits for the whole Mmad (no fractal-wise overlap: time an upper bound)."""


def kept_catlass_section(doc: Path) -> str:
    """The catlass section of ``doc`` (with a leading blank line), for a writer that regenerates the
    rest of the file (experiments.cann_ops_corpus); empty when there is none."""
    text = doc.read_text() if doc.exists() else ""
    if SECTION_BEGIN not in text or SECTION_END not in text:
        return ""
    a, b = text.index(SECTION_BEGIN), text.index(SECTION_END) + len(SECTION_END)
    return "\n" + text[a:b] + "\n"


def write_doc(rows: Sequence[dict[str, object]]) -> None:
    """Replace (or append) the catlass section of docs/ascendc_compat.md."""
    body = "\n".join(
        [
            SECTION_BEGIN,
            "## catlass (CANN's matmul template library): basic matmul examples",
            "",
            f"Corpus: {CATLASS_REPO} at commit `{CATLASS_COMMIT}`, kept outside the repository. Each",
            "example of the Atlas A2 list without quantisation, unmodified, built as its CMake target and run",
            "with its own golden comparison (pass: it prints `Compare success.`). Regenerate:",
            "`python -m experiments.catlass_corpus --root <catlass work tree> --write-doc`.",
            "",
            table([r for r in rows if r["example"] not in OTHER_MATMUL_EXAMPLES]),
            *(
                [
                    "",
                    "The other matmul examples of the A2 list (quantised, fp8, int4, sparse; not counted above):",
                    "",
                    table(others),
                ]
                if (others := [r for r in rows if r["example"] in OTHER_MATMUL_EXAMPLES])
                else []
            ),
            "",
            NOTES,
            SECTION_END,
        ]
    )
    text = DOC.read_text() if DOC.exists() else ""
    if SECTION_BEGIN in text and SECTION_END in text:
        a = text.index(SECTION_BEGIN)
        b = text.index(SECTION_END) + len(SECTION_END)
        text = text[:a] + body + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    DOC.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
