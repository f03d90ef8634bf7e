"""A model built and moved to the device by a factory of another module (TL012): the
training loop that feeds it the loader's batches unmoved is reported; a factory that
leaves the model on the host is not a move."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from torchlint import api
from torchlint.config import Config
from torchlint.rules._summaries import summarize

PROJECT = Path(__file__).parent / "data" / "projects" / "modelfactory"


def test_summaries_say_which_functions_return_a_model_they_moved() -> None:
    source = """
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
    defs = summarize(ast.parse(textwrap.dedent(source)))["defs"]
    assert [name for name, data in defs.items() if data["returns_moved"]] == ["cuda_model", "moved_in_place"]


def test_the_loop_feeding_the_factory_model_unmoved_batches_is_reported() -> None:
    result = api.check_paths([PROJECT], Config(), cwd=PROJECT, jobs=1, cache_dir=None)
    found = [f for f in result.findings if f.code == "TL012"]
    # Not `train_on_host`, whose factory keeps the model on the host.
    assert [(Path(f.filename).name, f.line) for f in found] == [("train.py", 12)]
    assert "`build_model()`" in found[0].message and "`images.to(device)`" in found[0].message


def test_alone_the_training_script_does_not_know_the_model_is_moved() -> None:
    alone = api.check_source((PROJECT / "modelfactory" / "train.py").read_text(), "train.py")
    assert not [f for f in alone if f.code == "TL012"]
