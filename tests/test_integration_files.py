"""The pre-commit manifest and the example CI workflows are valid and use real options."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from torchlint.cli import main

yaml = pytest.importorskip("yaml")  # installed with pre-commit (the `test` extra)

BUGGY = "for x, y in loader:\n    model(x).sum().backward()\n    opt.step()\n"


def steps(path: Path) -> list[dict[str, Any]]:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    (job,) = workflow["jobs"].values()
    return list(job["steps"])


def test_pre_commit_manifest(repo: Path) -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    (hook,) = clientlib.load_manifest(str(repo / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "torchlint"
    assert hook["language"] == "python"
    assert set(hook["types_or"]) == {"python", "jupyter"}
    assert shlex.split(hook["entry"])[:2] == ["torchlint", "check"]


def test_lint_workflow_uploads_sarif_and_its_commands_work(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    workflow = steps(repo / "examples" / "ci" / "torchlint-lint.yml")
    uses = [step.get("uses", "") for step in workflow]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    commands = [shlex.split(step["run"]) for step in workflow if step.get("run", "").startswith("torchlint check")]
    assert len(commands) == 2
    monkeypatch.chdir(tmp_path)
    Path("train.py").write_text(BUGGY)
    sarif, annotations = (CliRunner().invoke(main, command[1:]) for command in commands)
    assert sarif.exit_code == 0 and Path("torchlint.sarif").is_file()
    upload = next(step for step in workflow if step.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "torchlint.sarif"
    assert annotations.exit_code == 1 and annotations.stdout.startswith("::error file=train.py,line=3,")


def test_probe_workflow_runs_on_a_self_hosted_gpu_runner(repo: Path) -> None:
    path = repo / "examples" / "ci" / "torchlint-probe-gpu.yml"
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    (job,) = workflow["jobs"].values()
    assert {"self-hosted", "gpu"} <= set(job["runs-on"])
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert "torchlint probe fixtures/ --format sarif --output probe.sarif --report probe.json --junit probe.xml" in runs
    upload = next(step for step in job["steps"] if step.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "probe.sarif"
    assert job["permissions"]["security-events"] == "write"
