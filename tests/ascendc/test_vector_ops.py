"""Numerical correctness of the vector API against torch (float and half, count and mask forms)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

OPS = ["add", "sub", "mul", "div", "max", "min", "adds", "muls", "maxs", "mins", "exp", "ln", "abs", "sqrt", "rsqrt",
       "reciprocal", "relu", "leakyrelu", "duplicate"]
POSITIVE = {"ln", "sqrt", "rsqrt"}


def reference(op, a, b, s):
    return {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
        "max": lambda: torch.maximum(a, b), "min": lambda: torch.minimum(a, b), "adds": lambda: a + s,
        "muls": lambda: a * s, "maxs": lambda: torch.clamp(a, min=s), "mins": lambda: torch.clamp(a, max=s),
        "exp": lambda: torch.exp(a), "ln": lambda: torch.log(a), "abs": lambda: a.abs(), "sqrt": lambda: torch.sqrt(a),
        "rsqrt": lambda: torch.rsqrt(a), "reciprocal": lambda: 1 / a, "relu": lambda: torch.relu(a),
        "leakyrelu": lambda: F.leaky_relu(a, s), "duplicate": lambda: torch.full_like(a, s),
    }[op]()


@pytest.mark.parametrize("mode", [0, 1], ids=["count", "mask_repeat"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=["float", "half"])
def test_elementwise_ops_match_torch(elementwise_mod, dtype, mode):
    fn = elementwise_mod.ew_f32 if dtype == torch.float32 else elementwise_mod.ew_f16
    n, s = 2048, 0.25
    gen = torch.Generator().manual_seed(0)
    for i, op in enumerate(OPS):
        a = torch.rand(n, generator=gen) + 0.5 if op in POSITIVE else torch.randn(n, generator=gen) * 2
        b = torch.rand(n, generator=gen) + 0.5
        a, b = a.to(dtype), b.to(dtype)
        c = torch.empty(n, dtype=dtype)
        fn(i, mode, a, b, c, n, s)
        ref = reference(op, a.float(), b.float(), s).to(dtype)
        # one rounding of the exact result: equal up to 1 ulp of the output type
        torch.testing.assert_close(c, ref, rtol=2e-3 if dtype == torch.float16 else 2e-6, atol=1e-6, msg=op)
        assert elementwise_mod.last_run.faults == []


def _run(mod, which, a, b=None, obytes=4096, n=None, s=0.0, p0=0, p1=0):
    b = torch.zeros(8) if b is None else b
    out = torch.zeros(obytes, dtype=torch.uint8)
    n = a.numel() if n is None else n
    mod.misc(which, a, b, out, n, s, p0, p1, a.numel() * a.element_size(), b.numel() * b.element_size(), obytes)
    assert mod.last_run.warnings == []
    return out


def test_cast(misc_mod):
    a = torch.randn(256, generator=torch.Generator().manual_seed(1)) * 100
    assert torch.equal(_run(misc_mod, 0, a, p0=1)[:512].view(torch.float16), a.half())
    assert torch.equal(_run(misc_mod, 1, a.half())[:1024].view(torch.float32), a.half().float())
    for mode, fn in ((1, torch.round), (2, torch.floor), (3, torch.ceil), (5, torch.trunc)):
        assert torch.equal(_run(misc_mod, 2, a, p0=mode)[:1024].view(torch.int32), fn(a).int()), mode
    ai = torch.randint(-2 ** 30, 2 ** 30, (256,), dtype=torch.int32)
    assert torch.equal(_run(misc_mod, 3, ai, p0=1)[:1024].view(torch.float32), ai.float())
    assert torch.equal(_run(misc_mod, 4, a, p0=1)[:512].view(torch.bfloat16), a.bfloat16())
    # directed rounding float -> half
    x = torch.tensor([1.0 + 2 ** -12] * 64 + [-(1.0 + 2 ** -12)] * 64 + [3.3] * 128)
    up = _run(misc_mod, 0, x, p0=3)[:512].view(torch.float16).float()
    down = _run(misc_mod, 0, x, p0=2)[:512].view(torch.float16).float()
    assert (up >= x).all() and (down <= x).all() and ((up - down) > 0).all()


def test_compare_and_select(misc_mod):
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(256, generator=g), torch.randn(256, generator=g)
    b[::7] = a[::7]
    for mode, fn in enumerate((torch.lt, torch.gt, torch.eq, torch.le, torch.ge, torch.ne)):
        out = _run(misc_mod, 5, a, b, p0=mode)[:1024].view(torch.float32)
        assert torch.equal(out, torch.where(fn(a, b), a, b)), mode
    bits = np.unpackbits(_run(misc_mod, 6, a, s=0.5, p0=1)[:32].numpy(), bitorder="little")
    assert np.array_equal(bits.astype(bool), (a > 0.5).numpy())
    out = _run(misc_mod, 7, a, s=-3.0)[:1024].view(torch.float32)
    assert torch.equal(out, torch.where(a > 0, a, torch.tensor(-3.0)))


def test_reductions(misc_mod):
    a = torch.randn(256, generator=torch.Generator().manual_seed(3)) * 10
    assert _run(misc_mod, 8, a)[:4].view(torch.float32).item() == pytest.approx(a.sum().item(), rel=1e-5, abs=1e-4)
    out = _run(misc_mod, 9, a)
    assert out[:4].view(torch.float32).item() == a.max().item() and out[4:8].view(torch.int32).item() == a.argmax()
    out = _run(misc_mod, 10, a)
    assert out[:4].view(torch.float32).item() == a.min().item() and out[4:8].view(torch.int32).item() == a.argmin()
    torch.testing.assert_close(_run(misc_mod, 11, a)[:16].view(torch.float32), a.view(4, 64).sum(1))
    pairs = _run(misc_mod, 12, a)[:32]
    assert torch.equal(pairs.view(torch.float32).view(4, 2)[:, 0], a.view(4, 64).max(1).values)
    assert torch.equal(pairs.view(torch.int32).view(4, 2)[:, 1], a.view(4, 64).argmax(1).int())
    torch.testing.assert_close(_run(misc_mod, 13, a)[:128].view(torch.float32), a.view(32, 8).sum(1))
    h = torch.randn(512, generator=torch.Generator().manual_seed(4)).half()
    assert _run(misc_mod, 14, h)[:2].view(torch.float16).item() == pytest.approx(h.float().sum().item(), abs=0.1)
    torch.testing.assert_close(_run(misc_mod, 15, h)[:8].view(torch.float16).float(), h.float().view(4, 128).sum(1),
                               atol=2e-2, rtol=2e-3)


def _tree_sum_f32(v: np.ndarray) -> np.float32:
    """A repeat's sum as the vector unit forms it: pairwise adds in float, an odd last element carried."""
    v = v.astype(np.float32)
    while v.size > 1:
        h = v.size // 2
        nxt = v[0 : 2 * h : 2] + v[1 : 2 * h : 2]
        v = np.concatenate([nxt, v[2 * h :]])
    return v[0] if v.size else np.float32(0)


