"""Training steps and evaluations that a training script runs through helpers of another
module of its project (TL001, TL008, TL009): the helper's summary says what it does to
the optimizer and the model passed to it."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from torchlint import api
from torchlint.config import Config
from torchlint.rules._summaries import summarize

PROJECT = Path(__file__).parent / "data" / "projects" / "helpers"


def findings(cwd: Path) -> list[tuple[str, str, int]]:
    result = api.check_paths([cwd], Config(), cwd=cwd, jobs=1, cache_dir=None)
    return sorted((f.code, Path(f.filename).name, f.line) for f in result.findings)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "helpers"
    shutil.copytree(PROJECT, copy)
    return copy


def test_summaries_say_which_mode_a_function_leaves_its_arguments_in() -> None:
    defs = summarize(ast.parse((PROJECT / "trainkit" / "evaluation.py").read_text()))["defs"]
    assert defs["evaluate"]["mode_params"] == {"model": "eval"}
    assert defs["evaluate_and_restore"]["mode_params"] == {"model": "train"}
    assert defs["validate"]["mode_params"] == {} and "grad_free" in defs["validate"]["effects"]


def test_helpers_of_another_module_that_step_without_clearing_or_get_the_mode_wrong(project: Path) -> None:
    assert findings(project) == [
        ("TL001", "train_forgets.py", 13),
        ("TL008", "train_forgets.py", 16),
        ("TL009", "train_forgets.py", 30),
    ]


def test_the_script_alone_does_not_know_what_its_helpers_do() -> None:
    alone = api.check_source((PROJECT / "train_forgets.py").read_text(), "train_forgets.py")
    assert [f.code for f in alone] == []


def test_helpers_that_clear_switch_to_eval_and_restore_train_mode_are_not_reported(project: Path) -> None:
    (project / "trainkit" / "steps.py").write_text(
        (project / "trainkit" / "steps.py").read_text().replace(
            "    loss = F.mse_loss(model(x), y)\n    loss.backward()\n    optimizer.step()\n    return loss.item()\n\n\ndef train_one_batch_cleared",
            "    optimizer.zero_grad()\n    loss = F.mse_loss(model(x), y)\n    loss.backward()\n    optimizer.step()\n    return loss.item()\n\n\ndef train_one_batch_cleared",
        )
    )
    evaluation = project / "trainkit" / "evaluation.py"
    evaluation.write_text(evaluation.read_text().replace("    return [model(x)", "    model.eval()\n    return [model(x)").replace("        return sum(model(x).sum().item() for x, _ in loader)\n\n\n", "        total = sum(model(x).sum().item() for x, _ in loader)\n    model.train()\n    return total\n\n\n", 1))
    assert findings(project) == []
