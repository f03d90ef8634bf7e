"""A finding that depends on the other modules of a file's package, not on what the file
imports: the loaders of a data module feed the trainer beside it (TL017), and the cache
re-checks the data module when that trainer, or the set of modules, changes."""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest

from torchlint import api
from torchlint.config import Config
from torchlint.project import PACKAGE, Project, ProjectView
from torchlint.rules._summaries import summarize

PROJECT = Path(__file__).parent / "data" / "projects" / "datapkg"
LOADER_LINE = 5


def findings(paths: list[Path], cwd: Path, cache: Path | None = None) -> api.CheckResult:
    return api.check_paths(paths, Config(), cwd=cwd, jobs=1, cache_dir=cache)


def tl017(result: api.CheckResult) -> list[tuple[str, int]]:
    return [(Path(f.filename).name, f.line) for f in result.findings if f.code == "TL017"]


def view(path: Path) -> ProjectView:
    return ProjectView.of(Project(lambda text: summarize(ast.parse(text))), path)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "datapkg"
    shutil.copytree(PROJECT, copy)
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_copies_with_non_blocking_are_an_effect() -> None:
    source = "def f(x, d):\n    x.to(d, non_blocking=True)\n\ndef g(x, d):\n    x.to(d, non_blocking=False)\n"
    defs = summarize(ast.parse(source))["defs"]
    assert "copies_async" in defs["f"]["effects"] and "copies_async" not in defs["g"]["effects"]


def test_package_functions_are_those_of_the_other_files_of_the_package_folder() -> None:
    loaders = view(Path(os.path.abspath(PROJECT / "pipeline" / "loaders.py")))
    assert loaders.package_functions(["copies_async", "backward"]) == ["pipeline.fit.Fitter.epoch"]
    assert loaders.package_functions(["moves_device"]) == ["pipeline.fit.Fitter.__init__", "pipeline.fit.Fitter.epoch"]
    assert sorted(loaders.used) == [PACKAGE + "backward,copies_async", PACKAGE + "moves_device"]
    fit = view(Path(os.path.abspath(PROJECT / "pipeline" / "fit.py")))
    assert fit.package_functions(["backward"]) == []  # loaders.py has none
    script = view(Path(os.path.abspath(PROJECT / "run.py")))  # no package: no neighbours
    assert script.package_functions(["backward"]) == []


def test_the_loader_factory_is_reported_through_the_trainer_beside_it() -> None:
    loaders = PROJECT / "pipeline" / "loaders.py"
    alone = [f for f in api.check_source(loaders.read_text(), "pipeline/loaders.py") if f.code == "TL017"]
    assert alone == []
    result = findings([PROJECT], PROJECT)
    assert tl017(result) == [("loaders.py", LOADER_LINE)]
    (finding,) = [f for f in result.findings if f.code == "TL017"]
    assert "`pipeline.fit.Fitter.epoch` copies batches with `non_blocking=True`" in finding.message


def test_editing_the_trainer_rechecks_the_data_module(project: Path) -> None:
    cache = project / ".cache"
    fit = project / "pipeline" / "fit.py"
    first = findings([project], project, cache)
    assert tl017(first) == [("loaders.py", LOADER_LINE)]
    edit(fit, "non_blocking=True", "non_blocking=False")
    after = findings([project], project, cache)
    assert tl017(after) == []
    # fit.py (its bytes) and loaders.py (the package it read) are checked again.
    assert after.files_cached == first.files_checked - 2


def test_an_edit_that_keeps_the_answer_rechecks_only_the_edited_module(project: Path) -> None:
    cache = project / ".cache"
    first = findings([project], project, cache)
    edit(project / "pipeline" / "fit.py", "        self.device = device\n", "        self.device = device\n        self.steps = 0\n")
    again = findings([project], project, cache)
    assert again.files_cached == first.files_checked - 1
    assert tl017(again) == tl017(first)


def test_a_trainer_that_appears_later_is_seen(project: Path) -> None:
    cache = project / ".cache"
    fit = project / "pipeline" / "fit.py"
    kept = fit.read_text()
    fit.unlink()
    edit(project / "pipeline" / "__init__.py", "from .fit import Fitter\n", "")
    loaders = project / "pipeline" / "loaders.py"
    assert tl017(findings([loaders], project, cache)) == []
    fit.write_text(kept)
    assert tl017(findings([loaders], project, cache)) == [("loaders.py", LOADER_LINE)]
