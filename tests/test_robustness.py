"""The checker never raises and never loses a run, whatever the input.

Inputs that could crash the process are checked in a subprocess, so that a crash fails
the test instead of killing the test run.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import hypothesmith
import pytest
from click.testing import CliRunner
from conftest import FIXTURES, exploding_rule
from hypothesis import HealthCheck, given, settings

from torchlint import api, engine
from torchlint.cli import main
from torchlint.config import Config
from torchlint.discovery import UnreadablePathError
from torchlint.registry import all_rules, known_codes

# Words that make every rule's prefilter pass, so that fuzzed programs are parsed and
# every rule runs on them.
ALL_TRIGGERS = "# " + " ".join(word for rule in all_rules() for group in rule.TRIGGERS for word in group) + "\n"


def assert_checks_cleanly(source: str) -> None:
    findings = api.check_source(source + "\n" + ALL_TRIGGERS, "fuzz.py")
    assert all(f.code in known_codes() for f in findings)
    internal = [f.message for f in findings if f.is_internal_error]
    assert not internal


FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@FUZZ
@given(hypothesmith.from_grammar())
def test_fuzz_from_grammar(source: str) -> None:
    assert_checks_cleanly(source)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@FUZZ
@given(hypothesmith.from_node())
def test_fuzz_from_node(source: str) -> None:
    assert_checks_cleanly(source)


LOOP = "for x in loader:\n    loss = model(x)\n    {}\n    loss.backward()\n    optimizer.step()\n"
ELIF = "for x in loader:\n    if a:\n        pass\n{}    loss.backward()\n    optimizer.step()\n"
DEEP_INPUTS = {
    "attribute_chain.py": LOOP.format("y = a" + ".b" * 1500),
    "attribute_chain_too_deep.py": LOOP.format("y = a" + ".b" * 20000),
    "sum_chain.py": LOOP.format("y = " + "+".join(["1"] * 1500)),
    "call_chain.py": LOOP.format("y = f" + "(x)" * 1500),
    "unary_chain_too_deep.py": LOOP.format("y = " + "-" * 50000 + "1"),
    "boolean_chain.py": LOOP.format("y = " + " and ".join(["a"] * 2500)),
    "boolean_chain_too_long.py": LOOP.format("y = " + " or ".join(["a"] * 50000)),
    "mixed_boolean_chain.py": LOOP.format("y = " + " and ".join(f"(b or c{i})" for i in range(2000))),
    "string_concatenation.py": LOOP.format("y = " + " ".join(['"a"'] * 20000)),
    "parentheses.py": LOOP.format("y = " + "(" * 190 + "1" + ")" * 190),
    "parentheses_too_deep.py": LOOP.format("y = " + "(" * 1000 + "1" + ")" * 1000),
    "lists.py": LOOP.format("y = " + "[" * 180 + "]" * 180),
    "indentation.py": "".join("    " * i + "for x in loader:\n" for i in range(99))
    + "    " * 99
    + "loss.backward(); optimizer.step()\n",
    "elif_chain.py": ELIF.format("    elif b:\n        pass\n" * 1500),
    "elif_chain_too_deep.py": ELIF.format("    elif b:\n        pass\n" * 9000),
    # Chains spread over many lines inside brackets, and nesting inside a string's fields.
    "sum_over_lines_too_deep.py": LOOP.format("y = (\n" + "        a +\n" * 20000 + "        a)"),
    "strings_over_lines_too_deep.py": LOOP.format("y = (\n" + '        "a"\n' * 20000 + "    )"),
    "fstring_field_too_deep.py": LOOP.format('y = f"""{' + "(" * 3000 + "1" + ")" * 3000 + '}"""'),
    "brackets_in_strings_and_comments.py": LOOP.format('y = ")" + "(" * 2  # ((\n    z = ' + "(" * 180 + "1" + ")" * 180),
}


def test_deep_nesting_never_crashes(tmp_path: Path) -> None:
    for name, source in DEEP_INPUTS.items():
        (tmp_path / name).write_text(source)
    done = subprocess.run(
        [sys.executable, "-m", "torchlint", "check", "--no-cache", "--jobs", "1", "--format", "json", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    by_file: dict[str, set[str]] = {}
    for finding in json.loads(done.stdout):
        by_file.setdefault(finding["filename"], set()).add(finding["code"])
    for name in DEEP_INPUTS:
        codes = by_file.get(name, set())
        if name.endswith(("_too_deep.py", "_too_long.py")) or name == "string_concatenation.py":
            # Refused with a reason: by CPython's parser, by the guard against LibCST's stack
            # overflow, or (20,000 concatenated strings) by LibCST's parser itself.
            assert codes == {"TL000"}, name
        else:
            assert codes == {"TL001"}, name


def test_only_plainly_shallow_code_skips_the_guarding_parse() -> None:
    from torchlint.engine import plainly_shallow

    assert plainly_shallow(LOOP.format('y = f"{a[(1)]}" + "(" + """[0, 1)"""  # )'))
    assert plainly_shallow(DEEP_INPUTS["parentheses.py"])
    for name, source in DEEP_INPUTS.items():
        if name.endswith(("_too_deep.py", "_too_long.py")):
            assert not plainly_shallow(source), name
    assert not plainly_shallow(LOOP.format("y = (" + "a" + ")" * 1 + ")"))  # unbalanced


class _Finalized:
    """Garbage whose collection runs Python code, which lets another thread take over."""

    def __del__(self) -> None:
        pass


def test_threads_of_one_process_check_and_probe_at_once() -> None:
    # CPython 3.11 shares the AST constructor's recursion counter and the recursion limit
    # between threads: without the engine's lock, two threads parsing at once fail with
    # "AST constructor recursion depth mismatch" (a CI run of the probe tests did).
    from torchlint.runtime_probe.api import is_program
    from torchlint.runtime_probe.statuses import assign

    not_shallow = LOOP.format("y = [" + ", ".join(["x"] * 1000) + "]")  # a long line
    assert not engine.plainly_shallow(not_shallow)
    static = api.check_source(not_shallow, "train.py")
    assert [f.code for f in static] == ["TL001"]
    script = (FIXTURES / "tl009_missing_eval_mode.py").read_text()

    def work(_: int) -> list[tuple[bool, int, bool]]:
        rounds = []
        for _ in range(15):
            garbage = [_Finalized() for _ in range(200)]
            for item in garbage:
                item.cycle = item  # type: ignore[attr-defined]
            del garbage
            checked = api.check_source(not_shallow, "train.py") == static
            rounds.append((checked, len(assign(static, [], "train.py", script)), is_program(script)))
        return rounds

    with ThreadPoolExecutor(max_workers=4) as pool:
        rounds = [r for thread in pool.map(work, range(4)) for r in thread]
    assert rounds == [(True, 1, True)] * 60


def test_ten_megabyte_files(tmp_path: Path) -> None:
    block = '"""' + "A long docstring line of data.\n" * 1000 + '"""\n'
    docs = "import torch\n" + block * (10_500_000 // len(block)) + LOOP.format("pass")
    assert len(docs) > 10_000_000
    (tmp_path / "big_docstrings.py").write_text(docs)
    (tmp_path / "big_untriggered.py").write_text("x = 1  # nothing to see\n" * 450_000)
    result = api.check_paths(["."], Config(), cwd=tmp_path, jobs=1)
    # Over the default limit: said clearly, once; the untriggered file costs nothing.
    assert [(f.filename, f.code, f.severity.value) for f in result.findings] == [("big_docstrings.py", "TL998", "info")]
    assert f"max-file-size = {len(docs)}" in result.findings[0].message
    raised = Config(max_file_size=16_000_000)
    result = api.check_paths(["big_docstrings.py"], raised, cwd=tmp_path, jobs=1)
    assert [(f.line, f.code) for f in result.findings] == [(docs.count("\n"), "TL001")]  # at `optimizer.step()`


def test_thousands_of_tiny_files(tmp_path: Path) -> None:
    for i in range(3000):
        folder = tmp_path / f"pkg{i // 100}"
        folder.mkdir(exist_ok=True)
        text = LOOP.format("pass") if i % 500 == 0 else f"VALUE_{i} = {i}  # a tiny module of constants and words\n"
        (folder / f"m{i}.py").write_text(text * (1 if i % 500 == 0 else 3))
    serial = api.check_paths(["."], Config(), cwd=tmp_path, jobs=1)
    parallel = api.check_paths(["."], Config(), cwd=tmp_path, jobs=2, cache_dir=tmp_path / ".cache")
    assert serial.files_checked == parallel.files_checked == 3000
    assert serial.findings == parallel.findings
    assert len(serial.findings) == 6
    assert api.check_paths(["."], Config(), cwd=tmp_path, jobs=2, cache_dir=tmp_path / ".cache").files_cached == 3000


def test_symlink_loops(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(LOOP.format("pass"))
    (tmp_path / "pkg" / "self").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg" / "up").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    result = api.check_paths(["."], Config(), cwd=tmp_path, jobs=1)
    assert [(f.filename, f.code) for f in result.findings] == [("pkg/train.py", "TL001")]
    # Named explicitly, a looping link is a path that cannot be read: an error naming it.
    with pytest.raises(UnreadablePathError, match="cannot read a.py: a symbolic link loop"):
        api.check_paths(["a.py"], Config(), cwd=tmp_path, jobs=1)


def test_unreadable_file_chmod(tmp_path: Path) -> None:
    locked = tmp_path / "locked.py"
    locked.write_text(LOOP.format("pass"))
    locked.chmod(0)
    try:
        try:
            locked.read_bytes()
            pytest.skip("this user can read files without permission (root)")
        except PermissionError:
            pass
        result = api.check_paths(["."], Config(), cwd=tmp_path, jobs=1, cache_dir=tmp_path / ".cache")
        assert [(f.filename, f.code) for f in result.findings] == [("locked.py", "TL000")]
        assert "permission denied" in result.findings[0].message
    finally:
        locked.chmod(0o644)


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same, for any user (root reads files whatever their mode)."""
    (tmp_path / "locked.py").write_text(LOOP.format("pass"))
    (tmp_path / "open.py").write_text(LOOP.format("pass"))
    real_read_bytes = Path.read_bytes

    def read_bytes(path: Path) -> bytes:
        if path.name == "locked.py":
            raise PermissionError(13, "Permission denied")
        return real_read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = api.check_paths(["."], Config(), cwd=tmp_path, jobs=1, cache_dir=tmp_path / ".cache")
    assert [(f.filename, f.code) for f in result.findings] == [("locked.py", "TL000"), ("open.py", "TL001")]
    assert "permission denied" in result.findings[0].message


