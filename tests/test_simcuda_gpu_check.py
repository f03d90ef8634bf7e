"""bench/simcuda_gpu_check.py without a GPU: what of it can run here runs here (the
allocator-trace replay on a trace in the format `torch.cuda.memory._snapshot()` gives,
the scripts it names, the skip); what needs CUDA is never stood in for."""

from __future__ import annotations

import importlib.util
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from torchlint.runtime_probe.simcuda.allocator import MIB, AllocatorConfig, Block, CachingAllocator

CHECK = Path(__file__).resolve().parent.parent / "bench" / "simcuda_gpu_check.py"
_spec = importlib.util.spec_from_file_location("bench_simcuda_gpu_check", CHECK)
assert _spec is not None and _spec.loader is not None
gpu_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_check)


def _snapshot(expandable: bool, seed: int) -> tuple[dict[str, Any], CachingAllocator]:
    """What `_snapshot()` returns after a run, its trace written by a model allocator:
    segment events where the reserved bytes change (`segment_alloc`/`segment_free`, or
    `segment_map`/`segment_unmap` with expandable segments), `alloc` with the requested
    size, `free_requested` then `free_completed`, `empty_cache` calls, and the entries the
    replay has no use for (`snapshot`, `oom`), each with the stream, time and frames
    fields of a real entry."""
    rng = random.Random(seed)
    source = CachingAllocator(AllocatorConfig(expandable_segments=expandable))
    trace: list[dict[str, Any]] = []
    clock = [0]

    def entry(action: str, addr: int, size: int) -> None:
        clock[0] += 7
        trace.append({"action": action, "addr": addr, "size": size, "stream": 0, "time_us": clock[0], "frames": [{"filename": "train.py", "line": 12, "name": "forward"}]})

    def segments(reserved_before: int) -> None:
        change = source.total_reserved - reserved_before
        grow, shrink = ("segment_map", "segment_unmap") if expandable else ("segment_alloc", "segment_free")
        if change:
            entry(grow if change > 0 else shrink, 1 << 45, abs(change))

    live: dict[int, tuple[Block | None, int]] = {}
    for i in range(2500):
        roll = rng.random()
        if roll < 0.02:
            before = source.total_reserved
            source.empty_cache()
            segments(before)
        elif roll < 0.03:
            entry("snapshot", 0, 0)
        elif live and roll < 0.5:
            addr = rng.choice(list(live))
            block, size = live.pop(addr)
            entry("free_requested", addr, size)
            source.free(block)
            entry("free_completed", addr, size)
        else:
            size = rng.choice([rng.randint(1, 900_000), rng.randint(MIB, 9 * MIB), rng.randint(10 * MIB, 60 * MIB)])
            before = source.total_reserved
            block = source.malloc(size)
            segments(before)
            assert block is not None
            live[block.addr] = (block, size)
            entry("alloc", block.addr, size)
    entry("oom", 0, 0)
    return {"segments": [], "device_traces": [trace], "allocator_settings": {"expandable_segments": expandable}}, source


@pytest.mark.parametrize("expandable", [False, True])
def test_a_snapshot_trace_replays_with_no_difference_from_the_allocator_that_wrote_it(expandable: bool) -> None:
    snapshot, source = _snapshot(expandable, seed=5)
    row = gpu_check.replay_snapshot(snapshot, 80 * (1 << 30), expandable)
    assert row["allocations"] == sum(1 for e in snapshot["device_traces"][0] if e["action"] == "alloc")
    assert row["max_difference_mib"] == 0
    assert row["model_reserved_mib"] == row["real_reserved_mib"] == round(source.total_reserved / MIB, 1)


def test_a_replay_through_the_other_configuration_shows_the_difference() -> None:
    """The comparison can fail: default segments replayed as expandable ones reserve less."""
    snapshot, _ = _snapshot(False, seed=5)
    row = gpu_check.replay_snapshot(snapshot, 80 * (1 << 30), True)
    assert row["max_difference_mib"] > 0


def test_every_script_the_check_runs_exists() -> None:
    paths = [gpu_check.SIM / f"{name}.py" for name in (*gpu_check.SCRIPTS, "hand_rules", "torture_correct_usage")]
    paths += [gpu_check.FIXTURES / f"{name}{suffix}.py" for name in gpu_check.FIXTURE_PAIRS for suffix in ("", "_fixed")]
    assert [p for p in paths if not p.is_file()] == []


def test_without_cuda_the_check_skips_and_writes_no_result(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a real GPU is here: the check would run")
    report = tmp_path / "report.json"
    run = subprocess.run([sys.executable, str(CHECK), "--json", str(report)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "sees no CUDA device; skipped" in run.stdout
    assert not report.exists()
