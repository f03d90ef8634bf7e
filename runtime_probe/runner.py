"""Runs one probed script in its own process session and collects what it reported.

The child (or torchrun and its ranks) gets a settings file and an output folder. On
timeout the whole process group gets SIGTERM (the child writes its report), then SIGKILL
after a grace period; in every case whatever is left of the child's process groups
(DataLoader workers, ranks that torchrun started in sessions of their own) is killed
before returning. Stdlib only: the parent never imports torch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from torchlint.runtime_probe.protocol import SETTINGS_ENV, ChildSettings, RankReport, read_rank_reports

GRACE_SECONDS = 10.0
OUTPUT_TAIL_LINES = 40
BOOTSTRAP = "torchlint.runtime_probe.bootstrap"


@dataclass(frozen=True)
class RunSpec:
    script: Path
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timeout: float = 300.0
    max_steps: int = 20
    device: str = "auto"
    nproc_per_node: int = 1
    lines: tuple[int, ...] = ()
    cwd: Path | None = None
    simulated_memory: int = 80 * (1 << 30)


@dataclass(frozen=True)
class RunOutcome:
    returncode: int | None
    timed_out: bool
    duration: float
    reports: tuple[RankReport, ...]
    output_tail: str
    command: tuple[str, ...]


def command(spec: RunSpec) -> list[str]:
    script_and_args = [str(spec.script), *spec.args]
    if spec.nproc_per_node > 1:
        launcher = [
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nnodes=1",
            f"--nproc-per-node={spec.nproc_per_node}",
            "-m",
            BOOTSTRAP,
        ]
        return [sys.executable, *launcher, *script_and_args]
    return [sys.executable, "-m", BOOTSTRAP, *script_and_args]


def _environment(spec: RunSpec, settings_file: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(spec.env)
    env[SETTINGS_ENV] = str(settings_file)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if spec.device in ("cpu", "simulated"):
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_leftovers(pgid: int, out_dir: Path) -> None:
    """Kill what remains of the child's process group and of every rank's own session."""
    _signal_group(pgid, signal.SIGKILL)
    for marker in out_dir.glob("pid-*"):
        pid = int(marker.name.removeprefix("pid-"))
        try:
            leads_group = os.getpgid(pid) == pid
        except ProcessLookupError:
            continue
        if leads_group and pid != os.getpid():
            _signal_group(pid, signal.SIGKILL)


def _wait(process: subprocess.Popen[bytes], timeout: float) -> tuple[int | None, bool]:
    try:
        return process.wait(timeout), False
    except subprocess.TimeoutExpired:
        pass
    _signal_group(process.pid, signal.SIGTERM)
    try:
        return process.wait(GRACE_SECONDS), True
    except subprocess.TimeoutExpired:
        _signal_group(process.pid, signal.SIGKILL)
        return process.wait(), True


def _tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-OUTPUT_TAIL_LINES:])


def run(spec: RunSpec) -> RunOutcome:
    with tempfile.TemporaryDirectory(prefix="torchlint-probe-") as tmp:
        folder = Path(tmp)
        out_dir = folder / "out"
        out_dir.mkdir()
        settings_file = folder / "settings.json"
        ChildSettings(str(spec.script), str(out_dir), spec.max_steps, spec.lines, spec.device, spec.simulated_memory).save(
            settings_file
        )
        argv = command(spec)
        log = folder / "output.log"
        started = time.monotonic()
        with open(log, "wb") as output:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                env=_environment(spec, settings_file),
                cwd=spec.cwd,
                start_new_session=True,
            )
            try:
                returncode, timed_out = _wait(process, spec.timeout)
            finally:
                _kill_leftovers(process.pid, out_dir)
        duration = time.monotonic() - started
        return RunOutcome(
            returncode=returncode,
            timed_out=timed_out,
            duration=duration,
            reports=tuple(read_rank_reports(out_dir)),
            output_tail=_tail(log),
            command=tuple(argv),
        )
