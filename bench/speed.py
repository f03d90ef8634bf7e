"""Measure torchlint side by side with a bare LibCST parse of the same files.

    python bench/speed.py PATH... [--repeat N] [--jobs N] [--tools-venv DIR | --no-tools]

In one run, on the files torchlint itself discovers under PATH (default settings):

- bare parse: read and `libcst.parse_module` every file, one process;
- `torchlint check --no-cache --jobs 1`;
- `torchlint check --no-cache` (all cores);
- a cached re-run: `torchlint check` once to fill a fresh cache, then timed again;
- re-runs after editing the module that most other files import (found with the project
  model): adding a function (a new summary entry that no other file uses), and adding a
  `torch.cuda.synchronize()` to its first function (an entry that the files which looked
  it up depend on); each from a freshly filled cache, with the number of files checked
  again;
- `torchfix` (all cores and `-j 1`) and `fixit lint`, where installed (they are not
  dependencies of torchlint; they pin older LibCST releases, so install them in another
  virtual environment and pass `--tools-venv DIR`: a bare parse loop with that
  environment's LibCST is then measured too, to compare them with their own parser).

Each runs in a fresh process from a scratch working folder (so the cache lands there),
on a copy of PATH's code made there (so that the edits never touch PATH), and may write
bytecode whatever `PYTHONDONTWRITEBYTECODE` says: an installed LibCST loads from the
bytecode that its installation wrote, and torchlint's modules (and its cache of the
methods of LibCST's dataclasses) must load from theirs too, written by the first,
untimed run, or each run would be timed compiling torchlint's own source.
Every tool must say how many files it checked (torchlint's and the tools' summaries, the
bare loop's count), and a comparison in which one checked no file is refused: Fixit, for
one, skips whatever the enclosing repository's `.gitignore` lists (a `.venv`), and would
otherwise be timed doing nothing. Copy such files to a folder outside any repository.
Reported per run: files checked, wall time, CPU time of the process tree, files/s and lines/s, peak
memory of the process tree (RSS summed over its processes, and PSS, which counts pages
that forked workers share only once), and the ratios of wall and CPU time to the bare
parse. With `--repeat N`, all commands run N times in interleaved rounds and each row
shows the fastest run (other load on the machine only ever slows a run down). Linux
only: memory is sampled from /proc.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

BARE_PARSE = """
import sys, libcst
paths = open(sys.argv[1], encoding="utf-8").read().splitlines()
for path in paths:
    with open(path, "rb") as f:
        data = f.read()
    try:
        libcst.parse_module(data)
    except Exception:
        pass
print(f"parsed {len(paths)} files")
"""
# How each command says how many files it checked, in its output: the bare loop,
# torchlint's summary, TorchFix ("Finished checking 89 files."), Fixit ("1 file checked,
# ..." when it reports something, "89 files clean" when not, "0 files clean" when it
# skipped them all).
CHECKED = (
    re.compile(r"parsed (\d+) files"),
    re.compile(r"\((\d+) files? checked\)|of (\d+) files? checked"),
    re.compile(r"Finished checking (\d+) files?"),
    re.compile(r"(\d+) files? checked"),
    re.compile(r"(\d+) files? clean"),
)


@dataclass(frozen=True)
class Run:
    name: str
    command: str
    wall: float
    cpu: float
    rss_mb: float
    pss_mb: float
    returncode: int
    # Files the command said it checked; None when it said nothing recognisable.
    checked: int | None = None
    last_output: str = ""


def files_checked(output: str) -> int | None:
    """The number of files a command's output says it checked (the last such statement)."""
    for pattern in CHECKED:
        found = pattern.findall(output)
        if found:
            last = found[-1]
            return int(next(group for group in last if group) if isinstance(last, tuple) else last)
    return None


