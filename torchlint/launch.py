"""The `torchlint` program's entry point: it prepares the process before any module of
the command is imported, then runs the command line (`cli.run`)."""

from __future__ import annotations

import gc
import sys
from typing import NoReturn, Sequence


def run() -> NoReturn:
    if runs_without_collector(sys.argv[1:]):
        gc.disable()
    from torchlint.dataclass_cache import enable as enable_dataclass_cache

    # Before any module of the command defines a dataclass (LibCST's nodes above all): the
    # methods that `dataclasses` generates are compiled once, not on every run.
    enable_dataclass_cache()
    from torchlint.cli import run as run_command

    run_command()


def runs_without_collector(args: Sequence[str]) -> bool:
    """Whether the command is `check`, which runs without the cyclic garbage collector.
    Its start-up allocates objects that live until the exit (modules, click's commands,
    LibCST's node classes), so the twenty-odd collections it set off found nothing (20
    million of a one-file check's 777 million instructions); its syntax trees hold no
    reference cycles (`engine.collections_paused`), and a check of torch's `_dynamo`,
    `distributed` and `testing` packages in one process peaked at the same memory
    without it (822 MB against 817 MB). The server and the probe run for long and keep
    the collector."""
    command = next((arg for arg in args if not arg.startswith("-")), None)
    return command == "check"
