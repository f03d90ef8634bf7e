"""The simulated CUDA caching allocator: the rules transcribed from
CUDACachingAllocator.cpp, checked by hand, and its invariants under a seeded fuzz."""

from __future__ import annotations

import random

import pytest

from torchlint.runtime_probe.simcuda.allocator import (
    MIB,
    AllocatorConfig,
    Block,
    CachingAllocator,
    OutOfMemory,
    parse_alloc_conf,
    replay,
    round_size,
    segment_size,
)


def current(allocator: CachingAllocator, name: str) -> int:
    return allocator.memory_stats()[f"{name}.all.current"]


def test_requests_round_to_512_bytes_and_segments_have_cuda_sizes() -> None:
    assert [round_size(n) for n in (1, 512, 513, 4096)] == [512, 512, 1024, 4096]
    assert segment_size(4096) == 2 * MIB  # small pool
    assert segment_size(3 * MIB) == 20 * MIB  # (1, 10) MiB
    assert segment_size(11 * MIB + 1) == 12 * MIB  # rounded to 2 MiB


def test_small_requests_share_one_split_segment_and_return_to_the_cache() -> None:
    allocator = CachingAllocator()
    blocks = [allocator.malloc(1000) for _ in range(4)]
    assert current(allocator, "segment") == 1 and current(allocator, "reserved_bytes") == 2 * MIB
    assert current(allocator, "allocated_bytes") == 4 * 1024
    for block in blocks:
        allocator.free(block)
    assert current(allocator, "allocated_bytes") == 0 and current(allocator, "reserved_bytes") == 2 * MIB
    allocator.empty_cache()
    assert current(allocator, "reserved_bytes") == 0 and current(allocator, "segment") == 0


def test_a_freed_block_is_reused_before_a_new_segment() -> None:
    allocator = CachingAllocator()
    allocator.free(allocator.malloc(30 * MIB))
    allocator.malloc(30 * MIB)
    assert allocator.num_device_alloc == 1


def test_growing_requests_keep_whole_cached_segments_idle() -> None:
    allocator = CachingAllocator()
    for step in range(10):
        allocator.free(allocator.malloc((40 + 4 * step) * MIB))
    stats = allocator.memory_stats()
    assert stats["segment.all.current"] == 10
    assert stats["reserved_bytes.all.current"] >= 5 * stats["allocated_bytes.all.peak"]
    assert stats["inactive_split_bytes.all.current"] == 0


def test_expandable_segments_keep_reserved_near_the_peak() -> None:
    allocator = CachingAllocator(AllocatorConfig(expandable_segments=True))
    for step in range(10):
        allocator.free(allocator.malloc((40 + 4 * step) * MIB))
    stats = allocator.memory_stats()
    assert stats["reserved_bytes.all.current"] <= stats["allocated_bytes.all.peak"] + 20 * MIB


def test_max_split_size_keeps_oversize_blocks_whole() -> None:
    allocator = CachingAllocator(AllocatorConfig(max_split_size_mb=64))
    allocator.free(allocator.malloc(200 * MIB))
    allocator.malloc(50 * MIB)  # may not split the 200 MiB block: a new segment
    assert allocator.num_device_alloc == 2
    allocator.malloc(190 * MIB)  # an oversize request takes a block below size + 20 MiB
    assert allocator.num_device_alloc == 2


def test_an_oversize_request_takes_a_cached_block_only_below_its_size_plus_20_mib() -> None:
    allocator = CachingAllocator(AllocatorConfig(max_split_size_mb=64))
    allocator.free(allocator.malloc(210 * MIB))
    allocator.free(allocator.malloc(190 * MIB))  # 210 MiB is not below 190 + 20: a new segment
    assert allocator.num_device_alloc == 2
    assert allocator.malloc(191 * MIB).size == 210 * MIB  # type: ignore[union-attr]  # not an empty request


