"""bench/speed.py refuses a comparison in which a command checked no file (Fixit skips
what an enclosing repository's .gitignore lists, and was once timed checking nothing)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SPEED = Path(__file__).resolve().parent.parent / "bench" / "speed.py"
_spec = importlib.util.spec_from_file_location("bench_speed", SPEED)
assert _spec is not None and _spec.loader is not None
speed = importlib.util.module_from_spec(_spec)
sys.modules["bench_speed"] = speed  # dataclasses look their module up there
_spec.loader.exec_module(speed)


@pytest.mark.parametrize(
    "output, checked",
    [
        # Fixit 2.2.1 on files its .gitignore handling skipped, on clean files, on findings.
        ("🧼 0 files clean 🧼\n", 0),
        ("🧼 89 files clean 🧼\n", 89),
        ("x.py@46:18 UseFstring: ...\n🛠️  1 file checked, 1 file with errors, 1 auto-fix available 🛠️\n", 1),
        # TorchFix 0.7.0.
        ("x.py:3:1: TOR101 ...\nFinished checking 88 files.\n", 88),
        # torchlint's summaries and the bare parse loop.
        ("All checks passed (0 files checked).\n", 0),
        ("3  TL017  dataloader-starves-gpu\n\nFound 12 findings in 12 of 93 files checked.\n", 93),
        ("parsed 89 files\n", 89),
        ("Traceback (most recent call last):\n  ...\n", None),
    ],
)
def test_files_checked_reads_each_tools_summary(output: str, checked: int | None) -> None:
    assert speed.files_checked(output) == checked


def run(name: str, checked: int | None, last: str = "") -> object:
    return speed.Run(name, name, 1.0, 1.0, 10.0, 10.0, 0, checked, last)


def test_a_tool_that_checked_nothing_is_refused() -> None:
    runs = [run("bare loop", 89), run("fixit lint", 0, "🧼 0 files clean 🧼"), run("torchfix", None, "boom")]
    reasons = speed.refusals(runs)
    assert len(reasons) == 2
    assert reasons[0].startswith("fixit lint checked no file") and ".gitignore" in reasons[0]
    assert "torchfix did not say how many files it checked" in reasons[1]
    assert speed.refusals([run("bare loop", 89), run("fixit lint", 90)]) == []


def test_measured_commands_may_write_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Else torchlint would be timed compiling its own modules, LibCST never (its
    # installation wrote its bytecode).
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    probe = [sys.executable, "-c", "import sys; print('parsed', int(sys.dont_write_bytecode), 'files')"]
    measured = speed.measure("probe", probe, tmp_path)
    assert measured.checked == 0 and measured.returncode == 0


def bench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SPEED), *args, "--no-tools"], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_benchmark_refuses_a_folder_without_files(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = bench(str(tmp_path / "empty"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refusing the comparison" in done.stderr and "checked no file" in done.stderr
    assert "| run |" not in done.stdout


def test_the_benchmark_table_says_how_many_files_each_run_checked(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    for i in range(3):
        (tmp_path / "code" / f"m{i}.py").write_text(f"import torch\nx{i} = torch.zeros(3).view(3)\n")
    done = bench(str(tmp_path / "code"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "files checked" not in line]
    # The bare loop, the cold runs, the cached re-run and the two re-runs after an edit.
    assert len(rows) == 6 and all(row.split("|")[2].strip() == "3" for row in rows), done.stdout


SLOWDOWN = Path(__file__).resolve().parent.parent / "bench" / "simcuda_slowdown.py"
_slowdown_spec = importlib.util.spec_from_file_location("bench_simcuda_slowdown", SLOWDOWN)
assert _slowdown_spec is not None and _slowdown_spec.loader is not None
slowdown = importlib.util.module_from_spec(_slowdown_spec)
_slowdown_spec.loader.exec_module(slowdown)


def test_the_slowdown_baseline_is_the_revisions_own_simulator(tmp_path: Path) -> None:
    """`simcuda_slowdown.py --baseline REV` imports REV's files, laid out as the installed
    package (torchlint.rules from rules/, the simulator from runtime_probe/simcuda/)."""
    package = slowdown.baseline_package("HEAD", tmp_path)
    code = "import torchlint.runtime_probe.simcuda.tensor as t, torchlint.rules as r; print(t.__file__); print(r.__file__)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=package, env={"PYTHONPATH": str(package)})
    assert run.returncode == 0, run.stderr
    simulator, rules = run.stdout.split()
    assert simulator == str(package / "torchlint" / "runtime_probe" / "simcuda" / "tensor.py")
    assert rules == str(package / "torchlint" / "rules" / "__init__.py")
