"""A distributed sampler that a data module builds and keeps, for a training loop in
another module (TL014): reported at the sampler when no module of the project gives any
sampler the epoch, and re-checked when one starts to."""

from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path

import pytest

from torchlint import api
from torchlint.config import Config
from torchlint.rules._summaries import summarize

PROJECT = Path(__file__).parent / "data" / "projects" / "bunch"


def findings(cwd: Path, cache: Path | None = None) -> api.CheckResult:
    return api.check_paths([cwd], Config(), cwd=cwd, jobs=1, cache_dir=cache)


def tl014(result: api.CheckResult) -> list[tuple[str, int]]:
    return [(Path(f.filename).name, f.line) for f in result.findings if f.code == "TL014"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "bunch"
    shutil.copytree(PROJECT, copy)
    return copy


def sets_epoch(source: str) -> bool:
    return bool(summarize(ast.parse(textwrap.dedent(source)))["sets_epoch"])


def test_summaries_say_whether_a_module_gives_samplers_the_epoch() -> None:
    assert sets_epoch("loader.sampler.set_epoch(epoch)\n")
    assert sets_epoch("model, loader = accelerator.prepare(model, loader)\n")
    assert sets_epoch("import lightning as L\n") and sets_epoch("from transformers import Trainer\n")
    assert not sets_epoch("import torch\nfor epoch in range(3):\n    train(loader)\n")


def test_a_sampler_parameter_that_defaults_to_shuffling_shuffles() -> None:
    source = """
    def shuffled(data, shuffle=True):
        return DistributedSampler(data, shuffle=shuffle)
    def ordered(data, shuffle=False):
        return DistributedSampler(data, shuffle=shuffle)
    """
    defs = summarize(ast.parse(textwrap.dedent(source)))["defs"]
    assert "distributed_sampler" in defs["shuffled"]["effects"]
    assert "distributed_sampler" not in defs["ordered"]["effects"]


def test_the_kept_sampler_is_reported_where_it_is_built() -> None:
    alone = api.check_source((PROJECT / "data" / "bunch.py").read_text(), "data/bunch.py")
    assert [f for f in alone if f.code == "TL014"] == []  # outside a project: unknown
    result = findings(PROJECT)
    assert tl014(result) == [("bunch.py", 8)]  # not the evaluation loader's, which keeps its order
    (finding,) = [f for f in result.findings if f.code == "TL014"]
    assert "no module of this project calls `set_epoch`" in finding.message


def test_a_training_loop_that_sets_the_epoch_rechecks_the_data_module(project: Path) -> None:
    cache = project / ".cache"
    first = findings(project, cache)
    assert tl014(first) == [("bunch.py", 8)]
    train = project / "train.py"
    train.write_text(
        train.read_text().replace(
            "    for epoch in range(epochs):\n", "    for epoch in range(epochs):\n        bunch.sampler.set_epoch(epoch)\n"
        )
    )
    after = findings(project, cache)
    assert tl014(after) == []
    assert after.files_cached == first.files_checked - 2  # train.py and the data module that asked
