"""The probed child: `python -m torchlint.runtime_probe.bootstrap SCRIPT [ARGS...]`, with
the settings file named by $TORCHLINT_PROBE_SETTINGS (torchrun runs it the same way in
every rank). Installs the probe, runs SCRIPT as `__main__` as `python SCRIPT` would, and
writes the report on the way out, on SIGTERM, and now and then in between."""

from __future__ import annotations

import builtins
import gc
import os
import signal
import sys
import traceback
import types
from pathlib import Path
from types import FrameType

from torchlint.discovery import display_path
from torchlint.runtime_probe.frames import traceback_stack
from torchlint.runtime_probe.markers import MARKER, compile_script
from torchlint.runtime_probe.protocol import SETTINGS_ENV, ChildSettings, Crash, pid_path
from torchlint.runtime_probe.recorder import Recorder, StopProbe
from torchlint.sources import SourceFile, read_source

EXIT_USAGE = 2
EXIT_SIGTERM = 128 + signal.SIGTERM


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _format(exc: BaseException, tb: types.TracebackType | None) -> str:
    """The traceback as Python would print it, without the probe's own wrapper frames."""
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    formatted = traceback.TracebackException(type(exc), exc, tb)
    formatted.stack = traceback.StackSummary.from_list([f for f in formatted.stack if not f.filename.startswith(here)])
    return "".join(formatted.format())


def _on_sigterm(recorder: Recorder) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        recorder.stopped = "signal"
        recorder.exit_code = EXIT_SIGTERM
        recorder.write(final=True)
        os._exit(EXIT_SIGTERM)

    signal.signal(signal.SIGTERM, handler)


def _main_module(script: str, recorder: Recorder) -> types.ModuleType:
    module = types.ModuleType("__main__")
    module.__file__ = script
    module.__builtins__ = builtins  # type: ignore[attr-defined]
    setattr(module, MARKER, recorder.reached.add)
    sys.modules["__main__"] = module
    return module


def _simulate_cuda(recorder: Recorder, source: str) -> None:
    """Simulated CUDA when asked for, or under `auto` for a script that asks for CUDA on
    a machine without it; installed before the probe's hooks, which then see CUDA."""
    import torch

    from torchlint.runtime_probe import simcuda

    device = recorder.settings.device
    if device != "simulated" and not (device == "auto" and not torch.cuda.is_available() and simcuda.wants_cuda(source)):
        return
    simcuda.install(recorder.settings.simulated_memory)
    from torchlint.runtime_probe.simcuda.state import STATE

    recorder.simulated = True
    recorder.unsupported = STATE.unsupported
    recorder.unverified = STATE.unverified
    recorder.clean_message = simcuda.clean_message


def run(script: str, args: list[str], recorder: Recorder) -> int:
    """Run the script, recording how it ended; returns its exit status."""
    from torchlint.runtime_probe.hooks import install

    source = read_source(Path(script))
    if isinstance(source, SourceFile):
        _simulate_cuda(recorder, source.text)
    probe = install(recorder)
    if not isinstance(source, SourceFile):
        print(f"torchlint probe: cannot run {script}: {source.reason}", file=sys.stderr)
        recorder.crash = Crash("OSError", source.reason, "", started=False)
        return EXIT_USAGE
    try:
        code = compile_script(source.text, script, recorder.settings.lines)
    except (SyntaxError, ValueError) as exc:  # ValueError: null bytes in the source
        text = "".join(traceback.format_exception_only(type(exc), exc))
        print(text, end="", file=sys.stderr)
        line = getattr(exc, "lineno", None) or 0
        recorder.crash = Crash(type(exc).__name__, str(exc), text, display_path(Path(script)) if line else "", line, started=False)
        return 1
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(script)
    try:
        exec(code, _main_module(script, recorder).__dict__)
    except StopProbe:
        recorder.stopped = "max-steps"
        return 0
    except SystemExit as exc:
        return _exit_code(exc.code)
    except BaseException as exc:  # noqa: BLE001 - the script's own failure, reported as such
        user_tb = exc.__traceback__.tb_next if exc.__traceback__ else None
        if recorder.simulated:
            exc.args = tuple(recorder.clean_message(a) if isinstance(a, str) else a for a in exc.args)
        text = _format(exc, user_tb)
        print(text, end="", file=sys.stderr)
        innermost = next(iter(traceback_stack(user_tb)), None)
        where = (display_path(Path(innermost.filename)), innermost.line) if innermost else ("", 0)
        recorder.crash = Crash(type(exc).__name__, str(exc), text, *where)
        recorder.guard(probe.devices.on_error)(exc, user_tb)
        return 130 if isinstance(exc, KeyboardInterrupt) else 1
    return 0


def main() -> int:
    settings_file = os.environ.get(SETTINGS_ENV)
    if not settings_file or len(sys.argv) < 2:
        print("usage: TORCHLINT_PROBE_SETTINGS=FILE python -m torchlint.runtime_probe.bootstrap SCRIPT [ARGS...]", file=sys.stderr)
        return EXIT_USAGE
    settings = ChildSettings.load(settings_file)
    recorder = Recorder(settings, rank=int(os.environ.get("RANK") or 0))
    pid_path(settings.out_dir, os.getpid()).touch()
    _on_sigterm(recorder)
    script = os.path.abspath(sys.argv[1])
    try:
        import torch  # noqa: F401
    except ImportError:
        recorder.crash = Crash("ImportError", "torchlint probe needs PyTorch: pip install 'torchlint[probe]'", "", started=False)
        recorder.exit_code = EXIT_USAGE
        recorder.write(final=True)
        return EXIT_USAGE
    recorder.exit_code = run(script, sys.argv[2:], recorder)
    # Drop the script's frames so that DataLoader iterators shut their workers down now.
    gc.collect()
    recorder.write(final=True)
    return recorder.exit_code


if __name__ == "__main__":
    sys.exit(main())
