"""The result cache: hits, invalidation, damage, concurrency, and the CLI flags."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import exploding_rule

from torchlint import api
from torchlint.cache import CACHE_DIR_NAME, ResultCache, settings_key
from torchlint.cli import main
from torchlint.config import Config

BUGGY = """\
import torch
for x, y in loader:
    loss = model(x, y)
    loss.backward()
    optimizer.step()
"""
CLEAN = """\
import torch
for x, y in loader:
    optimizer.zero_grad()
    loss = model(x, y)
    loss.backward()
    optimizer.step()
"""


def make_tree(root: Path, files: int = 6) -> None:
    for i in range(files):
        (root / f"train_{i}.py").write_text(BUGGY if i % 2 == 0 else CLEAN)
    (root / "util.py").write_text("def helper():\n    return 1\n")
    (root / "broken.py").write_text("def f(:\n    loss.backward(); opt.step()\n")


def run(root: Path, config: Config | None = None, jobs: int = 1) -> api.CheckResult:
    return api.check_paths(["."], config or Config(), cwd=root, jobs=jobs, cache_dir=root / CACHE_DIR_NAME)


def summary(result: api.CheckResult) -> list[tuple[str, int, str]]:
    return [(f.filename, f.line, f.code) for f in result.findings]


def test_second_run_takes_everything_from_the_cache(tmp_path: Path) -> None:
    make_tree(tmp_path)
    first = run(tmp_path)
    assert first.files_cached == 0
    second = run(tmp_path)
    assert second.files_cached == second.files_checked == 8
    assert second.findings == first.findings
    assert {code for _, _, code in summary(second)} == {"TL001", "TL000"}


def test_a_changed_file_is_checked_again(tmp_path: Path) -> None:
    make_tree(tmp_path)
    run(tmp_path)
    (tmp_path / "train_0.py").write_text(CLEAN)
    result = run(tmp_path)
    assert result.files_cached == 7
    assert "train_0.py" not in {f.filename for f in result.findings}


def test_findings_are_named_as_the_current_run_names_them(tmp_path: Path) -> None:
    make_tree(tmp_path)
    run(tmp_path)
    (tmp_path / "sub").mkdir()
    elsewhere = {"paths": [".."], "config": Config(), "cwd": tmp_path / "sub", "jobs": 1}
    cached = api.check_paths(**elsewhere, cache_dir=tmp_path / CACHE_DIR_NAME)  # type: ignore[arg-type]
    assert cached.files_cached == 8
    assert cached.findings == api.check_paths(**elsewhere).findings  # type: ignore[arg-type]
    assert not any(f.filename.startswith("train") for f in cached.findings)


def test_other_settings_use_another_index(tmp_path: Path) -> None:
    make_tree(tmp_path)
    run(tmp_path)
    ignoring = Config().with_overrides(ignore=("TL001",))
    assert settings_key(ignoring) != settings_key(Config())
    result = run(tmp_path, ignoring)
    assert result.files_cached == 0
    assert result.findings == []  # TL002 alone is not triggered by any file, broken.py included
    assert run(tmp_path).files_cached == 8  # the first settings' index is still there


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{not json",
        b'{"format": 1, "key": "x", "entries": []}',
        b"[1, 2, 3]",
        b"\xff\xfe\x00garbage",
    ],
)
def test_a_damaged_index_is_ignored_and_rewritten(tmp_path: Path, damage: bytes) -> None:
    make_tree(tmp_path)
    expected = run(tmp_path).findings
    (index,) = (tmp_path / CACHE_DIR_NAME).glob("*.json")
    index.write_bytes(damage)
    result = run(tmp_path)
    assert result.findings == expected and result.files_cached == 0
    assert run(tmp_path).files_cached == 8


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    make_tree(tmp_path)
    expected = run(tmp_path).findings
    (index,) = (tmp_path / CACHE_DIR_NAME).glob("*.json")
    data = json.loads(index.read_text())
    for key in data["entries"]:
        if key.endswith("train_0.py"):
            data["entries"][key][1] = [{"line": "not a finding"}]
    index.write_text(json.dumps(data))
    result = run(tmp_path)
    assert result.findings == expected
    assert result.files_cached == 7


def test_internal_errors_and_unreadable_files_are_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, add_rules
) -> None:
    make_tree(tmp_path)
    (tmp_path / "explodes.py").write_text(BUGGY + "# EXPLODE\n")
    add_rules(exploding_rule())
    locked = tmp_path / "train_1.py"
    real_read_bytes = Path.read_bytes

    def read_bytes(path: Path) -> bytes:
        if path.name == locked.name:
            raise PermissionError(13, "Permission denied")
        return real_read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    for _ in range(2):
        result = run(tmp_path)
        assert result.files_cached in (0, 7)
        codes = {(f.filename, f.code) for f in result.findings}
        assert ("explodes.py", "TL999") in codes and ("explodes.py", "TL001") in codes
        assert ("train_1.py", "TL000") in codes
    assert result.files_cached == 7


def test_cache_folder_marks_itself(tmp_path: Path) -> None:
    make_tree(tmp_path)
    run(tmp_path)
    folder = tmp_path / CACHE_DIR_NAME
    assert (folder / ".gitignore").read_text().strip().endswith("*")
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_an_unwritable_cache_does_not_fail_the_run(tmp_path: Path) -> None:
    make_tree(tmp_path)
    (tmp_path / CACHE_DIR_NAME).write_text("a file where the folder should be")
    result = run(tmp_path)
    assert {code for _, _, code in summary(result)} == {"TL001", "TL000"}


def test_concurrent_runs_leave_a_valid_index(tmp_path: Path) -> None:
    make_tree(tmp_path, files=40)
    runs = []
    for i in range(4):
        # Each run changes one file, so that every run writes the index.
        (tmp_path / f"train_{i}.py").write_text(BUGGY + f"# run {i}\n")
        runs.append(
            subprocess.Popen(
                [sys.executable, "-m", "torchlint", "check", "-q", "--jobs", "1", "."],
                cwd=tmp_path,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
    for process in runs:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 1, err
    (index,) = (tmp_path / CACHE_DIR_NAME).glob("*.json")
    entries = json.loads(index.read_text())["entries"]
    assert len(entries) == 42
    assert not list((tmp_path / CACHE_DIR_NAME).glob(".tmp-*"))


def test_fully_cached_run_does_not_import_libcst(tmp_path: Path) -> None:
    make_tree(tmp_path)

    def imports() -> str:
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "torchlint", "check", "."],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr
        assert "Found" in done.stdout
        return done.stderr

    assert "libcst" in imports()
    assert "libcst" not in imports()


def test_cli_no_cache_and_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(main, ["check", "--no-cache", "."])
    assert result.exit_code == 1
    assert not (tmp_path / CACHE_DIR_NAME).exists()
    assert runner.invoke(main, ["check", "."]).exit_code == 1
    assert (tmp_path / CACHE_DIR_NAME).is_dir()
    result = runner.invoke(main, ["clean"])
    assert result.exit_code == 0 and "removed" in result.output
    assert not (tmp_path / CACHE_DIR_NAME).exists()
    result = runner.invoke(main, ["clean"])
    assert result.exit_code == 0 and "no cache" in result.output


def test_cache_lives_next_to_the_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "torchlint.toml").write_text('select = ["ALL"]\n')
    (tmp_path / "src").mkdir()
    make_tree(tmp_path / "src")
    monkeypatch.chdir(tmp_path / "src")
    assert CliRunner().invoke(main, ["check", "."]).exit_code == 1
    assert (tmp_path / CACHE_DIR_NAME).is_dir()
    assert not (tmp_path / "src" / CACHE_DIR_NAME).exists()
    assert "removed" in CliRunner().invoke(main, ["clean"]).output
    assert not (tmp_path / CACHE_DIR_NAME).exists()


def test_clean_never_follows_a_symlinked_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("keep")
    work = tmp_path / "work"
    work.mkdir()
    (work / CACHE_DIR_NAME).symlink_to(precious, target_is_directory=True)
    monkeypatch.chdir(work)
    assert CliRunner().invoke(main, ["clean", "--isolated"]).exit_code == 0
    assert (precious / "keep.txt").exists()
    assert not os.path.lexists(work / CACHE_DIR_NAME)


# A run in its own process: opens the index, waits until every run has read it, then writes
# its entries and saves, all at once. `die_while_writing` kills the process by SIGKILL in the
# middle of writing the index, as a crash or an OOM kill would.
CACHE_RUN = """\
import json, os, signal, sys, time
from pathlib import Path
from torchlint.cache import ResultCache
from torchlint.finding import Finding

