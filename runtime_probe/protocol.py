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
# What `torchlint explain TL10x` prints: what each runtime finding means and the evidence
# its JSON report carries. Kept here, beside the codes, so that `explain` reads them
# without importing torch.
RUNTIME_DOCS = {
    "TL101": """\
## What it means

An operation of the probed script mixed tensors on different devices (a CUDA tensor and a
CPU one) and failed with PyTorch's device error. When a module that was moved with
`.to()`, `.cuda()` or `.cpu()` is called with an input on another device and its forward
fails, the finding points at the call that passed the input, where the fix goes; any
other device error that ends the script is reported at the innermost line of your code
in its traceback. A forward that moves its inputs itself does not fail and is not
reported. Confirms TL011 and TL012 (needs a CUDA device).

## Evidence

- `devices`: the devices involved (the module's parameters' device first, then the inputs')
- `module`: the class of the module that was called, when the error came from a call
- `error`: the first line of PyTorch's error message

## Use instead

Move inputs to the model's device (`x = x.to(device)`) and create tensors in `forward`
with `device=` taken from an input or a parameter.""",
    "TL102": """\
## What it means

An optimizer step applied gradients that the previous step of the same optimizer had
already applied: nothing cleared them in between, so each step adds the new gradients
to all the earlier ones. Decided when the optimizer steps, from the gradient tensors'
identity and version counters recorded at each backward call, so that a GAN's generator
backward flowing into the discriminator's gradients is not reported. Gradient
accumulation that clears every N steps, `zero_grad(set_to_none=True)`, manual
`p.grad = None` or `fill_(0)` and LBFGS closures are not TL102. Confirms TL001.

## Evidence

- `optimizer`: the optimizer's variable name
- `steps_carried_over`, `steps`: how many steps carried gradients over, and which
- `grad_norm`: the gradient norm by step, showing how it grew
- `parameters_carried_over`, `parameters_with_grad`: how many parameters carried their
  gradients over, out of those that had one

## Use instead

Call `optimizer.zero_grad()` once per step (per accumulation window when accumulating).""",
    "TL103": """\
## What it means

Memory grows step after step because something keeps each step's tensors alive. On any
device: the autograd graphs of earlier steps stay alive (`total_loss += loss` keeps every
step's graph), one more per step; the probe names the variable that holds them and its
line. On CUDA also: allocated memory (`torch.cuda.memory_stats()` after each step) grows
on at least 80% of the steps after warm-up, by 4 MiB or more in all. Keeping one "best
loss" tensor keeps at most one graph and is not TL103. Confirms TL006.

## Evidence

Graphs: `alive_graphs` (earlier steps' graphs alive at the end), `after_step`,
`growth_per_step`, `first_seen_at_step`, `holder` (the variable that keeps them).
CUDA memory: `growth_per_step_bytes` and `allocated_bytes` by step.

## Use instead

Accumulate `loss.item()` or `loss.detach()`, and keep no tensor of a step beyond it.""",
    "TL104": """\
## What it means

CUDA memory is fragmented: the caching allocator had to retry allocations (free its
cache and try again) or ran out of memory, or reserved memory stood at least 256 MiB and
at least half again above allocated memory, with at least half of the difference in
inactive split blocks. Training slows down at each retry and
may fail with an out-of-memory error although enough memory is free in total. Seen on
CUDA devices only.

## Evidence

- `peak_step`: the step with the most reserved but unallocated memory
- `allocated_bytes`, `reserved_bytes`, `inactive_split_bytes`: the allocator's figures at
  that step
- `num_alloc_retries`, `num_ooms`: allocator retries and out-of-memory errors in the run

## Use instead

Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, or allocate fixed-size buffers
once (pad variable-length batches to a few fixed shapes).""",
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
    # Where it raised: the innermost of the user's frames, as the user would type the path.
    file: str = ""
    line: int = 0
    # The script's code began to run; False when it could not start (an unreadable file,
    # a syntax error, no PyTorch for the probe).
    started: bool = True

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else ""


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
