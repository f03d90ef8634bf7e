"""`torchlint probe` on the command line: selection, reports, exit codes, usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import FIXTURES
from probe_support import CPU, DATA, line_of
from test_formats import validate_sarif

from torchlint.cli import main
from torchlint.discovery import display_path

NO_RULES = ["--all", "--ignore", "ALL"]


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["probe", *args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict, ET.Element]:
    folder = tmp_path_factory.mktemp("reports")
    report, junit = folder / "probe.json", folder / "probe.xml"
    scripts = [str(CPU / name) for name in ("crash.py", "missing_zero_grad.py", "best_loss.py")]
    code, output = invoke(*NO_RULES, "--max-steps", "6", "--report", str(report), "--junit", str(junit), *scripts)
    return code, output, json.loads(report.read_text()), ET.parse(junit).getroot()


def test_findings_make_exit_code_one_and_a_crash_does_not_stop_the_rest(reports) -> None:
    code, output, data, _ = reports
    assert code == 1, output
    assert sorted(Path(s["path"]).name for s in data["scripts"]) == ["best_loss.py", "crash.py", "missing_zero_grad.py"]
    at = f"{display_path(CPU / 'crash.py')}:{line_of(CPU / 'crash.py', 'raise')}"
    assert f"crash.py: 2 steps, crashed at {at} with exit status 1 (ValueError: the data ran out)" in output
    assert "Probed 3 scripts: 1 crashed, 2 stopped at the step limit; 1 finding: 1 found." in output


def test_json_report(reports) -> None:
    _, _, data, _ = reports
    scripts = {Path(s["path"]).name: s for s in data["scripts"]}
    crash, missing, best = scripts["crash.py"], scripts["missing_zero_grad.py"], scripts["best_loss.py"]
    assert (crash["returncode"], crash["timed_out"], crash["steps"]) == (1, False, 2)
    assert "ValueError: the data ran out" in crash["crash"]["traceback"]
    assert (missing["returncode"], missing["steps"], len(missing["memory"])) == (0, 6, 6)
    [finding] = missing["findings"]
    assert (finding["code"], finding["status"], finding["line"]) == (
        "TL102",
        "found",
        line_of(CPU / "missing_zero_grad.py", "step"),
    )
    assert finding["evidence"]["steps_carried_over"] == 5 and finding["message"]
    assert best["findings"] == []


def test_junit_report(reports) -> None:
    _, _, _, root = reports
    cases = {Path(case.get("name")).name: case for case in root.iter("testcase")}
    assert cases["crash.py"].find("error") is not None
    assert "TL102" in cases["missing_zero_grad.py"].find("failure").get("message")
    assert cases["best_loss.py"].find("failure") is None and cases["best_loss.py"].find("error") is None


def test_arguments_after_double_dash_go_to_the_script() -> None:
    code, output = invoke(*NO_RULES, str(DATA / "needs_args.py"), "--", "--steps", "3", "--tag", "cli")
    assert code == 0, output
    assert "needs_args.py: 3 steps, exit status 0" in output


def test_arguments_for_several_scripts_are_a_usage_error() -> None:
    code, output = invoke(*NO_RULES, str(CPU / "crash.py"), str(CPU / "lbfgs.py"), "--", "--x")
    assert code == 2 and "arguments after `--` are for one script" in output


def test_nothing_to_probe() -> None:
    code, output = invoke("--ignore", "ALL", str(CPU))
    assert code == 0 and "Nothing to probe" in output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--max-steps", "0", "x.py"], "--max-steps"),
        (["--device", "tpu", "x.py"], "--device"),
        (["does-not-exist.py"], "no such file or folder"),
    ],
)
def test_usage_errors(args: list[str], message: str) -> None:
    code, output = invoke(*args)
    assert code == 2 and message in output


def test_a_missing_torch_is_a_clear_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    code, output = invoke(*NO_RULES, str(CPU / "crash.py"))
    assert code == 2 and "needs PyTorch" in output


def test_cuda_device_required_but_absent() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    code, output = invoke("--device", "cuda", *NO_RULES, str(CPU / "crash.py"))
    assert code == 2 and "no CUDA device" in output


def test_the_command_line_imports_no_torch() -> None:
    check = "import sys, torchlint.cli, torchlint.runtime_probe.api; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", check], cwd="/").returncode == 0


@pytest.fixture(scope="module")
def sarif_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, dict]:
    """One probe of a fixture whose bug the CPU confirms and one whose checks need a GPU."""
    out = tmp_path_factory.mktemp("sarif") / "probe.sarif"
    scripts = [str(FIXTURES / "tl001_zero_grad_once_per_epoch.py"), str(FIXTURES / "tl002_matmul_benchmark.py")]
    result = CliRunner().invoke(main, ["probe", "--device", "cpu", "--max-steps", "6", "--format", "sarif", "-o", str(out), *scripts])
    return result, validate_sarif(out.read_text(encoding="utf-8"))


def test_probe_sarif_lists_confirmed_bugs_and_checks_that_need_a_gpu(sarif_run: tuple[Result, dict]) -> None:
    result, sarif = sarif_run
    assert result.exit_code == 1, result.output
    assert "TL001 [missing-zero-grad] confirmed" in result.stdout, "the text report still shows progress"
    results = sarif["runs"][0]["results"]
    levels = {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r["level"] for r in results}
    assert levels == {("TL001", 28): "error", ("TL002", 20): "note", ("TL002", 30): "note", ("TL002", 42): "note"}
    [confirmed] = [r for r in results if r["ruleId"] == "TL001"]
    assert confirmed["message"]["text"].startswith("confirmed at runtime: ")
    assert "steps" in confirmed["message"]["text"]
    rules = {rule["id"]: rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["TL001"]["helpUri"].endswith("docs/rules/TL001.md")


def test_probe_github_annotations_go_to_stdout_and_progress_to_stderr() -> None:
    path = FIXTURES / "tl001_zero_grad_once_per_epoch.py"
    result = CliRunner().invoke(main, ["probe", "--device", "cpu", "--max-steps", "4", "--format", "github", str(path)])
    assert result.exit_code == 1, result.output
    [line] = result.stdout.splitlines()
    assert line.startswith(f"::error file={display_path(path, Path.cwd())},line=28,")
    assert "title=TL001 missing-zero-grad::confirmed at runtime: " in line
    assert "Probed 1 script" in result.stderr


# A training loop without `zero_grad()` (TL001), behind three ways of failing before it.
TRAIN = """\
import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    loss = model(torch.randn(2, 4)).sum()
    loss.backward()
    opt.step()
