"""Paths -> results: discovery, configuration, rule selection, the result cache,
parallelism and per-file failures. The public Python API of torchlint lives here.

LibCST, the engine and the rules are imported only when some file has to be checked:
a run whose files are all in the cache never imports them.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

from torchlint.cache import ResultCache, content_digest
from torchlint.config import Config
from torchlint.discovery import discover, display_path
from torchlint.finding import (
    FILE_TOO_LARGE_CODE,
    INTERNAL_ERROR_CODE,
    PARSE_ERROR_CODE,
    UNUSED_SUPPRESSION_CODE,
    UNUSED_SUPPRESSION_NAME,
    Finding,
    file_problem,
)
from torchlint.project import Project, ProjectView, Summary
from torchlint.registry import catalog, is_selected, matches, names_explicitly
from torchlint.rule import Rule
from torchlint.sources import SourceFile, Unreadable, decode, more_tokens_than, read_bytes

if TYPE_CHECKING:
    from torchlint.engine import SourceParser

# Below this much source to check, a process pool costs more than it saves (the
# pre-commit case: a few files, checked in the main process).
POOL_MIN_BYTES = 256 * 1024
# Files this big (their syntax trees take about 500 bytes of memory per byte of source,
# some 130 MB here) are checked one at a time, each by a worker that is then replaced.
HEAVY_FILE_BYTES = 256 * 1024
# Allocations between collections of the youngest generation (Python's default: 700).
GC_FIRST_GENERATION = 100_000


@dataclass(frozen=True)
class CheckResult:
    findings: list[Finding]
    files_checked: int
    files: list[str] = field(default_factory=list)
    # How many of the checked files had their findings from the result cache.
    files_cached: int = 0

    @property
    def internal_errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_internal_error]


@dataclass(frozen=True)
class FileTask:
    path: Path
    # The path as reported: relative to the working folder when below it.
    name: str


@dataclass(frozen=True)
class FileOutcome:
    findings: list[Finding]
    # Hash of the bytes that were checked (when asked for and the file was readable).
    digest: str | None = None
    # The project summaries the check looked up: absolute name -> digest (see project.py).
    deps: dict[str, str] = field(default_factory=dict)
    # Summaries of project modules computed while checking: path -> (content digest, summary).
    summaries: dict[str, tuple[str, Summary | None]] = field(default_factory=dict)


def is_enabled(code: str, name: str, config: Config) -> bool:
    return is_selected(code, name, config.select, config.ignore)


def enabled_rules(config: Config) -> list[Rule]:
    """The rules `config` enables, each imported when a file first needs it (`lazy_rules`)."""
    from torchlint.lazy_rules import lazy_rules

    return lazy_rules((code, name) for code, name in catalog().items() if is_enabled(code, name, config))


def reports_unused_suppressions(config: Config) -> bool:
    """TL900 is opt-in: only a selector that names it enables it, never `ALL`."""
    code, name = UNUSED_SUPPRESSION_CODE, UNUSED_SUPPRESSION_NAME
    return names_explicitly(config.select, code, name) and not any(matches(sel, code, name) for sel in config.ignore)


def check_source(source: str, filename: str = "<string>", config: Config | None = None) -> list[Finding]:
    """Check Python source text; returns findings sorted by position."""
    from torchlint import engine

    config = config or Config()
    findings = engine.check_source(
        source, filename, enabled_rules(config), unused_suppressions=reports_unused_suppressions(config)
    )
    return _filter(findings, config, filename)


def check_paths(
    paths: Sequence[str | os.PathLike[str]],
    config: Config | None = None,
    cwd: Path | None = None,
    jobs: int | None = None,
    cache_dir: Path | None = None,
    changed_since: str | None = None,
    config_for: Callable[[Path], Config] | None = None,
) -> CheckResult:
    """Check files and folders. Raises `discovery.PathError` for paths that do not
    exist or cannot be read.

    `jobs`: worker processes (default: the usable CPUs). `cache_dir`: where to keep the
    result cache (default: no cache). `changed_since`: a git revision; only files changed
    since it are checked (raises `changes.ChangesError` outside a git work tree or for an
    unknown revision). `config_for`: the settings of each file (the nearest configuration
    file, see `projects`), when they are not `config` for all; files are found with `config`.
    """
    config = config or Config()
    cwd = cwd or Path.cwd()
    files = discover([os.fspath(p) for p in paths], config, cwd)
    if changed_since is not None:
        from torchlint.changes import keep_changed

        files = keep_changed(files, changed_since, cwd)
    groups: dict[int, tuple[Config, list[FileTask]]] = {}
    named = {(cwd / p).resolve() for p in paths if (cwd / p).is_file()}
    names: list[str] = []
    for path in files:
        file_config = config_for(path) if config_for is not None else config
        if file_config is not config and _excluded_below(file_config, path, named, cwd):
            continue
        task = FileTask(path, display_path(path, cwd))
        groups.setdefault(id(file_config), (file_config, []))[1].append(task)
        names.append(task.name)
    findings: list[Finding] = []
    cached = 0
    folders = [cwd / p for p in paths if (cwd / p).is_dir()]
    for group_config, tasks in groups.values():
        group_findings, group_cached = _check_group(tasks, group_config, jobs, cache_dir, folders)
        findings.extend(group_findings)
        cached += group_cached
    return CheckResult(findings=sorted(findings), files_checked=len(names), files=names, files_cached=cached)


def _excluded_below(config: Config, path: Path, named: set[Path], cwd: Path) -> bool:
    """Whether the file's own project excludes it: always for a file found in a folder,
    with `force-exclude` for one named on the command line."""
    from torchlint.discovery import excluded_by

    if path.resolve() in named and not config.force_exclude:
        return False
    return excluded_by(config, path, cwd)


def _check_group(
    tasks: list[FileTask], config: Config, jobs: int | None, cache_dir: Path | None, folders: Sequence[Path] = ()
) -> tuple[list[Finding], int]:
    """Check files that share `config`: (their findings, how many came from the cache);
    `folders`: the folders named on the command line, roots of the project's modules."""
    cache = ResultCache.open(cache_dir, config) if cache_dir is not None else None
    # Phase one, lazily: summaries of the project's modules, from the cache or computed
    # where a check (or the validation of a cached result) looks one up.
    project = Project(summarize_text, cache.summaries() if cache is not None else None, folders)
    per_file: list[list[Finding] | None] = [None] * len(tasks)
    if cache is not None:
        # Every file's digest first: validating one file's dependencies reads the summaries
        # of others, which are mostly files of this run, already read.
        digests: dict[int, str] = {}
        for i, task in enumerate(tasks):
            data = read_bytes(task.path)
            if isinstance(data, bytes):
                digests[i] = project.read_digests[os.path.abspath(task.path)] = content_digest(data)
        for i, digest in digests.items():
            hit = cache.get(tasks[i].path, digest, tasks[i].name)
            if hit is not None and project.still_valid(Path(os.path.abspath(tasks[i].path)), hit.deps):
                per_file[i] = hit.findings
    todo = [i for i, found in enumerate(per_file) if found is None]
    # Phase two: each file checked with a view of the project that records what it used.
    outcomes = _check_tasks([tasks[i] for i in todo], config, jobs or usable_cpus(), cache is not None, project)
    for i, outcome in zip(todo, outcomes):
        per_file[i] = outcome.findings
        project.known.update(outcome.summaries)
        if cache is not None and outcome.digest is not None and not any(f.is_internal_error for f in outcome.findings):
            cache.put(tasks[i].path, outcome.digest, outcome.findings, outcome.deps)
    if cache is not None:
        project.known.update(project.take_computed())
        cache.put_summaries(project.known)
        cache.save()
    return [f for file_findings in per_file if file_findings for f in file_findings], len(tasks) - len(todo)


