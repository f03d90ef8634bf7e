"""How a probed run ended, and what that means for a finding whose line never ran: the
script could not start (an unreadable file, a syntax error), or it started and failed on
its own (an import error, a missing data file, a usage error: the probe confirmed nothing,
which must not pass), or one of the probe's bounds stopped it, or it ended normally
without running the line. Pure: no I/O, no torch."""

from __future__ import annotations

import signal
from dataclasses import dataclass
from enum import Enum

from torchlint.runtime_probe.protocol import Crash

CAUSE_LENGTH = 200


class Outcome(str, Enum):
    # The script's code never ran: the file could not be read or compiled, or the probe
    # heard nothing from its process.
    FAILED_TO_START = "failed-to-start"
    # The script started and raised (a crash can be the bug itself: a `.view()` that
    # raises), or a signal killed it.
    CRASHED = "crashed"
    # The script started and exited with a non-zero status without raising (argparse's
    # usage error, `sys.exit(1)`).
    EXITED_WITH_ERROR = "exited-with-error"
    TIMED_OUT = "timed-out"
    STEP_LIMIT = "step-limit"
    ENDED = "ended"  # a normal exit, status 0


FAILURES = (Outcome.FAILED_TO_START, Outcome.CRASHED, Outcome.EXITED_WITH_ERROR)
SUMMARY_WORDS = {
    Outcome.FAILED_TO_START: "failed to start",
    Outcome.CRASHED: "crashed",
    Outcome.EXITED_WITH_ERROR: "exited with an error",
    Outcome.TIMED_OUT: "timed out",
    Outcome.STEP_LIMIT: "stopped at the step limit",
    Outcome.ENDED: "ran to the end",
}


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class Ending:
    outcome: Outcome
    returncode: int | None
    steps: int
    duration: float
    max_steps: int
    timeout: float
    # The script's own last word when it failed: its exception, else its last line of output
    # (argparse's "error: the following arguments are required: --data").
    cause: str = ""
    # The script exited but left the probe no report (so its steps are unknown).
    reported: bool = True
    # Where the script raised ("train.py:12"), when it raised in a frame of the user's.
    crashed_at: str = ""

    @property
    def failed(self) -> bool:
        return self.outcome in FAILURES

    def failure(self) -> str:
        """Why the script stopped, for a failed run: "the script crashed at train.py:3
        before its first step: ModuleNotFoundError: No module named 'wandb'"."""
        cause = f": {self.cause}" if self.cause else ""
        if self.outcome is Outcome.FAILED_TO_START:
            if self.reported:
                return "the script could not start" + cause
            return f"the probe heard nothing from the script: its process exited with status {self.returncode} before writing a report{cause}"
        if not self.reported:
            when = "and left the probe no report"
        elif self.steps == 0:
            when = "before its first step"
        else:
            when = f"after {plural(self.steps, 'step')}"
        if self.returncode is not None and self.returncode < 0:
            how = f"was killed by {_signal_name(-self.returncode)}"
        elif self.outcome is Outcome.CRASHED:
            how = f"crashed at {self.crashed_at}" if self.crashed_at else "crashed"
        else:
            how = f"exited with status {self.returncode}"
        return f"the script {how} {when}{cause}"

    def why_not_reached(self) -> str:
        """Which bound stopped the run before a finding's line ran, and what to change."""
        if self.failed:
            return self.failure()
        if self.outcome is Outcome.STEP_LIMIT:
            return (
                f"the probe stopped the script at the step limit ({plural(self.max_steps, 'step')}) "
                "before this line ran; raise --max-steps (or `max-steps` in [tool.torchlint.probe])"
            )
        if self.outcome is Outcome.TIMED_OUT:
            return (
                f"the timeout stopped the script after {self.timeout:g} s and {plural(self.steps, 'step')}, "
                "before this line ran; raise --timeout (or `timeout` in [tool.torchlint.probe])"
            )
        return (
            f"the script ended normally after {plural(self.steps, 'step')} and {self.duration:.1f} s "
            "without running this line: it may need other arguments or data (give them after `--`, "
            "or as `args` in [tool.torchlint.probe.scripts])"
        )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def ending(
    *,
    returncode: int | None,
    timed_out: bool,
    duration: float,
    steps: int,
    stopped: str | None,
    crash: Crash | None,
    reported: bool,
    output_tail: str,
    max_steps: int,
    timeout: float,
) -> Ending:
    """Classify one run from what the parent and the child's reports know."""
    killed = returncode is not None and returncode < 0
    if timed_out:
        outcome = Outcome.TIMED_OUT
    elif stopped == "max-steps" and reported:
        outcome = Outcome.STEP_LIMIT
    elif returncode == 0 and crash is None and reported:
        outcome = Outcome.ENDED
    elif (crash is not None and not crash.started) or (not reported and not killed):
        outcome = Outcome.FAILED_TO_START
    elif crash is not None or killed:
        outcome = Outcome.CRASHED
    else:
        outcome = Outcome.EXITED_WITH_ERROR
    cause = _cause(crash, output_tail) if outcome in FAILURES else ""
    crashed_at = crash.where if crash is not None and outcome is Outcome.CRASHED else ""
    return Ending(outcome, returncode, steps, duration, max_steps, timeout, cause, reported, crashed_at)


def _cause(crash: Crash | None, output_tail: str) -> str:
    if crash is not None:
        first = crash.message.strip().splitlines()[0] if crash.message.strip() else ""
        text = f"{crash.type}: {first}" if first else crash.type
    else:
        lines = [line.strip() for line in output_tail.splitlines() if line.strip()]
        text = lines[-1] if lines else ""
    return text if len(text) <= CAUSE_LENGTH else text[: CAUSE_LENGTH - 3] + "..."
