"""Findings in a layer library that depend on other modules of its project: a function of
`functional.py` runs inside a layer's `forward` in `layers.py` beside it, and the training
script at the project's root is what moves the model to CUDA (TL011). The cache re-checks
the library when either answer changes."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from project_support import PROJECTS, check, check_alone, copy_project, edit, findings, summary, write_project

from torchlint.project import CALLERS, OWN_PACKAGE, PROJECT as PROJECT_FACT, Project, ProjectView
from torchlint.rules._summarize import summarize

PROJECT = PROJECTS / "layerlib"
# Not `Positions.forward`'s factory, which a helper of the project moves.
FOUND = [("layerlib/functional.py", 6, "TL011"), ("layerlib/layers.py", 23, "TL011")]


def project_of(root: Path) -> Project:
    return Project(lambda text: summarize(ast.parse(text)), checked=[root])


def test_summaries_say_whether_a_module_places_work_on_a_device() -> None:
    def places(source: str) -> bool:
        return bool(summary(source)["places_on_device"])

    assert places("model.cuda()\n") and places("x = torch.zeros(3, device=d)\n")
    assert places("run(model, 'cuda:0')\n") and places("def f(device):\n    pass\n")
    assert places("self.to(self.device)\n")
    assert not places('"""Runs on cuda devices."""\nx = torch.zeros(3)\n')
    assert not places("import torch\nx = torch.cuda.is_available\n")


def test_the_functions_that_a_forward_beside_them_calls() -> None:
    project = project_of(PROJECT)
    functional = Path(os.path.abspath(PROJECT / "layerlib" / "functional.py"))
    view = ProjectView.of(project, functional)
    assert view.called_from_methods(["forward"]) == {"sinusoid": [0]}  # not `table`; `x` goes first
    assert view.called_from_methods(["__init__"]) == {}
    assert list(view.used) == [CALLERS + "forward", CALLERS + "__init__"]
    layers = Path(os.path.abspath(PROJECT / "layerlib" / "layers.py"))
    assert ProjectView.of(project, layers).called_from_methods(["forward"]) == {}


def test_the_project_places_work_on_a_device_when_any_module_does(tmp_path: Path) -> None:
    project = copy_project("layerlib", tmp_path)
    layers = project / "layerlib" / "layers.py"
    assert project_of(project).root_of(layers) == project
    view = ProjectView.of(project_of(project), layers)
    assert view.any_module("places_on_device", OWN_PACKAGE)
    assert view.used == {PROJECT_FACT + "places_on_device@package": "True"}
    (project / "train.py").unlink()
    assert not project_of(project).any_module(layers, "places_on_device", OWN_PACKAGE)


def test_library_findings_come_from_the_modules_around_it() -> None:
    assert check_alone(PROJECT, "layerlib/layers.py", "TL011") == []
    assert findings(check(PROJECT), "TL011") == FOUND


def test_a_training_script_that_stops_using_cuda_rechecks_the_library(tmp_path: Path) -> None:
    project = copy_project("layerlib", tmp_path)
    cache = project / ".cache"
    first = check(project, cache=cache)
    assert findings(first, "TL011") == FOUND
    edit(project / "train.py", 'device = torch.device("cuda")\n', "")
    edit(project / "train.py", ".to(device)", "")
    after = check(project, cache=cache)
    assert findings(after, "TL011") == []
    # train.py (its bytes) and the two library modules that asked are checked again.
    assert after.files_cached == first.files_checked - 3


def test_a_layer_that_stops_calling_the_function_rechecks_it(tmp_path: Path) -> None:
    project = copy_project("layerlib", tmp_path)
    cache = project / ".cache"
    check(project, cache=cache)
    edit(project / "layerlib" / "layers.py", "functional.sinusoid(x, self.size)", "x.sin()")
    assert findings(check(project, cache=cache), "TL011") == [("layerlib/layers.py", 23, "TL011")]


# A layer whose `forward` makes a tensor without a device.
SEQUENCE = """\
import torch
from torch import nn


class Sequence(nn.Module):
    def forward(self, x):
        state = torch.zeros(x.size(0), 8)
        return self.cell(x, state)
"""


def test_another_script_folder_s_cuda_does_not_place_this_script_on_a_device(tmp_path: Path) -> None:
    # A collection of independent examples: one uses CUDA, the other runs on the CPU.
    script = SEQUENCE + "\n\nmodel = Sequence()\n"
    write_project(
        tmp_path,
        {"pyproject.toml": "", "gpu_example/train.py": script + 'model.to("cuda")\n', "cpu_example/train.py": script},
    )
    assert findings(check(tmp_path), "TL011") == [("gpu_example/train.py", 7, "TL011")]


def test_summaries_record_which_arguments_are_the_caller_s_own_parameters() -> None:
    source = "def forward(self, x, mask):\n    return encode(x, self.size, mask, 3)\n\n\ndef encode(a, b, c, d):\n    pass\n"
    entry = summary(source)["defs"]["forward"]
    assert entry["passes"] == {":encode": [0, 2]}


def test_a_namespace_package_s_training_module_places_its_layers(tmp_path: Path) -> None:
    # No `__init__.py` anywhere: `from lib.models.layer import Sequence` resolves from the root.
    write_project(
        tmp_path,
        {
            "pyproject.toml": "",
            "lib/models/layer.py": SEQUENCE,
            "lib/training/run.py": "from lib.models.layer import Sequence\n\nmodel = Sequence().cuda()\n",
        },
    )
    assert findings(check(tmp_path), "TL011") == [("lib/models/layer.py", 7, "TL011")]
