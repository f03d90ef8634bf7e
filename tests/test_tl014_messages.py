"""TL014's messages name the function that builds the sampler the loop trains on."""

from __future__ import annotations

import textwrap

from torchlint import api


def test_each_epoch_loop_names_the_factory_of_its_own_loader() -> None:
    source = """
        from torch.utils.data import DataLoader, DistributedSampler

        def get_loader(ds):
            return DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds))

        def get_loaders(ds, vs):
            train_loader = DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds))
            return train_loader, DataLoader(vs, batch_size=8)

        def train_one(ds, model, optimizer):
            loader = get_loader(ds)
            for epoch in range(10):
                for batch in loader:
                    optimizer.zero_grad()
                    model(batch).backward()
                    optimizer.step()

        def train_two(ds, vs, model, optimizer):
            loader, _ = get_loaders(ds, vs)
            for epoch in range(10):
                for batch in loader:
                    optimizer.zero_grad()
                    model(batch).backward()
                    optimizer.step()
        """
    findings = [f for f in api.check_source(textwrap.dedent(source), "train.py") if f.code == "TL014"]
    assert [(f.line, "get_loaders()" in f.message, "get_loader()" in f.message) for f in findings] == [
        (13, False, True),
        (21, True, False),
    ]