"""

def fail_first(folder: Path) -> list[str]:
    """Three scripts with a TL001 that fail before their first step, as real scripts do:
    all three started (two raise, one exits with a usage error)."""
    scripts = {
        "uses_wandb.py": "import wandb_not_installed_here\n" + TRAIN,
        "needs_data_flag.py": "import argparse\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--data', required=True)\nargs = parser.parse_args()\n" + TRAIN,
        "reads_csv.py": "rows = open('train.csv').read().splitlines()\n" + TRAIN,
    }
    for name, text in scripts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in scripts]


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict, ET.Element, Path]:
    folder = tmp_path_factory.mktemp("fail-first")
    report, junit = folder / "probe.json", folder / "probe.xml"
    scripts = fail_first(folder)
    code, output = invoke("--device", "cpu", "--report", str(report), "--junit", str(junit), *scripts)
    return code, output, json.loads(report.read_text()), ET.parse(junit).getroot(), folder


def test_a_script_that_fails_before_its_first_step_is_failed_and_the_probe_exits_one(failed_run) -> None:
    code, output, _, _, folder = failed_run
    assert code == 1, output
    assert "not-reached" not in output and "never ran within the bounds" not in output
    assert "uses_wandb.py:10: TL001 [missing-zero-grad] failed" in output
    assert (
        f"the script crashed at {display_path(folder / 'uses_wandb.py')}:1 before its first step: "
        "ModuleNotFoundError: No module named 'wandb_not_installed_here'" in output
    )
    assert f"uses_wandb.py: 0 steps, crashed at {display_path(folder / 'uses_wandb.py')}:1 with exit status 1" in output
    assert "the script exited with status 2 before its first step: " in output
    assert "error: the following arguments are required: --data" in output
    assert (
        f"the script crashed at {display_path(folder / 'reads_csv.py')}:1 before its first step: "
        "FileNotFoundError: [Errno 2] No such file or directory: 'train.csv'" in output
    )
    assert "failed to start" not in output, "all three started"
    assert "Probed 3 scripts: 2 crashed, 1 exited with an error; 3 findings: 3 failed." in output


def test_json_and_junit_reports_of_scripts_that_fail_before_their_first_step(failed_run) -> None:
    _, _, data, root, folder = failed_run
    scripts = {Path(s["path"]).name: s for s in data["scripts"]}
    assert {name: s["outcome"] for name, s in scripts.items()} == {
        "uses_wandb.py": "crashed",
        "needs_data_flag.py": "exited-with-error",
        "reads_csv.py": "crashed",
    }
    assert scripts["uses_wandb.py"]["crashed_at"] == f"{display_path(folder / 'uses_wandb.py')}:1"
    assert scripts["needs_data_flag.py"]["crashed_at"] is None
    assert [f["status"] for f in scripts["uses_wandb.py"]["findings"]] == ["failed"]
    assert "usage:" in scripts["needs_data_flag.py"]["output_tail"]
    assert scripts["reads_csv.py"]["failure"].endswith("No such file or directory: 'train.csv'")
    cases = {Path(case.get("name")).name: case for case in root.iter("testcase")}
    assert cases["uses_wandb.py"].find("error").get("type") == "ModuleNotFoundError"
    assert cases["uses_wandb.py"].find("error").get("message").startswith("the script crashed at ")
    assert "required: --data" in cases["needs_data_flag.py"].find("error").get("message")


@pytest.mark.parametrize("output_format, expected", [("github", "::warning file="), ("sarif", '"level": "warning"')])
def test_machine_formats_report_a_script_that_fails_before_its_first_step(tmp_path: Path, output_format: str, expected: str) -> None:
    [script, *_] = fail_first(tmp_path)
    result = CliRunner().invoke(main, ["probe", "--device", "cpu", "--format", output_format, script])
    assert result.exit_code == 1, result.output
    assert expected in result.stdout and "No module named 'wandb_not_installed_here'" in result.stdout
    assert f"the script crashed at {display_path(Path(script))}:1 before its first step" in result.stdout


def test_a_script_with_a_syntax_error_failed_to_start(tmp_path: Path) -> None:
    """The command line skips files it cannot parse; the probe's own run says why it
    could not start, in every format."""
    from torchlint.runtime_probe import json_report, junit_report, text_report
    from torchlint.runtime_probe.api import ProbeOptions, ProbeResult, probe_script

    script = tmp_path / "broken.py"
    script.write_text("import torch\nfor step in range(3)\n    pass\n", encoding="utf-8")
    result = probe_script(script, (), None, ProbeOptions(device="cpu", timeout=120.0), cwd=tmp_path)
    assert result.ending.outcome.value == "failed-to-start", result.output_tail
    failure = result.ending.failure()
    assert failure.startswith("the script could not start: SyntaxError: ") and "line 2" in failure
    text = text_report.render(ProbeResult((result,)))
    assert "broken.py: 0 steps, failed to start, exit status 1 (SyntaxError: " in text
    assert f"nothing found: {failure}" in text and "Probed 1 script: 1 failed to start; nothing found." in text
    data = json.loads(json_report.render(ProbeResult((result,))))["scripts"][0]
    assert (data["outcome"], data["failure"], data["crashed_at"], data["crash"]["started"]) == ("failed-to-start", failure, None, False)
    [case] = ET.fromstring(junit_report.render(ProbeResult((result,)))).iter("testcase")
    assert (case.find("error").get("type"), case.find("error").get("message")) == ("SyntaxError", failure)


EVALUATES_AFTER_TEN_STEPS = """\
import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    model.train()
    for step in range(10):
        opt.zero_grad()
        model(torch.randn(2, 4)).sum().backward()
        opt.step()
    model.eval()
    total = 0.0
    for _ in range(3):
        total += model(torch.randn(2, 4)).sum().item()
"""


def test_not_reached_names_the_bound_that_stopped_the_run(tmp_path: Path) -> None:
    script = tmp_path / "evaluates_late.py"
    script.write_text(EVALUATES_AFTER_TEN_STEPS, encoding="utf-8")
    code, output = invoke("--device", "cpu", "--max-steps", "5", str(script))
    assert "evaluates_late.py:15: TL004 [eval-without-no-grad] not-reached" in output, output
    assert "the probe stopped the script at the step limit (5 steps) before this line ran; raise --max-steps" in output
    assert "Probed 1 script: 1 stopped at the step limit; 1 finding: 1 not-reached." in output
    assert code == 0
