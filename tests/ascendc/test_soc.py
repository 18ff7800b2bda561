"""SoC profiles: the spec's table, and a source for every constant."""

import pytest

import kernel_gym.ascendc as asc


def test_profiles_exist_with_the_spec_table():
    table = {"Ascend910B1": (24, 48), "Ascend910B2": (24, 48), "Ascend910B3": (20, 40), "Ascend910B4": (20, 40)}
    for name, (aic, aiv) in table.items():
        p = asc.SOC_PROFILES[name]
        assert (p.aic_cores, p.aiv_cores) == (aic, aiv)
        assert p.ub_bytes == 192 * 1024 and p.l1_bytes == 512 * 1024
        assert p.l0a_bytes == p.l0b_bytes == 64 * 1024 and p.l0c_bytes == 128 * 1024
        assert p.clock_hz == 1.85e9
        assert p.usable_ub_bytes == 192 * 1024
    assert asc.SOC_PROFILES["Ascend910B2"].hbm_bytes_per_s == 1.6e12
    assert asc.SOC_PROFILES["Ascend910B4"].hbm_bytes_per_s == 0.8e12
    assert "assumed" in asc.SOC_PROFILES["Ascend910B4"].source("hbm_bytes_per_s")
    assert "assumed" in asc.SOC_PROFILES["Ascend910B3"].source("clock_hz")


def test_every_constant_has_a_source():
    for name, prof in asc.SOC_PROFILES.items():
        for key, const in prof:
            assert isinstance(const, asc.Const)
            # a published fact (CANN, a spec), an assumption said as such, or fitted on the fit split
            assert const.source and any(w in const.source for w in ("assumed", "spec", "CANN", "fitted")), (name, key)


def test_every_runtime_constant_comes_from_the_profile():
    _, rt = asc.runtime_library()
    names = rt.kgsim_config_names().decode().split(",")
    cfg = asc.SOC_PROFILES["Ascend910B2"].to_config()
    options = {"align_strict", "bounds_strict", "check_uninit", "sync_check", "race_check", "watchdog_calls", "watchdog_s",
               "watchdog_cycles"}
    assert set(names) - set(cfg) == options


def test_overrides_and_ub_knob():
    base = asc.SOC_PROFILES["Ascend910B2"]
    p = base.with_overrides(ub_compiler_reserved_bytes=8 * 1024)
    assert p.usable_ub_bytes == 184 * 1024 and p.source("ub_compiler_reserved_bytes") == "override"
    with pytest.raises(KeyError):
        base.with_overrides(nonsense=1)
    with pytest.raises(ValueError):
        asc.get_profile("Ascend310P")
