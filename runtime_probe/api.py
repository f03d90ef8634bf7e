"""The probe's Python API: static findings -> probed scripts -> statuses. Imports no torch:
the scripts run in subprocesses, which do."""

from __future__ import annotations

import ast
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from torchlint.config import Config, ProbeScript
from torchlint.discovery import display_path
from torchlint.engine import python_ast
from torchlint.finding import Finding
from torchlint.runtime_probe import runner
from torchlint.runtime_probe.ending import Ending, ending
from torchlint.runtime_probe.protocol import Crash, RankReport
from torchlint.runtime_probe.statuses import FAILING, ProbedFinding, assign, checked_lines
from torchlint.sources import SourceFile, read_source


@dataclass(frozen=True)
class ProbeOptions:
    """Command-line choices; None leaves the configuration's value."""

    max_steps: int | None = None
    timeout: float | None = None
    device: str | None = None
    nproc_per_node: int = 1
    # Arguments for the script, overriding the configured ones.
    args: tuple[str, ...] | None = None
    probe_all: bool = False
    # Bytes of the simulated CUDA device (`--simulated-memory`).
    simulated_memory: int | None = None


@dataclass(frozen=True)
class ScriptResult:
    path: str
    returncode: int | None
    timed_out: bool
    duration: float
    steps: int
    memory: tuple[dict[str, Any], ...]
    findings: tuple[ProbedFinding, ...]
    max_steps: int
    timeout: float
    cuda: bool = False
    stopped: str | None = None
    crash: Crash | None = None
    ranks: tuple[RankReport, ...] = ()
    output_tail: str = ""
    probe_errors: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    # CUDA was simulated (runtime_probe/simcuda), and what the simulation could not do.
    simulated: bool = False
    unsupported: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether the script did not run to a normal end (crash, timeout, no report)."""
        return self.timed_out or self.crash is not None or not self.ranks or self.returncode not in (0, None)

    @property
    def ending(self) -> Ending:
        """How the run ended: the script's own failure, a bound of the probe, or a normal end."""
        return ending(
            returncode=self.returncode,
            timed_out=self.timed_out,
            duration=self.duration,
            steps=self.steps,
            stopped=self.stopped,
            crash=self.crash,
            reported=bool(self.ranks),
            output_tail=self.output_tail,
            max_steps=self.max_steps,
            timeout=self.timeout,
        )


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True)
class ProbeResult:
    scripts: tuple[ScriptResult, ...]
    skipped: tuple[Skipped, ...] = ()
    files_checked: int = 0

    @property
    def has_findings(self) -> bool:
        return any(f.status in FAILING for s in self.scripts for f in s.findings)

    @property
    def has_failures(self) -> bool:
        """Whether a script failed on its own (crashed, exited non-zero): it confirmed
        nothing past that point, which must not pass as clean."""
        return any(s.ending.failed for s in self.scripts)


def is_program(source: str) -> bool:
    """Whether a file does something when run: a `__main__` block or top-level code
    beyond definitions, imports and assignments."""
    try:
        tree = python_ast(source)
    except SyntaxError:
        return False
    for node in tree.body:
        if isinstance(node, ast.If) and _is_main_test(node.test):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Call, ast.Await)):
            return True
    return False


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return bool(names and mains)


def _script_settings(config: Config, path: Path, cwd: Path) -> ProbeScript | None:
    base = config.root or cwd
    try:
        relative = path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        relative = path.as_posix()
    return config.probe.for_script(relative)


def run_spec(path: Path, static: Sequence[Finding], config: Config, options: ProbeOptions, cwd: Path) -> runner.RunSpec:
    script = _script_settings(config, path, cwd)
    settings = config.probe
    return runner.RunSpec(
        script=path.resolve(),
        args=options.args if options.args is not None else script.args if script else (),
        env=script.env if script else (),
        timeout=options.timeout or (script.timeout if script and script.timeout else settings.timeout),
        max_steps=options.max_steps or (script.max_steps if script and script.max_steps else settings.max_steps),
        device=options.device or settings.device,
        nproc_per_node=options.nproc_per_node,
        lines=checked_lines(static),
        cwd=cwd,
        simulated_memory=options.simulated_memory or runner.RunSpec.simulated_memory,
    )


