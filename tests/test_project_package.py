"""A finding that depends on the other modules of a file's package, not on what the file
imports: the loaders of a data module feed the trainer beside it (TL017), and the cache
re-checks the data module when that trainer, or the set of modules, changes."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from project_support import PROJECTS, check, check_alone, copy_project, edit, findings, summary

from torchlint.project import PACKAGE, Project, ProjectView
from torchlint.rules._summarize import summarize

PROJECT = PROJECTS / "datapkg"
FOUND = [("pipeline/loaders.py", 5, "TL017")]


def view(path: Path) -> ProjectView:
    return ProjectView.of(Project(lambda text: summarize(ast.parse(text))), path)


def test_copies_with_non_blocking_are_an_effect() -> None:
    source = "def f(x, d):\n    x.to(d, non_blocking=True)\n\ndef g(x, d):\n    x.to(d, non_blocking=False)\n"
    defs = summary(source)["defs"]
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
    assert check_alone(PROJECT, "pipeline/loaders.py", "TL017") == []
    result = check(PROJECT)
    assert findings(result, "TL017") == FOUND
    (finding,) = [f for f in result.findings if f.code == "TL017"]
    assert "`pipeline.fit.Fitter.epoch` copies batches with `non_blocking=True`" in finding.message


def test_editing_the_trainer_rechecks_the_data_module(tmp_path: Path) -> None:
    project = copy_project("datapkg", tmp_path)
    cache = project / ".cache"
    fit = project / "pipeline" / "fit.py"
    first = check(project, cache=cache)
    assert findings(first, "TL017") == FOUND
    edit(fit, "non_blocking=True", "non_blocking=False")
    after = check(project, cache=cache)
    assert findings(after, "TL017") == []
    # fit.py (its bytes) and loaders.py (the package it read) are checked again.
    assert after.files_cached == first.files_checked - 2


def test_an_edit_that_keeps_the_answer_rechecks_only_the_edited_module(tmp_path: Path) -> None:
    project = copy_project("datapkg", tmp_path)
    cache = project / ".cache"
    first = check(project, cache=cache)
    edit(project / "pipeline" / "fit.py", "        self.device = device\n", "        self.device = device\n        self.steps = 0\n")
    again = check(project, cache=cache)
    assert again.files_cached == first.files_checked - 1
    assert findings(again, "TL017") == findings(first, "TL017")


def test_a_trainer_that_appears_later_is_seen(tmp_path: Path) -> None:
    project = copy_project("datapkg", tmp_path)
    cache = project / ".cache"
    fit = project / "pipeline" / "fit.py"
    kept = fit.read_text()
    fit.unlink()
    edit(project / "pipeline" / "__init__.py", "from .fit import Fitter\n", "")
    loaders = project / "pipeline" / "loaders.py"
    assert findings(check(project, [loaders], cache), "TL017") == []
    fit.write_text(kept)
    assert findings(check(project, [loaders], cache), "TL017") == FOUND
