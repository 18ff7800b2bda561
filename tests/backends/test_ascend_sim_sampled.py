"""The ascend_sim backend's published-shape run (``run_sampled``): what it hands the judge to check."""

import torch

import kernel_gym.ascendc as asc
from kernel_gym.backends import get_backend
from tests.ascendc.test_sampling import SUM_TILES


def test_an_output_stored_only_after_loop_skips_is_run_again_with_block_0_keeping_its_work():
    """With every block loop-sampled, a kernel that accumulates over a loop and stores once stores
    only after its first skip, which is not tracked: the judge would get no span to compare (and
    failed such answers as 'stored nothing'). The backend reruns with loops="all_checked": block 0's
    skip before its first store keeps every call's work, so that store is right, tracked and
    checkable, while the loop is still extrapolated (block 0 in full was the rerun before)."""
    mod = asc.load(SUM_TILES, name="sum_tiles.cpp")
    tile, tiles = 1024, 64
    x = torch.randn(tiles * tile)
    runs = []

    def forward():
        runs.append(1)
        y = torch.full((tile,), float("nan"))
        mod.sum_tiles_do(x, y, tile, tiles)
        return y

    out, summary, spans = get_backend("ascend_sim").run_sampled(forward, 5)
    assert len(runs) == 2 and summary["loops"] == "all_checked" and summary["loop_sampled_blocks"] == 1
    assert spans == [[spans[0][0], 0, tile]]
    torch.testing.assert_close(out, x.view(tiles, tile).sum(0), rtol=1e-4, atol=1e-4)
