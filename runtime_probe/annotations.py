"""Probe results as checker findings, so that `probe --format sarif|github` reuses the
checker's reporters: what the probe confirmed or found is an error at the user's line;
a finding whose script failed before its line ran is a warning (nothing was checked, and
the probe exits 1); a check that needs a GPU nobody lent, or that simulated CUDA could not
answer, is a note, so that a CPU-only CI run says so instead of passing in silence; what
simulated CUDA confirmed says so in its message. Not-reproduced, not-reached and unchecked
findings are not problems and are left to the text and JSON reports."""

from __future__ import annotations

from torchlint.finding import Finding, Severity
from torchlint.runtime_probe.api import ProbeResult
from torchlint.runtime_probe.statuses import FAILING, ProbedFinding, Status

SEVERITIES = {
    Status.CONFIRMED: Severity.ERROR,
    Status.FOUND: Severity.ERROR,
    Status.FAILED: Severity.WARNING,
    Status.NEEDS_GPU: Severity.INFO,
    Status.INCONCLUSIVE: Severity.INFO,
}


def as_findings(result: ProbeResult) -> list[Finding]:
    return sorted(
        _finding(f) for script in result.scripts for f in script.findings if f.status in SEVERITIES
    )


def _finding(probed: ProbedFinding) -> Finding:
    if probed.status is Status.CONFIRMED:
        evidence = probed.evidence.get("runtime_message")
        message = f"confirmed at runtime: {evidence}" if evidence else f"confirmed at runtime: {probed.message}"
    elif probed.status is Status.FAILED:
        message = f"not checked at runtime, {probed.evidence.get('reason', 'the script failed first')}: {probed.message}"
    elif probed.status is Status.NEEDS_GPU:
        message = f"not checked at runtime, needs a CUDA device: {probed.message}"
    elif probed.status is Status.INCONCLUSIVE:
        message = f"inconclusive at runtime, simulated CUDA could not stand in for the GPU ({probed.evidence.get('reason', '')}): {probed.message}"
    else:
        message = probed.message
    if probed.simulated and probed.status in FAILING:
        message = f"{message} [simulated CUDA: no GPU was used]"
    return Finding(
        filename=probed.filename,
        cell=0,
        line=probed.line,
        column=1,
        end_line=probed.line,
        end_column=1,
        code=probed.code,
        name=probed.name,
        message=message,
        severity=SEVERITIES[probed.status],
    )
