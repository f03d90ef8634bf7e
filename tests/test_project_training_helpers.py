"""Training steps and evaluations that a training script runs through helpers of another
module of its project (TL001, TL008, TL009): the helper's summary says what it does to
the optimizer and the model passed to it."""

from __future__ import annotations

from pathlib import Path

from project_support import PROJECTS, check, check_alone, copy_project, edit, findings, summary

PROJECT = PROJECTS / "helpers"


def test_summaries_say_which_mode_a_function_leaves_its_arguments_in() -> None:
    defs = summary((PROJECT / "trainkit" / "evaluation.py").read_text())["defs"]
    assert defs["evaluate"]["mode_params"] == {"model": "eval"}
    assert defs["evaluate_and_restore"]["mode_params"] == {"model": "train"}
    assert defs["validate"]["mode_params"] == {} and "grad_free" in defs["validate"]["effects"]


def test_helpers_of_another_module_that_step_without_clearing_or_get_the_mode_wrong(tmp_path: Path) -> None:
    assert findings(check(copy_project("helpers", tmp_path))) == [
        ("train_forgets.py", 13, "TL001"),
        ("train_forgets.py", 16, "TL008"),
        ("train_forgets.py", 30, "TL009"),
    ]


def test_the_script_alone_does_not_know_what_its_helpers_do() -> None:
    assert check_alone(PROJECT, "train_forgets.py") == []


def test_helpers_that_clear_switch_to_eval_and_restore_train_mode_are_not_reported(tmp_path: Path) -> None:
    project = copy_project("helpers", tmp_path)
    edit(
        project / "trainkit" / "steps.py",
        "    loss = F.mse_loss(model(x), y)\n    loss.backward()\n    optimizer.step()\n    return loss.item()\n\n\ndef train_one_batch_cleared",
        "    optimizer.zero_grad()\n    loss = F.mse_loss(model(x), y)\n    loss.backward()\n    optimizer.step()\n    return loss.item()\n\n\ndef train_one_batch_cleared",
    )
    evaluation = project / "trainkit" / "evaluation.py"
    edit(evaluation, "    return [model(x)", "    model.eval()\n    return [model(x)")
    edit(
        evaluation,
        "        return sum(model(x).sum().item() for x, _ in loader)\n\n\n",
        "        total = sum(model(x).sum().item() for x, _ in loader)\n    model.train()\n    return total\n\n\n",
    )
    assert findings(check(project)) == []