def refusals(runs: list[Run]) -> list[str]:
    """Why the comparison cannot stand: a command that checked no file, or did not say how
    many it checked, would be timed for its start-up alone."""
    reasons = []
    for run in runs:
        if run.checked is None:
            reasons.append(f"{run.name} did not say how many files it checked (its output ended: {run.last_output!r})")
        elif run.checked == 0:
            reasons.append(
                f"{run.name} checked no file (its output ended: {run.last_output!r}): it skips files that an "
                "enclosing repository ignores (.gitignore) or that its configuration excludes; copy them to a "
                "folder outside any repository and measure there"
            )
    return reasons


class TreeMemory:
    """Peak memory of a process and its descendants, sampled from /proc every 10 ms."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_rss = 0
        self.peak_pss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.is_set():
            rss = pss = 0
            for pid in self._tree():
                try:
                    with open(f"/proc/{pid}/statm") as f:
                        rss += int(f.read().split()[1]) * page
                    with open(f"/proc/{pid}/smaps_rollup") as f:
                        for line in f:
                            if line.startswith("Pss:"):
                                pss += int(line.split()[1]) * 1024
                                break
                except (OSError, ValueError, IndexError):
                    continue
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_pss = max(self.peak_pss, pss)
            self._stop.wait(0.01)

    def _tree(self) -> list[int]:
        pids, frontier = [self.pid], [self.pid]
        while frontier:
            pid = frontier.pop()
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                kids = []
            pids.extend(kids)
            frontier.extend(kids)
        return pids


def run_environment() -> dict[str, str]:
    """This process's environment, with bytecode writes allowed (see the module's docstring)."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def measure(name: str, argv: list[str], cwd: Path) -> Run:
    output = cwd / f".output-{os.getpid()}.txt"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(output, "wb") as sink:
        process = subprocess.Popen(argv, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT, env=run_environment())
        memory = TreeMemory(process.pid)
        process.wait()
    wall = time.perf_counter() - start
    memory.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = output.read_text(encoding="utf-8", errors="replace")
    output.unlink()
    if process.returncode not in (0, 1) and not name.startswith(("torchfix", "fixit")):
        sys.stderr.write(f"{name}: exit status {process.returncode}\n{text[-2000:]}\n")
    last = next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")
    return Run(
        name,
        " ".join(argv),
        wall,
        cpu,
        memory.peak_rss / 2**20,
        memory.peak_pss / 2**20,
        process.returncode,
        files_checked(text),
        last[-200:],
    )


Prepare = Callable[[], None]


def measure_all(commands: list[tuple[str, list[str], Prepare | None]], cwd: Path, repeat: int) -> list[Run]:
    """Each command `repeat` times, in interleaved rounds so that changing load on the
    machine weighs on all alike; per command, the run with the least wall time. A
    command's `prepare` runs (untimed) before each of its runs."""
    best: dict[str, Run] = {}
    for _ in range(repeat):
        for name, argv, prepare in commands:
            if prepare is not None:
                prepare()
            run = measure(name, argv, cwd)
            if name not in best or run.wall < best[name].wall:
                best[name] = run
    return [best[name] for name, _, _ in commands]


