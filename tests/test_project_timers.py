"""A timing helper in one module (`timeit(fn, *args)`) that never synchronizes, called by a
benchmark in another module with a CUDA network (TL002): reported at the call, which is
where the module knows that what is timed runs on the GPU."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from torchlint import api
from torchlint.config import Config
from torchlint.rules._summaries import summarize

PROJECT = Path(__file__).parent / "data" / "projects" / "benchkit"


def test_summaries_count_wall_clock_reads() -> None:
    source = """
    import time
    from time import perf_counter as clock
    def timed(fn):
        t0 = time.time()
        fn()
        return clock() - t0
    def plain(fn):
        return fn()
    """
    defs = summarize(ast.parse(textwrap.dedent(source)))["defs"]
    assert defs["timed"]["clock_reads"] == 2 and defs["timed"]["runs"] == ["fn"]
    assert defs["plain"]["clock_reads"] == 0


def test_the_call_that_times_a_cuda_network_without_synchronizing_is_reported() -> None:
    result = api.check_paths([PROJECT], Config(), cwd=PROJECT, jobs=1, cache_dir=None)
    found = [(Path(f.filename).name, f.line, f.message) for f in result.findings if f.code == "TL002"]
    # Not the helper that synchronizes, nor the helper timing a host function.
    assert [(name, line) for name, line, _ in found] == [("bench.py", 11)]
    assert "`timeit()`" in found[0][2] and "`model`" in found[0][2] and "torch.cuda.synchronize()" in found[0][2]


def test_alone_the_benchmark_cannot_know_what_the_helper_does() -> None:
    alone = api.check_source((PROJECT / "benchkit" / "bench.py").read_text(), "bench.py")
    assert not [f for f in alone if f.code == "TL002"]
