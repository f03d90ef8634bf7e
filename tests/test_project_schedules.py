"""TL007 through other modules (tests/data/projects/schedules): a schedule stepped by a
method that a project class inherits, an optimizer stepped by a project helper given it,
and the summaries that tell them apart."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from torchlint import api
from torchlint.config import Config
from torchlint.rules._summaries import summarize

PROJECT = Path(__file__).parent / "data" / "projects" / "schedules"


def tl007_lines(name: str, with_project: bool) -> set[int]:
    path = PROJECT / name
    if with_project:
        found = api.check_paths([path], Config(), cwd=PROJECT, jobs=1, cache_dir=None).findings
    else:
        found = api.check_source(path.read_text(), str(path))
    return {f.line for f in found if f.code == "TL007"}


@pytest.mark.parametrize(
    ("name", "lines"),
    [
        # `runner = build_model(config)` is a Classifier, whose base class steps the schedules.
        ("run_methods.py", {7}),
        ("run_methods_fixed.py", set()),
        # fit_epoch steps the optimizer it is given; `warm` schedules another optimizer.
        ("run_epochs.py", {12}),
        # `epoch > settings.DECAY_FROM` holds from epoch 0 on: settings.py sets it to -1.
        ("run_settings.py", {11}),
    ],
)
def test_schedule_order_through_other_modules(name: str, lines: set[int]) -> None:
    assert tl007_lines(name, with_project=True) == lines
    assert tl007_lines(name, with_project=False) == set()


def test_a_summary_says_which_functions_step_a_schedule() -> None:
    defs = summarize(
        ast.parse(
            inspect.cleandoc(
                """
                def advance(schedulers):
                    for lr_scheduler in schedulers:
                        lr_scheduler.step()

                def sample(noise_scheduler):
                    noise_scheduler.step()

                def plateau(sched, loss):
                    sched.step(loss)
                """
            )
        )
    )["defs"]
    assert "schedules" in defs["advance"]["effects"]
    assert "schedules" not in defs["sample"]["effects"]
    assert "schedules" not in defs["plateau"]["effects"]


def test_the_whole_schedules_project() -> None:
    result = api.check_paths([PROJECT], Config(), cwd=PROJECT, jobs=1, cache_dir=None)
    assert {(Path(f.filename).name, f.code, f.line) for f in result.findings} == {
        ("run_methods.py", "TL007", 7),
        ("run_epochs.py", "TL007", 12),
        ("run_settings.py", "TL007", 11),
    }


def test_a_summary_holds_the_numbers_of_a_module_and_of_its_config_object() -> None:
    defs = summarize(
        ast.parse(
            inspect.cleandoc(
                """
                START = -1
                NAME = "run"
                __C = Config()
                cfg = __C
                __C.TRAIN.LR_START = 2
                __C.EPOCHS = 10.5
                """
            )
        )
    )["defs"]
    assert defs["START"] == {"kind": "constant", "value": -1.0}
    assert "NAME" not in defs
    assert defs["cfg"] == defs["__C"] == {"kind": "namespace", "attrs": {"TRAIN.LR_START": 2.0, "EPOCHS": 10.5}}
