"""Jupyter notebooks: code cells checked as one module, magics masked, findings per
cell, suppressions in cells, broken cells and broken JSON, fixes written into cells."""

from __future__ import annotations

import json
from pathlib import Path
from dataclasses import replace
from typing import Any

import pytest
import toy_rules
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from torchlint import api, notebook
from torchlint.cli import main
from torchlint.config import Config
from torchlint.finding import Finding, file_problem
from torchlint.notebook import mask_ipython, parse_notebook, with_cell_sources

TRAIN = [
    "for x, y in loader:\n",
    "    loss = model(x).sum()\n",
    "    loss.backward()\n",
    "    opt.step()",
]
SETUP = [
    "import torch\n",
    "model = torch.nn.Linear(2, 2)\n",
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)",
]


def cell(source: str | list[str], kind: str = "code") -> dict[str, Any]:
    data: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        data.update(execution_count=None, outputs=[])
    return data


def notebook_text(*cells: dict[str, Any], indent: int = 1, language: str = "python") -> str:
    data = {
        "cells": list(cells),
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def write_notebook(path: Path, *cells: dict[str, Any], **options: Any) -> Path:
    path.write_text(notebook_text(*cells, **options), encoding="utf-8")
    return path


def check(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", "--isolated", "-j", "1", *args])


def findings(path: Path) -> list[tuple[int, int, int, str]]:
    result = api.check_paths([path], Config(), jobs=1)
    return [(f.cell, f.line, f.column, f.code) for f in result.findings]


@pytest.mark.parametrize(
    "line",
    [
        "%matplotlib inline",
        "!pip install torch",
        "files = !ls",
        "t = %timeit -o f()",
        "model?",
        "torch.nn.Linear??",
        "?torch.optim",
        "%load_ext autoreload",
    ],
)
def test_magics_and_shell_lines_are_masked(line: str) -> None:
    out, masked = mask_ipython(["import torch", line, "x = 1"])
    assert out == ["import torch", "pass", "x = 1"]
    assert masked == {2}


def test_masking_keeps_indentation_and_line_count() -> None:
    lines = ["for x in loader:", "    %time step(x)", "    !echo \\", "        continued", "    y = x"]
    out, masked = mask_ipython(lines)
    assert out == ["for x in loader:", "    pass", "    pass", "", "    y = x"]
    assert masked == {2, 3, 4}


def test_percent_and_question_marks_inside_python_are_kept() -> None:
    lines = ["x = (a", "     % b)", 's = """', "%d items?", '"""', "y = a \\", "    % b"]
    out, masked = mask_ipython(lines)
    assert out == lines and not masked


@pytest.mark.parametrize(
    "magic, body_checked", [("%%time", True), ("%%capture out", True), ("%%bash", False), ("%%writefile x.py", False)]
)
def test_cell_magics(magic: str, body_checked: bool) -> None:
    out, masked = mask_ipython(["", magic, "x = 1", "y = 2"])
    assert out == ["", "", "x = 1", "y = 2"] if body_checked else ["", "", "", ""]
    assert masked == ({2} if body_checked else {2, 3, 4})


def test_cells_are_numbered_over_all_cells_and_joined_line_for_line() -> None:
    nb = parse_notebook(notebook_text(cell(["# Title"], "markdown"), cell(SETUP), cell("%pwd\nx = 1\n"), cell([])))
    assert [(c.number, c.start, c.lines) for c in nb.cells] == [(2, 1, 3), (3, 4, 2), (4, 6, 0)]
    assert nb.python.split("\n")[3:5] == ["pass", "x = 1"]


def test_findings_name_the_cell_and_the_line_in_it(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "nb.ipynb", cell(["# Training"], "markdown"), cell(SETUP), cell(["%time 1\n", *TRAIN]))
    # Names from earlier cells (opt) are seen: the cells are one module.
    assert findings(path) == [(3, 5, 5, "TL001")]


def test_text_output_and_snippet_show_the_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_notebook(tmp_path / "nb.ipynb", cell(SETUP), cell(["!nvidia-smi\n", *TRAIN]))
    result = check(".")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("nb.ipynb:cell 2:5:5: TL001 [missing-zero-grad]")
    assert lines[1:3] == ["    opt.step()", "    ^^^^^^^^^^"]


def test_json_and_sarif_carry_the_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = write_notebook(tmp_path / "nb.ipynb", cell(SETUP), cell(TRAIN))
    (found,) = json.loads(check("--format", "json", ".").stdout)
    assert (found["cell"], found["line"], found["column"]) == (2, 4, 5)
    (result,) = json.loads(check("--format", "sarif", ".").stdout)["runs"][0]["results"]
    assert result["properties"] == {"cell": 2, "cellLine": 4, "cellColumn": 5}
    # The alert sits on the line of the .ipynb file that holds the cell's line.
    start = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert path.read_text(encoding="utf-8").splitlines()[start - 1].strip() == '"    opt.step()"'


@pytest.mark.parametrize("comment", ["# noqa: TL001", "# torchlint: disable=missing-zero-grad"])
def test_suppression_comments_work_in_cells(tmp_path: Path, comment: str) -> None:
    train = [*TRAIN[:-1], f"    opt.step()  {comment}"]
    path = write_notebook(tmp_path / "nb.ipynb", cell(SETUP), cell(train))
    assert findings(path) == []


def test_disable_file_in_any_cell_covers_the_notebook(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "nb.ipynb", cell(["# torchlint: disable-file=TL001\n", *SETUP]), cell(TRAIN))
    assert findings(path) == []


def test_a_broken_cell_does_not_hide_the_others(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "nb.ipynb", cell(SETUP), cell(["def broken(:\n", "    pass"]), cell(TRAIN))
    result = api.check_paths([path], Config(), jobs=1)
    assert [(f.cell, f.line, f.code) for f in result.findings] == [(2, 1, "TL000"), (3, 4, "TL001")]
    assert result.findings[0].message.startswith("cannot parse cell 2 on its own: SyntaxError: invalid syntax")


STUB = ["def train_step(model, batch):\n", "    # TODO: your code here\n"]


def test_a_stub_cell_gives_one_error_in_that_cell_and_the_rest_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An exercise notebook: cell 2 is a stub that does not parse on its own; the model
    # of cell 1 is trained in cell 3, which the rules still see through the join.
    monkeypatch.chdir(tmp_path)
    write_notebook(tmp_path / "nb.ipynb", cell(SETUP), cell(STUB), cell(TRAIN))
    result = check("--format", "json", ".")
    reported = [(f["cell"], f["line"], f["column"], f["code"]) for f in json.loads(result.stdout)]
    assert reported == [(2, 2, 27, "TL000"), (3, 4, 5, "TL001")]
    error = json.loads(result.stdout)[0]["message"]
    assert error.startswith("cannot parse cell 2 on its own: SyntaxError: expected an indented block")
    text = check(".").stdout
    assert text.count("TL000") == 1
    assert "nb.ipynb:cell 2:2:27: TL000 [parse-error] error: cannot parse cell 2 on its own" in text
    assert "    # TODO: your code here" in text, "the snippet is the cell's own line"


def test_a_stub_cell_at_the_end_and_cells_that_parse_only_together(tmp_path: Path) -> None:
    # Cell 2 opens a bracket that cell 3 closes: Jupyter fails on both, and so does
    # torchlint, even though the joined cells would parse.
    path = write_notebook(
        tmp_path / "nb.ipynb", cell(SETUP), cell("x = (1,\n"), cell("2)\n"), cell(TRAIN), cell(["def f():\n"])
    )
    assert [(c, line, code) for c, line, _, code in findings(path)] == [
        (2, 1, "TL000"),
        (3, 1, "TL000"),
        (4, 4, "TL001"),
        (5, 1, "TL000"),
    ]


def test_a_notebook_without_trigger_words_is_not_parsed(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "nb.ipynb", cell("print('hello')\n"), cell(STUB))
    assert findings(path) == []


def test_two_broken_cells_each_get_their_error(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "nb.ipynb", cell("x = (\n"), cell(SETUP), cell("1 +\n"), cell(TRAIN))
    assert findings(path) == [(1, 1, 5, "TL000"), (3, 1, 4, "TL000"), (4, 4, 5, "TL001")]


@pytest.mark.parametrize(
    "text, where",
    [('{"cells": [}', (1, 12)), ("[1, 2]", (1, 1)), ('{"cells": [{"cell_type": "code", "source": 3}]}', (1, 1))],
    ids=["bad-json", "not-a-notebook", "bad-source"],
)
def test_an_unreadable_notebook_is_tl000(tmp_path: Path, text: str, where: tuple[int, int]) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(text, encoding="utf-8")
    result = api.check_paths([path], Config(), jobs=1)
    (error,) = result.findings
    assert (error.code, error.line, error.column) == ("TL000", *where)


def test_an_nbformat_3_notebook_says_how_to_convert_it(tmp_path: Path) -> None:
    path = tmp_path / "old.ipynb"
    worksheet = {"cells": [{"cell_type": "code", "input": [TRAIN], "language": "python"}]}
    path.write_text(json.dumps({"nbformat": 3, "worksheets": [worksheet], "metadata": {}}), encoding="utf-8")
    (error,) = api.check_paths([path], Config(), jobs=1).findings
    assert error.code == "TL000"
    assert "nbformat 3" in error.message and "jupyter nbconvert --to notebook --nbformat 4" in error.message


def test_notebooks_in_other_languages_are_skipped(tmp_path: Path) -> None:
    path = write_notebook(tmp_path / "nb.ipynb", cell(SETUP), cell(TRAIN), language="R")
    assert findings(path) == []


def test_folders_are_searched_for_notebooks_but_not_checkpoints(tmp_path: Path) -> None:
    write_notebook(tmp_path / "nb.ipynb", cell(SETUP), cell(TRAIN))
    (tmp_path / ".ipynb_checkpoints").mkdir()
    write_notebook(tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb", cell(SETUP), cell(TRAIN))
    result = api.check_paths([tmp_path], Config(), jobs=1)
    assert result.files_checked == 1
    assert [Path(f.filename).name for f in result.findings] == ["nb.ipynb"]


def test_unchanged_cells_round_trip_byte_for_byte() -> None:
    raw = notebook_text(cell(SETUP), cell("x = 1\ny = 2"), cell(["é = 'ü'\n", "z = 3"]), indent=2)
    nb = parse_notebook(raw)
    assert with_cell_sources(nb, {c.number: c.source for c in nb.cells}) == raw


class TestFixes:
    @pytest.fixture(autouse=True)
    def toys(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        toy_rules.register(monkeypatch)
        monkeypatch.chdir(tmp_path)

    @pytest.mark.parametrize("indent", [1, 2])
    @pytest.mark.parametrize("as_list", [True, False])
    def test_fix_rewrites_only_the_fixed_cells(self, indent: int, as_list: bool) -> None:
        fixed_cell = ["%time w = 1\n", "y = x.cuda()\n", "# ü"]
        cells = [cell(["# Notes é"], "markdown"), cell(SETUP), cell(fixed_cell if as_list else "".join(fixed_cell))]
        path = write_notebook(Path("nb.ipynb"), *cells, indent=indent)
        before = path.read_text(encoding="utf-8")
        result = check("--fix", "nb.ipynb")
        assert result.exit_code == 0, result.output
        after = path.read_text(encoding="utf-8")
        want = ["%time w = 1\n", 'y = x.to("cuda")\n', "# ü"]
        cells[2] = cell(want if as_list else "".join(want))
        assert after == notebook_text(*cells, indent=indent)
        # Only the fixed line differs.
        changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
        assert len(changed) == 1 and "cuda" in changed[0][1]

    def test_diff_names_the_cell(self) -> None:
        write_notebook(Path("nb.ipynb"), cell(SETUP), cell("y = x.cuda()\n"))
        result = check("--diff", "nb.ipynb")
        assert result.exit_code == 1
        assert result.stdout.splitlines()[:3] == ["--- nb.ipynb:cell 2", "+++ nb.ipynb:cell 2", "@@ -1 +1 @@"]

    def test_fixes_in_several_cells_and_windows_newlines_in_json(self) -> None:
        path = Path("nb.ipynb")
        text = notebook_text(cell("a = x.cuda()"), cell(["b = 1\r\n", "c = y.cuda()\r\n"])).replace("\n", "\r\n")
        path.write_bytes(text.encode())
        assert check("--fix", "nb.ipynb").exit_code == 0
        want = notebook_text(cell('a = x.to("cuda")'), cell(["b = 1\r\n", 'c = y.to("cuda")\r\n'])).replace("\n", "\r\n")
        assert path.read_bytes() == want.encode()


lines_text = st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=12), max_size=6)


@settings(max_examples=150, deadline=None)
@given(
    sources=st.lists(st.one_of(lines_text.map("\n".join), lines_text.map(lambda ls: [s + "\n" for s in ls])), max_size=4),
    indent=st.sampled_from([None, 1, 2]),
    edit=st.integers(min_value=0, max_value=3),
)
def test_rewriting_one_cell_leaves_the_rest_of_the_json_intact(sources: list[Any], indent: int | None, edit: int) -> None:
    raw = notebook_text(*(cell(s) for s in sources), indent=indent or 0)
    if indent is None:
        raw = json.dumps(json.loads(raw), separators=(",", ":"))
    nb = parse_notebook(raw)
    assert sum(c.lines for c in nb.cells) == nb.python.count("\n")
    # Cells that mix newline styles are never rewritten (no fix is offered in them).
    assert with_cell_sources(nb, {c.number: c.source for c in nb.cells if c.newline}) == raw
    if edit < len(nb.cells):
        target = nb.cells[edit]
        new = parse_notebook(with_cell_sources(nb, {target.number: "changed = 1\n"}))
        # The new text takes the cell's own newline style ("\r\n" or "\r" cells keep theirs).
        line = "changed = 1" + (target.newline or "\n")
        assert json.loads(new.raw)["cells"][edit]["source"] in (line, "changed = 1", [line], ["changed = 1"])
        others = [c.source for c in new.cells if c.number != target.number]
        assert others == [c.source for c in nb.cells if c.number != target.number]


def test_a_cell_that_only_the_joined_parse_rejects_is_left_out_once() -> None:
    # Simulated parsers: CPython accepts every cell alone, while the joined parse (LibCST
    # in real runs) rejects the line `odd()` wherever it is, as it might reject syntax
    # that CPython knows and LibCST does not.
    nb = parse_notebook(notebook_text(cell(SETUP), cell("x = 1\nodd()\n"), cell(TRAIN)))

    def check_python(text: str) -> list[Finding]:
        lines = text.split("\n")
        if "odd()" in lines:
            return [file_problem("nb.ipynb", "TL000", "cannot parse this file: LibCST says no", lines.index("odd()") + 1, 1)]
        step = file_problem("nb.ipynb", "TL000", "step")
        return [replace(step, line=len(lines) - 1, code="TL001", name="missing-zero-grad")]

    found = notebook.check(nb, "nb.ipynb", check_python, lambda text: None)
    assert [(f.cell, f.line, f.code) for f in found] == [(2, 2, "TL000"), (3, 4, "TL001")]
    assert found[0].message == "cannot parse cell 2: LibCST says no; the other cells are checked without it"
