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
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A wheel built as `pip install .` builds one, and everything the build printed."""
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    [wheel] = out.glob("torchlint-*.whl")
    return wheel, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def wheel(built: tuple[Path, str]) -> Path:
    return built[0]


def metadata(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(next(n for n in zf.namelist() if n.endswith("METADATA"))).decode()


def test_the_build_prints_no_deprecation_warning(built: tuple[Path, str]) -> None:
    wheel, output = built
    assert "Deprecat" not in output and "project.license" not in output, output[-3000:]
    assert "License-Expression: MIT" in metadata(wheel).splitlines()


def test_the_probe_extra_brings_torch_and_numpy(wheel: Path) -> None:
    from packaging.requirements import Requirement

    requires = [Requirement(line.split(":", 1)[1]) for line in metadata(wheel).splitlines() if line.startswith("Requires-Dist:")]
    probe = {r.name: r for r in requires if r.marker is not None and r.marker.evaluate({"extra": "probe"})}
    assert set(probe) == {"torch", "numpy"}
    # The test set-up's pin satisfies the extra, and it is the CPU build.
    pins = [Requirement(line) for line in (REPO / "scripts" / "constraints.txt").read_text().splitlines() if line and not line.startswith("#")]
    [torch_pin] = [pin for pin in pins if pin.name == "torch"]
    assert str(torch_pin.specifier) == "==2.13.0" and probe["torch"].specifier.contains("2.13.0")


def test_wheel_file_list(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names}
    assert top_level <= {"torchlint", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    assert "torchlint/rules/tl001_missing_zero_grad.py" in names
    # Every module of the source tree ships, sub-packages included (setuptools lists them by hand).
    for folder, package in (("rules", "torchlint/rules"), ("runtime_probe", "torchlint/runtime_probe")):
        for source in (REPO / folder).rglob("*.py"):
            assert f"{package}/{source.relative_to(REPO / folder).as_posix()}" in names
    assert "torchlint/runtime_probe/__init__.py" in names
    assert "torchlint/runtime_probe/simcuda/allocator.py" in names  # simulated CUDA ships in the wheel
    assert "torchlint/report/json.py" in names
    assert not any(name.startswith(("rules/", "runtime_probe/", "tests/", "fixtures/")) for name in names)


def test_wheel_metadata_dependencies(wheel: Path) -> None:
    meta = metadata(wheel)
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
    assert "torchlint = torchlint.launch:run" in entry_points
