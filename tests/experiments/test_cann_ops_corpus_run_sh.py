"""What the cann-ops harness reads from an example's run.sh besides its verify calls: the variables it
exports and the arguments it passes the example's binary (radius passes what gen_data.py printed)."""

from experiments.cann_ops_corpus import _main_args, _run_env

RUN_SH = """
source $_ASCEND_INSTALL_PATH/bin/setenv.bash
export DDK_PATH=$_ASCEND_INSTALL_PATH
export COMPUTE_TYPE=int32
export CASE_ID=1
ret=`python3 gen_data.py`
(
    cd build
    ./execute_radius_op $ret
)
ret=`python3 verify_result.py output/output_y.bin output/golden.bin`
"""


def test_literal_exports_reach_the_environment():
    assert _run_env(RUN_SH) == {"COMPUTE_TYPE": "int32", "CASE_ID": "1"}  # not DDK_PATH: it reads another variable


def test_the_binary_gets_what_gen_data_printed():
    assert _main_args(RUN_SH, "2 37\n") == ["2", "37"]
    assert _main_args(RUN_SH.replace("$ret", "4 ${ret}"), "9") == ["4", "9"]
    assert _main_args(RUN_SH.replace(" $ret", ""), "2 37") == []
    assert _main_args("ret=`python3 gen_data.py`\n./execute_op $OTHER 3\n", "2") == ["3"]
