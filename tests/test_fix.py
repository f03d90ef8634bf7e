"""`check --fix`, `--unsafe-fixes` and `--diff`, on plain files, with toy fixable rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import toy_rules
from click.testing import CliRunner, Result

from torchlint.cli import main


@pytest.fixture(autouse=True)
def toys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    toy_rules.register(monkeypatch)
    monkeypatch.chdir(tmp_path)


def check(*args: str) -> Result:
    # No result cache: these tests check that fixing leaves nothing but the fixed files.
    return CliRunner().invoke(main, ["check", "--isolated", "--no-cache", "-j", "1", *args])


def write(name: str, data: bytes) -> Path:
    path = Path(name)
    path.write_bytes(data)
    return path


def test_fix_applies_safe_fixes_in_place() -> None:
    path = write("train.py", b"import torch\ny = x.cuda()\nz = 1\n")
    result = check("--fix", "train.py")
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == b'import torch\ny = x.to("cuda")\nz = 1\n'
    assert "Fixed 1 finding; all checks passed" in result.output


def test_report_marks_fixable_findings_and_counts_them() -> None:
    write("train.py", b"a = x.cuda()\nb = x.cpu()\n")
    result = check("train.py")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    # The first line keeps the documented `path:line:col: CODE [name] message` form.
    first = lines.index(next(line for line in lines if line.startswith("train.py:1:5: TL980 [toy-cuda]")))
    second = lines.index(next(line for line in lines if line.startswith("train.py:2:5: TL981 [toy-cpu]")))
    assert lines[first + 3].startswith("    [*] fix: ") and lines[first + 3].endswith("(--fix)")
    assert lines[second + 3].endswith("(--fix --unsafe-fixes)")
    assert "[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in lines
    unsafe = check("--unsafe-fixes", "train.py")
    assert "[*] 2 fixable with the `--fix` option." in unsafe.output.splitlines()


def test_fix_leaves_unsafe_fixes_alone_and_reports_what_remains() -> None:
    path = write("train.py", b"b = x.cpu()\n")
    result = check("--fix", "train.py")
    assert result.exit_code == 1
    assert path.read_bytes() == b"b = x.cpu()\n"
    assert "train.py:1:5: TL981" in result.output
    assert "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)." in result.output


def test_unsafe_fixes_apply_and_recheck_until_stable() -> None:
    # Pass 1 turns .cpu() into .cuda() (unsafe), pass 2 turns that into .to("cuda").
    path = write("train.py", b"b = x.cpu()\n")
    result = check("--fix", "--unsafe-fixes", "train.py")
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == b'b = x.to("cuda")\n'
    assert "Fixed 2 findings" in result.output


def test_diff_prints_without_writing_and_exits_1() -> None:
    path = write("train.py", b"import torch\ny = x.cuda()\n")
    result = check("--diff", "train.py")
    assert result.exit_code == 1
    assert path.read_bytes() == b"import torch\ny = x.cuda()\n"
    assert result.stdout.splitlines() == [
        "--- train.py",
        "+++ train.py",
        "@@ -1,2 +1,2 @@",
        " import torch",
        "-y = x.cuda()",
        '+y = x.to("cuda")',
    ]
    assert "Would fix 1 finding." in result.stderr


def test_diff_with_nothing_to_fix_exits_0() -> None:
    write("train.py", b"b = x.cpu()\n")
    result = check("--diff", "train.py")
    assert result.exit_code == 0
    assert "---" not in result.output


@pytest.mark.parametrize("newline", [b"\r\n", b"\r", b"\n"])
def test_fix_keeps_the_newline_style(newline: bytes) -> None:
    lines = [b"import torch", b"y = x.cuda()", b"z = 1", b""]
    path = write("train.py", newline.join(lines))
    assert check("--fix", "train.py").exit_code == 0
    assert path.read_bytes() == newline.join([b"import torch", b'y = x.to("cuda")', b"z = 1", b""])


def test_fix_refuses_files_with_mixed_newlines() -> None:
    data = b"import torch\r\ny = x.cuda()\nz = 1\r\n"
    path = write("train.py", data)
    result = check("--fix", "train.py")
    assert result.exit_code == 1
    assert path.read_bytes() == data
    assert "mixes newline styles" in result.output


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "# -*- coding: latin-1 -*-\n# café\ny = x.cuda()\n".encode("latin-1"),
            '# -*- coding: latin-1 -*-\n# café\ny = x.to("cuda")\n'.encode("latin-1"),
        ),
        (b"\xef\xbb\xbf# caf\xc3\xa9\ny = x.cuda()\n", b'\xef\xbb\xbf# caf\xc3\xa9\ny = x.to("cuda")\n'),
    ],
    ids=["latin-1", "utf-8-bom"],
)
def test_fix_keeps_the_encoding(before: bytes, after: bytes) -> None:
    path = write("train.py", before)
    assert check("--fix", "train.py").exit_code == 0
    assert path.read_bytes() == after


def test_fix_keeps_file_permissions() -> None:
    path = write("train.py", b"y = x.cuda()\n")
    path.chmod(0o750)
    assert check("--fix", "train.py").exit_code == 0
    assert path.stat().st_mode & 0o777 == 0o750
    assert [p.name for p in Path.cwd().iterdir()] == ["train.py"], "no temporary file is left behind"


def test_a_fix_that_breaks_the_parse_is_left_out() -> None:
    path = write("train.py", b"a = v.cuda()\ny = x.breaks()\nz = w.cuda()\n")
    result = check("--fix", "train.py")
    assert path.read_bytes() == b'a = v.to("cuda")\ny = x.breaks()\nz = w.to("cuda")\n'
    assert "train.py:2:5: TL982" in result.output
    assert "Found 1 finding (1 error) in 1 of 1 file checked (2 fixed)." in result.output
    assert result.exit_code == 1


@pytest.mark.parametrize(
    "source, args",
    [
        (b"y = x.cuda()  # noqa: TL980\n", []),
        (b"y = x.cuda()  # torchlint: disable=toy-cuda\n", []),
        (b"y = x.cuda()\n", ["--ignore", "TL980"]),
    ],
    ids=["noqa", "disable", "ignored"],
)
def test_suppressed_or_ignored_findings_are_not_fixed(source: bytes, args: list[str]) -> None:
    path = write("train.py", source)
    result = check("--fix", *args, "train.py")
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == source


def test_fix_only_touches_files_with_fixes() -> None:
    fixable = write("a.py", b"y = x.cuda()\n")
    other = write("b.py", b"b = x.cpu()\n")
    before = os.stat(other).st_mtime_ns
    result = check("--fix", ".")
    assert fixable.read_bytes() == b'y = x.to("cuda")\n'
    assert os.stat(other).st_mtime_ns == before
    assert "b.py:1:5: TL981" in result.output
    assert "Found 1 finding (1 error) in 1 of 2 files checked (1 fixed)." in result.output


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "junit"])
def test_fix_reports_the_remaining_findings_in_any_format(fmt: str) -> None:
    write("train.py", b"y = x.cuda()\nb = x.cpu()\n")
    result = check("--fix", "--format", fmt, "train.py")
    assert result.exit_code == 1
    reported = result.stdout
    if fmt == "sarif":
        reported = " ".join(r["ruleId"] for r in json.loads(reported)["runs"][0]["results"])
    assert "TL981" in reported and "TL980" not in reported


def test_a_file_that_cannot_be_written_is_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    path = write("train.py", b"y = x.cuda()\n")

    def refuse(src: str, dst: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("torchlint.sources.os.replace", refuse)
    result = check("--fix", "train.py")
    assert result.exit_code == 1
    assert "torchlint: train.py: cannot write the fixed file: Permission denied" in result.stderr
    assert "train.py:1:5: TL980" in result.stdout, "the finding is still reported"
    assert path.read_bytes() == b"y = x.cuda()\n"
    assert [p.name for p in Path.cwd().iterdir()] == ["train.py"]
