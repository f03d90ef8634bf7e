"""A model built and moved to the device by a factory of another module (TL012): the
training loop that feeds it the loader's batches unmoved is reported; a factory that
leaves the model on the host is not a move."""

from __future__ import annotations

from project_support import PROJECTS, check, check_alone, findings, summary

PROJECT = PROJECTS / "modelfactory"


def test_summaries_say_which_functions_return_a_model_they_moved() -> None:
    defs = summary(
        """
        def cuda_model():
            return Net().cuda()
        def moved_in_place(device):
            net = Net()
            net.to(device)
            return net
        def half_model():
            return Net().to(torch.float16)
        def host_model():
            return Net()
        """
    )["defs"]
    assert [name for name, data in defs.items() if data["returns_moved"]] == ["cuda_model", "moved_in_place"]


def test_the_loop_feeding_the_factory_model_unmoved_batches_is_reported() -> None:
    result = check(PROJECT)
    # Not `train_on_host`, whose factory keeps the model on the host.
    assert findings(result, "TL012") == [("modelfactory/train.py", 12, "TL012")]
    (message,) = [f.message for f in result.findings if f.code == "TL012"]
    assert "`build_model()`" in message and "`images.to(device)`" in message


def test_alone_the_training_script_does_not_know_the_model_is_moved() -> None:
    assert check_alone(PROJECT, "modelfactory/train.py", "TL012") == []
