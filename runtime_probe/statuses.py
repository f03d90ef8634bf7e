"""Static findings + what the probed processes saw -> one status per finding, plus the
runtime-only findings. Pure: no I/O, no torch."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Iterable, Sequence

from torchlint.engine import python_ast
from torchlint.finding import Finding
from torchlint.runtime_probe.ending import Ending
from torchlint.runtime_probe.protocol import RUNTIME_NAMES, STATIC_NAMES, Event, Frame, RankReport


class Status(str, Enum):
    CONFIRMED = "confirmed"
    NOT_REPRODUCED = "not-reproduced"
    NOT_REACHED = "not-reached"
    # The script failed on its own (crashed, exited non-zero) before the finding's line ran.
    FAILED = "failed"
    NEEDS_GPU = "needs-gpu"
    # A runtime finding of the probe's own, with no static finding behind it.
    FOUND = "found"
    # A static finding of a rule that the probe has no runtime check for.
    UNCHECKED = "unchecked"
    # Simulated CUDA could not stand in for the GPU (an operator without a CPU kernel,
    # torch.compile, CUDA graphs, NCCL): neither a finding nor a pass.
    INCONCLUSIVE = "inconclusive"


FAILING = (Status.CONFIRMED, Status.FOUND)


@dataclass(frozen=True)
class RuntimeCheck:
    """How the probe checks a static rule: the event code that confirms it, whether the
    check can only happen on a CUDA device, and whether simulated CUDA can answer it."""

    event: str
    needs_cuda: bool = False
    simulated: bool = True


CHECKS = {
    "TL001": RuntimeCheck("TL102"),
    "TL002": RuntimeCheck("TL002", needs_cuda=True),
    "TL003": RuntimeCheck("TL003"),
    "TL004": RuntimeCheck("TL004"),
    "TL005": RuntimeCheck("TL005"),
    "TL006": RuntimeCheck("TL103"),
    "TL007": RuntimeCheck("TL007"),
    "TL008": RuntimeCheck("TL008"),
    "TL009": RuntimeCheck("TL009"),
    "TL010": RuntimeCheck("TL010"),
    "TL011": RuntimeCheck("TL101", needs_cuda=True),
    "TL012": RuntimeCheck("TL101", needs_cuda=True),
    "TL013": RuntimeCheck("TL013"),
    "TL014": RuntimeCheck("TL014"),
    "TL016": RuntimeCheck("TL016", needs_cuda=True, simulated=False),
    "TL017": RuntimeCheck("TL017", needs_cuda=True, simulated=False),
}


@dataclass(frozen=True)
class ProbedFinding:
    code: str
    name: str
    status: Status
    filename: str
    line: int
    message: str
    evidence: dict[str, Any] = field(default_factory=dict, compare=False)
    ranks: tuple[int, ...] = ()
    # Seen on simulated CUDA, not on a GPU.
    simulated: bool = False

    @property
    def label(self) -> str:
        """The status as reports show it: `confirmed (simulated CUDA)` under simulation."""
        if self.simulated and self.status in FAILING:
            return f"{self.status.value} (simulated CUDA)"
        return self.status.value

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "name": self.name,
            "status": self.status.value,
            "filename": self.filename,
            "line": self.line,
            "message": self.message,
            "evidence": self.evidence,
        }
        if len(self.ranks) > 1 or any(self.ranks):
            data["ranks"] = list(self.ranks)
        if self.simulated:
            data["simulated"] = True
        return data


@dataclass
class _Merged:
    event: Event
    ranks: list[int]
    used: bool = False


def checked_lines(findings: Iterable[Finding]) -> tuple[int, ...]:
    """Lines whose execution the child must record: those of checkable findings."""
    return tuple(sorted({f.line for f in findings if f.code in CHECKS}))


def _merge(reports: Sequence[RankReport]) -> list[_Merged]:
    merged: dict[tuple[str, str, int, bool], _Merged] = {}
    for report in reports:
        for event in report.events:
            key = (event.code, os.path.normcase(event.filename), event.line, event.benign)
            if key in merged:
                merged[key].ranks.append(report.rank)
            else:
                merged[key] = _Merged(event, [report.rank])
    return list(merged.values())


def _scope(tree: ast.Module | None, line: int) -> tuple[int, int]:
    """Lines of the innermost loop or function around `line` (the whole file at top level)."""
    best = (1, 1 << 30)
    if tree is None:
        return best
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef)):
            start, end = node.lineno, node.end_lineno or node.lineno
            if start <= line <= end and end - start < best[1] - best[0]:
                best = (start, end)
    return best


def _same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


_BLOCKS = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.FunctionDef, ast.AsyncFunctionDef)


def _lines(tree: ast.Module | None, finding: Finding) -> tuple[int, int]:
    """The finding's own lines. A finding on the first line of a loop, function or `with`
    block (TL008 reports the epoch loop, TL009 the evaluation function) stands for the
    whole block."""
    end = max(finding.end_line, finding.line)
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, _BLOCKS) and node.lineno == finding.line:
                end = max(end, node.end_lineno or end)
    return finding.line, end


def _match(finding: Finding, script: str, event: Event, tree: ast.Module | None) -> int:
    """How well an event fits a finding: 2 when one of the user's frames of the event sits
    on the finding's own lines, 1 when in the innermost loop or function around it (weak
    events need 2), 0 otherwise."""
    start, end = _scope(tree, finding.line)
    first, last = _lines(tree, finding)
    frames = [f.line for f in event.stack if _same_file(f.filename, script)]
    if any(first <= line <= last for line in frames):
        return 2
    if not event.weak and any(start <= line <= end for line in frames):
        return 1
    return 0


def assign(
    static: Sequence[Finding],
    reports: Sequence[RankReport],
    script: str,
    source: str | None,
    display: Callable[[str], str] = str,
    ending: Ending | None = None,
) -> list[ProbedFinding]:
    """Statuses of `static` (the findings of `script`) and the runtime-only findings;
    `ending`, how the run ended, tells a failed script from one that a bound stopped."""
    try:
        tree = python_ast(source) if source is not None else None
    except SyntaxError:
        tree = None
    merged = _merge(reports)
    reached = {line for report in reports for line in report.reached}
    cuda = any(report.cuda for report in reports)
    simulation = _Simulation.of(reports)
    results = [_status(f, merged, reached, cuda, simulation, script, tree, ending) for f in static]
    for item in merged:
        if not (item.used or item.event.benign or item.event.weak):
            event = item.event
            results.append(
                ProbedFinding(
                    code=event.code,
                    name=RUNTIME_NAMES.get(event.code) or STATIC_NAMES.get(event.code, ""),
                    status=Status.FOUND,
                    filename=display(event.filename),
                    line=event.line,
                    message=event.message,
                    evidence=event.evidence,
                    ranks=tuple(sorted(item.ranks)),
                    simulated=simulation.active,
                )
            )
    return sorted(results, key=lambda p: (p.filename, p.line, p.code))


@dataclass(frozen=True)
class _Simulation:
    """Whether the script ran on simulated CUDA, and what the simulation could not do."""

    active: bool = False
    unsupported: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()

    @classmethod
    def of(cls, reports: Sequence[RankReport]) -> _Simulation:
        return cls(
            any(r.simulated for r in reports),
            tuple(dict.fromkeys(reason for r in reports for reason in r.unsupported)),
            tuple(dict.fromkeys(op for r in reports for op in r.unverified)),
        )

    def limits(self, check: RuntimeCheck) -> list[str]:
        """Why this check's silence proves nothing on this simulated run."""
        reasons = list(self.unsupported)
        if check.event == "TL101" and self.unverified:
            reasons.append(f"devices were mixed in {', '.join(self.unverified[:3])}, whose CUDA device rule is not simulated")
        return reasons


