"""`torchlint server`, driven over stdio by a client process as an editor drives it:
initialize, open -> diagnostics, change -> new diagnostics, code actions applied,
hover, settings, save and close, shutdown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from lsp_client import LspClient
from test_formats import BUGGY

VIEW = "import torch\n\n\ndef flat(x):\n    return x.transpose(0, 1).view(-1)\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL002"]\n')
    return tmp_path


def start(workspace: Path, options: Any = None) -> LspClient:
    client = LspClient(workspace)
    result = client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": workspace.as_uri(),
            "capabilities": {},
            "initializationOptions": options,
        },
    )
    capabilities = result["capabilities"]
    assert capabilities["codeActionProvider"] and capabilities["hoverProvider"]
    client.notify("initialized", {})
    return client


@pytest.fixture
def client(workspace: Path) -> Iterator[LspClient]:
    client = start(workspace)
    yield client
    if client.process.poll() is None:
        assert client.close() == 0


def open_document(client: LspClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    return uri


def change(client: LspClient, uri: str, version: int, text: str) -> None:
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
    )


def apply_edits(text: str, edits: list[dict[str, Any]]) -> str:
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def offset(position: dict[str, int]) -> int:
        return offsets[position["line"]] + position["character"] if position["line"] < len(lines) else len(text)

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[: offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]) :]
    return text


def test_an_editor_session(client: LspClient, workspace: Path) -> None:
    path = workspace / "train.py"
    uri = open_document(client, path, BUGGY)
    (diagnostic,) = client.diagnostics(uri)
    assert diagnostic["code"] == "TL001" and diagnostic["source"] == "torchlint"
    assert diagnostic["severity"] == 1
    assert diagnostic["range"] == {"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 14}}
    assert diagnostic["codeDescription"]["href"].endswith("/docs/rules/TL001.md")
    assert "opt.zero_grad()" in diagnostic["message"]

    change(client, uri, 2, VIEW)
    (diagnostic,) = client.diagnostics(uri)
    assert diagnostic["code"] == "TL003"
    assert diagnostic["range"]["start"] == {"line": 4, "character": 29}

    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}},
    )
    titles = [a["title"] for a in actions]
    fix, line, whole = actions
    assert fix["title"].startswith("Fix TL003: insert `.contiguous()`") and fix["isPreferred"] is True
    assert fix["kind"] == "quickfix" and fix["diagnostics"][0]["code"] == "TL003"
    assert titles[1:] == ["Disable TL003 for this line", "Disable TL003 for this file"]

    fixed = apply_edits(VIEW, fix["edit"]["changes"][uri])
    assert fixed == VIEW.replace(".view(-1)", ".contiguous().view(-1)")
    change(client, uri, 3, fixed)
    assert client.diagnostics(uri) == []

    disabled = apply_edits(VIEW, line["edit"]["changes"][uri])
    assert "    return x.transpose(0, 1).view(-1)  # noqa: TL003\n" in disabled
    change(client, uri, 4, disabled)
    assert client.diagnostics(uri) == []

    whole_file = apply_edits(VIEW, whole["edit"]["changes"][uri])
    assert whole_file.startswith("# torchlint: disable-file=TL003\nimport torch\n")
    change(client, uri, 5, whole_file)
    assert client.diagnostics(uri) == []


def test_disable_for_this_line_extends_an_existing_noqa(client: LspClient, workspace: Path) -> None:
    text = VIEW.replace(".view(-1)", ".view(-1)  # noqa: E501")
    uri = open_document(client, workspace / "v.py", text)
    (diagnostic,) = client.diagnostics(uri)
    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}},
    )
    (line,) = [a for a in actions if a["title"] == "Disable TL003 for this line"]
    assert "# noqa: E501, TL003\n" in apply_edits(text, line["edit"]["changes"][uri])


def test_disable_for_this_file_extends_an_existing_directive(client: LspClient, workspace: Path) -> None:
    text = "# torchlint: disable-file=TL002\n" + VIEW
    uri = open_document(client, workspace / "v.py", text)
    (diagnostic,) = client.diagnostics(uri)
    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}},
    )
    (whole,) = [a for a in actions if a["title"] == "Disable TL003 for this file"]
    assert apply_edits(text, whole["edit"]["changes"][uri]).startswith("# torchlint: disable-file=TL002, TL003\nimport torch\n")


def test_code_actions_answer_only_the_kinds_asked_for(client: LspClient, workspace: Path) -> None:
    uri = open_document(client, workspace / "v.py", VIEW)
    (diagnostic,) = client.diagnostics(uri)

    def actions(only: list[str]) -> list[str]:
        context = {"diagnostics": [diagnostic], "only": only}
        found = client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diagnostic["range"], "context": context})
        return [a["kind"] for a in found]

    assert actions(["quickfix"]) == ["quickfix"] * 3
    assert actions(["source.organizeImports"]) == []
    assert actions(["source", "quickfix"]) == ["quickfix"] * 3


def test_hover_shows_the_summary_and_what_to_do(client: LspClient, workspace: Path) -> None:
    uri = open_document(client, workspace / "v.py", VIEW)
    client.diagnostics(uri)
    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 31}})
    text = hover["contents"]["value"]
    assert text.startswith("**TL003 view-after-transpose** — ")
    assert "call `.contiguous()`" in text and "Fix: insert `.contiguous()`" in text and "/docs/rules/TL003.md" in text
    assert client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}) is None


def test_the_project_configuration_applies(client: LspClient, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "pyproject.toml").write_text('[tool.torchlint]\nignore = ["TL001"]\n')
    uri = open_document(client, workspace / "sub" / "train.py", BUGGY)
    assert client.diagnostics(uri) == []
    uri = open_document(client, workspace / "train.py", BUGGY)
    assert [d["code"] for d in client.diagnostics(uri)] == ["TL001"]


def test_workspace_settings_override_the_project(workspace: Path) -> None:
    client = start(workspace, {"torchlint": {"ignore": ["TL001"], "fail-on": "info"}})
    uri = open_document(client, workspace / "train.py", BUGGY + "\n" + VIEW)
    assert [d["code"] for d in client.diagnostics(uri)] == ["TL003"]
    client.notify("workspace/didChangeConfiguration", {"settings": {"torchlint": {"select": ["TL001"]}}})
    (diagnostic,) = client.diagnostics(uri)
    assert diagnostic["code"] == "TL001"
    client.notify("workspace/didChangeConfiguration", {"settings": {"torchlint": {"select": ["TL0999"]}}})
    message = client._wait(lambda m: m.get("method") == "window/showMessage", 30)
    assert "TL0999" in message["params"]["message"]
    assert client.close() == 0


ACCUMULATION = (
    "for i, (x, y) in enumerate(loader):\n"
    "    loss = criterion(model(x), y)\n"
    "    loss.backward()\n"
    "    if (i + 1) % accum_steps == 0:\n"
    "        optimizer.step()\n"
    "        optimizer.zero_grad()\n"
)


def test_fail_on_shows_warnings_as_errors(workspace: Path) -> None:
    for options, severity in ((None, 2), ({"torchlint": {"fail-on": "warning"}}, 1)):
        client = start(workspace, options)
        uri = open_document(client, workspace / "t.py", ACCUMULATION)
        (diagnostic,) = [d for d in client.diagnostics(uri) if d["code"] == "TL015"]  # a warning
        assert diagnostic["severity"] == severity
        assert client.close() == 0


def test_a_document_never_opened_has_no_hover_and_no_actions(workspace: Path) -> None:
    client = start(workspace)
    uri = (workspace / "nowhere.py").as_uri()
    position = {"line": 0, "character": 0}
    assert client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position}) is None
    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": uri}, "range": {"start": position, "end": position}, "context": {"diagnostics": []}},
    )
    assert actions == []
    assert client.close() == 0


def test_unsafe_fixes_only_when_asked(workspace: Path) -> None:
    # TL015's fix (dividing the loss by the accumulation steps) is unsafe.
    source = ACCUMULATION
    for options, offered in ((None, False), ({"unsafe-fixes": True}, True)):
        client = start(workspace, options)
        uri = open_document(client, workspace / "t.py", source)
        diagnostics = [d for d in client.diagnostics(uri) if d["code"] == "TL015"]
        assert diagnostics, "TL015 should fire on this example"
        actions = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": diagnostics[0]["range"], "context": {"diagnostics": diagnostics}},
        )
        fixes = [a for a in actions if a["title"].startswith("Fix TL015")]
        assert bool(fixes) is offered
        assert all(a.get("isPreferred") is not True for a in fixes)
        assert client.close() == 0


def test_save_and_close(client: LspClient, workspace: Path) -> None:
    path = workspace / "train.py"
    uri = open_document(client, path, BUGGY)
    assert len(client.diagnostics(uri)) == 1
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert len(client.diagnostics(uri)) == 1
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.diagnostics(uri) == []


def open_notebook(client: LspClient, path: Path, cells: list[tuple[int, str]]) -> list[str]:
    """Open `cells` ((kind, text): 1 markdown, 2 code) as a notebook document; their URIs."""
    uris = [f"vscode-notebook-cell:{path}#cell{i}" for i in range(len(cells))]
    client.notify(
        "notebookDocument/didOpen",
        {
            "notebookDocument": {
                "uri": path.as_uri(),
                "notebookType": "jupyter-notebook",
                "version": 1,
                "cells": [{"kind": kind, "document": uri} for (kind, _), uri in zip(cells, uris)],
            },
            "cellTextDocuments": [
                {"uri": uri, "languageId": "python" if kind == 2 else "markdown", "version": 1, "text": text}
                for (kind, text), uri in zip(cells, uris)
            ],
        },
    )
    return uris


def test_a_notebooks_cells_are_checked_together_and_each_gets_its_own_diagnostics(
    client: LspClient, workspace: Path
) -> None:
    setup = "import torch\nmodel = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    loop = "for x, y in loader:\n    %time loss = model(x).sum()\n    loss.backward()\n    opt.step()\n"
    path = workspace / "train.ipynb"
    notes, first, second = open_notebook(client, path, [(1, "# Training"), (2, setup), (2, loop)])
    (diagnostic,) = client.diagnostics(second)  # published last, after the other cells'
    assert diagnostic["code"] == "TL001"
    assert diagnostic["range"]["start"] == {"line": 3, "character": 4}  # `opt.step()`, in its cell
    published = {
        m["params"]["uri"]: m["params"]["diagnostics"]
        for m in client.notifications
        if m["method"] == "textDocument/publishDiagnostics"
    }
    assert published[first] == [] and published[notes] == []

    actions = client.request(
        "textDocument/codeAction",
        {"textDocument": {"uri": second}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}},
    )
    line = next(a for a in actions if a["title"] == "Disable TL001 for this line")
    disabled = apply_edits(loop, line["edit"]["changes"][second])
    assert "    opt.step()  # noqa: TL001\n" in disabled

    fixed = loop.replace("for x, y in loader:\n", "for x, y in loader:\n    opt.zero_grad()\n")
    client.notify(
        "notebookDocument/didChange",
        {
            "notebookDocument": {"uri": path.as_uri(), "version": 2},
            "change": {"cells": {"textContent": [{"document": {"uri": second, "version": 2}, "changes": [{"text": fixed}]}]}},
        },
    )
    assert client.diagnostics(second) == []

    client.notify(
        "notebookDocument/didChange",
        {
            "notebookDocument": {"uri": path.as_uri(), "version": 3},
            "change": {"cells": {"textContent": [{"document": {"uri": second, "version": 3}, "changes": [{"text": loop}]}]}},
        },
    )
    assert [d["code"] for d in client.diagnostics(second)] == ["TL001"]
    client.notify(
        "notebookDocument/didClose",
        {"notebookDocument": {"uri": path.as_uri()}, "cellTextDocuments": [{"uri": u} for u in (notes, first, second)]},
    )
    assert client.diagnostics(second) == []


def test_a_notebook_opened_as_a_text_file_gets_no_diagnostics(client: LspClient, workspace: Path) -> None:
    import json

    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": BUGGY}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = workspace / "train.ipynb"
    path.write_text(json.dumps(notebook))
    # Its positions would be the cells', not the JSON text's: nothing to show there.
    uri = open_document(client, path, path.read_text())
    assert client.diagnostics(uri) == []
    done = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--no-cache", str(path)], capture_output=True, text=True, timeout=120
    )
    assert "TL001" in done.stdout  # while `check` finds the bug in the cell


def test_without_pygls_the_command_says_what_to_install(tmp_path: Path) -> None:
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        "import importlib.abc, sys\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pygls' or name.startswith('pygls.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", "import sitecustomize; from torchlint.cli import run; import sys; sys.argv=['torchlint','server']; run()"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(tmp_path), "PATH": ""},
    )
    assert done.returncode == 2 and "pip install 'torchlint[lsp]'" in done.stderr


def test_editing_a_helper_updates_the_open_files_that_use_it_before_it_is_saved(tmp_path: Path) -> None:
    import shutil

    project = tmp_path / "trainer"
    shutil.copytree(Path(__file__).parent / "data" / "projects" / "trainer", project)
    helpers = project / "src" / "trainproj" / "helpers.py"
    loop = project / "src" / "trainproj" / "train_steps.py"
    original = helpers.read_text()
    client = start(project)
    try:
        uri = open_document(client, loop, loop.read_text())
        assert [d["code"] for d in client.diagnostics(uri)] == ["TL001"]
        helper_uri = open_document(client, helpers, original)
        client.diagnostics(helper_uri)
        fixed = original.replace("    loss.backward()\n    optimizer.step()\n", "    loss.backward()\n    optimizer.step()\n    optimizer.zero_grad()\n")
        assert fixed != original
        change(client, helper_uri, 2, fixed)  # typed, not saved: the disk still has the bug
        assert client.diagnostics(uri) == []
        assert helpers.read_text() == original
        change(client, helper_uri, 3, original)  # and undone
        assert [d["code"] for d in client.diagnostics(uri)] == ["TL001"]
    finally:
        assert client.close() == 0


def test_saving_a_helper_of_another_module_updates_the_open_files_that_use_it(tmp_path: Path) -> None:
    import shutil

    project = tmp_path / "trainer"
    shutil.copytree(Path(__file__).parent / "data" / "projects" / "trainer", project)
    helpers = project / "src" / "trainproj" / "helpers.py"
    loop = project / "src" / "trainproj" / "train_steps.py"
    client = start(project)
    try:
        uri = open_document(client, loop, loop.read_text())
        # `train_step` of helpers.py steps without clearing: the loop that calls it is TL001.
        assert [d["code"] for d in client.diagnostics(uri)] == ["TL001"]
        fixed = helpers.read_text().replace("    loss.backward()\n    optimizer.step()\n", "    loss.backward()\n    optimizer.step()\n    optimizer.zero_grad()\n")
        helpers.write_text(fixed)
        helper_uri = open_document(client, helpers, fixed)
        client.diagnostics(helper_uri)
        client.notify("textDocument/didSave", {"textDocument": {"uri": helper_uri}})
        assert client.diagnostics(uri) == []
    finally:
        assert client.close() == 0
