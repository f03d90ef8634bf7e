"""A distributed sampler that a data module builds and keeps, for a training loop in
another module (TL014): reported at the sampler when no module of the project gives any
sampler the epoch, and re-checked when one starts to."""

from __future__ import annotations

from pathlib import Path

from project_support import PROJECTS, check, check_alone, copy_project, edit, findings, summary, write_project

PROJECT = PROJECTS / "bunch"


def sets_epoch(source: str) -> bool:
    return bool(summary(source)["sets_epoch"])


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
    defs = summary(source)["defs"]
    assert "distributed_sampler" in defs["shuffled"]["effects"]
    assert "distributed_sampler" not in defs["ordered"]["effects"]


def test_the_kept_sampler_is_reported_where_it_is_built() -> None:
    assert check_alone(PROJECT, "data/bunch.py", "TL014") == []  # outside a project: unknown
    result = check(PROJECT)
    assert findings(result, "TL014") == [("data/bunch.py", 8, "TL014")]  # not the evaluation loader's, which keeps its order
    (finding,) = [f for f in result.findings if f.code == "TL014"]
    assert "no module of this project calls `set_epoch`" in finding.message


def test_the_samplers_of_alternative_branches_are_reported_once(tmp_path: Path) -> None:
    project = write_project(
        tmp_path,
        {
            "pyproject.toml": "",
            "bunch.py": """
                from torch.utils.data import DataLoader, DistributedSampler
                class Bunch:
                    def __init__(self, trainset, horovod, ddp):
                        if horovod:
                            self.sampler = DistributedSampler(trainset, num_replicas=horovod.size(), rank=horovod.rank())
                        elif ddp:
                            self.sampler = DistributedSampler(trainset)
                        self.train_loader = DataLoader(trainset, batch_size=8, sampler=self.sampler)
                """,
            "train.py": """
                from bunch import Bunch
                def run(model, trainset, opt, epochs):
                    data = Bunch(trainset, None, True)
                    for epoch in range(epochs):
                        for x, y in data.train_loader:
                            opt.zero_grad()
                            model(x).loss(y).backward()
                            opt.step()
                """,
        },
    )
    assert findings(check(project), "TL014") == [("bunch.py", 8, "TL014")]  # the last binding


def test_a_training_loop_that_sets_the_epoch_rechecks_the_data_module(tmp_path: Path) -> None:
    project = copy_project("bunch", tmp_path)
    cache = project / ".cache"
    first = check(project, cache=cache)
    assert findings(first, "TL014") == [("data/bunch.py", 8, "TL014")]
    edit(
        project / "train.py",
        "    for epoch in range(epochs):\n",
        "    for epoch in range(epochs):\n        bunch.sampler.set_epoch(epoch)\n",
    )
    after = check(project, cache=cache)
    assert findings(after, "TL014") == []
    assert after.files_cached == first.files_checked - 2  # train.py and the data module that asked
