"""A model wrapper of another module (not an `nn.Module`) whose own methods switch its
networks' modes and run the training step (`model.val_start()`, `model.train_start()`,
`model.train_emb(x)`, as VSE++ and its descendants write it): TL008 follows the training
step into the wrapper, an evaluation helper of a third module that calls the wrapper's
eval switch, and names the wrapper's own train switch in its message and fix; with the
hard negatives that switch back, or whose switch does not change modes."""

from __future__ import annotations

from pathlib import Path

from project_support import check, findings, write_project

from torchlint.engine import apply_edits

WRAPPER = """
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.2))

    def forward(self, x):
        return self.body(x)


class Joint(object):
    def __init__(self, lr):
        self.img_enc = Encoder()
        self.txt_enc = Encoder()
        self.optimizer = torch.optim.Adam(list(self.img_enc.parameters()) + list(self.txt_enc.parameters()), lr=lr)

    def train_start(self):
        self.img_enc.train()
        self.txt_enc.train()

    def val_start(self):
        {val_start}

    def encode(self, images, captions):
        return self.img_enc(images), self.txt_enc(captions)

    def train_emb(self, images, captions):
        img, cap = self.encode(images, captions)
        self.optimizer.zero_grad()
        loss = (img - cap).pow(2).mean()
        loss.backward()
        self.optimizer.step()
"""

EVALUATION = """
import torch


def encode_data(model, loader):
    model.val_start()
    with torch.no_grad():
        return [model.encode(images, captions) for images, captions in loader]
"""

TRAIN = """
from evaluation import encode_data
from joint import Joint


def train(train_loader, model, val_loader):
    model.train_start()
    for i, (images, captions) in enumerate(train_loader):
        model.train_emb(images, captions){in_loop}
        if i % 500 == 0:
            encode_data(model, val_loader)


def main(train_loader, val_loader):
    model = Joint(0.01)
    for epoch in range(10):
        train(train_loader, model, val_loader)
"""


def project(root: Path, *, val_start: str = "self.img_enc.eval()\n        self.txt_enc.eval()", in_loop: str = "") -> Path:
    return write_project(root, {
        "pyproject.toml": "",
        "joint.py": WRAPPER.format(val_start=val_start),
        "evaluation.py": EVALUATION,
        "train.py": TRAIN.format(in_loop=in_loop),
    })


def test_an_evaluation_helper_that_calls_the_wrappers_eval_switch_mid_epoch(tmp_path: Path) -> None:
    result = check(project(tmp_path))
    assert findings(result, "TL008") == [("train.py", 8, "TL008")]
    [finding] = [f for f in result.findings if f.code == "TL008"]
    assert "calls `model.val_start()`" in finding.message
    assert "call `model.train_start()` in this loop" in finding.message
    assert "model.train()" not in finding.message


def test_the_fix_calls_the_wrappers_own_train_switch(tmp_path: Path) -> None:
    root = project(tmp_path)
    [finding] = [f for f in check(root).findings if f.code == "TL008"]
    assert finding.fix is not None
    assert finding.fix.description == "call `model.train_start()` before the training step"
    fixed = apply_edits((root / "train.py").read_text(), finding.fix.edits)
    assert "    for i, (images, captions) in enumerate(train_loader):\n        model.train_start()\n" in fixed
    (root / "train.py").write_text(fixed)
    assert findings(check(root), "TL008") == []


def test_switching_back_in_the_loop_is_enough(tmp_path: Path) -> None:
    assert findings(check(project(tmp_path, in_loop="\n        model.train_start()")), "TL008") == []


def test_a_switch_named_like_one_that_switches_nothing_is_not_eval(tmp_path: Path) -> None:
    assert findings(check(project(tmp_path, val_start="self.logger = None")), "TL008") == []


def test_the_wrappers_eval_switch_called_in_the_loop_itself(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "train.py").write_text(
        (root / "train.py").read_text().replace("encode_data(model, val_loader)", "model.val_start()")
    )
    assert findings(check(root), "TL008") == [("train.py", 8, "TL008")]

