"""Smoke test on thousands of real files: the installed torch package."""

from __future__ import annotations

import ast
import importlib.util
import warnings
from pathlib import Path

import pytest

from torchlint.api import check_paths
from torchlint.finding import PARSE_ERROR_CODE


def _cpython_parses(path: Path) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def test_every_file_of_installed_torch() -> None:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        pytest.skip("torch is not installed")
    root = Path(spec.origin).parent
    result = check_paths([root], cwd=root)
    assert result.files_checked > 1000
    assert result.internal_errors == []
    unparsable = [f for f in result.findings if f.code == PARSE_ERROR_CODE]
    assert [f.filename for f in unparsable if _cpython_parses(root / f.filename)] == []
