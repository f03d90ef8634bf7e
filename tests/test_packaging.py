"""The package layout: `rules/` and `runtime_probe/` install under `torchlint.*` only."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_no_top_level_rules_module_is_importable() -> None:
    assert importlib.util.find_spec("rules") is None
    assert importlib.util.find_spec("runtime_probe") is None
    assert importlib.util.find_spec("torchlint.rules") is not None
    assert importlib.util.find_spec("torchlint.runtime_probe") is not None


def test_installed_rules_come_from_the_rules_folder() -> None:
    import torchlint.rules

    assert Path(torchlint.rules.__file__).resolve().parent in (REPO / "rules", Path(torchlint.rules.__file__).parent)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    [built] = out.glob("torchlint-*.whl")
    return built


def test_wheel_file_list(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names}
    assert top_level <= {"torchlint", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    assert "torchlint/rules/tl001_missing_zero_grad.py" in names
    assert "torchlint/rules/_analysis.py" in names
    assert "torchlint/runtime_probe/__init__.py" in names
    assert "torchlint/runtime_probe/simcuda/allocator.py" in names  # simulated CUDA ships in the wheel
    assert "torchlint/report/json.py" in names
    assert not any(name.startswith(("rules/", "runtime_probe/", "tests/", "fixtures/")) for name in names)


def test_wheel_metadata_dependencies(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith("METADATA"))).decode()
    requires = [line for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    runtime = [r for r in requires if "extra ==" not in r]
    assert sorted(r.split(":", 1)[1].strip().split(">")[0].split("=")[0].split("<")[0] for r in runtime) == [
        "click",
        "libcst",
    ]
    assert any("torch" in r and 'extra == "probe"' in r for r in requires)


def test_wheel_console_script(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        entry_points = zf.read(next(n for n in zf.namelist() if n.endswith("entry_points.txt"))).decode()
    assert "torchlint = torchlint.cli:run" in entry_points
