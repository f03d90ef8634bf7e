"""A timing helper in one module (`timeit(fn, *args)`) that never synchronizes, called by a
benchmark in another module with a CUDA network (TL002): reported at the call, which is
where the module knows that what is timed runs on the GPU."""

from __future__ import annotations

from project_support import PROJECTS, check, check_alone, findings, summary

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


def test_the_call_that_times_a_cuda_network_without_synchronizing_is_reported() -> None:
    result = check(PROJECT)
    # Not the helper that synchronizes, nor the helper timing a host function.
    assert findings(result, "TL002") == [("benchkit/bench.py", 11, "TL002")]
    (message,) = [f.message for f in result.findings if f.code == "TL002"]
    assert "`timeit()`" in message and "`model`" in message and "torch.cuda.synchronize()" in message


def test_alone_the_benchmark_cannot_know_what_the_helper_does() -> None:
    assert check_alone(PROJECT, "benchkit/bench.py", "TL002") == []
