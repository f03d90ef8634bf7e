"""Validating cached results against the project: cheap (a summary known for the digest
that this run read is not read again; folder and scope questions are answered once per
folder) and still exact (an edit re-checks the files whose answers it changes)."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from torchlint import api, project as project_module
from torchlint.cache import content_digest
from torchlint.config import Config
from torchlint.project import OWN_PACKAGE, WHOLE_PROJECT, Project, ProjectView
from torchlint.rules._summarize import summarize

LAYERLIB = Path(__file__).parent / "data" / "projects" / "layerlib"


def summarize_text(text: str) -> dict[str, object] | None:
    return summarize(ast.parse(text))


def check(root: Path, cache: Path) -> api.CheckResult:
    return api.check_paths([root], Config(), cwd=root, jobs=1, cache_dir=cache)


@pytest.fixture
def layerlib(tmp_path: Path) -> Path:
    copy = tmp_path / "layerlib"
    shutil.copytree(LAYERLIB, copy)
    return copy


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_fully_cached_run_reads_no_summarised_module_twice(layerlib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = layerlib / ".cache"
    first = check(layerlib, cache)
    reads: list[Path] = []
    real = project_module.read_bytes

    def counting(path: Path) -> object:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(project_module, "read_bytes", counting)
    again = check(layerlib, cache)
    assert again.files_cached == again.files_checked == first.files_checked
    assert sorted(again.findings) == sorted(first.findings)
    # Every module the validation consults is a checked file, read (and digested) once by api.
    assert reads == []


def test_a_summary_known_for_another_digest_is_computed_again(tmp_path: Path) -> None:
    helper = write(tmp_path / "helpers.py", "def clear(opt):\n    opt.zero_grad()\n")
    stale = summarize_text("def clear(opt):\n    pass\n")
    project = Project(summarize_text, {str(helper): (content_digest(b"old bytes"), stale)})
    project.read_digests[str(helper)] = content_digest(helper.read_bytes())
    summary = project.summary(helper) or {}
    assert summary["defs"]["clear"]["effects"] == ["clears_grads"]
    assert str(helper) in project.computed


def test_a_summary_known_for_the_digest_read_is_used_as_is(tmp_path: Path) -> None:
    helper = write(tmp_path / "helpers.py", "def clear(opt):\n    opt.zero_grad()\n")
    digest = content_digest(helper.read_bytes())
    known = {"imports": {}, "defs": {"marker": {"kind": "function"}}}
    project = Project(summarize_text, {str(helper): (digest, known)})
    project.read_digests[str(helper)] = digest
    assert project.summary(helper) is known
    assert project.computed == {}


def test_only_top_level_functions_of_the_module_itself_count_as_called_from_a_forward(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "nets"
    write(package / "__init__.py", "")
    encode = write(package / "encode.py", "def scale(x, n):\n    return x * n\n\nclass Table:\n    def scale(x):\n        return x\n")
    write(package / "encode_more.py", "def scale(x, n):\n    return x * n\n")
    write(
        package / "blocks.py",
        "from nets import encode, encode_more\n\n"
        "class Block:\n"
        "    def forward(self, x):\n"
        "        y = encode.Table.scale(x)\n"
        "        return encode_more.scale(x, 2) + encode.scale(y, 3)\n",
    )
    project = Project(summarize_text, checked=[tmp_path])
    view = ProjectView.of(project, encode)
    # `encode.Table.scale` is a method, `encode_more.scale` another module's function.
    assert view.called_from_methods(["forward"]) == {"scale": []}
    assert view.mixed_by_methods(["forward"]) == ["scale"]
    assert ProjectView.of(project, package / "encode_more.py").called_from_methods(["forward"]) == {"scale": [0]}


def test_editing_the_only_forward_that_calls_a_function_rechecks_the_function_s_module(layerlib: Path) -> None:
    cache = layerlib / ".cache"
    check(layerlib, cache)
    layers = layerlib / "layerlib" / "layers.py"
    layers.write_text(layers.read_text().replace("functional.sinusoid(x, self.size)", "x.sin()"))
    again = check(layerlib, cache)
    # layers.py (its bytes) and functional.py (the answer of which forwards call it).
    assert again.files_checked - again.files_cached == 2
    assert not [f for f in again.findings if f.code == "TL011" and Path(f.filename).name == "functional.py"]


def test_scope_answers_are_shared_by_the_files_of_a_folder_and_stay_per_folder(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    write(tmp_path / "lib" / "__init__.py", "")
    first = write(tmp_path / "lib" / "a.py", "import torch\nx = torch.zeros(3)\n")
    second = write(tmp_path / "lib" / "b.py", "def f():\n    return 1\n")
    script = write(tmp_path / "other" / "run.py", "model.cuda()\n")
    project = Project(summarize_text, checked=[tmp_path])
    assert project.scope_modules(first, OWN_PACKAGE) is project.scope_modules(second, OWN_PACKAGE)
    assert project.root_of(first) == project.root_of(script) == tmp_path
    assert project.any_module(script, "places_on_device", WHOLE_PROJECT)
    assert not project.any_module(first, "places_on_device", OWN_PACKAGE)
    assert project.any_module(script, "places_on_device", OWN_PACKAGE)


def test_a_save_merges_what_another_run_saved_after_this_one_read_the_index(tmp_path: Path) -> None:
    from torchlint.cache import ResultCache

    files = [write(tmp_path / f"m{i}.py", "x = 1\n") for i in range(3)]
    ResultCache(tmp_path / "cache", "k").put(files[0], "d0", [])  # never saved
    early = ResultCache(tmp_path / "cache", "k")
    early.put(files[0], "d0", [])
    early.save()
    this, other = ResultCache(tmp_path / "cache", "k"), ResultCache(tmp_path / "cache", "k")
    other.put(files[1], "d1", [])
    other.save()
    this.put(files[2], "d2", [])
    this.save()
    merged = ResultCache(tmp_path / "cache", "k")
    assert [merged.get(path, f"d{i}", "f.py") is not None for i, path in enumerate(files)] == [True, True, True]


def test_asking_which_functions_a_forward_calls_summarises_only_the_siblings_that_spell_forward(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "nets"
    write(package / "__init__.py", "")
    encode = write(package / "encode.py", "def scale(x, n):\n    return x * n\n")
    write(package / "blocks.py", "from nets import encode\n\nclass Block:\n    def forward(self, x):\n        return encode.scale(x, 2)\n")
    write(package / "config.py", "SIZE = 3\n\ndef size():\n    return SIZE\n")
    # `ｆorward` is `forward` to Python (identifiers are NFKC-normalised): a module that is
    # not plain ASCII is always summarised.
    write(package / "wide.py", "from nets import encode\n\nclass Wide:\n    def ｆorward(self, y):\n        return encode.scale(y, 3)\n")
    summarised: list[str] = []

    def recording(text: str) -> dict[str, object] | None:
        summarised.append((text.strip().splitlines() or [""])[-1].strip())
        return summarize_text(text)

    project = Project(recording, checked=[tmp_path])
    assert ProjectView.of(project, encode).called_from_methods(["forward"]) == {"scale": [0]}
    # Not config.py, nor encode.py itself (a module's own methods are not asked about).
    assert sorted(summarised) == ["return encode.scale(x, 2)", "return encode.scale(y, 3)"]
    assert project.called_from_methods(encode, ["forward"]) == {"scale": [0]}
