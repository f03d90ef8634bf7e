from __future__ import annotations

from pathlib import Path

from torchlint import Config, Finding, check_paths, check_source

BUGGY = "for x in loader:\n    model(x).backward()\n    optimizer.step()\n"


def test_check_source_returns_findings() -> None:
    [finding] = check_source(BUGGY, "train.py")
    assert isinstance(finding, Finding)
    assert (finding.filename, finding.line, finding.column, finding.code) == ("train.py", 3, 5, "TL001")
    assert finding.to_dict()["name"] == "missing-zero-grad"
    assert Finding.from_dict(finding.to_dict()) == finding


def test_check_source_with_config() -> None:
    assert check_source(BUGGY, config=Config(ignore=("TL001",))) == []


def test_check_paths(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(BUGGY)
    result = check_paths([tmp_path / "a.py"], cwd=tmp_path)
    assert result.files_checked == 1
    assert [f.filename for f in result.findings] == ["a.py"]


def test_static_check_never_imports_torch_or_runs_user_code(tmp_path: Path) -> None:
    import subprocess
    import sys

    marker = tmp_path / "ran"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n" + BUGGY)
    code = (
        "import sys; from torchlint import check_paths; "
        f"r = check_paths([{str(tmp_path)!r}]); "
        "assert 'torch' not in sys.modules, 'torch was imported'; print(len(r.findings))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"
    assert not marker.exists()
