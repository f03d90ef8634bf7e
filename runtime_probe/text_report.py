"""The probe's text report: per script, how it ran and each finding's status with its
evidence; then a summary."""

from __future__ import annotations

import re

from torchlint.runtime_probe.api import ProbeResult, ScriptResult
from torchlint.runtime_probe.ending import SUMMARY_WORDS, Outcome, plural
from torchlint.runtime_probe.frames import is_user_file
from torchlint.runtime_probe.statuses import ProbedFinding, Status

INDENT = "    "


def _how_it_ran(script: ScriptResult) -> str:
    parts = [plural(script.steps, "step")]
    if script.stopped == "max-steps":
        parts[0] += " (stopped at the step limit)"
    ending = script.ending
    crash = f" ({script.crash.type}: {_first_line(script.crash.message)})" if script.crash is not None else ""
    if script.timed_out:
        parts.append(f"timed out after {script.timeout:g} s, partial report")
    elif ending.outcome is Outcome.FAILED_TO_START:
        parts.append(f"failed to start, exit status {script.returncode}{crash or ', no report from the probe'}")
    elif ending.outcome is Outcome.CRASHED:
        at = f" at {ending.crashed_at}" if ending.crashed_at else ""
        parts.append(f"crashed{at} with exit status {script.returncode}{crash}")
    elif not script.ranks:
        parts.append(f"exit status {script.returncode}, no report from the probe")
    elif ending.failed:
        parts.append(f"exited with an error, exit status {script.returncode}")
    else:
        parts.append(f"exit status {script.returncode}")
    if len(script.ranks) > 1:
        parts.append(f"{len(script.ranks)} ranks")
    parts.append(f"{script.duration:.1f} s")
    parts.append("simulated CUDA" if script.simulated else "CUDA" if script.cuda else "no CUDA")
    return ", ".join(parts)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= 120 else line[:117] + "..."


def _detail(finding: ProbedFinding, script: ScriptResult) -> str:
    if finding.status in (Status.CONFIRMED,):
        return str(finding.evidence.get("runtime_message", ""))
    if finding.status is Status.FOUND:
        return finding.message
    if finding.status is Status.NOT_REPRODUCED:
        note = finding.evidence.get("runtime_message")
        return f"its line ran and nothing went wrong{': ' + note if note else ''}"
    if finding.status in (Status.NOT_REACHED, Status.FAILED):
        return f"its line never ran: {script.ending.why_not_reached()}"
    if finding.status is Status.NEEDS_GPU:
        return str(finding.evidence.get("reason", "this check needs a CUDA device and none was present"))
    if finding.status is Status.INCONCLUSIVE:
        return f"simulated CUDA could not stand in for the GPU: {finding.evidence.get('reason', '')}"
    return "the probe has no runtime check for this rule"


_FRAME = re.compile(r'^  File "(?P<path>[^"]+)", line \d+')


def user_traceback(text: str) -> list[str]:
    """A traceback with only the frames of the user's code (the JSON report keeps it all)."""
    shown: list[str] = []
    keep = True
    hidden = False
    for line in text.rstrip().splitlines():
        frame = _FRAME.match(line)
        if frame:
            keep = is_user_file(frame.group("path"))
            if not keep and not hidden:
                shown.append("  ...")
            hidden = not keep
        elif not line.startswith(" "):
            keep, hidden = True, False
        if keep:
            shown.append(line)
    return shown


def render_script(script: ScriptResult) -> str:
    lines = [f"{script.path}: {_how_it_ran(script)}"]
    for finding in script.findings:
        ranks = f" (ranks {', '.join(map(str, finding.ranks))})" if len(finding.ranks) > 1 else ""
        lines.append(f"  {finding.filename}:{finding.line}: {finding.code} [{finding.name}] {finding.label}{ranks}")
        lines.append(f"  {INDENT}{_detail(finding, script)}")
    if not script.findings:
        lines.append(f"  nothing found: {script.ending.failure()}" if script.ending.failed else "  nothing found")
    if script.crash is not None and script.crash.traceback:
        lines.extend(f"  {INDENT}{line}" for line in user_traceback(script.crash.traceback))
    elif script.failed and script.output_tail:
        lines.append(f"  {INDENT}last output:")
        lines.extend(f"  {INDENT}{line}" for line in script.output_tail.splitlines()[-10:])
    for error in script.probe_errors[:3]:
        lines.append(f"  probe error (please report): {error}")
    return "\n".join(lines) + "\n"


def render_summary(result: ProbeResult) -> str:
    """"Probed 3 scripts: 1 failed to start, 2 stopped at the step limit; 4 findings: 2
    confirmed, 1 failed, 1 needs-gpu." Scripts and findings are counted apart: one script
    that cannot start leaves every finding of it unchecked."""
    lines = [f"skipped {s.path}: {s.reason}" for s in result.skipped]
    outcomes = [s.ending.outcome for s in result.scripts]
    ran = [f"{outcomes.count(o)} {SUMMARY_WORDS[o]}" for o in Outcome if o in outcomes]
    findings = [f for s in result.scripts for f in s.findings]
    statuses = [f"{sum(1 for f in findings if f.status is status)} {status.value}" for status in Status]
    counted = ", ".join(c for c in statuses if not c.startswith("0 "))
    line = f"Probed {plural(len(result.scripts), 'script')}: {', '.join(ran)}; "
    line += f"{plural(len(findings), 'finding')}: {counted}." if findings else "nothing found."
    lines.append(line)
    if result.has_failures:
        lines.append("A script that fails on its own confirms nothing after its failure (its output is above): exit status 1.")
    if any(not s.cuda for s in result.scripts):
        lines.append(
            "No CUDA device: the TL002 timing, TL016 and TL017 checks, TL104 and CUDA memory statistics did not run."
        )
    simulated = [s.path for s in result.scripts if s.simulated]
    if simulated:
        lines.append(
            f"Simulated CUDA (no GPU) for {', '.join(simulated)}: what it confirmed is labelled so, memory figures are "
            "estimates, and TL016 and TL017 need a real GPU."
        )
    return "\n".join(lines) + "\n"


def render(result: ProbeResult) -> str:
    return "".join(render_script(s) + "\n" for s in result.scripts) + render_summary(result)
