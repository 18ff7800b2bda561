"""The judge's output comparison works in float64 blocks (a published-shape output can be GiBs);
its verdict and explanation must be those of the whole-tensor formula, block edges included."""

from __future__ import annotations

import pytest
import torch

from kernel_gym.verify import correctness
from kernel_gym.verify.correctness import compare_outputs


def _whole_tensor(got: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float):
    """The documented rule on whole float64 tensors: NaN matches NaN, an infinity matches the
    same infinity, |got - ref| <= atol * min(1, mean |finite ref|) + rtol |ref|."""
    g, r = got.double().reshape(-1), ref.double().reshape(-1)
    finite = r[torch.isfinite(r)]
    atol = atol * min(1.0, float(finite.abs().mean())) if finite.numel() else atol
    diff = (g - r).abs()
    same = (g.isnan() & r.isnan()) | (torch.isinf(g) & torch.isinf(r) & (g == r))
    diff = torch.nan_to_num(torch.where(same, torch.zeros_like(diff), diff), nan=float("inf"))
    bad = diff > atol + rtol * r.abs().nan_to_num(posinf=0.0, neginf=0.0)
    first = int(bad.nonzero()[0]) if bool(bad.any()) else None
    return int(bad.sum()), first, float(diff.max())


def _case(kind: str, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    ref = torch.randn(n, generator=gen)
    got = ref + 1e-4 * torch.randn(n, generator=gen)
    if kind == "far":
        idx = torch.randint(0, n, (5,), generator=gen)
        got[idx] += 3.0
    elif kind == "nan_both":
        ref[7::11] = float("nan")
        got[7::11] = float("nan")
    elif kind == "nan_got":
        got[n - 3] = float("nan")
    elif kind == "inf":
        ref[5], got[5] = float("inf"), float("inf")
        ref[9], got[9] = float("-inf"), float("inf")
    return got, ref


@pytest.mark.parametrize("kind", ["close", "far", "nan_both", "nan_got", "inf"])
def test_blocked_comparison_agrees_with_the_whole_tensor_rule(monkeypatch, kind):
    monkeypatch.setattr(correctness, "_CHUNK", 64)  # many blocks and block edges at this size
    got, ref = _case(kind, 1000, seed=len(kind))
    bad_n, first, max_abs = _whole_tensor(got, ref, atol=1e-2, rtol=1e-2)
    result = compare_outputs(got.reshape(10, 100), ref.reshape(10, 100), atol=1e-2, rtol=1e-2)
    assert result.ok == (bad_n == 0)
    if bad_n:
        assert result.error_class == "numerical_mismatch"
        assert result.message.startswith(f"{bad_n} of 1000 elements differ")
        assert result.first_mismatch_index == [first // 100, first % 100]
        assert result.mismatch_fraction == pytest.approx(bad_n / 1000)
    assert result.max_abs_error == pytest.approx(max_abs)


def test_a_constant_output_where_the_reference_varies_is_a_mismatch_across_blocks(monkeypatch):
    monkeypatch.setattr(correctness, "_CHUNK", 64)
    ref = torch.linspace(-1e-3, 1e-3, 1000)  # every element within atol of zero
    for got in (torch.zeros(1000), torch.full((1000,), float("nan"))):
        result = compare_outputs(got, ref, atol=1e-2, rtol=1e-2)
        assert not result.ok and "constant" in result.message
    varying = ref.clone()
    varying[999] += 1e-6  # not constant: within tolerance everywhere, so it passes
    assert compare_outputs(varying, ref, atol=1e-2, rtol=1e-2).ok


@pytest.mark.parametrize("keyed", [False, True], ids=["blake2b", "keyed"])
def test_a_trials_fingerprint_matches_exactly_when_the_bits_do(monkeypatch, keyed):
    """The stale-output check keeps a digest of the last trial: equal digests for bitwise-identical
    tensors (a cached output), different ones for a changed bit, a moved NaN, swapped elements or
    another shape; BLAKE2b on the host, or the keyed hash a GPU judge computes where its tensors
    are (run here on the CPU: same arithmetic)."""
    from kernel_gym.verify import judge

    monkeypatch.setattr(judge, "_EQUAL_CHUNK", 16)  # several blocks

    def fingerprint(t: torch.Tensor) -> bytes:
        return judge._fingerprint(t, torch.device("cpu") if keyed else None)

    x = torch.randn(100)
    x[3] = float("nan")
    assert fingerprint(x) == fingerprint(x.clone())
    moved = x.clone()
    moved[3], moved[4] = moved[4], float("nan")  # a NaN elsewhere
    assert fingerprint(moved) != fingerprint(x)
    nudged = x.clone()
    nudged[80] = torch.nextafter(nudged[80], torch.tensor(float("inf")))  # one last place, in the last block
    assert fingerprint(nudged) != fingerprint(x)
    swapped = x.clone()
    swapped[[10, 90]] = swapped[[90, 10]]  # the same words at other places
    assert fingerprint(swapped) != fingerprint(x)
    assert fingerprint(x.reshape(10, 10)) != fingerprint(x)  # the shape counts
    assert fingerprint(x.double()) != fingerprint(x)  # so does the dtype
    flags = torch.tensor([True, False] * 20)
    assert fingerprint(flags) == fingerprint(flags.clone())
    assert fingerprint(flags) != fingerprint(~flags)
    odd = (torch.arange(37) % 5).to(torch.uint8)  # 37 bytes: hashed byte by byte
    assert fingerprint(odd) == fingerprint(odd.clone())
    odd_changed = odd.clone()
    odd_changed[36] ^= 1
    assert fingerprint(odd_changed) != fingerprint(odd)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.uint8, torch.bool])
def test_the_input_check_finds_one_changed_byte_at_any_length_and_offset(monkeypatch, dtype):
    """Inputs are compared as 8-byte words where their length and alignment allow, as bytes
    otherwise: either way one changed byte anywhere (the last block, an odd tail) is found."""
    from kernel_gym.verify import judge

    monkeypatch.setattr(judge, "_EQUAL_CHUNK", 8)  # several blocks
    base = (torch.arange(203) % 7).to(dtype) if dtype != torch.bool else torch.arange(203) % 2 == 0
    for start, stop in ((0, 200), (1, 202), (3, 160), (0, 203)):  # aligned, offset and odd lengths
        x = base[start:stop]
        assert judge._bitwise_equal(x, x.clone())
        for at in (0, x.numel() // 2, x.numel() - 1):
            changed = x.clone()
            changed.view(torch.uint8)[at * x.element_size()] ^= 1
            assert not judge._bitwise_equal(x, changed)
    assert not judge._bitwise_equal(base[:8], base[:8].reshape(2, 4))  # shapes differ
