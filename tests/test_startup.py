"""Start-up of a one-file check: only what the run needs is imported. The rules are
imported when a file passes their triggers (from the generated index, which must be
current); the probe command, the language server, pygls and the flake8 plugin only
when used. Times are measured in bench/startup.py, not here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_formats import BUGGY

from torchlint.config import Config
from torchlint.launch import runs_without_collector
from torchlint.lazy_rules import LazyRule, index_path, index_source
from torchlint.registry import all_rules

IMPORTED = """
import json, sys
from torchlint.cli import exit_status
sys.argv = ["torchlint", *sys.argv[1:]]
exit_status()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def modules_after(cwd: Path, *args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", IMPORTED, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_the_trigger_index_is_current() -> None:
    assert index_path().read_text(encoding="utf-8") == index_source(all_rules()), (
        "rules/_triggers.py is out of date: run `python -m torchlint.lazy_rules`"
    )


def test_a_check_imports_only_the_rules_its_file_triggers(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(BUGGY)
    loaded = modules_after(tmp_path, "check", "--isolated", "--no-cache", "train.py")
    rules = {m.rsplit(".", 1)[-1] for m in loaded if m.startswith("torchlint.rules.tl")}
    expected = {rule.__module__.rsplit(".", 1)[-1] for rule in all_rules() if rule.triggered_by(BUGGY)}
    assert rules == expected and 0 < len(rules) < len(all_rules())
    for unwanted in ("torchlint.probe_cli", "torchlint.server", "pygls", "lsprotocol", "torchlint.flake8_plugin", "flake8"):
        assert unwanted not in loaded, unwanted


def test_a_file_that_triggers_nothing_imports_no_rule_and_no_libcst(tmp_path: Path) -> None:
    (tmp_path / "util.py").write_text("def add(a, b):\n    return a + b\n")
    loaded = modules_after(tmp_path, "check", "--isolated", "--no-cache", "util.py")
    assert "libcst" not in loaded and not any(m.startswith("torchlint.rules.tl") for m in loaded)
    assert "torchlint.rules._analysis" not in loaded


def test_a_cached_check_imports_no_libcst_and_no_openssl(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(BUGGY)
    first = modules_after(tmp_path, "check", "--isolated", "train.py")
    again = modules_after(tmp_path, "check", "--isolated", "train.py")
    assert "libcst" in first and "libcst" not in again
    for unwanted in ("hashlib", "_hashlib"):  # BLAKE2b comes from `_blake2`, without loading libcrypto
        assert unwanted not in first and unwanted not in again, unwanted


TRAINER = """
from helpers import clear

def train(model, loader, optimizer):
    for x, y in loader:
        clear(model)
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
"""


def test_a_rerun_after_editing_a_helper_summarises_it_without_libcst(tmp_path: Path) -> None:
    # The helper passes no rule's triggers, so its own check parses nothing; the trainer's
    # cached result depends on the helper's `clear`, so the edited helper is summarised
    # again (with `ast`) to validate it, and that must not import LibCST.
    (tmp_path / "train.py").write_text(TRAINER)
    helpers = tmp_path / "helpers.py"
    helpers.write_text("def clear(model):\n    model.zero_grad()\n")
    first = modules_after(tmp_path, "check", "--isolated", ".")
    helpers.write_text("def clear(model):\n    model.zero_grad()\n\n\ndef unrelated():\n    return 1\n")
    again = modules_after(tmp_path, "check", "--isolated", ".")
    assert "libcst" in first and "torchlint.rules._summarize" in again
    assert "libcst" not in again and "torchlint.rules._analysis" not in again


def test_the_probe_command_still_works_when_asked_for(tmp_path: Path) -> None:
    assert "torchlint.probe_cli" in modules_after(tmp_path, "probe", "--help")
    done = subprocess.run([sys.executable, "-m", "torchlint", "--help"], capture_output=True, text=True, timeout=60)
    assert "probe" in done.stdout and "server" in done.stdout


def test_a_lazy_rule_behaves_as_its_rule() -> None:
    from torchlint.api import check_source, enabled_rules

    rules = enabled_rules(Config(select=("TL001",)))
    (rule,) = rules
    assert isinstance(rule, LazyRule) and (rule.CODE, rule.NAME) == ("TL001", "missing-zero-grad")
    assert rule.triggered_by(BUGGY) and not rule.triggered_by("x = 1\n")
    (found,) = check_source(BUGGY, "t.py", Config(select=("TL001",)))
    assert found.code == "TL001" and found.severity == rule.SEVERITY


def test_a_rule_missing_from_the_index_is_imported_up_front() -> None:
    rule = LazyRule("TL001", "missing-zero-grad", None)
    assert rule.triggered_by(BUGGY) and repr(rule).endswith("loaded)")


COLLECTOR_AT_EXIT = """
import atexit, gc, sys
sys.argv = ["torchlint", *sys.argv[1:]]
atexit.register(lambda: print("collector enabled:", gc.isenabled(), file=sys.stderr))
from torchlint.launch import run
run()
"""


@pytest.mark.parametrize(
    "args, enabled",
    [(("check", "--isolated", "--no-cache", "train.py"), False), (("rules",), True), (("--version",), True)],
)
def test_only_a_check_runs_without_the_cyclic_collector(tmp_path: Path, args: tuple[str, ...], enabled: bool) -> None:
    (tmp_path / "train.py").write_text(BUGGY)
    done = subprocess.run(
        [sys.executable, "-c", COLLECTOR_AT_EXIT, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert f"collector enabled: {enabled}" in done.stderr
    assert done.returncode == (1 if args[0] == "check" else 0)  # the command itself ran


@pytest.mark.parametrize(
    "args, without",
    [
        (["check", "src"], True),
        (["--no-color", "check"], True),
        (["server"], False),
        (["probe", "--all"], False),
        (["explain", "check"], False),
        ([], False),
    ],
)
def test_the_command_decides_the_collector(args: list[str], without: bool) -> None:
    assert runs_without_collector(args) is without
