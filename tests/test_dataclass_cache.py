"""The cache of the methods that `dataclasses` generates: a class made from cached code is
the class that `dataclasses` makes itself, a cache that cannot be used is passed over,
and the command line reuses what an earlier run compiled."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from test_formats import BUGGY

from torchlint.dataclass_cache import DataclassCodeCache

@pytest.fixture(autouse=True)
def bytecode_may_be_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


METHODS = ("__init__", "__repr__", "__eq__", "__setattr__", "__delattr__", "__hash__")


def make_point() -> type:
    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: "list[str]" = dataclasses.field(default_factory=list)
        label: str = "p"

    return Point


def made(monkeypatch: pytest.MonkeyPatch, cache: DataclassCodeCache | None, factory: Callable[[], type]) -> type:
    with monkeypatch.context() as patch:
        if cache is None:
            patch.delattr(dataclasses, "exec", raising=False)  # the command line may have set it in this process
        else:
            patch.setattr(dataclasses, "exec", cache.exec, raising=False)
        return factory()


def assert_same_class(ours: type, theirs: type) -> None:
    for name in METHODS:
        mine, plain = getattr(ours, name), getattr(theirs, name)
        assert mine.__code__ == plain.__code__, name
        assert mine.__annotations__ == plain.__annotations__, name  # no `from __future__` flags leak in
        assert mine.__defaults__ == plain.__defaults__ and mine.__kwdefaults__ == plain.__kwdefaults__, name


def test_a_class_from_cached_code_is_the_class_dataclasses_makes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    plain = made(monkeypatch, None, make_point)
    first = DataclassCodeCache(tmp_path / "methods.marshal")
    compiled = made(monkeypatch, first, make_point)
    assert first.new > 0
    first.save()
    second = DataclassCodeCache(tmp_path / "methods.marshal")
    reused = made(monkeypatch, second, make_point)
    assert second.new == 0 and second.used  # every method came from the file
    for cls in (compiled, reused):
        assert_same_class(cls, plain)
        point = cls(1, ["a"])
        assert repr(point).endswith("Point(x=1, y=['a'], label='p')") and point == cls(1, ["a"]) and point != cls(2)
        with pytest.raises(dataclasses.FrozenInstanceError):
            point.x = 3  # type: ignore[attr-defined]


def test_a_changed_class_is_compiled_anew(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cache = DataclassCodeCache(tmp_path / "methods.marshal")
    made(monkeypatch, cache, make_point)
    cache.save()

    def other_point() -> type:
        @dataclasses.dataclass(frozen=True)
        class Point:
            x: int
            z: int = 0

        return Point

    again = DataclassCodeCache(tmp_path / "methods.marshal")
    cls: Any = made(monkeypatch, again, other_point)
    assert again.new > 0 and cls(1, z=2).z == 2
    assert_same_class(cls, made(monkeypatch, None, other_point))


@pytest.mark.parametrize(
    "content",
    [b"", b"not marshal", importlib.util.MAGIC_NUMBER + b"\xff\x00junk", b"\x00\x00\r\n" + b"x" * 40],
    ids=["empty", "garbage", "corrupt", "other-interpreter"],
)
def test_an_unusable_cache_file_is_passed_over(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "methods.marshal"
    path.write_bytes(content)
    cache = DataclassCodeCache(path)
    assert_same_class(made(monkeypatch, cache, make_point), made(monkeypatch, None, make_point))
    cache.save()  # replaced by a usable one
    assert DataclassCodeCache(path).stored


def test_nothing_is_written_without_new_code_or_where_bytecode_may_not_be(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "methods.marshal"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    cache = DataclassCodeCache(path)
    made(monkeypatch, cache, make_point)
    cache.save()
    assert not path.exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    cache.save()
    written = path.stat().st_mtime_ns
    unchanged = DataclassCodeCache(path)
    made(monkeypatch, unchanged, make_point)
    unchanged.save()
    assert path.stat().st_mtime_ns == written and not list(tmp_path.glob("*.tmp"))


def test_an_unwritable_cache_fails_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = DataclassCodeCache(blocker / "methods.marshal")  # its folder is a file
    made(monkeypatch, cache, make_point)
    cache.save()
    assert not (blocker / "methods.marshal").exists()


def test_the_command_line_reuses_what_an_earlier_run_compiled(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(BUGGY)
    prefix = tmp_path / "pycache"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPYCACHEPREFIX": str(prefix)}
    command = [sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "train.py"]
    first = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    (stored,) = prefix.rglob("dataclass-methods.*.marshal")
    entries = DataclassCodeCache(stored).stored
    assert len(entries) > 500  # LibCST's node classes among them
    written = stored.stat().st_mtime_ns
    second = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert stored.stat().st_mtime_ns == written  # nothing new to compile: not written again
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout) and "TL001" in first.stdout