@pytest.mark.parametrize("n", [256, 1000, 37])
def test_reduce_sum_float_order(misc_mod, n):
    # ReduceSum's count form: a tree of adds within each 64-element repeat, then the repeats' sums
    # accumulated in order, every partial in float: bit for bit, a partial last repeat included
    a = torch.randn(1024, generator=torch.Generator().manual_seed(n)) * 100
    parts = [_tree_sum_f32(a[i : min(i + 64, n)].numpy()) for i in range(0, n, 64)]
    acc = parts[0]
    for p in parts[1:]:
        acc = np.float32(acc + p)
    got = _run(misc_mod, 8, a, n=n)[:4].view(torch.float32).item()
    assert got == float(acc)
    assert got != float(np.float32(a[:n].numpy().astype(np.float64).sum())) or n < 64  # the order shows


def test_masks_strides_and_counter_mode(misc_mod):
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(256, generator=g), torch.randn(256, generator=g)
    out = _run(misc_mod, 16, a, b)[:1024].view(torch.float32)  # bit mask 0x5555...: even elements only
    assert torch.equal(out[::2], (a + b)[::2]) and torch.isnan(out[1::2]).all()
    out = _run(misc_mod, 17, a, s=2.0)[:512].view(torch.float32)  # source repeat stride 16 blocks
    assert torch.equal(out, (a.view(4, 64)[::2] * 2).reshape(-1))
    out = _run(misc_mod, 18, a, b, p1=5)[:1024].view(torch.float32)  # counter mode: 251 elements
    assert torch.equal(out[:251], (a + b)[:251]) and torch.isnan(out[251:]).all()
