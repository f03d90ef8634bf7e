"""A table or mask built by a function of one module and used by a layer's `forward` in
another (TL011): reported in the function when that `forward` computes with the result as
it got it (`x + sinusoid_table(n, d)`), not when it moves it first; the cache re-checks the
function's module when the layer changes what it does with the result."""

from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path

import pytest

from torchlint import api
from torchlint.config import Config
from torchlint.rules._summaries import summarize

PROJECT = Path(__file__).parent / "data" / "projects" / "tables"


def tl011(cwd: Path, cache: Path | None = None) -> list[tuple[str, int]]:
    result = api.check_paths([cwd], Config(), cwd=cwd, jobs=1, cache_dir=cache)
    return sorted((Path(f.filename).name, f.line) for f in result.findings if f.code == "TL011")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "tables"
    shutil.copytree(PROJECT, copy)
    return copy


def test_summaries_record_the_results_a_function_computes_with() -> None:
    source = """
    from .encodings import table, mask, other
    def forward(self, x):
        x = x + table(4)
        m = mask(4)
        y = x * m
        z = other(4).to(x.device) + x
        return y + z
    """
    data = summarize(ast.parse(textwrap.dedent(source)))["defs"]["forward"]
    assert data["mixes"] == [".encodings.table", ".encodings.mask"]


def test_the_table_that_forward_adds_to_its_input_is_reported(project: Path) -> None:
    # The table's `torch.zeros`, not the mask, which `forward` moves to the input's device.
    assert tl011(project) == [("encodings.py", 9)]


def test_alone_the_function_is_not_known_to_run_in_a_forward(project: Path) -> None:
    alone = api.check_source((project / "tables" / "encodings.py").read_text(), "encodings.py")
    assert not [f for f in alone if f.code == "TL011"]


def test_moving_the_table_in_the_layer_rechecks_the_function(project: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert tl011(project, cache) == [("encodings.py", 9)]
    model = project / "tables" / "model.py"
    model.write_text(model.read_text().replace("sinusoid_table(tokens.size(1), self.dim)", "sinusoid_table(tokens.size(1), self.dim).to(x.device)"))
    assert tl011(project, cache) == []
