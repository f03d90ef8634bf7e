"""Running totals kept in another module of the project: a training loop that hands its
loss tensors to a tracker class of another module, which adds them into totals kept on the
object (TL006)."""

from __future__ import annotations

from pathlib import Path

from project_support import check, findings, summary, write_project

TRACKER = """
class Running:
    def __init__(self):
        self.sums = {}
        self.steps = 0

    def add(self, parts):
        for name in parts:
            self.sums[name] = self.sums.get(name, 0)
            self.sums[name] += parts[name]
        self.steps += 1

    def add_numbers(self, parts):
        for name in parts:
            self.sums[name] += parts[name].item()


class Board:
    def __init__(self):
        self.running = Running()
"""

TRAIN = """
import torch
from bookkeeping.tracking import Board


def fit(net, loader, opt):
    board = Board()
    for x, y in loader:
        parts = net.losses(x, y)
        opt.zero_grad()
        parts["sum"].backward()
        opt.step()
        board.running.add(parts)
        board.running.add_numbers(parts)
    with torch.no_grad():
        for x, y in loader:
            board.running.add(net.losses(x, y))
            checked = net.losses(x, y)
            board.running.add(checked)
"""


def tracked_project(root: Path, tracker: str = TRACKER, train: str = TRAIN) -> Path:
    files = {"bookkeeping/__init__.py": "", "bookkeeping/tracking.py": tracker, "train.py": train, "pyproject.toml": ""}
    return write_project(root, files)


def test_summaries_say_which_parameters_a_method_adds_into_its_object() -> None:
    methods = summary(TRACKER)["defs"]["Running"]["methods"]
    assert methods["add"]["totals_params"] == ["parts"]
    assert methods["add_numbers"]["totals_params"] == []
    assert methods["__init__"]["totals_params"] == []


def test_the_loop_handing_its_loss_tensors_to_a_tracker_of_another_module_is_reported(tmp_path: Path) -> None:
    # Not `add_numbers` (it adds `.item()`), nor the calls under `no_grad()`.
    assert findings(check(tracked_project(tmp_path)), "TL006") == [("train.py", 13, "TL006")]


def test_a_tracker_handed_detached_values_is_not_reported(tmp_path: Path) -> None:
    train = TRAIN.replace("board.running.add(parts)", "board.running.add(parts_detached)").replace(
        'parts["sum"].backward()', 'parts["sum"].backward()\n        parts_detached = {k: v.detach() for k, v in parts.items()}'
    )
    assert findings(check(tracked_project(tmp_path, train=train)), "TL006") == []
