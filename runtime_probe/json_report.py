"""The probe's JSON report: `{"version", "scripts": [...]}`; per script `path`,
`returncode`, `timed_out`, `steps`, `memory` (per-step samples), `outcome` (how the run
ended: `failed-to-start`, `crashed`, `exited-with-error`, `timed-out`, `step-limit`,
`ended`), `failure` (what the script's own failure was, or null), `crashed_at` (the
user's `file:line` where it raised, or null), `simulated` (CUDA was
simulated) and `findings`, each with `code`, `status`, `filename`, `line`, `message`,
`evidence`, and `"simulated": true` when seen on simulated CUDA."""

from __future__ import annotations

import json
from typing import Any

from torchlint import __version__
from torchlint.runtime_probe.api import ProbeResult, ScriptResult


def script_dict(script: ScriptResult) -> dict[str, Any]:
    crash = script.crash
    ending = script.ending
    return {
        "path": script.path,
        "returncode": script.returncode,
        "timed_out": script.timed_out,
        "steps": script.steps,
        "memory": list(script.memory),
        "outcome": ending.outcome.value,
        "failure": ending.failure() if ending.failed else None,
        "crashed_at": ending.crashed_at or None,
        "findings": [f.to_dict() for f in script.findings],
        "stopped": script.stopped,
        "cuda": script.cuda,
        "simulated": script.simulated,
        "unsupported": list(script.unsupported),
        "duration": round(script.duration, 3),
        "max_steps": script.max_steps,
        "timeout": script.timeout,
        "crash": None
        if crash is None
        else {"type": crash.type, "message": crash.message, "traceback": crash.traceback, "where": crash.where or None, "started": crash.started},
        "ranks": [
            {"rank": r.rank, "steps": r.steps, "exit_code": r.exit_code, "stopped": r.stopped, "memory": list(r.memory)}
            for r in script.ranks
        ],
        "output_tail": script.output_tail if script.failed else "",
        "probe_errors": list(script.probe_errors),
    }


def render(result: ProbeResult) -> str:
    data = {
        "version": __version__,
        "scripts": [script_dict(s) for s in result.scripts],
        "skipped": [{"path": s.path, "reason": s.reason} for s in result.skipped],
    }
    return json.dumps(data, indent=2) + "\n"
