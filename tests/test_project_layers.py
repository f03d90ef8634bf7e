"""Findings in a layer library that depend on other modules of its project: a function of
`functional.py` runs inside a layer's `forward` in `layers.py` beside it, and the training
script at the project's root is what moves the model to CUDA (TL011). The cache re-checks
the library when either answer changes."""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path

import pytest

from torchlint import api
from torchlint.config import Config
from torchlint.project import CALLERS, OWN_PACKAGE, PROJECT as PROJECT_FACT, Project, ProjectView
from torchlint.rules._summaries import summarize

PROJECT = Path(__file__).parent / "data" / "projects" / "layerlib"
# Not `Positions.forward`'s factory, which a helper of the project moves.
FOUND = [("functional.py", 6), ("layers.py", 23)]


def findings(paths: list[Path], cwd: Path, cache: Path | None = None) -> api.CheckResult:
    return api.check_paths(paths, Config(), cwd=cwd, jobs=1, cache_dir=cache)


def tl011(result: api.CheckResult) -> list[tuple[str, int]]:
    return sorted((Path(f.filename).name, f.line) for f in result.findings if f.code == "TL011")


def project_of(root: Path) -> Project:
    return Project(lambda text: summarize(ast.parse(text)), checked=[root])


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "layerlib"
    shutil.copytree(PROJECT, copy)
    return copy


def test_summaries_say_whether_a_module_places_work_on_a_device() -> None:
    def places(source: str) -> bool:
        return bool(summarize(ast.parse(source))["places_on_device"])

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


def test_the_project_places_work_on_a_device_when_any_module_does(project: Path) -> None:
    layers = project / "layerlib" / "layers.py"
    assert project_of(project).root_of(layers) == project
    view = ProjectView.of(project_of(project), layers)
    assert view.any_module("places_on_device", OWN_PACKAGE)
    assert view.used == {PROJECT_FACT + "places_on_device@package": "True"}
    (project / "train.py").unlink()
    assert not project_of(project).any_module(layers, "places_on_device", OWN_PACKAGE)


def test_library_findings_come_from_the_modules_around_it() -> None:
    alone = api.check_source((PROJECT / "layerlib" / "layers.py").read_text(), "layerlib/layers.py")
    assert [f for f in alone if f.code == "TL011"] == []
    assert tl011(findings([PROJECT], PROJECT)) == FOUND


def test_a_training_script_that_stops_using_cuda_rechecks_the_library(project: Path) -> None:
    cache = project / ".cache"
    first = findings([project], project, cache)
    assert tl011(first) == FOUND
    edit(project / "train.py", 'device = torch.device("cuda")\n', "")
    edit(project / "train.py", ".to(device)", "")
    after = findings([project], project, cache)
    assert tl011(after) == []
    # train.py (its bytes) and the two library modules that asked are checked again.
    assert after.files_cached == first.files_checked - 3


def test_a_layer_that_stops_calling_the_function_rechecks_it(project: Path) -> None:
    cache = project / ".cache"
    findings([project], project, cache)
    edit(project / "layerlib" / "layers.py", "functional.sinusoid(x, self.size)", "x.sin()")
    assert tl011(findings([project], project, cache)) == [("layers.py", 23)]


def test_another_script_folder_s_cuda_does_not_place_this_script_on_a_device(tmp_path: Path) -> None:
    # A collection of independent examples: one uses CUDA, the other runs on the CPU.
    (tmp_path / "pyproject.toml").write_text("")
    for folder, device in (("gpu_example", 'model.to("cuda")\n'), ("cpu_example", "")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "train.py").write_text(
            "import torch\nfrom torch import nn\n\n\nclass Sequence(nn.Module):\n"
            "    def forward(self, x):\n        state = torch.zeros(x.size(0), 8)\n"
            "        return self.cell(x, state)\n\n\nmodel = Sequence()\n" + device
        )
    found = tl011(findings([tmp_path], tmp_path))
    assert [name for name, _ in found] == ["train.py"]
    (finding,) = [f for f in findings([tmp_path], tmp_path).findings if f.code == "TL011"]
    assert Path(finding.filename).parent.name == "gpu_example"


def test_summaries_record_which_arguments_are_the_caller_s_own_parameters() -> None:
    source = "def forward(self, x, mask):\n    return encode(x, self.size, mask, 3)\n\n\ndef encode(a, b, c, d):\n    pass\n"
    entry = summarize(ast.parse(source))["defs"]["forward"]
    assert entry["passes"] == {":encode": [0, 2]}


def test_a_namespace_package_s_training_module_places_its_layers(tmp_path: Path) -> None:
    # No `__init__.py` anywhere: `from lib.models.layer import Sequence` resolves from the root.
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "lib" / "models").mkdir(parents=True)
    (tmp_path / "lib" / "training").mkdir()
    (tmp_path / "lib" / "models" / "layer.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Sequence(nn.Module):\n"
        "    def forward(self, x):\n        state = torch.zeros(x.size(0), 8)\n"
        "        return self.cell(x, state)\n"
    )
    (tmp_path / "lib" / "training" / "run.py").write_text("from lib.models.layer import Sequence\n\nmodel = Sequence().cuda()\n")
    assert tl011(findings([tmp_path], tmp_path)) == [("layer.py", 7)]
