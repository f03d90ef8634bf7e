"""TL007 through other modules (tests/data/projects/schedules): a schedule stepped by a
method that a project class inherits, an optimizer stepped by a project helper given it,
and the summaries that tell them apart."""

from __future__ import annotations

import pytest

from project_support import PROJECTS, check, check_alone, findings, summary

PROJECT = PROJECTS / "schedules"


@pytest.mark.parametrize(
    ("name", "lines"),
    [
        # `runner = build_model(config)` is a Classifier, whose base class steps the schedules.
        ("run_methods.py", [7]),
        ("run_methods_fixed.py", []),
        # fit_epoch steps the optimizer it is given; `warm` schedules another optimizer.
        ("run_epochs.py", [12]),
        # `epoch > settings.DECAY_FROM` holds from epoch 0 on: settings.py sets it to -1.
        ("run_settings.py", [11]),
    ],
)
def test_schedule_order_through_other_modules(name: str, lines: list[int]) -> None:
    assert findings(check(PROJECT, [PROJECT / name]), "TL007") == [(name, line, "TL007") for line in lines]
    assert check_alone(PROJECT, name, "TL007") == []


def test_a_summary_says_which_functions_step_a_schedule() -> None:
    defs = summary(
        """
        def advance(schedulers):
            for lr_scheduler in schedulers:
                lr_scheduler.step()

        def sample(noise_scheduler):
            noise_scheduler.step()

        def plateau(sched, loss):
            sched.step(loss)
        """
    )["defs"]
    assert "schedules" in defs["advance"]["effects"]
    assert "schedules" not in defs["sample"]["effects"]
    assert "schedules" not in defs["plateau"]["effects"]


def test_the_whole_schedules_project() -> None:
    assert findings(check(PROJECT)) == [
        ("run_epochs.py", 12, "TL007"),
        ("run_methods.py", 7, "TL007"),
        ("run_settings.py", 11, "TL007"),
    ]


def test_a_summary_holds_the_numbers_of_a_module_and_of_its_config_object() -> None:
    defs = summary(
        """
        START = -1
        NAME = "run"
        __C = Config()
        cfg = __C
        __C.TRAIN.LR_START = 2
        __C.EPOCHS = 10.5
        """
    )["defs"]
    assert defs["START"] == {"kind": "constant", "value": -1.0}
    assert "NAME" not in defs
    assert defs["cfg"] == defs["__C"] == {"kind": "namespace", "attrs": {"TRAIN.LR_START": 2.0, "EPOCHS": 10.5}}