@pytest.mark.parametrize("cached", [False, True])
def test_files_that_vanish_during_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached: bool) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(LOOP.format("pass"))
    real_discover = api.discover

    def discover_then_delete(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = real_discover(*args, **kwargs)
        (tmp_path / "b.py").unlink()
        return found

    monkeypatch.setattr(api, "discover", discover_then_delete)
    cache_dir = tmp_path / ".cache" if cached else None
    result = api.check_paths(["."], Config(), cwd=tmp_path, jobs=1, cache_dir=cache_dir)
    assert result.files_checked == 3
    assert [(f.filename, f.code) for f in result.findings] == [("a.py", "TL001"), ("c.py", "TL001")]


def test_a_file_that_vanishes_between_lookup_and_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text(LOOP.format("pass"))
    (tmp_path / "b.py").write_text(LOOP.format("pass"))
    real_check_data = api.check_data

    def vanish_first(path, name, data, rules, config, project=None):  # type: ignore[no-untyped-def]
        if name == "b.py" and path.exists():
            path.unlink()
            return real_check_data(path, name, api.read_bytes(path), rules, config, project)
        return real_check_data(path, name, data, rules, config, project)

    monkeypatch.setattr(api, "check_data", vanish_first)
    result = api.check_paths(["."], Config(), cwd=tmp_path, jobs=1, cache_dir=tmp_path / ".cache")
    assert [(f.filename, f.code) for f in result.findings] == [("a.py", "TL001")]


def test_a_rule_that_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, add_rules) -> None:
    (tmp_path / "train.py").write_text(LOOP.format("pass") + "# EXPLODE\n")
    (tmp_path / "other.py").write_text(LOOP.format("pass"))
    add_rules(exploding_rule())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", "-o", "report.json", "."])
    assert result.exit_code == 2
    findings = json.loads((tmp_path / "report.json").read_text())
    assert sorted((f["filename"], f["code"]) for f in findings) == [
        ("other.py", "TL001"),
        ("train.py", "TL001"),  # the other rules' findings for the file are kept
        ("train.py", "TL999"),
    ]
    (internal,) = [f for f in findings if f["code"] == "TL999"]
    assert "TL990" in internal["message"] and "ValueError: boom" in internal["message"]
    assert "\n" not in internal["message"]
    assert "internal error in train.py" in result.output


