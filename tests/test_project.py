"""Whole-project analysis: module resolution, findings that appear or disappear only
through another module of the project, and the cache that re-checks exactly the files
whose checks used an edited summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from project_support import PROJECTS, check, check_alone, copy_project, edit, findings

from torchlint import api
from torchlint.config import Config
from torchlint.project import MISSING, OUTSIDE, Project, ProjectView, module_name

PROJECT = PROJECTS / "trainer"
PACKAGE = PROJECT / "src" / "trainproj"


def no_summaries(text: str) -> None:
    raise AssertionError("resolving module names must not summarise anything")


# -- module names and search paths


def test_a_src_layout_package_resolves_absolute_imports_of_its_own_modules() -> None:
    project = Project(no_summaries)
    view = ProjectView.of(project, PACKAGE / "train_ddp.py")
    assert view.module.name == "trainproj.train_ddp"
    found = project.find_module("trainproj.distributed", view.module.search)
    assert found is not None and found.path == (PACKAGE / "distributed.py").resolve()
    package = project.find_module("trainproj", view.module.search)
    assert package is not None and package.path.name == "__init__.py"


def test_relative_names_resolve_against_the_importing_package() -> None:
    project = Project(no_summaries)
    module = ProjectView.of(project, PACKAGE / "train_loop.py").module
    assert module.absolute(".helpers.prepare") == "trainproj.helpers.prepare"
    assert module.absolute(".") == "trainproj"
    assert module.absolute(":fit") == "trainproj.train_loop.fit"
    assert module.absolute("..outside") is None  # above the top package
    init = ProjectView.of(project, PACKAGE / "__init__.py").module
    assert init.name == "trainproj" and init.absolute(".helpers.x") == "trainproj.helpers.x"


@pytest.mark.parametrize(
    ("relative", "name"),
    [
        ("pkg/sub/mod.py", "pkg.sub.mod"),
        ("pkg/__init__.py", "pkg"),
        ("__init__.py", ""),
        ("train.py", "train"),
        ("notebook.ipynb", "notebook"),
        ("pkg/.hidden.py", "pkg..hidden"),
        ("pkg/.py", "pkg..py"),  # a name that is all suffix keeps it, as `Path.stem` does
        ("pkg/archive.tar.py", "pkg.archive.tar"),
    ],
)
def test_a_module_is_named_from_its_path_below_the_top_folder(relative: str, name: str) -> None:
    assert module_name(Path("/work/project") / relative, Path("/work/project")) == name


def test_a_file_outside_the_top_folder_has_no_module_name() -> None:
    with pytest.raises(ValueError):
        module_name(Path("/work/other/x.py"), Path("/work/project"))


def test_a_script_sees_its_sibling_modules() -> None:
    project = Project(no_summaries)
    module = ProjectView.of(project, PROJECT / "scripts" / "launch.py").module
    assert module.name == "launch"
    found = project.find_module("device_utils", module.search)
    assert found is not None and found.path.name == "device_utils.py"


def test_installed_packages_stay_unknown() -> None:
    project = Project(api.summarize_text)
    view = ProjectView.of(project, PACKAGE / "train_ddp.py")
    assert view.lookup("torch.cuda.set_device") is None
    assert view.used == {"torch.cuda.set_device": OUTSIDE}
    assert view.lookup("trainproj.helpers.no_such_helper") is None
    assert view.used["trainproj.helpers.no_such_helper"] == MISSING


def test_a_package_reexport_is_followed_to_the_defining_module() -> None:
    view = ProjectView.of(Project(api.summarize_text), PACKAGE / "train_loop.py")
    entry = view.lookup("trainproj.begin_training_step")
    assert entry is not None and entry.name == "trainproj.helpers.begin_step"
    assert "clears_grads" in entry.data["effects"]



def test_a_project_model_is_a_snapshot_its_lookups_answer_alike_for_its_life(tmp_path: Path) -> None:
    # What makes answering each name once correct (validating the cached results of a
    # tree asks the same names again and again): a run's model never sees a later edit,
    # the next run's model does.
    (tmp_path / "helpers.py").write_text("def clear(model):\n    model.zero_grad()\n")
    search = (tmp_path,)
    summaries: list[str] = []

    def summarize(text: str) -> dict[str, object] | None:
        summaries.append(text)
        return api.summarize_text(text)

    project = Project(summarize)
    first = project.lookup("helpers.clear", search)
    (tmp_path / "helpers.py").write_text("def other():\n    pass\n")
    assert project.lookup("helpers.clear", search) == first and len(summaries) == 1
    assert first[0] is not None and "clears_grads" in first[0].data["effects"]
    assert Project(summarize).lookup("helpers.clear", search) == (None, MISSING)

# -- findings through other modules

# (file, code, line): found only when the project's other modules are known (True), or
# only when the file is checked alone (False).
THROUGH_OTHER_MODULES = [
    ("src/trainproj/train_ddp.py", "TL016", 11, False),  # set_device in distributed.py
    ("scripts/launch.py", "TL016", 10, False),  # set_device in a sibling module
    ("src/trainproj/launcher.py", "TL016", 15, False),  # a method of the class self.devices holds
    ("src/trainproj/train_loop.py", "TL001", 14, False),  # helpers.prepare clears
    ("src/trainproj/evaluate.py", "TL009", 14, False),  # networks without dropout/batch norm
    ("src/trainproj/evaluate_module_attr.py", "TL009", 14, False),  # `models.Regularized(0)`: dropout 0
    ("src/trainproj/benchmark.py", "TL002", 15, False),  # profiling.settle synchronizes
    ("src/trainproj/train_steps.py", "TL001", 12, True),  # helpers.train_step never clears
    ("src/trainproj/ddp_trainer.py", "TL014", 21, True),  # data.make_loader's DistributedSampler
    ("src/trainproj/sampler_trainer.py", "TL014", 19, True),  # data.make_sampler's, kept on the trainer
    ("src/trainproj/inference.py", "TL004", 8, True),  # helpers.predict runs the model with grads
    ("src/trainproj/embed.py", "TL004", 7, False),  # encoders.FrozenEncoder freezes itself
]


@pytest.mark.parametrize(("name", "code", "line", "with_project"), THROUGH_OTHER_MODULES)
def test_a_finding_depends_on_another_module(name: str, code: str, line: int, with_project: bool) -> None:
    in_project = findings(check(PROJECT, [PROJECT / name]))
    assert ((name, line, code) in in_project) is with_project
    assert ((name, line, code) in check_alone(PROJECT, name)) is not with_project


def test_the_whole_project() -> None:
    assert findings(check(PROJECT)) == [
        ("src/trainproj/ddp_trainer.py", 21, "TL014"),  # ddp_trainer_fixed.py calls set_epoch
        ("src/trainproj/evaluate_dropout.py", 14, "TL009"),  # the same evaluation with a dropout network
        ("src/trainproj/evaluate_module_attr_dropout.py", 14, "TL009"),  # `models.Regularized(0.5)`
        ("src/trainproj/inference.py", 8, "TL004"),  # not line 9: helpers.predict_quietly holds no_grad
        # Not sampler_trainer_fixed.py (set_epoch in the epoch method), sampler_trainer_helper.py
        # (epoch_utils.start_epoch), sampler_trainer_random.py (a RandomSampler).
        ("src/trainproj/sampler_trainer.py", 19, "TL014"),
        ("src/trainproj/train_steps.py", 12, "TL001"),
    ]


def test_checking_a_few_files_still_summarises_the_modules_they_import() -> None:
    # Pre-commit passes only changed files; the helpers are read, not reported.
    result = check(PROJECT, [PACKAGE / "train_steps.py", PACKAGE / "train_ddp.py"])
    assert result.files_checked == 2
    assert findings(result) == [("src/trainproj/train_steps.py", 12, "TL001")]


# -- the cache


def test_editing_a_helper_rechecks_exactly_the_files_that_use_it(tmp_path: Path) -> None:
    project = copy_project("trainer", tmp_path)
    cache = project / ".cache"
    helpers = project / "src" / "trainproj" / "helpers.py"
    missing_clear = ("src/trainproj/train_loop.py", 14, "TL001")
    first = check(project, cache=cache)
    assert missing_clear not in findings(first)
    assert check(project, cache=cache).files_cached == first.files_checked

    edit(helpers, "    optimizer.zero_grad(set_to_none=True)\n", "    pass\n")
    after = check(project, cache=cache)
    assert missing_clear in findings(after)
    # helpers.py (its bytes) and train_loop.py (the summary it used) are checked again.
    assert after.files_cached == first.files_checked - 2

    edit(helpers, "    pass\n", "    optimizer.zero_grad(set_to_none=True)\n")
    restored = check(project, cache=cache)
    assert findings(restored) == findings(first)
    assert restored.files_cached == first.files_checked - 2


def test_an_unrelated_edit_of_a_helper_module_rechecks_only_that_module(tmp_path: Path) -> None:
    project = copy_project("trainer", tmp_path)
    cache = project / ".cache"
    helpers = project / "src" / "trainproj" / "helpers.py"
    first = check(project, cache=cache)
    helpers.write_text(helpers.read_text() + "\n\ndef describe(model):\n    return repr(model)\n")
    again = check(project, cache=cache)
    assert again.files_cached == first.files_checked - 1
    assert findings(again) == findings(first)


def test_a_helper_that_appears_later_is_seen(tmp_path: Path) -> None:
    project = copy_project("trainer", tmp_path)
    cache = project / ".cache"
    distributed = project / "src" / "trainproj" / "distributed.py"
    script = project / "src" / "trainproj" / "train_ddp.py"
    unset_device = ("src/trainproj/train_ddp.py", 11, "TL016")
    edit(distributed, "def select_device", "def other_name")
    assert unset_device in findings(check(project, [script], cache))
    edit(distributed, "def other_name", "def select_device")
    again = check(project, [script], cache)
    assert again.files_cached == 0
    assert unset_device not in findings(again)


def test_fixing_a_file_checks_it_again_with_the_project(tmp_path: Path) -> None:
    from torchlint.fix import fix_findings

    project = copy_project("trainer", tmp_path)
    script = project / "src" / "trainproj" / "eval_ddp.py"
    script.write_text(
        "import torch\n"
        "import torch.distributed as dist\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "from trainproj.distributed import select_device\n"
        "from trainproj.models import Plain\n"
        "\n"
        "\n"
        "def main(x):\n"
        "    select_device()\n"
        "    dist.init_process_group(backend='nccl')\n"
        "    model = DDP(Plain().cuda())\n"
        "    model.eval()\n"
        "    model(x)\n"
    )
    found = check(project, [script]).findings
    assert findings(found) == [("src/trainproj/eval_ddp.py", 13, "TL004")]
    result = fix_findings(found, Config(), unsafe=False, write=True, cwd=project)
    assert "no_grad" in script.read_text()
    assert result.findings == []  # not TL016: the helper that selects the GPU is still seen


# -- a checkout of the `.py` files alone: the folder named on the command line is a root

RECIPES = PROJECTS / "recipes_layout"


def test_a_script_in_a_plain_subfolder_sees_the_root_level_packages_of_the_checked_folder() -> None:
    project = Project(no_summaries, checked=[RECIPES])
    module = ProjectView.of(project, RECIPES / "recipes" / "generate.py").module
    found = project.find_module("tune.utils", module.search)
    assert found is not None and found.path == RECIPES / "tune" / "utils.py"
    assert project.find_module("tune.utils", Project(no_summaries).search(RECIPES / "recipes" / "generate.py")) is None


def test_a_helper_of_a_root_level_package_selects_the_gpu_in_a_checkout_without_markers(tmp_path: Path) -> None:
    checkout = copy_project("recipes_layout", tmp_path)
    assert findings(check(tmp_path, [checkout])) == []
    edit(checkout / "tune" / "utils.py", "torch.cuda.set_device(device)", "pass")
    assert [(path, code) for path, _, code in findings(check(tmp_path, [checkout]))] == [
        ("recipes_layout/recipes/generate.py", "TL016")
    ]