def _best_fit(allocator: CachingAllocator, size: int) -> Block | None:
    """The cached block CUDA's `get_free_block` picks for a rounded request, from the
    free list in (size, address) order: what malloc's written-out search must find."""
    small = size <= 1 * MIB
    for block in sorted((b for b in allocator.free_blocks() if b.small == small), key=lambda b: (b.size, b.addr)):
        if block.size < size:
            continue
        if size < allocator.max_split <= block.size:
            return None
        if size >= allocator.max_split and block.size >= size + 20 * MIB:
            return None
        return block
    return None


@pytest.mark.parametrize("max_split_size_mb", [None, 8, 30])
def test_malloc_takes_the_best_fitting_cached_block_or_a_new_segment(max_split_size_mb: int | None) -> None:
    rng = random.Random(2)
    allocator = CachingAllocator(AllocatorConfig(max_split_size_mb=max_split_size_mb))
    live: list[Block] = []
    for _ in range(3000):
        if live and rng.random() < 0.5:
            allocator.free(live.pop(rng.randrange(len(live))))
            continue
        nbytes = rng.choice([rng.randint(1, 4096), rng.randint(4096, 2 * MIB), rng.randint(MIB, 12 * MIB), rng.randint(10 * MIB, 60 * MIB)])
        expected = _best_fit(allocator, round_size(nbytes))
        segments = allocator.num_device_alloc
        block = allocator.malloc(nbytes)
        assert block is not None
        if expected is None:
            assert allocator.num_device_alloc == segments + 1
        else:
            assert allocator.num_device_alloc == segments and block is expected
        live.append(block)


def test_out_of_memory_frees_the_cache_retries_then_raises() -> None:
    allocator = CachingAllocator(AllocatorConfig(total_memory=100 * MIB))
    allocator.free(allocator.malloc(60 * MIB))
    allocator.malloc(70 * MIB)  # does not fit beside the cached 60 MiB: released, retried
    assert allocator.num_alloc_retries == 1 and allocator.num_ooms == 0
    with pytest.raises(OutOfMemory, match=r"CUDA out of memory\. Tried to allocate 50\.00 MiB"):
        allocator.malloc(50 * MIB)
    assert allocator.num_ooms == 1


def test_alloc_conf_is_read_like_pytorch() -> None:
    assert parse_alloc_conf("expandable_segments:True,max_split_size_mb:128") == (128, True)
    assert parse_alloc_conf("") == (None, False)


def _check(allocator: CachingAllocator, live: list[Block]) -> None:
    stats = allocator.memory_stats()
    assert stats["allocated_bytes.all.current"] <= stats["reserved_bytes.all.current"]
    assert stats["allocated_bytes.all.current"] == sum(b.size for b in live)
    assert stats["reserved_bytes.all.current"] == allocator.total_reserved
    for pool in ("small_pool", "large_pool"):
        assert stats[f"allocated_bytes.{pool}.current"] <= stats[f"reserved_bytes.{pool}.current"]
    segments = allocator.segments_of(live)
    mapped = sum(b.size for segment in segments for b in segment if b.mapped)
    assert mapped == stats["reserved_bytes.all.current"]
    for segment in segments:
        for a, b in zip(segment, segment[1:]):
            assert a.addr + a.size == b.addr and b.prev is a
    if not allocator.expandable:
        assert stats["segment.all.current"] == len(segments)
        free_split = sum(b.size for b in allocator.free_blocks() if b.is_split)
        assert stats["inactive_split_bytes.all.current"] == free_split