def usable_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def summarize_text(text: str) -> Summary | None:
    """A module's summary for the project model (parsed only when asked for)."""
    from torchlint import engine

    return engine.summarize_source(text)


def check_file(path: Path, name: str, rules: Sequence[Rule], config: Config) -> list[Finding]:
    return check_data(path, name, read_bytes(path), rules, config)


def check_data(
    path: Path,
    name: str,
    data: bytes | Unreadable,
    rules: Sequence[Rule],
    config: Config,
    project: ProjectView | None = None,
) -> list[Finding]:
    """Check the bytes read from `path`, reported as `name`; `project` resolves its imports."""
    from torchlint import engine

    source = data if isinstance(data, Unreadable) else decode(path, data)
    if isinstance(source, Unreadable):
        if not source.is_content_error and not path.exists():
            return []  # deleted while we ran: nothing left to check
        if source.is_folder:
            return _filter([file_problem(name, PARSE_ERROR_CODE, source.reason)], config, path)
        return _filter([engine.parse_error(name, source.line, source.column, source.reason)], config, path)
    if source.size > config.max_file_size and engine.triggered_rules(source.text, rules):
        return _filter([too_large(name, source.size, config.max_file_size)], config, path)
    tokens = more_tokens_than(source.text, config.max_file_tokens)
    if tokens is not None and engine.triggered_rules(source.text, rules):
        return _filter([too_dense(name, tokens, config.max_file_tokens)], config, path)
    return findings_for(source, name, rules, config, project)


def too_large(name: str, size: int, limit: int) -> Finding:
    # Its syntax tree would take some 600 bytes of memory per byte of ordinary code (bench/max_file_size.py).
    return _not_checked(name, f"is {size / 1e6:.1f} MB", "max-file-size", f"{limit / 1e6:.1f} MB", size * 600, size)


def too_dense(name: str, tokens: int, limit: int) -> Finding:
    # And some 2 to 4 KB per token, whatever the bytes.
    return _not_checked(name, f"has about {tokens:,} tokens", "max-file-tokens", f"{limit:,}", tokens * 3000, tokens)


