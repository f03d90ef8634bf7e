"""TL003 and TL004 over every `.py` file of the installed torch package: no crash.

torch's own source is thousands of real files full of transposes, views and
`.eval()` calls: a rule that raises on any of them reports an internal error.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from torchlint import engine
from torchlint.registry import all_rules

CODES = ("TL003", "TL004")


def _torch_root() -> Path | None:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


@pytest.mark.slow
def test_rules_never_fail_on_torch_source() -> None:
    root = _torch_root()
    if root is None:
        pytest.skip("torch is not installed")
    rules = [rule() for rule in all_rules() if rule.CODE in CODES]
    assert len(rules) == len(CODES)
    files = sorted(root.rglob("*.py"))
    assert len(files) > 1000
    errors = []
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        errors.extend(f for f in engine.check_source(source, str(path), rules) if f.is_internal_error)
    assert not errors, "\n".join(f"{f.filename}: {f.message}" for f in errors[:10])