@pytest.mark.parametrize(
    "config",
    [
        AllocatorConfig(),
        AllocatorConfig(max_split_size_mb=64),
        AllocatorConfig(expandable_segments=True),
        AllocatorConfig(total_memory=600 * MIB),
    ],
    ids=["default", "max-split", "expandable", "small-device"],
)
def test_fuzz_invariants_hold_and_everything_returns(config: AllocatorConfig) -> None:
    rng = random.Random(1)
    allocator = CachingAllocator(config)
    live: list[Block] = []
    for i in range(4000):
        if live and rng.random() < 0.48:
            allocator.free(live.pop(rng.randrange(len(live))))
        else:
            size = rng.choice(
                [rng.randint(1, 4096), rng.randint(4096, 2 * MIB), rng.randint(MIB, 12 * MIB), rng.randint(10 * MIB, 90 * MIB)]
            )
            try:
                block = allocator.malloc(size)
            except OutOfMemory:
                continue
            assert block is not None
            live.append(block)
        if i % 37 == 0:
            _check(allocator, live)
        if i % 1000 == 999:
            allocator.empty_cache()
            _check(allocator, live)
    for block in live:
        allocator.free(block)
    allocator.empty_cache()
    stats = allocator.memory_stats()
    assert stats["allocated_bytes.all.current"] == stats["reserved_bytes.all.current"] == 0
    assert stats["inactive_split_bytes.all.current"] == 0 and allocator.total_reserved == 0


def test_replaying_the_models_own_trace_matches_exactly() -> None:
    """The replay that bench/simcuda_gpu_check.py runs on real traces, on a trace the
    model itself produced: no difference, so a difference on a GPU is the model's."""
    rng = random.Random(3)
    source = CachingAllocator()
    trace: list[dict[str, object]] = []
    live: dict[int, Block | None] = {}
    reserved = 0
    for i in range(3000):
        if live and rng.random() < 0.5:
            addr = rng.choice(list(live))
            source.free(live.pop(addr))
            trace.append({"action": "free_completed", "addr": addr})
            continue
        size = rng.choice([rng.randint(1, 900_000), rng.randint(MIB, 9 * MIB), rng.randint(10 * MIB, 60 * MIB)])
        live[i] = source.malloc(size)
        if source.total_reserved > reserved:
            trace.append({"action": "segment_alloc", "size": source.total_reserved - reserved})
            reserved = source.total_reserved
        trace.append({"action": "alloc", "addr": i, "size": size})
    result = replay(trace, CachingAllocator())
    assert result.allocations == sum(1 for e in trace if e["action"] == "alloc")
    assert result.max_difference == 0 and result.model_reserved == result.real_reserved == source.total_reserved


def test_statistics_after_a_reset_count_only_what_follows_and_pools_add_up() -> None:
    """The totals and "freed" are derived from per-pool numbers (the hot path updates
    fewer): after `reset_accumulated()`, allocated and freed count only what follows,
    and every total is its pools' sum, its peak between their largest and their sum."""
    allocator = CachingAllocator()
    small, large = allocator.malloc(1000), allocator.malloc(3 * MIB)
    allocator.free(small)
    allocator.reset_accumulated()
    again = allocator.malloc(2000)
    allocator.free(again)
    allocator.free(large)
    stats = allocator.memory_stats()
    assert (stats["allocation.all.allocated"], stats["allocation.all.freed"]) == (1, 2)
    assert (stats["allocated_bytes.small_pool.allocated"], stats["allocated_bytes.small_pool.freed"]) == (2048, 2048)
    assert (stats["allocated_bytes.large_pool.allocated"], stats["allocated_bytes.large_pool.freed"]) == (0, 3 * MIB)
    assert stats["allocated_bytes.all.current"] == 0 and stats["allocated_bytes.all.peak"] == 2048 + 3 * MIB
    names = {key.split(".")[0] for key in stats if key.count(".") == 2}
    for name in names:
        for kind in ("current", "allocated", "freed"):
            assert stats[f"{name}.all.{kind}"] == stats[f"{name}.small_pool.{kind}"] + stats[f"{name}.large_pool.{kind}"], (name, kind)
        pools = (stats[f"{name}.small_pool.peak"], stats[f"{name}.large_pool.peak"])
        assert max(pools) <= stats[f"{name}.all.peak"] <= sum(pools), name
    allocator.reset_peak()
    assert allocator.memory_stats()["allocated_bytes.all.peak"] == 0
