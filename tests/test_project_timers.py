"""A timing helper in one module (`timeit(fn, *args)`) that never synchronizes, called by a
benchmark in another module with a CUDA network (TL002): reported at the call, which is
where the module knows that what is timed runs on the GPU. And the other way round: a
timing helper of the benchmark's module (`_measure(fn, *args)`) timing a function of
another module that runs the network (`_measure(run_model, model, images)`)."""

from __future__ import annotations

from pathlib import Path

from project_support import PROJECTS, check, check_alone, copy_project, edit, findings, summary

PROJECT = PROJECTS / "benchkit"


def test_summaries_count_wall_clock_reads() -> None:
    defs = summary(
        """
        import time
        from time import perf_counter as clock
        def timed(fn):
            t0 = time.time()
            fn()
            return clock() - t0
        def plain(fn):
            return fn()
        """
    )["defs"]
    assert defs["timed"]["clock_reads"] == 2 and defs["timed"]["runs"] == ["fn"]
    assert defs["plain"]["clock_reads"] == 0


def test_summaries_say_which_functions_queue_gpu_work() -> None:
    defs = summary(
        """
        import torch
        import torch.nn.functional as F
        def forward(model, x):
            return model(x)
        def attention(q, k):
            return F.softmax(q @ k.transpose(-2, -1), -1)
        def product(a, b):
            return torch.matmul(a, b)
        def encoder_forward(enc, x):
            return enc.forward(x)
        def host(path):
            return torch.load(path), sorted(open(path).read().split())
        def seeded():
            torch.manual_seed(0)
        """
    )["defs"]
    for name in ("forward", "attention", "product", "encoder_forward"):
        assert "queues_work" in defs[name]["effects"], name
    for name in ("host", "seeded"):
        assert "queues_work" not in defs[name]["effects"], name


def test_the_call_that_times_a_cuda_network_without_synchronizing_is_reported() -> None:
    result = check(PROJECT)
    # Not the helper that synchronizes, nor the helper timing a host function.
    assert findings(result, "TL002") == [
        ("benchkit/bench.py", 14, "TL002"),
        ("benchkit/bench.py", 22, "TL002"),
        ("benchkit/bench.py", 38, "TL002"),
    ]
    message = next(f.message for f in result.findings if f.code == "TL002" and f.line == 14)
    assert "`timeit()`" in message and "`model`" in message and "torch.cuda.synchronize()" in message


def test_a_local_timer_of_another_modules_function_that_runs_the_network_is_reported(tmp_path: Path) -> None:
    project = copy_project("benchkit", tmp_path)
    bench = project / "benchkit" / "bench.py"
    # Timing only the function that synchronizes, and the one that reads a file: nothing pending.
    edit(bench, '        print("resnet18", _measure(run_model, model, images))\n', "")
    assert ("benchkit/bench.py", 22, "TL002") not in findings(check(project), "TL002")
    # The function times the network again once it no longer synchronizes.
    edit(project / "benchkit" / "workloads.py", "    torch.cuda.synchronize()\n", "")
    assert ("benchkit/bench.py", 22, "TL002") in findings(check(project), "TL002")


def test_summaries_say_which_context_managers_time_their_block() -> None:
    defs = summary(
        """
        import time
        from contextlib import contextmanager
        @contextmanager
        def record_time(tag):
            start = time.time()
            yield
            print(tag, time.time() - start)
        @contextmanager
        def opened(path):
            start = time.time()
            f = open(path)
            print(time.time() - start)
            yield f
        def not_a_context_manager(fn):
            start = time.time()
            yield fn()
            print(time.time() - start)
        """
    )["defs"]
    assert [name for name, entry in defs.items() if entry["times_block"]] == ["record_time"]


def test_a_block_timed_by_another_modules_context_manager_is_reported_at_the_with(tmp_path: Path) -> None:
    project = copy_project("benchkit", tmp_path)
    # The block that ends with a host read (`.tolist()`) and the synchronizing manager are
    # not reported; once the manager's module synchronizes, the block is not either.
    assert ("benchkit/bench.py", 38, "TL002") in findings(check(project), "TL002")
    edit(project / "benchkit" / "timers.py", "    yield\n    print(tag", "    yield\n    torch.cuda.synchronize()\n    print(tag")
    assert ("benchkit/bench.py", 38, "TL002") not in findings(check(project), "TL002")


def test_alone_the_benchmark_cannot_know_what_the_helpers_do() -> None:
    assert check_alone(PROJECT, "benchkit/bench.py", "TL002") == []
