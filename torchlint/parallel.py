"""A process pool that survives its workers dying.

`concurrent.futures.ProcessPoolExecutor` fails every pending task once one worker dies
(a segfault in a native parser, the kernel's out-of-memory killer). Here the parent
knows which task each worker is running, because a worker reports each task as it
finishes it: when a worker dies, the rest of its batch is queued again, and the task it
was running is retried at the end, alone, in a fresh worker, with nothing else running.
Only a task that kills that worker too is given up, as a `Crash`.

Tasks go out biggest first (by the caller's weights) in batches of similar total weight,
so that one large file cannot end the run alone on one core; results come back in task
order whatever order the workers finish in. Heavy tasks (a huge file's syntax tree can
take hundreds of megabytes) run one at a time, each in a worker that is replaced after
it, so that memory peaks do not add up across workers and are handed back at once; a
heavy task starts in a fresh worker too, whose memory no earlier task has fragmented.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Callable, Generic, Mapping, Sequence, TypeVar, Union

T = TypeVar("T")
R = TypeVar("R")

# About this many batches per worker: enough to even out uneven files, few enough
# that per-batch messages cost nothing.
BATCHES_PER_WORKER = 16
# Weights (file sizes) misjudge small files: one that no rule applies to costs nothing,
# one full of training code as much as a file ten times its size. The last batches
# hold the smallest files; 64 of them made a batch that ran alone at the end, for a
# sixth of the run, while the other worker had nothing left to do.
MAX_BATCH_TASKS = 8


@dataclass(frozen=True)
class Crash:
    """A task that could not be completed: its worker died while running it even when it
    ran alone, or the work function raised."""

    reason: str


@dataclass(frozen=True)
class WorkerSetup(Generic[T, R]):
    """What a worker process runs: `initialize(*args)` once, then `work(task)` per task.
    Both must be module-level functions where processes are spawned rather than forked."""

    work: Callable[[T], R]
    initialize: Callable[..., None] | None = None
    args: tuple[object, ...] = ()
    # Tasks at least this heavy run one at a time, and the worker that ran one is then
    # replaced, so that the memory it needed goes back to the system instead of staying
    # with a process that goes on with small tasks.
    heavy_weight: int | None = None


Batch = list[tuple[int, T]]


def _worker_main(conn: Connection, setup: WorkerSetup[T, R]) -> None:
    # Ctrl-C is the parent's to handle; a worker stops when its pipe closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if setup.initialize is not None:
        setup.initialize(*setup.args)
    while True:
        try:
            batch: Batch[T] | None = conn.recv()
        except EOFError:
            return
        if batch is None:
            return
        for index, task in batch:
            try:
                result: Union[R, Crash] = setup.work(task)
            except Exception as exc:  # reported for this task; the worker goes on
                first_line = next(iter(str(exc).splitlines()), "")
                result = Crash(f"{type(exc).__name__}: {first_line}")
            conn.send((index, result))
        conn.send(None)


@dataclass
class _Worker(Generic[T]):
    process: BaseProcess
    conn: Connection
    batch: Batch[T]
    isolated: bool = False

    def unfinished(self, results: Mapping[int, object]) -> Batch[T]:
        return [(index, task) for index, task in self.batch if index not in results]


def run_tasks(
    tasks: Sequence[T], setup: WorkerSetup[T, R], jobs: int, weights: Sequence[int] | None = None
) -> list[Union[R, Crash]]:
    """Run `setup.work` over `tasks` in up to `jobs` worker processes; results in task order."""
    return _Pool(tasks, setup, jobs, list(weights) if weights is not None else [1] * len(tasks)).run()


def make_batches(weights: Sequence[int], jobs: int) -> list[list[int]]:
    """Task indices grouped into batches of similar total weight, heaviest first."""
    order = sorted(range(len(weights)), key=lambda i: -weights[i])
    target = max(sum(weights) // max(jobs * BATCHES_PER_WORKER, 1), 1)
    batches: list[list[int]] = []
    current: list[int] = []
    current_weight = 0
    for index in order:
        current.append(index)
        current_weight += weights[index]
        if current_weight >= target or len(current) >= MAX_BATCH_TASKS:
            batches.append(current)
            current, current_weight = [], 0
    if current:
        batches.append(current)
    return batches


def _context() -> multiprocessing.context.BaseContext:
    # Forked workers start in milliseconds and share the modules the parent imported.
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)


def _death_reason(process: BaseProcess) -> str:
    process.join(timeout=5)
    code = process.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class _Pool(Generic[T, R]):
    def __init__(self, tasks: Sequence[T], setup: WorkerSetup[T, R], jobs: int, weights: list[int]) -> None:
        self.tasks = tasks
        self.setup = setup
        self.jobs = max(1, jobs)
        self.weights = weights
        self.queue: deque[Batch[T]] = deque(
            [[(i, tasks[i]) for i in batch] for batch in make_batches(weights, self.jobs)]
        )
        self.suspects: deque[tuple[int, T]] = deque()
        self.results: dict[int, Union[R, Crash]] = {}
        self.workers: list[_Worker[T]] = []
        self.context = _context()

    def run(self) -> list[Union[R, Crash]]:
        try:
            while self.queue or self.suspects or self.workers:
                self._dispatch()
                self._serve()
        finally:
            for worker in self.workers:
                worker.process.kill()
                worker.process.join()
        return [self.results[i] for i in range(len(self.tasks))]

    def _heavy(self, batch: Batch[T]) -> bool:
        limit = self.setup.heavy_weight
        return limit is not None and any(self.weights[index] >= limit for index, _ in batch)

    def _next_batch(self, fresh: bool) -> Batch[T] | None:
        """The first queued batch that may start now in a fresh worker (`fresh`) or in one
        that has run other batches: a heavy batch only in a fresh worker, and not while
        another heavy one runs."""
        heavy_running = any(self._heavy(worker.batch) for worker in self.workers)
        for position, batch in enumerate(self.queue):
            if not (self._heavy(batch) and (heavy_running or not fresh)):
                del self.queue[position]
                return batch
        return None

    def _dispatch(self) -> None:
        """Give idle workers a light batch (or stop them when none is left: heavy batches
        start in fresh workers), start workers while there is work for them, and once all
        else is done, retry one suspect alone."""
        for worker in [w for w in self.workers if not w.batch]:
            batch = self._next_batch(fresh=False)
            if batch is not None:
                self._send(worker, batch)
            else:
                self._stop(worker)
        while len(self.workers) < self.jobs:
            batch = self._next_batch(fresh=True)
            if batch is None:
                break
            self._start(batch, isolated=False)
        if not self.queue and not self.workers and self.suspects:
            # Retries run one at a time with nothing else running, which tells a task that
            # kills its worker from one that was only in the wrong place at the wrong time.
            self._start([self.suspects.popleft()], isolated=True)

    def _start(self, batch: Batch[T], isolated: bool) -> None:
        parent_end, child_end = self.context.Pipe()
        process = self.context.Process(  # type: ignore[attr-defined]
            target=_worker_main, args=(child_end, self.setup), daemon=True
        )
        process.start()
        child_end.close()
        worker: _Worker[T] = _Worker(process, parent_end, [], isolated)
        self.workers.append(worker)
        self._send(worker, batch)

    def _send(self, worker: _Worker[T], batch: Batch[T]) -> None:
        worker.batch = batch
        try:
            worker.conn.send(batch)
        except OSError:  # it died just now: the batch goes back to the queue
            self._died(worker)

    def _stop(self, worker: _Worker[T]) -> None:
        self.workers.remove(worker)
        try:
            worker.conn.send(None)
        except OSError:
            pass
        worker.conn.close()
        worker.process.join(timeout=5)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()

    def _serve(self) -> None:
        """Wait until some worker sends a message or dies, and handle it."""
        if not self.workers:
            return
        by_handle: dict[object, _Worker[T]] = {}
        for worker in self.workers:
            by_handle[worker.conn] = worker
            by_handle[worker.process.sentinel] = worker
        for handle in wait([w.conn for w in self.workers] + [w.process.sentinel for w in self.workers]):
            worker = by_handle[handle]
            if worker in self.workers:
                self._drain(worker)

    def _drain(self, worker: _Worker[T]) -> None:
        """Read what `worker` has sent; if it died, deal with its unfinished tasks."""
        try:
            while worker.conn.poll():
                message = worker.conn.recv()
                if message is None:
                    self._batch_done(worker)
                    return
                index, result = message
                self.results[index] = result
        except (EOFError, OSError):
            pass
        else:
            if worker.process.is_alive():
                return
        self._died(worker)

    def _batch_done(self, worker: _Worker[T]) -> None:
        if worker.isolated or self._heavy(worker.batch):
            self._stop(worker)
        else:
            worker.batch = []  # idle: the next dispatch gives it more

    def _died(self, worker: _Worker[T]) -> None:
        self.workers.remove(worker)
        worker.conn.close()
        reason = _death_reason(worker.process)
        unfinished = worker.unfinished(self.results)
        if not unfinished:
            return
        running, rest = unfinished[0], unfinished[1:]
        if worker.isolated:
            self.results[running[0]] = Crash(f"its worker process died ({reason}), also when checking it alone")
        else:
            self.suspects.append(running)
        if rest:
            self.queue.appendleft(rest)
        worker.batch = []