def _status(
    finding: Finding,
    merged: list[_Merged],
    reached: set[int],
    cuda: bool,
    simulation: _Simulation,
    script: str,
    tree: ast.Module | None,
    ending: Ending | None,
) -> ProbedFinding:
    def result(status: Status, evidence: dict[str, Any], ranks: Iterable[int] = ()) -> ProbedFinding:
        return ProbedFinding(
            finding.code,
            finding.name,
            status,
            finding.filename,
            finding.line,
            finding.message,
            evidence,
            tuple(ranks),
            simulation.active and status is not Status.UNCHECKED,
        )

    check = CHECKS.get(finding.code)
    if check is None:
        return result(Status.UNCHECKED, {})
    if check.needs_cuda and not cuda:
        return result(Status.NEEDS_GPU, {"reason": "this check needs a CUDA device and none was present"})
    if check.needs_cuda and simulation.active and not check.simulated:
        return result(Status.NEEDS_GPU, {"reason": "simulated CUDA cannot answer this check: it needs a real GPU"})
    fits = {id(m): _match(finding, script, m.event, tree) for m in merged if m.event.code == check.event}
    related = sorted((m for m in merged if fits.get(id(m))), key=lambda m: -fits[id(m)])
    confirming = [m for m in related if not m.event.benign]
    if confirming:
        for item in confirming:
            item.used = True
        first = confirming[0].event
        evidence = {"runtime_code": first.code, "runtime_message": first.message, **first.evidence}
        return result(Status.CONFIRMED, evidence, sorted({r for m in confirming for r in m.ranks}))
    limits = simulation.limits(check) if simulation.active else []
    if limits:
        return result(Status.INCONCLUSIVE, {"reason": "; ".join(limits), "unsupported": limits})
    if finding.line in reached:
        evidence = {"runtime_message": related[0].event.message} if related else {}
        return result(Status.NOT_REPRODUCED, evidence)
    if ending is None:
        return result(Status.NOT_REACHED, {})
    return result(Status.FAILED if ending.failed else Status.NOT_REACHED, {"reason": ending.why_not_reached()})
