import pytest

import kernel_gym.ascendc as asc
from tests.ascendc import kernels


@pytest.fixture(scope="session")
def elementwise_mod():
    return asc.load(kernels.ELEMENTWISE, name="elementwise.cpp")


@pytest.fixture(scope="session")
def misc_mod():
    return asc.load(kernels.MISC, name="misc.cpp")


@pytest.fixture(scope="session")
def stream_mod():
    return asc.load(kernels.STREAM_ADD, name="stream_add.cpp")


@pytest.fixture(scope="session")
def axpy_mod():
    return asc.load(kernels.TILED_AXPY, name="axpy.cpp")


@pytest.fixture(scope="session")
def faults_mod():
    # strict: the fault catalogue includes the 32-byte DataCopy rule and accesses past a
    # LocalTensor inside the UB, which the NPU (and the default mode) carry out with a warning
    return asc.load(kernels.FAULTS, name="faults.cpp", watchdog_calls=2e5, align_mode="strict", bounds_mode="strict")
