"""Modes and devices across modules: an evaluation method that a trainer subclass inherits
from a base class of another module (TL009), with the hard negatives that switch the mode
or train a network whose layers eval mode does not change."""

from __future__ import annotations

from pathlib import Path

from project_support import check, findings, summary, write_project

BASE = """
import torch

from nets import make_net


class Learner:
    def __init__(self, loaders, lr):
        self.loaders = loaders
        self.net = {builder}
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr)

    def evaluate_split(self, split):
        hits = 0
        for images, labels in self.loaders[split]:
            with torch.no_grad():{switch}
                hits += (self.net(images).argmax(1) == labels).sum().item()
        return hits
"""

SUBCLASS = """
import torch.nn.functional as F

from learners.base import Learner


class MixupLearner(Learner):
    def fit(self, rounds):
        for r in range(rounds):
            self.net.train()
            for images, labels in self.loaders["train"]:
                self.opt.zero_grad()
                F.cross_entropy(self.net(images), labels).backward()
                self.opt.step(){switch}
            print(r, self.evaluate_split("dev"))
"""

NETS = """
import torch.nn as nn


class Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), {layer}nn.Linear(256, 10))

    def forward(self, x):
        return self.body(x)


def make_net():
    return Wide()
"""


def tl009(
    root: Path,
    *,
    builder: str = "make_net()",
    base_switch: str = "",
    subclass_switch: str = "",
    layer: str = "nn.BatchNorm1d(256), ",
) -> list[tuple[str, int, str]]:
    files = {
        "pyproject.toml": "",
        "learners/__init__.py": "",
        "learners/base.py": BASE.format(builder=builder, switch=base_switch),
        "learners/mixup.py": SUBCLASS.format(switch=subclass_switch),
        "nets.py": NETS.format(layer=layer),
    }
    return findings(check(write_project(root, files)), "TL009")


def test_an_inherited_evaluation_method_runs_the_trained_network_in_train_mode(tmp_path: Path) -> None:
    assert tl009(tmp_path) == [("learners/mixup.py", 15, "TL009")]


def test_the_inherited_method_that_switches_to_eval_is_enough(tmp_path: Path) -> None:
    assert tl009(tmp_path, base_switch="\n                self.net.eval()") == []


def test_an_eval_switch_in_the_subclass_before_the_call_is_enough(tmp_path: Path) -> None:
    assert tl009(tmp_path, subclass_switch="\n            self.net.eval()") == []


def test_a_network_without_mode_dependent_layers_needs_no_eval(tmp_path: Path) -> None:
    # Built by a project factory in the base class: the layers of `Wide` decide.
    assert tl009(tmp_path, layer="") == []


def test_a_network_with_dropout_built_in_the_base_class_needs_eval(tmp_path: Path) -> None:
    assert tl009(tmp_path, layer="nn.Dropout(0.1), ") == [("learners/mixup.py", 15, "TL009")]


def test_a_network_the_base_class_builds_from_an_unknown_library_is_not_mode_free(tmp_path: Path) -> None:
    assert tl009(tmp_path, builder="torchvision.models.resnet18()") == [("learners/mixup.py", 15, "TL009")]


CHAIN = """
import torch


class Lattice:
    def log_norm(self, arcs):
        n, k = arcs.shape[0], arcs.shape[-1]
        alpha = torch.zeros(n, k, device=arcs.device)
        start = {start}
        alpha = alpha.masked_fill(start, -1e4)
        return torch.logsumexp(alpha + arcs.sum(1), -1)
"""

TAGGER = """
import torch
import torch.nn as nn

from lattice.chain import Lattice


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 8)

    def forward(self, feats):
        return Lattice().log_norm(self.proj(feats).unsqueeze(-1).expand(-1, -1, 8))


model = Tagger().cuda()
"""


def tl011(root: Path, start: str) -> list[tuple[str, int, str]]:
    files = {
        "pyproject.toml": "",
        "lattice/__init__.py": "",
        "lattice/chain.py": CHAIN.format(start=start),
        "tagger.py": TAGGER,
    }
    return findings(check(write_project(root, files)), "TL011")


def test_a_helper_of_another_module_that_places_its_tensors_but_one(tmp_path: Path) -> None:
    assert tl011(tmp_path, "torch.eye(n, k).bool()") == [("lattice/chain.py", 9, "TL011")]


def test_the_same_mask_made_like_the_input_is_placed(tmp_path: Path) -> None:
    assert tl011(tmp_path, "torch.zeros_like(alpha).bool()") == []


WRAPPER = """
import torch


class Pretrained:
    def __init__(self, model, device):
        self.device = device
        self.model_ = model.eval().to(device)

    def apply(self, batches):
        return [self.model_(torch.as_tensor(b, device=self.device)) for b in batches]
"""


def test_an_inference_wrapper_called_with_gradients_keeps_its_constructor_eval_mode(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "infer/pretrained.py": WRAPPER,
        "infer/__init__.py": "",
        "run.py": "from infer.pretrained import Pretrained\nscores = Pretrained(load(), 'cuda').apply(windows)\n",
    })
    assert findings(check(root), "TL004") == [("infer/pretrained.py", 11, "TL004")]


def test_a_project_that_turns_gradients_off_may_do_so_around_the_wrapper(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "infer/pretrained.py": WRAPPER,
        "infer/__init__.py": "",
        "run.py": (
            "import torch\nfrom infer.pretrained import Pretrained\n"
            "with torch.no_grad():\n    scores = Pretrained(load(), 'cuda').apply(windows)\n"
        ),
    })
    assert findings(check(root), "TL004") == []


def test_a_summary_says_whether_the_module_turns_gradients_off() -> None:
    assert summary("import torch\n@torch.no_grad\ndef f(m, x):\n    return m(x)\n")["disables_grad"]
    assert summary("import torch\nctx = torch.inference_mode()\n")["disables_grad"]
    assert summary("import torch\ntorch.set_grad_enabled(False)\n")["disables_grad"]
    assert not summary("import torch\ntorch.set_grad_enabled(True)\nout = model(x)\n")["disables_grad"]
