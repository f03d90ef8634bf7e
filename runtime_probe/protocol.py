"""What the parent and the probed child say to each other: the child's settings (a JSON
file named by an environment variable) and its per-rank report (a JSON file in the output
folder). Stdlib only: the parent never imports torch."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

SETTINGS_ENV = "TORCHLINT_PROBE_SETTINGS"

# Runtime findings of the probe, and the static codes it can confirm with its own name.
RUNTIME_NAMES = {
    "TL101": "device-mismatch",
    "TL102": "gradients-carried-over",
    "TL103": "memory-growth",
    "TL104": "memory-fragmentation",
}
STATIC_NAMES = {
    "TL001": "missing-zero-grad",
    "TL002": "unsynchronized-timing",
    "TL003": "view-after-transpose",
    "TL004": "eval-without-no-grad",
    "TL005": "zero-grad-before-step",
    "TL007": "scheduler-before-optimizer",
    "TL008": "eval-mode-never-reset",
    "TL009": "missing-eval-mode",
    "TL010": "fp16-without-grad-scaler",
    "TL013": "grad-clip-misplaced",
    "TL014": "sampler-set-epoch-missing",
    "TL016": "ddp-device-not-set",
    "TL017": "dataloader-starves-gpu",
}


@dataclass(frozen=True)
class ChildSettings:
    script: str
    out_dir: str
    max_steps: int
    # Lines of static findings in the script: the child records which of them ran.
    lines: tuple[int, ...] = ()
    # "simulated" always simulates CUDA; "auto" does when the script asks for CUDA and
    # there is none (runtime_probe/simcuda).
    device: str = "auto"
    simulated_memory: int = 80 * (1 << 30)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)), encoding="utf-8")

    @classmethod
    def load(cls, path: str) -> ChildSettings:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(
            script=data["script"],
            out_dir=data["out_dir"],
            max_steps=int(data["max_steps"]),
            lines=tuple(int(n) for n in data.get("lines", ())),
            device=str(data.get("device", "auto")),
            simulated_memory=int(data.get("simulated_memory", 80 * (1 << 30))),
        )


@dataclass(frozen=True)
class Frame:
    filename: str
    line: int

    def to_list(self) -> list[Any]:
        return [self.filename, self.line]


@dataclass(frozen=True)
class Event:
    """One thing the child saw, located at the innermost frame of the user's code.

    `stack` holds the user's frames, innermost first; `benign` marks evidence that a
    static finding's line ran without the bug showing (deliberate eval-mode training);
    `weak` marks evidence that confirms a static finding on its own lines but is no
    finding alone (a non-contiguous `.view()` that happened to work).
    """

    code: str
    stack: tuple[Frame, ...]
    message: str
    evidence: dict[str, Any] = field(default_factory=dict, compare=False)
    benign: bool = False
    weak: bool = False

    @property
    def filename(self) -> str:
        return self.stack[0].filename

    @property
    def line(self) -> int:
        return self.stack[0].line

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "stack": [f.to_list() for f in self.stack],
            "message": self.message,
            "evidence": self.evidence,
            "benign": self.benign,
            "weak": self.weak,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        return cls(
            code=data["code"],
            stack=tuple(Frame(str(f), int(n)) for f, n in data["stack"]),
            message=data["message"],
            evidence=dict(data.get("evidence") or {}),
            benign=bool(data.get("benign", False)),
            weak=bool(data.get("weak", False)),
        )


@dataclass(frozen=True)
class Crash:
    type: str
    message: str
    traceback: str


@dataclass(frozen=True)
class RankReport:
    """Everything one probed process saw; rank 0 unless launched by torchrun."""

    rank: int
    pid: int
    cuda: bool
    steps: int
    memory: tuple[dict[str, Any], ...]
    events: tuple[Event, ...]
    reached: tuple[int, ...]
    # "max-steps" when the probe stopped the script, "signal" when it was terminated.
    stopped: str | None = None
    exit_code: int | None = None
    crash: Crash | None = None
    probe_errors: tuple[str, ...] = ()
    # CUDA was simulated (runtime_probe/simcuda); what the simulation could not do, and
    # the operators that mixed devices under a device rule it does not know.
    simulated: bool = False
    unsupported: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["events"] = [e.to_dict() for e in self.events]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RankReport:
        crash = data.get("crash")
        return cls(
            rank=int(data["rank"]),
            pid=int(data["pid"]),
            cuda=bool(data["cuda"]),
            steps=int(data["steps"]),
            memory=tuple(data.get("memory", ())),
            events=tuple(Event.from_dict(e) for e in data.get("events", ())),
            reached=tuple(int(n) for n in data.get("reached", ())),
            stopped=data.get("stopped"),
            exit_code=data.get("exit_code"),
            crash=Crash(**crash) if crash else None,
            probe_errors=tuple(data.get("probe_errors", ())),
            simulated=bool(data.get("simulated", False)),
            unsupported=tuple(data.get("unsupported", ())),
            unverified=tuple(data.get("unverified", ())),
        )


def report_path(out_dir: str, rank: int) -> Path:
    return Path(out_dir) / f"rank-{rank}.json"


def pid_path(out_dir: str, pid: int) -> Path:
    return Path(out_dir) / f"pid-{pid}"


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def read_rank_reports(out_dir: Path) -> list[RankReport]:
    reports = []
    for path in sorted(out_dir.glob("rank-*.json")):
        try:
            reports.append(RankReport.from_dict(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a report cut short by a hard kill: the parent reports the process as such
    return sorted(reports, key=lambda r: r.rank)