def probe_script(
    path: str | os.PathLike[str],
    static: Sequence[Finding] = (),
    config: Config | None = None,
    options: ProbeOptions | None = None,
    cwd: Path | None = None,
) -> ScriptResult:
    """Run one script under the probe; `static` are its static findings (any source)."""
    config = config or Config()
    options = options or ProbeOptions()
    cwd = cwd or Path.cwd()
    script_path = cwd / Path(path)
    spec = run_spec(script_path, static, config, options, cwd)
    outcome = runner.run(spec)
    source = read_source(script_path)
    text = source.text if isinstance(source, SourceFile) else None
    reports = outcome.reports
    first = reports[0] if reports else None
    result = ScriptResult(
        path=display_path(script_path, cwd),
        returncode=outcome.returncode,
        timed_out=outcome.timed_out,
        duration=outcome.duration,
        steps=max((r.steps for r in reports), default=0),
        memory=first.memory if first else (),
        findings=(),
        max_steps=spec.max_steps,
        timeout=spec.timeout,
        cuda=any(r.cuda for r in reports),
        stopped=first.stopped if first else None,
        crash=next((r.crash for r in reports if r.crash), None),
        ranks=reports,
        output_tail=outcome.output_tail,
        probe_errors=tuple(e for r in reports for e in r.probe_errors),
        command=outcome.command,
        simulated=any(r.simulated for r in reports),
        unsupported=tuple(dict.fromkeys(u for r in reports for u in r.unsupported)),
    )
    findings = assign(
        static, reports, str(spec.script), text, lambda name: display_path(Path(name), cwd), result.ending
    )
    return dataclasses.replace(result, findings=tuple(findings))


@dataclass(frozen=True)
class Plan:
    """What `probe_paths` will run: scripts with their static findings, and what it skips."""

    scripts: tuple[tuple[Path, tuple[Finding, ...]], ...]
    skipped: tuple[Skipped, ...]
    files_checked: int = 0


def plan(paths: Sequence[str], config: Config, options: ProbeOptions, cwd: Path) -> Plan:
    """Check `paths` statically and choose the scripts to probe. Raises what
    `api.check_paths` raises for missing paths."""
    from torchlint import api

    result = api.check_paths(paths, config, cwd=cwd)
    by_file: dict[str, list[Finding]] = {}
    for finding in result.findings:
        if not finding.is_internal_error:
            by_file.setdefault(finding.filename, []).append(finding)
    explicit = {(cwd / p).resolve() for p in paths if (cwd / p).is_file()}
    scripts: list[tuple[Path, tuple[Finding, ...]]] = []
    skipped: list[Skipped] = []
    for name in result.files:
        findings = by_file.get(name, [])
        if not (findings or options.probe_all):
            continue
        if not name.endswith(".py"):
            if findings:
                skipped.append(Skipped(name, "notebooks are not probed"))
            continue
        path = cwd / name
        if any(f.code == "TL000" for f in findings):
            skipped.append(Skipped(name, "cannot be parsed"))
            continue
        if any(f.code == "TL998" for f in findings):
            skipped.append(Skipped(name, "over max-file-size, not checked"))
            continue
        source = read_source(path)
        if path.resolve() not in explicit and not (isinstance(source, SourceFile) and is_program(source.text)):
            if findings:
                skipped.append(Skipped(name, "not a program: no `if __name__ == \"__main__\":` block or top-level code"))
            continue
        scripts.append((path, tuple(findings)))
    return Plan(tuple(scripts), tuple(skipped), result.files_checked)


def probe_paths(
    paths: Sequence[str],
    config: Config | None = None,
    options: ProbeOptions | None = None,
    cwd: Path | None = None,
    on_result: Callable[[ScriptResult], None] | None = None,
) -> ProbeResult:
    """Check `paths`, then probe the flagged scripts (every script with `probe_all`)."""
    config = config or Config()
    options = options or ProbeOptions()
    cwd = cwd or Path.cwd()
    chosen = plan(paths, config, options, cwd)
    results = []
    for path, findings in chosen.scripts:
        result = probe_script(path, findings, config, options, cwd)
        if on_result:
            on_result(result)
        results.append(result)
    return ProbeResult(tuple(results), chosen.skipped, chosen.files_checked)