def test_a_file_that_kills_its_worker(tmp_path: Path) -> None:
    """A rule that segfaults the process on one file: that file gets TL999, the run goes on.
    Runs in a subprocess with a plugin rule, so that nothing here can crash pytest."""
    for i in range(40):
        (tmp_path / f"train_{i}.py").write_text(LOOP.format("pass") + "x = 1\n" * 2000)
    (tmp_path / "train_7.py").write_text(LOOP.format("pass") + "# CRASH\n" + "x = 1\n" * 2000)
    script = """
import faulthandler, json, os, signal, sys
from pathlib import Path
from torchlint import api
from torchlint.rule import Rule

class Crasher(Rule):
    CODE, NAME, SUMMARY, TRIGGERS = "TL991", "crasher", "Kills the process", (("CRASH",),)

    def check(self, ctx):
        faulthandler.disable()
        os.kill(os.getpid(), signal.SIGSEGV)

real = api.enabled_rules
api.enabled_rules = lambda config: [*real(config), Crasher()]
result = api.check_paths(["."], cwd=Path.cwd(), jobs=2)
print(json.dumps([[f.filename, f.code, f.message] for f in result.findings]))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    findings = json.loads(done.stdout)
    assert sorted((name, code) for name, code, _ in findings) == sorted(
        [(f"train_{i}.py", "TL001") for i in range(40) if i != 7] + [("train_7.py", "TL999")]
    )
    (message,) = [m for _, code, m in findings if code == "TL999"]
    assert "SIGSEGV" in message


def _installed_torch() -> Path | None:
    spec = importlib.util.find_spec("torch")  # located, never imported
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["torch", "stdlib"])
def test_real_code_bases(corpus: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rule on every file (triggers switched off) of the installed torch package and the
    standard library: no internal error, and TL000 only where CPython cannot parse the file."""
    root = _installed_torch() if corpus == "torch" else Path(sysconfig.get_paths()["stdlib"])
    if root is None:
        pytest.skip("torch is not installed")
    for rule in all_rules():
        monkeypatch.setattr(rule, "TRIGGERS", ())
    result = api.check_paths([str(root)], Config(), jobs=os.cpu_count())
    internal = [f"{f.filename}: {f.message}" for f in result.internal_errors]
    assert not internal, "\n".join(internal[:20])
    unparsable = {f.filename: f.message for f in result.findings if f.code == "TL000"}
    libcst_gaps = {name for name in unparsable if _cpython_parses_file(Path(name))}
    # Where CPython parses what LibCST's parser does not, the finding must say so, and it
    # must be one of LibCST's known gaps: `(name): annotation` targets.
    assert all("LibCST cannot parse" in unparsable[name] for name in libcst_gaps)
    assert {Path(name).relative_to(root).as_posix() for name in libcst_gaps} <= KNOWN_LIBCST_GAPS
    print(
        f"\n{corpus}: {result.files_checked} files, {len(result.findings)} findings, "
        f"{len(unparsable) - len(libcst_gaps)} files that CPython cannot parse either, "
        f"{len(libcst_gaps)} that only LibCST cannot parse"
    )


# Files of the standard library in valid Python that LibCST's parser rejects: both
# annotate a parenthesized name, `(x): int = 1`.
KNOWN_LIBCST_GAPS = {"test/test_grammar.py", "test/typinganndata/ann_module.py"}


def _cpython_parses_file(path: Path) -> bool:
    with engine.recursion_limit(engine.GUARD_RECURSION_LIMIT):
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            return False
    return True
