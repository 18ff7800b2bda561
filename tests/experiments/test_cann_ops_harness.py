"""experiments.cann_ops_corpus: how an example's run.sh is read (its variables, the arguments it
gives gen_data.py, main and verify_result.py) and the simulated `npu-smi info -m` its scripts call."""

from __future__ import annotations

import subprocess

from experiments.cann_ops_corpus import _main_args, _npu_smi, _shell_variables, _verify_commands

RUN_SH = """#!/bin/bash
case_name=${1:-"case2"}  # the case to run
OUT_DIR=output
_ASCEND_INSTALL_PATH=$ASCEND_HOME_PATH
python3 gen_data.py $case_name
./execute_probe_op $case_name $UNSET_VAR
ret=`python3 verify_result.py ${OUT_DIR}/y.bin output/golden_$case_name.bin`
"""


def test_run_sh_variables_reach_each_command():
    assert _shell_variables(RUN_SH) == {"case_name": "case2", "OUT_DIR": "output"}
    # a word naming a variable the script does not set (from the environment) is left out
    assert _main_args(RUN_SH, "") == ["case2"]
    assert _verify_commands(RUN_SH) == [(True, ["verify_result.py", "output/y.bin", "output/golden_case2.bin"])]


def test_npu_smi_answers_info_m_in_its_layout(tmp_path):
    tool = tmp_path / "npu-smi"
    tool.write_text(_npu_smi("Ascend910B3"))
    tool.chmod(0o755)
    out = subprocess.run([str(tool), "info", "-m"], capture_output=True, text=True, check=True).stdout
    header, device, mcu = out.strip().split("\n")
    assert header.split() == ["NPU", "ID", "Chip", "ID", "Chip", "Logic", "ID", "Chip", "Name"]
    fields = device.split()
    assert fields[:3] == ["0", "0", "0"] and fields[3] + fields[4] == "Ascend910B3"
    assert mcu.split()[-1] == "Mcu"
    other = subprocess.run([str(tool), "info"], capture_output=True, text=True, check=False)
    assert other.returncode != 0 and "only 'info -m'" in other.stderr


def test_include_dirs_of_the_projects_cmakelists_resolve_a_sibling_projects_header(tmp_path):
    """A project's CMakeLists puts another project's op_host on its include path (as the library's
    conv2d_backprop_input_v2 does for conv3d's tiling header): the header is found there, and the
    headers it includes in turn; src/common/inc stays first."""
    from experiments.cann_ops_corpus import _classify, _cmake_include_dirs, _common_headers

    sibling = tmp_path / "src" / "conv" / "other_op" / "op_host"
    sibling.mkdir(parents=True)
    (sibling / "other_tiling.h").write_text('#include "shared_util.h"\nstruct OtherTiling { int a; };\n')
    util = tmp_path / "src" / "common" / "op_host" / "op_tiling"
    util.mkdir(parents=True)
    (util / "shared_util.h").write_text("#define SHARED 1\n")
    (tmp_path / "src" / "common" / "inc").mkdir(parents=True)
    cmake = """target_include_directories(optiling PRIVATE
        ${CMAKE_CURRENT_SOURCE_DIR}/op_host
        ${CMAKE_SOURCE_DIR}/src/common/inc
        ${CMAKE_SOURCE_DIR}/src/common/op_host/op_tiling
        ${CMAKE_SOURCE_DIR}/src/conv/other_op/op_host
        ${CMAKE_SOURCE_DIR}/src/conv/not_there
)
target_sources(optiling PRIVATE ${CMAKE_SOURCE_DIR}/src/conv/other_op/op_host/x.cpp)"""
    dirs = _cmake_include_dirs(tmp_path, cmake)
    assert dirs == [util, sibling]  # listed directories that exist, src/common/inc left to its own rule
    found = _common_headers(tmp_path, ['#include "other_tiling.h"\n'], dirs)
    assert set(found) == {"other_tiling.h", "shared_util.h"}
    assert _common_headers(tmp_path, ['#include "other_tiling.h"\n']) == {}  # not on the path without them
    # a header of a third-party library the library's own build downloads: the environment's
    assert _classify("missing_api: nlohmann/json.hpp (op_tiling/x.h:19)")[1] == "environment"
    assert _classify("missing_api: kernel_foo.h (op_kernel/y.cpp:3)")[1] == "simulator"