def discover(paths: list[str]) -> list[Path]:
    from torchlint.config import Config
    from torchlint.discovery import discover as torchlint_discover

    files = torchlint_discover([str(Path(p).resolve()) for p in paths], Config(), Path.cwd())
    return [f for f in files if f.suffix == ".py"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--repeat", type=int, default=1, help="keep the fastest of N runs of each (default 1)")
    parser.add_argument("--jobs", type=int, help="workers of the all-cores run (default: all CPUs)")
    parser.add_argument("--tools-venv", type=Path, help="virtual environment holding torchfix and fixit")
    parser.add_argument("--no-tools", action="store_true", help="do not run torchfix or fixit")
    args = parser.parse_args()

    python = sys.executable
    # --statistics: a summary that counts the files checked, without printing every finding.
    torchlint = [python, "-m", "torchlint", "check", "--exit-zero", "--statistics"]
    all_cores = ["--jobs", str(args.jobs)] if args.jobs else []
    cpus = args.jobs or len(os.sched_getaffinity(0))

    with tempfile.TemporaryDirectory(prefix="torchlint-bench-") as scratch:
        work = Path(scratch)
        targets = []
        for i, path in enumerate(Path(p).resolve() for p in args.paths):
            copy = work / "tree" / str(i) / path.name
            if path.is_dir():
                shutil.copytree(path, copy, symlinks=True, ignore=_not_source)
            else:
                copy.parent.mkdir(parents=True)
                shutil.copy2(path, copy)
            targets.append(str(copy))
        files = discover(targets)
        if not files:
            sys.exit("refusing the comparison:\n- every tool would have checked no file: no Python file under the given paths")
        lines = sum(path.read_bytes().count(b"\n") for path in files)
        # The default settings, but with every file checked whatever its size, as the bare parse does.
        largest = max((path.stat().st_size for path in files), default=0)
        settings = work / "torchlint.toml"
        settings.write_text(f"max-file-size = {largest + 1}\nmax-file-tokens = {largest + 1}\n", encoding="utf-8")
        torchlint += ["--config", str(settings)]
        listing = work / "files.txt"
        listing.write_text("\n".join(str(f) for f in files), encoding="utf-8")
        measure("(filling the cache)", [*torchlint, *all_cores, *targets], work)
        hub, importers = most_imported(files)
        original = hub.read_bytes()

        def edited(change: Callable[[str], str]) -> Prepare:
            def prepare() -> None:
                hub.write_bytes(original)
                measure("(filling the cache)", [*torchlint, *all_cores, *targets], work)
                hub.write_text(change(original.decode("utf-8")), encoding="utf-8")

            return prepare

        cached = [*torchlint, *all_cores, *targets]
        commands: list[tuple[str, list[str], Prepare | None]] = [
            ("bare `libcst.parse_module` loop", [python, "-c", BARE_PARSE, str(listing)], None),
            ("torchlint --no-cache --jobs 1", [*torchlint, "--no-cache", "--jobs", "1", *targets], None),
            (f"torchlint --no-cache ({cpus} jobs)", [*torchlint, "--no-cache", *all_cores, *targets], None),
            ("torchlint, cached re-run", cached, lambda: hub.write_bytes(original)),
            ("cached, after adding a function to the most imported module", cached, edited(add_function)),
            ("cached, after changing what its first function does", cached, edited(add_synchronize)),
        ]
        if not args.no_tools:
            commands.extend((name, argv, None) for name, argv in external_tools(targets, listing, args.tools_venv))
        runs = measure_all(commands, work, args.repeat)
        hub.write_bytes(original)
        name = hub.relative_to(work / "tree")
        print(f"\nmost imported module: {name}, imported by {importers} of the other files")
        for change in (add_function, add_synchronize):
            hub.write_bytes(original)
            rechecked(targets, work, change, hub)
    reasons = refusals(runs)
    if reasons:
        sys.exit("refusing the comparison:\n" + "\n".join(f"- {reason}" for reason in reasons))
    report(runs, len(files), lines)


# What the copy of a tree keeps: code and the files that mark a project's root.
KEPT_SUFFIXES = (".py", ".ipynb")
KEPT_NAMES = frozenset({"pyproject.toml", "setup.cfg", "setup.py", "torchlint.toml"})


def _not_source(folder: str, names: list[str]) -> list[str]:
    return [
        name
        for name in names
        if name == ".git"
        or not (name.endswith(KEPT_SUFFIXES) or name in KEPT_NAMES or os.path.isdir(os.path.join(folder, name)))
    ]


def most_imported(files: list[Path]) -> tuple[Path, int]:
    """The module that the most other files import, by the project model's resolution."""
    from torchlint import api
    from torchlint.project import Project

    project = Project(api.summarize_text)
    importers: Counter[Path] = Counter()
    for path in files:
        summary = project.summary(path) or {}
        module = project.module_of(path)
        found: set[Path] = set()
        for written in summary.get("imports", {}).values():
            name = module.absolute(written)
            parts = name.split(".") if name else []
            for cut in range(len(parts), 0, -1):
                ref = project.find_module(".".join(parts[:cut]), module.search)
                if ref is not None:
                    found.add(ref.path)
                    break
        importers.update(found - {path})
    if not importers:  # no file imports another: edit the first one
        return files[0], 0
    hub, count = importers.most_common(1)[0]
    return hub, count


def add_function(text: str) -> str:
    return text + "\n\ndef _torchlint_bench_edit():\n    return None\n"


def add_synchronize(text: str) -> str:
    """`torch.cuda.synchronize()` as the first statement of the module's first function."""
    import ast

    tree = ast.parse(text)
    # The first function or method (breadth first: top-level functions before methods).
    first = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    body = first.body[0] if first is not None else None
    if first is None or body is None or body.lineno == first.lineno:
        return add_function(text)
    lines = text.splitlines(keepends=True)
    lines.insert(body.lineno - 1, " " * body.col_offset + "torch.cuda.synchronize()\n")
    return "".join(lines)


def rechecked(targets: list[str], work: Path, change: Callable[[str], str], hub: Path) -> None:
    """How many files a cached re-run checks again after `change` to `hub`."""
    from torchlint import api
    from torchlint.config import Config

    cache = work / ".rechecked-cache"
    shutil.rmtree(cache, ignore_errors=True)
    original = hub.read_bytes()
    api.check_paths(targets, Config(), cwd=work, cache_dir=cache)
    hub.write_text(change(original.decode("utf-8")), encoding="utf-8")
    result = api.check_paths(targets, Config(), cwd=work, cache_dir=cache)
    hub.write_bytes(original)
    print(f"{change.__name__}: {result.files_checked - result.files_cached} of {result.files_checked} files checked again")


def external_tools(targets: list[str], listing: Path, venv: Path | None) -> list[tuple[str, list[str]]]:
    bin_dir = str(venv / "bin") if venv else str(Path(sys.executable).parent)
    torchfix = shutil.which("torchfix", path=bin_dir) or (None if venv else shutil.which("torchfix"))
    fixit = shutil.which("fixit", path=bin_dir) or (None if venv else shutil.which("fixit"))
    tools = []
    if venv and (torchfix or fixit):
        version = subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import importlib.metadata as m; print(m.version('libcst'))"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        tools.append((f"bare parse loop, libcst {version} (tools' venv)", [str(venv / "bin" / "python"), "-c", BARE_PARSE, str(listing)]))
    if torchfix:
        tools.append(("torchfix (all cores)", [torchfix, *targets]))
        tools.append(("torchfix -j 1", [torchfix, "-j", "1", *targets]))
    if fixit:
        tools.append(("fixit lint", [fixit, "lint", *targets]))
    return tools


def report(runs: list[Run], files: int, lines: int) -> None:
    bare = runs[0]
    print(f"\n{files} files, {lines:,} lines; {len(os.sched_getaffinity(0))} CPUs; Python {sys.version.split()[0]}")
    import libcst

    print(f"libcst {getattr(libcst, 'LIBCST_VERSION', None) or _version('libcst')}\n")
    print("| run | files checked | wall s | CPU s | files/s | lines/s | peak RSS MB | peak PSS MB | wall ratio | CPU ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for run in runs:
        print(
            f"| {run.name} | {run.checked:,} | {run.wall:.2f} | {run.cpu:.2f} | {files / run.wall:,.0f} | {lines / run.wall:,.0f} "
            f"| {run.rss_mb:,.0f} | {run.pss_mb:,.0f} | {run.wall / bare.wall:.3f}x | {run.cpu / bare.cpu:.3f}x |"
        )
    failed = [run for run in runs if run.returncode not in (0, 1) and not run.name.startswith(("torchfix", "fixit"))]
    for run in failed:
        print(f"\n{run.name} failed (exit status {run.returncode}): {run.command}")
    unlike = [run for run in runs if run.checked != files]
    if unlike:
        print()
    for run in unlike:
        print(f"{run.name} said it checked {run.checked:,} files, where the bare parse read {files:,}")


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


if __name__ == "__main__":
    main()
