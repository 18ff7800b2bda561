"""kernel_gym.native: extern "C" parsing, cached compilation, ctypes binding."""

import time

import pytest
import torch

from kernel_gym.backends.cpu import load_cpp
from kernel_gym.native import CompileError, compile_shared, parse_extern_c

SOURCE = r'''
#include <cstdint>
// extern "C" void commented_out(int x) {}
extern "C" void scale(const float* __restrict__ x, float* y, int64_t n, float alpha) {
    for (int64_t i = 0; i < n; ++i) y[i] = alpha * x[i];
}
extern "C" {
int add_ints(int a, int b) { if (a > b) { return a + b; } return b + a; }
double half_sum(const _Float16* x, int64_t n) { double s = 0; for (int64_t i = 0; i < n; ++i) s += (double)x[i]; return s; }
}
'''
KERNEL_DECL = 'extern "C" __global__ __aicore__ void device_kernel(GM_ADDR x) { }\n'


def test_parse_extern_c_both_forms_skips_comments_and_kernels():
    funcs = {f.name: f for f in parse_extern_c(SOURCE + KERNEL_DECL)}
    assert set(funcs) == {"scale", "add_ints", "half_sum"}
    scale = funcs["scale"]
    assert [p.ctype for p in scale.params] == ["float*", "float*", "int64_t", "float"]
    assert [p.name for p in scale.params] == ["x", "y", "n", "alpha"]
    assert funcs["add_ints"].return_type == "int"
    assert funcs["half_sum"].params[0].pointee == "_Float16"


def test_load_cpp_calls_with_tensors_and_scalars():
    lib = load_cpp(SOURCE, openmp=False)
    x = torch.randn(1000)
    y = torch.empty(1000)
    lib.scale(x, y, x.numel(), 2.5)
    torch.testing.assert_close(y, 2.5 * x)
    assert lib.add_ints(2, 3) == 5
    h = torch.ones(10, dtype=torch.float16)
    assert lib.half_sum(h, 10) == pytest.approx(10.0)


def test_binding_errors_are_clear():
    lib = load_cpp(SOURCE, openmp=False)
    x = torch.randn(10)
    with pytest.raises(TypeError, match="float\\* but the tensor is torch.float64"):
        lib.scale(x.double(), x, 10, 1.0)
    with pytest.raises(ValueError, match="not contiguous"):
        lib.scale(torch.randn(4, 4).t(), torch.empty(16), 16, 1.0)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        lib.scale(x, x)
    with pytest.raises(AttributeError, match="it has: scale, add_ints, half_sum"):
        lib.nope


def test_compile_is_cached_by_content():
    src = SOURCE + "\n// cache probe %f\n" % time.time()
    start = time.perf_counter()
    first = compile_shared(src, flags=["-O1"], cache_subdir="test")
    cold = time.perf_counter() - start
    start = time.perf_counter()
    again = compile_shared(src, flags=["-O1"], cache_subdir="test")
    warm = time.perf_counter() - start
    assert first == again and first.exists()
    assert warm < cold
    assert compile_shared(src, flags=["-O2"], cache_subdir="test") != first  # flags are in the key


def test_compile_error_carries_the_log():
    with pytest.raises(CompileError) as info:
        compile_shared('extern "C" void f() { undefined_thing(); }', cache_subdir="test")
    assert "undefined_thing" in info.value.log
    assert "compilation failed" in str(info.value)


def test_load_cpp_without_entry_point_says_how():
    with pytest.raises(ValueError, match='extern "C"'):
        load_cpp("int f() { return 1; }")


def _unit_objects() -> set[str]:
    from kernel_gym.native import cache_root

    return {p.name for p in (cache_root() / "test" / "objects").glob("*.o")}


def test_units_compile_apart_and_reuse_unchanged_objects():
    # two units and the header one of them includes; a unit's object is rebuilt only when its
    # own text or a file it includes changed
    probe = f"// units probe {time.time():f}\n"
    sources = {
        "a.cpp": probe + '#include "shared.h"\nextern "C" int twice(int x) { return SCALE * x; }\n',
        "b.cpp": probe
        + 'static int helper(int x) { return x + 1; }\nextern "C" int next_int(int x) { return helper(x); }\n',
        "shared.h": "#define SCALE 2\n",
    }
    before = _unit_objects()
    lib = load_cpp_sources(sources)
    assert lib.twice(21) == 42 and lib.next_int(1) == 2
    first = _unit_objects() - before
    assert len(first) == 2

    # the header changes: only a.cpp's object is new
    lib = load_cpp_sources({**sources, "shared.h": "#define SCALE 3\n"})
    assert lib.twice(2) == 6 and lib.next_int(2) == 3
    assert len(_unit_objects() - before - first) == 1

    # an error in one unit is reported as one g++ call reports it, with that unit's line
    with pytest.raises(CompileError) as info:
        compile_shared(
            {**sources, "b.cpp": probe + 'extern "C" int broken() { return missing_name; }\n'}, cache_subdir="test"
        )
    assert "b.cpp:2" in str(info.value) and "missing_name" in info.value.log


def load_cpp_sources(sources: dict[str, str]):
    from kernel_gym.native import NativeLibrary

    path = compile_shared(sources, flags=["-O1"], cache_subdir="test")
    funcs = [f for name, text in sources.items() if name.endswith(".cpp") for f in parse_extern_c(text)]
    return NativeLibrary(path, funcs)


def test_a_cpp_another_file_includes_is_not_a_unit_of_its_own():
    # part.cpp uses what main.cpp declared before including it: compiled alone it would not build
    probe = f"// included-cpp probe {time.time():f}\n"
    sources = {
        "main.cpp": probe + 'static int base() { return 40; }\n#include "sub/part.cpp"\n',
        "sub/part.cpp": 'extern "C" int answer() { return base() + 2; }\n',
    }
    assert load_cpp_sources(sources).answer() == 42


def test_library_dirs_link_apart_and_keep_duplicates_within_one_an_error():
    # a non-inline helper of a header two libraries include is defined in both (as two shared
    # libraries of one process allow); the same helper twice in one library stays an error
    probe = f"// solib probe {time.time():f}\n"
    helper = "int mod_of(int a, int b) { return a % b; }\n"
    sources = {
        "main.cpp": probe + 'extern "C" int ping() { return 1; }\n',
        "tiling.solib/t.cpp": probe + '#include "helper.h"\nextern "C" int tail(int a) { return mod_of(a, 7); }\n',
        "proto.solib/p.cpp": probe + '#include "helper.h"\nextern "C" int rest(int a) { return mod_of(a, 5); }\n',
        "helper.h": helper,
    }
    lib = load_cpp_sources(sources)
    assert (lib.ping(), lib.tail(23), lib.rest(23)) == (1, 2, 3)
    same = {**sources, "proto.solib/p2.cpp": probe + '#include "helper.h"\n'}
    with pytest.raises(CompileError) as info:
        compile_shared(same, flags=["-O1"], cache_subdir="test")
    assert "multiple definition" in info.value.log and "mod_of" in info.value.log
