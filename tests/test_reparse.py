"""The editor's parser: after an edit, only the top-level statements around it are parsed
again, and the tree, the errors, the finding ranges and the findings are those of a
parse of the whole text."""

from __future__ import annotations

import random
from pathlib import Path

import libcst as cst
import pytest

from torchlint import engine
from torchlint.api import enabled_rules
from torchlint.config import Config
from torchlint.positions import node_positions
from torchlint.reparse import IncrementalParser

ROOT = Path(__file__).resolve().parent.parent
# Real modules of several shapes: classes, decorators, long docstrings, comments between
# and inside blocks, a file without blocks.
REAL_FILES = sorted(
    [
        *(ROOT / "torchlint").glob("[a-p]*.py"),
        *(ROOT / "fixtures").glob("tl00*.py"),
        ROOT / "rules" / "tl002_unsynchronized_timing.py",
    ]
)

EDITS = (
    "comment at the end of a line",
    "blank line",
    "new top-level statement",
    "delete a line",
    "indented comment",
    "column-0 comment",
    "change a name",
)


def edited(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    kind = rng.choice(EDITS)
    if kind == EDITS[0]:
        lines[at] += "  # edited"
    elif kind == EDITS[1]:
        lines.insert(at, "")
    elif kind == EDITS[2]:
        lines.insert(at, "inserted = 1")
    elif kind == EDITS[3]:
        del lines[at]
    elif kind == EDITS[4]:
        lines.insert(at, "    # indented")
    elif kind == EDITS[5]:
        lines.insert(at, "# column zero")
    else:
        lines[at] = lines[at].replace("self", "this", 1)
    return "\n".join(lines)


def parsed_whole(text: str) -> cst.Module | engine.ParseFailure:
    try:
        return engine.parse(text)
    except engine.ParseFailure as failure:
        return failure


def parsed_by(parser: IncrementalParser, text: str) -> cst.Module | engine.ParseFailure:
    try:
        return parser.parse(text)
    except engine.ParseFailure as failure:
        return failure


def same(a: cst.Module | engine.ParseFailure, b: cst.Module | engine.ParseFailure) -> bool:
    if isinstance(a, engine.ParseFailure) or isinstance(b, engine.ParseFailure):
        return (
            isinstance(a, engine.ParseFailure)
            and isinstance(b, engine.ParseFailure)
            and (a.line, a.column, a.reason) == (b.line, b.column, b.reason)
        )
    return a.deep_equals(b)


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_every_version_under_random_edits_is_the_whole_texts_tree(path: Path) -> None:
    rng = random.Random(path.name)
    text = path.read_text()
    parser = IncrementalParser()
    parser.parse(text)
    for _ in range(12):
        text = edited(text, rng)  # edits pile up: the parser only ever sees its last version
        incremental = parsed_by(parser, text)
        assert same(incremental, parsed_whole(text)), f"differs after an edit of {path.name}"
        if isinstance(incremental, cst.Module):
            assert incremental.code == text


def test_a_local_edit_parses_only_around_it() -> None:
    text = (ROOT / "fixtures" / "tl001_gan_missing_clear.py").read_text()
    parser = IncrementalParser()
    parser.parse(text)
    lines = text.split("\n")
    for version in range(5, 15):
        lines[version] += "  # typing"
        parser.parse("\n".join(lines))
    assert parser.reparsed_whole == 1  # the first version only


@pytest.mark.parametrize(
    "before, after",
    [
        # The seams: a comment between two statements, one indented under a block.
        ("def f():\n    x = 1\n\n# about g\ndef g():\n    pass\n", "def f():\n    x = 2\n\n# about g\ndef g():\n    pass\n"),
        ("def f():\n    x = 1\n    # end of f\n\ny = 2\nz = 3\n", "def f():\n    x = 1\n    # end of f\n\ny = 5\nz = 3\n"),
        # The module's header and footer.
        ("#!/usr/bin/env python\n# header\n\nimport os\nx = 1\n", "#!/usr/bin/env python\n# header 2\n\nimport os\nx = 1\n"),
        ("import os\nx = 1\n# footer\n", "import os\nx = 1\n# footer 2\n\n"),
        ("import os\nx = 1", "import os\nx = 2"),  # no newline at the end
        # The default indent comes from the first block: another one there changes it.
        ("if a:\n    b = 1\nif c:\n  d = 1\n", "if a:\n  b = 1\nif c:\n  d = 1\n"),
        ("if a:\n    b = 1\nif c:\n  d = 1\n", "a = 1\nif c:\n  d = 1\n"),
        ("if a:\n    b = 1\nx = 1\ny = 1\nif c:\n  d = 1\n", "a = 1\nx = 1\ny = 1\nif c:\n  d = 1\n"),
        # A statement split, two statements joined, the last one removed.
        ("x = 1\ny = 2\nz = 3\n", "x = 1\ny = 2; w = 4\nz = 3\n"),
        ("x = 1\ny = (2,\n     3)\nz = 3\n", "x = 1\ny = 2\nz = 3\n"),
        ("x = 1\ny = 2\nz = 3\n", "x = 1\ny = 2\n"),
        # Syntax errors, and their repair.
        ("x = 1\ny = 2\nz = 3\n", "x = 1\ny = (2\nz = 3\n"),
        ("x = 1\ny = 2\nz = 3\n", "x = 1\n    y = 2\nz = 3\n"),
        ("x = 1\ny = '''2\nz = 3\n", "x = 1\ny = '''2'''\nz = 3\n"),
    ],
)
def test_seams_and_errors_read_as_in_a_whole_parse(before: str, after: str) -> None:
    parser = IncrementalParser()
    parsed_by(parser, before)
    assert same(parsed_by(parser, after), parsed_whole(after))
    assert same(parsed_by(parser, before), parsed_whole(before))


def test_ranges_of_nodes_are_those_of_the_whole_module() -> None:
    text = (ROOT / "rules" / "tl002_unsynchronized_timing.py").read_text()
    parser = IncrementalParser()
    parser.parse(text)
    lines = text.split("\n")
    lines[40] += "  # edited"
    module = parser.parse("\n".join(lines))
    calls: list[cst.CSTNode] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls.append(node)

    module.visit(Calls())
    sample = calls[::7]
    expected = node_positions(module, sample)
    assert parser.node_positions(module, sample) == expected
    assert parser.node_positions(module, sample) == expected  # from the ranges kept


def test_findings_equal_those_of_whole_parses_as_a_fixture_is_edited() -> None:
    rules = enabled_rules(Config())
    rng = random.Random(3)
    for path in sorted((ROOT / "fixtures").glob("tl0*.py"))[:12]:
        text = path.read_text()
        parser = IncrementalParser()
        for _ in range(4):
            got = engine.check_source(text, path.name, rules, parser=parser)
            assert got == engine.check_source(text, path.name, rules), path.name
            text = edited(text, rng)