folder, key, names, ready, go, die_while_writing = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4], sys.argv[5], sys.argv[6] == "1"
cache = ResultCache(Path(folder), key)
Path(ready).touch()
while not os.path.exists(go):
    time.sleep(0.005)
for name in names:
    finding = Finding(name, 0, 1, 1, 1, 2, "TL001", "missing-zero-grad", "written by " + name)
    cache.put(Path(name), "digest-" + name, [finding])
if die_while_writing:
    opened = os.fdopen
    class Dying:
        def __init__(self, out):
            self.out = out
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return False
        def write(self, text):
            self.out.write(text[:100])
            self.out.flush()
            os.kill(os.getpid(), signal.SIGKILL)
    os.fdopen = lambda *args, **options: Dying(opened(*args, **options))
cache.save()
"""


def cache_runs(tmp_path: Path, groups: list[list[Path]], die: list[bool]) -> list[int]:
    """Start one process per group of files together; each saves only after all have read."""
    script = tmp_path / "cache_run.py"
    script.write_text(CACHE_RUN)
    go = tmp_path / "go"
    processes, readies = [], []
    for number, (names, dies) in enumerate(zip(groups, die)):
        ready = tmp_path / f"ready-{number}"
        readies.append(ready)
        argv = [sys.executable, str(script), str(tmp_path / CACHE_DIR_NAME), "k", ",".join(map(str, names))]
        processes.append(subprocess.Popen([*argv, str(ready), str(go), "1" if dies else "0"]))
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in readies) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    return [p.wait(timeout=60) for p in processes]


def test_concurrent_runs_that_read_the_same_index_lose_nothing(tmp_path: Path) -> None:
    groups = [[tmp_path / f"{who}_{i}.py" for i in range(30)] for who in ("first", "second", "third")]
    for path in (p for group in groups for p in group):
        path.write_text("x = 1\n")
    assert cache_runs(tmp_path, groups, [False, False, False]) == [0, 0, 0]
    cache = ResultCache(tmp_path / CACHE_DIR_NAME, "k")
    for path in (p for group in groups for p in group):
        hit = cache.get(path, "digest-" + str(path), "shown.py")
        assert hit is not None
        [finding] = hit.findings
        assert finding.message == f"written by {path}"


def test_a_run_killed_while_writing_leaves_the_index_whole(tmp_path: Path) -> None:
    kept, lost = [tmp_path / "kept.py"], [tmp_path / "lost.py"]
    for path in kept + lost:
        path.write_text("x = 1\n")
    assert cache_runs(tmp_path, [kept], [False]) == [0]
    (tmp_path / "go").unlink()
    assert cache_runs(tmp_path, [lost], [True]) == [-signal.SIGKILL]
    folder = tmp_path / CACHE_DIR_NAME
    assert json.loads((folder / "k.json").read_text())["entries"].keys() == {str(kept[0])}
    cache = ResultCache(folder, "k")
    assert cache.get(kept[0], f"digest-{kept[0]}", "kept.py") is not None
    assert cache.get(lost[0], f"digest-{lost[0]}", "lost.py") is None
    # The lock died with the process: the next run saves at once.
    cache.put(lost[0], "digest-again", [])
    started = time.monotonic()
    cache.save()
    assert time.monotonic() - started < 5
    assert json.loads((folder / "k.json").read_text())["entries"].keys() == {str(kept[0]), str(lost[0])}


def test_two_check_runs_at_once_on_different_folders_share_one_index(tmp_path: Path) -> None:
    for half in ("a", "b"):
        (tmp_path / half).mkdir()
        make_tree(tmp_path / half, files=20)
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "torchlint", "check", "-q", "--jobs", "1", half],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for half in ("a", "b")
    ]
    for process in runs:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 1, err
    (index,) = (tmp_path / CACHE_DIR_NAME).glob("*.json")
    entries = json.loads(index.read_text())["entries"]
    assert {Path(name).parent.name for name in entries} == {"a", "b"} and len(entries) == 44
