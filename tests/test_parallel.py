"""The process pool: task order, batching, and workers that die or raise.

Faults are injected through the work function (module-level functions of this test
module, inherited by the forked workers), so nothing in torchlint needs a test hook.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from torchlint.parallel import Crash, WorkerSetup, make_batches, run_tasks

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only")


def square(n: int) -> int:
    return n * n


def die_on_13(n: int) -> int:
    if n == 13:
        os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer would
    return n * n


def segfault_on_7(n: int) -> int:
    if n == 7:
        faulthandler.disable()  # pytest's would print the worker's stack
        os.kill(os.getpid(), signal.SIGSEGV)
    return n * n


def raise_on_5(n: int) -> int:
    if n == 5:
        raise ValueError("five")
    return n * n


def die_once(task: tuple[int, str]) -> int:
    """Kills its worker the first time it sees task 3 (a marker file remembers)."""
    n, marker = task
    if n == 3 and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(3)
    return n * n


def worker_pid(n: int) -> int:
    return os.getpid()


def test_results_come_back_in_task_order() -> None:
    tasks = list(range(200))
    weights = [(n * 7919) % 101 for n in tasks]  # scrambled sizes: batches go out in another order
    assert run_tasks(tasks, WorkerSetup(square), jobs=3, weights=weights) == [n * n for n in tasks]


def test_batches_cover_every_task_once_heaviest_first() -> None:
    weights = [5, 100, 1, 1, 50, 3, 1000, 2]
    batches = make_batches(weights, jobs=2)
    assert sorted(i for batch in batches for i in batch) == list(range(len(weights)))
    assert batches[0][0] == 6  # the biggest file starts first
    flat = [i for batch in batches for i in batch]
    assert [weights[i] for i in flat] == sorted(weights, reverse=True)


def test_small_files_come_in_small_batches() -> None:
    # 200 files of 1 KB after one of 1 MB: by weight, all the small ones would fill one batch
    # that runs alone at the end; a small file can be slow to check (dense training code).
    weights = [1_000_000] + [1_000] * 200
    batches = make_batches(weights, jobs=2)
    assert batches[0] == [0]
    assert max(len(batch) for batch in batches) <= 8
    assert sorted(i for batch in batches for i in batch) == list(range(len(weights)))


def test_killed_worker_loses_only_the_task_that_kills_it() -> None:
    results = run_tasks(list(range(40)), WorkerSetup(die_on_13), jobs=2)
    assert isinstance(results[13], Crash)
    assert "SIGKILL" in results[13].reason
    assert [r for i, r in enumerate(results) if i != 13] == [n * n for n in range(40) if n != 13]


def test_segfault_is_reported_with_the_signal() -> None:
    results = run_tasks(list(range(20)), WorkerSetup(segfault_on_7), jobs=2)
    assert isinstance(results[7], Crash) and "SIGSEGV" in results[7].reason
    assert sum(isinstance(r, Crash) for r in results) == 1


def test_a_task_that_kills_only_once_succeeds_when_retried(tmp_path: Path) -> None:
    marker = str(tmp_path / "died")
    results = run_tasks([(n, marker) for n in range(10)], WorkerSetup(die_once), jobs=2)
    assert results == [n * n for n in range(10)]
    assert os.path.exists(marker)


def test_an_exception_in_the_work_function_is_reported_for_that_task() -> None:
    results = run_tasks(list(range(10)), WorkerSetup(raise_on_5), jobs=2)
    assert results[5] == Crash("ValueError: five")
    assert [r for i, r in enumerate(results) if i != 5] == [n * n for n in range(10) if n != 5]


def test_workers_retire_after_heavy_tasks() -> None:
    weights = [1] * 30
    weights[0] = weights[1] = 100
    pids = run_tasks(list(range(30)), WorkerSetup(worker_pid, heavy_weight=100), jobs=2, weights=weights)
    # Each heavy task runs in a worker of its own, which is then replaced.
    assert pids[0] != pids[1]
    assert pids[0] not in pids[2:] and pids[1] not in pids[2:]


def heavy_overlap(task: tuple[int, str]) -> int:
    """Sleeps on heavy tasks, and counts how many ran at the same time (via a folder)."""
    n, folder = task
    if n < 3:
        mine = Path(folder) / f"{n}"
        mine.touch()
        time.sleep(0.3)
        running = len(list(Path(folder).iterdir()))
        mine.unlink()
        return running
    return 0


def test_heavy_tasks_run_one_at_a_time(tmp_path: Path) -> None:
    weights = [100, 100, 100] + [1] * 40
    results = run_tasks(
        [(n, str(tmp_path)) for n in range(43)], WorkerSetup(heavy_overlap, heavy_weight=100), jobs=3, weights=weights
    )
    assert results[:3] == [1, 1, 1]
    assert results[3:] == [0] * 40