def _not_checked(name: str, measure: str, setting: str, limit: str, memory: int, value: int) -> Finding:
    message = (
        f"not checked: the file {measure}, over the {setting} limit of {limit} (checking it would take "
        f"about {memory / 1e9:.1f} GB of memory); to check it, raise the limit in [tool.torchlint]: "
        f"{setting} = {value}"
    )
    return file_problem(name, FILE_TOO_LARGE_CODE, message)


def findings_for(
    source: SourceFile,
    name: str,
    rules: Sequence[Rule],
    config: Config,
    project: ProjectView | None = None,
    parser: SourceParser | None = None,
) -> list[Finding]:
    """The findings for a file already read (or fixed in memory), filtered by `config`;
    `parser` parses a Python file (the whole text unless an editor keeps one per document)."""
    from torchlint import engine, notebook

    unused = reports_unused_suppressions(config)
    if source.notebook is not None:
        # As for any file, a notebook without any rule's trigger words is not parsed.
        active = engine.triggered_rules(source.text, rules)
        findings = (
            notebook.check(
                source.notebook,
                name,
                lambda text: engine.check_source(text, name, active, project, unused_suppressions=unused),
                engine.syntax_problem,
            )
            if active
            else []
        )
    else:
        findings = engine.check_source(
            source.text, name, rules, project, unused_suppressions=unused, parser=parser or engine.WHOLE_TEXT
        )
    return _filter(findings, config, source.path)


def _filter(findings: Iterable[Finding], config: Config, path: str | Path) -> list[Finding]:
    """Drop what `ignore` and `per-file-ignores` ask to drop; internal errors always stay.

    Rule findings are already limited to the selected rules; parse errors are shown
    unless ignored explicitly, whatever `select` says.
    """
    ignored = (*config.ignore, *config.ignored_for(_relative_to_root(path, config)))
    return [f for f in findings if f.is_internal_error or not any(matches(sel, f.code, f.name) for sel in ignored)]


def _relative_to_root(path: str | Path, config: Config) -> str:
    """The path that `per-file-ignores` patterns match: relative to the configuration
    file's folder (the working folder without one), else as it is."""
    base = config.root or Path.cwd()
    try:
        return Path(path).resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


# Worker-process state: rules are discovered and instantiated once per worker.
_worker_rules: list[Rule] = []
_worker_config: Config = Config()
_worker_digests = False
_worker_project: Project | None = None


def _init_worker(config: Config, digests: bool, project: Project | None = None) -> None:
    global _worker_rules, _worker_config, _worker_digests, _worker_project
    _worker_config = config
    _worker_rules = enabled_rules(config)
    _worker_digests = digests
    _worker_project = project


def _check_task(task: FileTask) -> FileOutcome:
    data = read_bytes(task.path)
    digest = content_digest(data) if _worker_digests and isinstance(data, bytes) else None
    view = ProjectView.of(_worker_project, task.path) if _worker_project is not None else None
    findings = check_data(task.path, task.name, data, _worker_rules, _worker_config, view)
    if view is None:
        return FileOutcome(findings, digest)
    return FileOutcome(findings, digest, view.used, view.project.take_computed())


def _check_tasks(
    tasks: list[FileTask], config: Config, jobs: int, digests: bool, project: Project | None = None
) -> list[FileOutcome]:
    if not tasks:
        return []
    _init_worker(config, digests, project)
    sizes = [_size(task.path) for task in tasks] if jobs > 1 and len(tasks) > 1 else []
    if sum(sizes) < POOL_MIN_BYTES:
        with _fewer_collections():
            return [_check_task_in_process(task) for task in tasks]
    from torchlint.lazy_rules import load_all
    from torchlint.parallel import Crash, WorkerSetup, run_tasks

    # Import the rules (and LibCST) before any worker is forked, so that workers share them.
    load_all(_worker_rules)
    setup = WorkerSetup(
        work=_check_task, initialize=_init_worker, args=(config, digests, project), heavy_weight=HEAVY_FILE_BYTES
    )
    with _fewer_collections():  # forked workers inherit it
        results = run_tasks(tasks, setup, jobs, weights=sizes)
    return [
        FileOutcome([_crash(task.name, result.reason)]) if isinstance(result, Crash) else result
        for task, result in zip(tasks, results)
    ]


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Syntax trees hold no reference cycles, yet their millions of small objects set off
    the cyclic garbage collector again and again: about 8% of the checking time."""
    thresholds = gc.get_threshold()
    gc.set_threshold(GC_FIRST_GENERATION, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def _check_task_in_process(task: FileTask) -> FileOutcome:
    try:
        return _check_task(task)
    except Exception as exc:  # as in a worker: this file is lost, the run is not
        first_line = next(iter(str(exc).splitlines()), "")
        return FileOutcome([_crash(task.name, f"{type(exc).__name__}: {first_line}")])


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _crash(name: str, reason: str) -> Finding:
    return file_problem(name, INTERNAL_ERROR_CODE, f"torchlint could not check this file: {reason}; please report this")
