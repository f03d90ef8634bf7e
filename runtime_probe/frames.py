"""Which frames are the user's: everything outside the standard library, installed
packages (torch included) and torchlint itself. Findings point at the innermost of them."""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from functools import lru_cache
from types import FrameType, TracebackType

from torchlint.runtime_probe.protocol import Frame

STACK_LIMIT = 8
_PROBE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    here = os.path.dirname(os.path.abspath(__file__))
    import torchlint

    dirs = {here, os.path.dirname(os.path.abspath(torchlint.__file__))}
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if key in paths:
            dirs.add(paths[key])
    dirs.update(site.getsitepackages())
    dirs.add(site.getusersitepackages())
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    if torch_file:
        dirs.add(os.path.dirname(os.path.abspath(torch_file)))
    return tuple(os.path.realpath(d) + os.sep for d in dirs)


_user_files: dict[str, bool] = {}


def is_user_file(filename: str) -> bool:
    known = _user_files.get(filename)
    if known is None:
        if filename.startswith("<"):
            known = False
        else:
            real = os.path.realpath(filename)
            known = not real.startswith(_library_dirs())
        _user_files[filename] = known
    return known


def user_stack(frame: FrameType | None, limit: int = STACK_LIMIT) -> tuple[Frame, ...]:
    """The user's frames from `frame` outwards, innermost first."""
    found: list[Frame] = []
    while frame is not None and len(found) < limit:
        code = frame.f_code
        if is_user_file(code.co_filename):
            found.append(Frame(code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return tuple(found)


def called_from_user(frame: FrameType | None) -> bool:
    """Whether the first frame outside the probe's own code, from `frame` outwards, is the
    user's (a forward called by the script, not by torch or a library)."""
    while frame is not None and frame.f_code.co_filename.startswith(_PROBE_DIR):
        frame = frame.f_back
    return frame is not None and is_user_file(frame.f_code.co_filename)


def traceback_stack(tb: TracebackType | None) -> tuple[Frame, ...]:
    """The user's frames of a traceback, innermost first."""
    frames: list[Frame] = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if is_user_file(code.co_filename):
            frames.append(Frame(code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return tuple(reversed(frames))[:STACK_LIMIT]
