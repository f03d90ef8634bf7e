"""Data that crosses modules on its way to a model (TL012, TL014): a model that another
module's factory moved to the GPU fed a tokenizer's CPU tensors; a loader that another
module builds with a DistributedSampler and a generator here cycles forever, and the same
loader reseeded through another module's helper."""

from __future__ import annotations

from pathlib import Path

from project_support import check, findings, write_project

from torchlint.finding import Finding


def project(root: Path, files: dict[str, str]) -> list[Finding]:
    return check(write_project(root, files)).findings


MODELS = """
from transformers import AutoModelForCausalLM

def load_lm(name):
    return AutoModelForCausalLM.from_pretrained(name).cuda()
"""

CHAT = """
from transformers import AutoTokenizer
from models import load_lm

def reply(name, prompt):
    tok = AutoTokenizer.from_pretrained(name)
    model = load_lm(name)
    ids = tok(prompt, return_tensors="pt").input_ids
    return tok.decode(model.generate(ids)[0])

def reply_on_device(name, prompt):
    tok = AutoTokenizer.from_pretrained(name)
    model = load_lm(name)
    ids = tok(prompt, return_tensors="pt").input_ids.to(model.device)
    return tok.decode(model.generate(ids)[0])
"""


def test_a_tokenizer_output_fed_to_a_model_another_module_moved(tmp_path: Path) -> None:
    found = project(tmp_path, {"models.py": MODELS, "chat.py": CHAT})
    assert findings(found, "TL012") == [("chat.py", 9, "TL012")]
    (finding,) = [f for f in found if f.code == "TL012"]
    assert "`ids`" in finding.message and "`load_lm()`" in finding.message


def test_alone_the_chat_module_does_not_know_the_model_is_moved(tmp_path: Path) -> None:
    assert findings(project(tmp_path, {"chat.py": CHAT}), "TL012") == []


DATA = """
from torch.utils.data import DataLoader, DistributedSampler

def make_loader(ds):
    return DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds))
"""

SEEDS = """
def reseed(loader, epoch):
    loader.sampler.set_epoch(epoch)
"""

CYCLING = """
from data import make_loader

def cycle(dl):
    while True:
        for batch in dl:
            yield batch

def main(ds, model, opt, epochs, steps_per_epoch):
    train_loader = make_loader(ds)
    stream = cycle(train_loader)
    for step in range(epochs * steps_per_epoch):
        model(next(stream)).backward()
        opt.step()
"""

RESEEDED = """
from data import make_loader
from seeds import reseed

def main(ds, model, opt, epochs):
    train_loader = make_loader(ds)
    for epoch in range(epochs):
        reseed(train_loader, epoch)
        for batch in train_loader:
            model(batch).backward()
            opt.step()
"""


def test_a_generator_cycling_another_module_s_distributed_loader(tmp_path: Path) -> None:
    found = project(tmp_path, {"data.py": DATA, "train.py": CYCLING})
    # The data module's sampler too: no module of the project gives it the epoch.
    assert findings(found, "TL014") == [("data.py", 5, "TL014"), ("train.py", 6, "TL014")]
    (cycled,) = [f for f in found if f.code == "TL014" and f.filename.endswith("train.py")]
    assert "`while True`" in cycled.message and "`train_loader.sampler.set_epoch(passes)`" in cycled.message


def test_the_epoch_set_through_another_module_s_helper(tmp_path: Path) -> None:
    assert findings(project(tmp_path, {"data.py": DATA, "seeds.py": SEEDS, "train.py": RESEEDED}), "TL014") == []
