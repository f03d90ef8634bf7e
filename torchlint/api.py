"""Paths -> results: discovery, configuration, rule selection, parallelism and
per-file failures. The public Python API of torchlint lives here."""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from torchlint import engine, notebook
from torchlint.config import Config
from torchlint.discovery import discover, display_path
from torchlint.finding import Finding
from torchlint.registry import all_rules, matches
from torchlint.rule import Rule
from torchlint.sources import SourceFile, Unreadable, read_source

# Below this many files a process pool costs more than it saves (the pre-commit case).
POOL_MIN_FILES = 24
BATCH_SIZE = 8


@dataclass(frozen=True)
class CheckResult:
    findings: list[Finding]
    files_checked: int
    files: list[str] = field(default_factory=list)

    @property
    def internal_errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_internal_error]


def is_enabled(code: str, name: str, config: Config) -> bool:
    selected = any(matches(sel, code, name) for sel in config.select)
    return selected and not any(matches(sel, code, name) for sel in config.ignore)


def enabled_rules(config: Config) -> list[Rule]:
    return [rule() for rule in all_rules() if is_enabled(rule.CODE, rule.NAME, config)]


def check_source(source: str, filename: str = "<string>", config: Config | None = None) -> list[Finding]:
    """Check Python source text; returns findings sorted by position."""
    config = config or Config()
    findings = engine.check_source(source, filename, enabled_rules(config))
    return _filter(findings, config, filename)


def check_paths(
    paths: Sequence[str | os.PathLike[str]],
    config: Config | None = None,
    cwd: Path | None = None,
    jobs: int | None = None,
) -> CheckResult:
    """Check files and folders. Raises `MissingPathError` for paths that do not exist."""
    config = config or Config()
    cwd = cwd or Path.cwd()
    files = discover([os.fspath(p) for p in paths], config, cwd)
    names = [display_path(path, cwd) for path in files]
    tasks = list(zip(files, names))
    jobs = jobs or os.cpu_count() or 1
    if jobs > 1 and len(tasks) >= POOL_MIN_FILES:
        per_file = _check_in_pool(tasks, config, jobs)
    else:
        rules = enabled_rules(config)
        per_file = [check_file(path, name, rules, config) for path, name in tasks]
    findings = sorted(f for file_findings in per_file for f in file_findings)
    return CheckResult(findings=findings, files_checked=len(tasks), files=names)


def check_file(path: Path, name: str, rules: Sequence[Rule], config: Config) -> list[Finding]:
    source = read_source(path)
    if isinstance(source, Unreadable):
        if not source.is_content_error and not path.exists():
            return []  # deleted while we ran: nothing left to check
        return _filter(
            [engine.parse_error(name, source.line, source.column, source.reason)], config, name
        )
    if source.size > config.max_file_size and engine.triggered_rules(source.text, rules):
        reason = (
            f"file is {source.size / 1e6:.1f} MB, over the max-file-size limit of "
            f"{config.max_file_size / 1e6:.1f} MB; raise max-file-size in [tool.torchlint] to check it"
        )
        return _filter([engine.parse_error(name, 1, 1, reason)], config, name)
    return findings_for(source, name, rules, config)


def findings_for(source: SourceFile, name: str, rules: Sequence[Rule], config: Config) -> list[Finding]:
    """The findings for a file already read (or fixed in memory), filtered by `config`."""
    if source.notebook is not None:
        findings = notebook.check(source.notebook, lambda text: engine.check_source(text, name, rules))
    else:
        findings = engine.check_source(source.text, name, rules)
    return _filter(findings, config, name)


def _filter(findings: Iterable[Finding], config: Config, name: str) -> list[Finding]:
    """Drop what `ignore` and `per-file-ignores` ask to drop; internal errors always stay.

    Rule findings are already limited to the selected rules; parse errors are shown
    unless ignored explicitly, whatever `select` says.
    """
    ignored = (*config.ignore, *config.ignored_for(_relative_to_root(name, config)))
    return [f for f in findings if f.is_internal_error or not any(matches(sel, f.code, f.name) for sel in ignored)]


def _relative_to_root(name: str, config: Config) -> str:
    if config.root is None:
        return name
    try:
        return Path(name).resolve().relative_to(config.root.resolve()).as_posix()
    except ValueError:
        return name


# Worker-process state: rules are discovered and instantiated once per worker.
_worker_rules: list[Rule] = []
_worker_config: Config = Config()


def _init_worker(config: Config) -> None:
    global _worker_rules, _worker_config
    _worker_config = config
    _worker_rules = enabled_rules(config)


def _check_batch(batch: list[tuple[Path, str]]) -> list[list[Finding]]:
    return [check_file(path, name, _worker_rules, _worker_config) for path, name in batch]


def _check_in_pool(tasks: list[tuple[Path, str]], config: Config, jobs: int) -> list[list[Finding]]:
    batches = [tasks[i : i + BATCH_SIZE] for i in range(0, len(tasks), BATCH_SIZE)]
    method = "fork" if sys.platform.startswith("linux") else None
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(batches)), mp_context=context, initializer=_init_worker, initargs=(config,)
    ) as pool:
        results = list(pool.map(_check_batch, batches))
    return [file_findings for batch in results for file_findings in batch]
