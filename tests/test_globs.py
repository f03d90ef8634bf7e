"""The one path-pattern matcher (torchlint.globs) and every configuration key that uses it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from torchlint.cli import main
from torchlint.config import Config, ProbeScript, ProbeSettings
from torchlint.globs import PatternError, check_pattern, compile_pattern, last_match


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        # `*` and `?` stay within one path component.
        ("*.py", "a.py", True),
        ("*.py", "pkg/a.py", True),  # no slash: a name at any depth
        ("*.py", "a.pyc", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/sub/a.py", False),
        ("src/*.py", "pkg/src/a.py", False),  # a slash anchors to the base
        ("/a.py", "a.py", True),
        ("/a.py", "x/a.py", False),
        ("./a.py", "a.py", True),
        ("a?.py", "ab.py", True),
        ("a?.py", "a/.py", False),
        ("a?.py", "abc.py", False),
        # `**`
        ("**/gen", "gen", True),
        ("**/gen", "x/y/gen", True),
        ("a/**/b.py", "a/b.py", True),
        ("a/**/b.py", "a/x/y/b.py", True),
        ("a/**/b.py", "ab.py", False),
        ("a/**", "a/x/y.py", True),
        ("a/**", "a", False),
        ("a**b", "axxb", True),  # not beside slashes: a plain `*`
        ("a**b", "ax/xb", False),
        ("**/*_test.py", "x/y_test.py", True),
        ("**/*_test.py", "y_test.py", True),
        # classes
        ("f[0-9].py", "f3.py", True),
        ("f[0-9].py", "fa.py", False),
        ("f[!0-9].py", "fa.py", True),
        ("f[!0-9].py", "f3.py", False),
        ("f[^0-9].py", "fa.py", True),
        ("f[]x].py", "f].py", True),
        ("f[/].py", "f/.py", False),
        ("f[.py", "f[.py", True),  # an unclosed `[` is literal
        ("f[-].py", "f-.py", True),
        # braces
        ("**/{tests,docs}/*", "tests/a.py", True),
        ("**/{tests,docs}/*", "pkg/docs/a.py", True),
        ("**/{tests,docs}/*", "pkg/src/a.py", False),
        ("**/{tests,docs}/*", "testsdocs/a.py", False),
        ("{a,b}.py", "a.py", True),
        ("{a,b}.py", "c.py", False),
        ("{a,b{c,d}}.py", "bd.py", True),
        ("{a,b{c,d}}.py", "b.py", False),
        ("{*.py,*.ipynb}", "x/nb.ipynb", True),
        ("src/{x,y/z}.py", "src/y/z.py", True),
        # escapes and special characters
        ("\\*.py", "*.py", True),
        ("\\*.py", "a.py", False),
        ("a+b.py", "a+b.py", True),
        ("a(b).py", "a(b).py", True),
    ],
)
def test_pattern_matches_a_path(pattern: str, path: str, expected: bool) -> None:
    compiled = compile_pattern(pattern)
    assert compiled is not None
    assert compiled.matches(path) is expected


@pytest.mark.parametrize(
    "pattern, path, is_dir, expected",
    [
        ("docs/", "docs", True, True),
        ("docs/", "docs", False, False),
        ("build", "build", True, True),
        ("build", "build", False, True),
    ],
)
def test_trailing_slash_matches_folders_only(pattern: str, path: str, is_dir: bool, expected: bool) -> None:
    compiled = compile_pattern(pattern)
    assert compiled is not None and compiled.matches(path, is_dir) is expected


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("tests", "tests/unit/test_a.py", True),
        ("docs/", "docs/conf.py", True),
        ("docs/", "src/docs.py", False),
        ("**/{tests,docs}/*", "tests/unit/test_a.py", True),  # tests/unit is matched
        ("src/legacy", "src/legacy/x/y.py", True),
        ("src/legacy", "other/src/legacy/y.py", False),
        ("*.py", "pkg/x.txt", False),
    ],
)
def test_a_pattern_that_matches_a_folder_covers_what_is_inside(pattern: str, path: str, expected: bool) -> None:
    compiled = compile_pattern(pattern)
    assert compiled is not None and compiled.covers(path) is expected


def test_blank_lines_and_comments_are_no_patterns() -> None:
    assert compile_pattern("") is None and compile_pattern("   ") is None and compile_pattern("# note") is None
    escaped = compile_pattern("\\#file")
    assert escaped is not None and escaped.matches("#file")


def test_negation_last_match_wins() -> None:
    patterns = [p for p in map(compile_pattern, ["*.py", "!keep.py"]) if p is not None]
    assert last_match(patterns, "drop.py", False) is True
    assert last_match(patterns, "keep.py", False) is False


def test_unpaired_braces_are_an_error_in_the_configuration_and_literal_in_gitignore() -> None:
    with pytest.raises(PatternError, match="unclosed"):
        check_pattern("**/{tests,docs/*")
    literal = compile_pattern("odd{name")
    assert literal is not None and literal.matches("odd{name")


def test_per_file_ignores_use_the_matcher() -> None:
    config = Config(per_file_ignores=(("**/{tests,docs}/*", ("TL004",)), ("!src/**", ("TL017",))))
    assert config.ignored_for("pkg/tests/test_a.py") == ("TL004", "TL017")
    assert config.ignored_for("src/model.py") == ()
    assert config.ignored_for("docs/conf.py") == ("TL004", "TL017")


def test_probe_scripts_use_the_matcher() -> None:
    probe = ProbeSettings(scripts=(ProbeScript("{train,finetune}/*.py", args=("-q",)),))
    assert probe.for_script("train/run.py") is not None and probe.for_script("finetune/run.py") is not None
    assert probe.for_script("eval/run.py") is None


BUGGY = textwrap.dedent(
    """
    for x, y in loader:
        loss_fn(model(x), y).backward()
        optimizer.step()
    """
).lstrip()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("src/train.py", "tests/test_train.py", "pkg/docs/example.py", "pkg/tests/unit/test_x.py"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(BUGGY)
    monkeypatch.chdir(tmp_path / "src")  # patterns are relative to the configuration file
    return tmp_path


def reported(project: Path, config: str) -> set[str]:
    (project / "pyproject.toml").write_text(textwrap.dedent(config))
    result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", ".."])
    assert result.exit_code in (0, 1), result.output
    return {Path(f["filename"]).resolve().relative_to(project.resolve()).as_posix() for f in json.loads(result.stdout)}


def test_braces_and_double_stars_in_per_file_ignores_from_the_command_line(project: Path) -> None:
    found = reported(project, '[tool.torchlint]\nper-file-ignores = { "**/{tests,docs}/*" = ["TL001"] }\n')
    assert found == {"src/train.py"}


def test_braces_and_double_stars_in_exclude_and_extend_exclude(project: Path) -> None:
    found = reported(project, '[tool.torchlint]\nextend-exclude = ["**/{tests,docs}/*"]\n')
    assert found == {"src/train.py"}
    found = reported(project, '[tool.torchlint]\nexclude = ["{src,pkg}"]\n')
    assert found == {"tests/test_train.py"}


def test_an_unclosed_brace_in_the_configuration_is_an_error_naming_the_key(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.torchlint]\nper-file-ignores = { "**/{tests/*" = ["TL001"] }\n')
    result = CliRunner().invoke(main, ["check", ".."])
    assert result.exit_code == 2
    assert "tool.torchlint.per-file-ignores: unclosed '{'" in result.stderr


TREE_FILES = (
    "a.py", "f1.py", "fx.py", "x.py", "build.py", "a/a.py", "a/b/c.py", "a/b/d.txt", "build/x/y.py",
    "src/build/z.py", "src/a.py", "b/e.py", "docs/conf.py", "docs/api/index.py",
)
GIT_PATTERNS = (
    "*.py", "build/", "build", "/a.py", "a.py", "a/*.py", "a/**/c.py", "**/b", "b", "a/**", "f[0-9].py",
    "f[!0-9].py", "?.py", "a/b", "**/b/*.py", "*", "a*", "src/build", "docs/**/*.py", "**/build/**", "*/a.py",
    "docs/", "d*/", "[ab]", "**/*.txt",
)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_matcher_agrees_with_git_check_ignore(tmp_path: Path) -> None:
    # git itself is the oracle for gitignore syntax (braces aside, which git lacks):
    # each pattern alone in a .gitignore, every file and folder of a small tree.
    for name in TREE_FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    folders = sorted({str(Path(name).parent.as_posix()) for name in TREE_FILES} - {"."})
    folders = sorted({"/".join(f.split("/")[:i]) for f in folders for i in range(1, f.count("/") + 2)})
    paths = [*TREE_FILES, *folders]
    # Only the test's .gitignore counts: no global or system settings, no user excludes file.
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True, env=env)
    disagreements = []
    for text in GIT_PATTERNS:
        (tmp_path / ".gitignore").write_text(text + "\n")
        done = subprocess.run(
            ["git", "-c", f"core.excludesFile={os.devnull}", "check-ignore", "--stdin", "-v", "-n"],
            cwd=tmp_path,
            env=env,
            input="\n".join(paths) + "\n",
            capture_output=True,
            text=True,
        )
        ignored_by_git = {line.split("\t")[1] for line in done.stdout.splitlines() if not line.startswith("::")}
        pattern = compile_pattern(text)
        assert pattern is not None
        for path in paths:
            ours = pattern.covers(path, is_dir=path in folders)
            if ours != (path in ignored_by_git):
                disagreements.append((text, path, ours))
    assert disagreements == []
