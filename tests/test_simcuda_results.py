"""How simulated CUDA shows in the probe's results: statuses (labelled simulated,
inconclusive, needs-gpu for what simulation cannot answer), every report format, the
command line and the configuration. Pure parts run without torch; one CLI run probes a
script on simulated CUDA."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from probe_support import DATA, line_of, static
from test_formats import validate_sarif

from torchlint.cli import main
from torchlint.config import Config, ConfigError, load_config
from torchlint.runtime_probe import json_report, junit_report, text_report
from torchlint.runtime_probe.annotations import as_findings
from torchlint.runtime_probe.api import ProbeOptions, ProbeResult, ScriptResult, run_spec
from torchlint.runtime_probe.cudamem import MIB, Sample
from torchlint.runtime_probe.protocol import ChildSettings, Event, Frame, RankReport
from torchlint.runtime_probe.runner import RunSpec, _environment
from torchlint.runtime_probe.simcuda import parse_size, wants_cuda
from torchlint.runtime_probe.statuses import ProbedFinding, Status, assign

SIM = DATA.parent / "simcuda"
SCRIPT = SIM / "batch_not_moved.py"
BUG = line_of(SCRIPT, "bug")


def report(events: list[Event], reached: list[int], simulated: bool = True, unsupported: tuple[str, ...] = (), unverified: tuple[str, ...] = ()) -> RankReport:
    return RankReport(0, 100, True, 3, (), tuple(events), tuple(reached), simulated=simulated, unsupported=unsupported, unverified=unverified)


def mismatch() -> Event:
    return Event("TL101", (Frame(str(SCRIPT), BUG),), "an operation mixed tensors on cpu and cuda:0", {"devices": ["cpu", "cuda:0"]})


def probed(findings, reports) -> list[ProbedFinding]:
    return assign(findings, reports, str(SCRIPT), SCRIPT.read_text(encoding="utf-8"))


def test_a_confirmation_on_simulated_cuda_is_labelled_simulated() -> None:
    [finding] = probed([static(SCRIPT, "TL012", "bug")], [report([mismatch()], [BUG])])
    assert finding.status is Status.CONFIRMED and finding.simulated
    assert finding.label == "confirmed (simulated CUDA)" and finding.to_dict()["simulated"] is True
    [real] = probed([static(SCRIPT, "TL012", "bug")], [report([mismatch()], [BUG], simulated=False)])
    assert real.label == "confirmed" and "simulated" not in real.to_dict()


def test_a_runtime_finding_on_simulated_cuda_is_labelled_too() -> None:
    [finding] = probed([], [report([mismatch()], [])])
    assert finding.status is Status.FOUND and finding.label == "found (simulated CUDA)"


@pytest.mark.parametrize("code", ["TL016", "TL017"])
def test_checks_simulation_cannot_answer_stay_needs_gpu(code: str) -> None:
    [finding] = probed([static(SCRIPT, code, "bug")], [report([], [BUG])])
    assert finding.status is Status.NEEDS_GPU and "real GPU" in finding.evidence["reason"]


def test_what_the_simulation_could_not_do_makes_checks_inconclusive_not_passed() -> None:
    reports = [report([], [BUG], unsupported=("torch.compile is not simulated",))]
    findings = probed([static(SCRIPT, "TL012", "bug"), static(SCRIPT, "TL001", "bug")], reports)
    assert {f.code: f.status for f in findings} == {"TL012": Status.INCONCLUSIVE, "TL001": Status.INCONCLUSIVE}
    assert all("torch.compile" in f.evidence["reason"] for f in findings)


def test_unverified_device_mixes_make_only_device_checks_inconclusive() -> None:
    reports = [report([], [BUG], unverified=("aten::masked_fill.Tensor",))]
    findings = {f.code: f for f in probed([static(SCRIPT, "TL012", "bug"), static(SCRIPT, "TL001", "bug")], reports)}
    assert {code: f.status for code, f in findings.items()} == {"TL012": Status.INCONCLUSIVE, "TL001": Status.NOT_REPRODUCED}
    assert "aten::masked_fill.Tensor" in findings["TL012"].evidence["reason"]


def result_of(findings: list[ProbedFinding], simulated: bool = True) -> ProbeResult:
    script = ScriptResult(
        path="batch_not_moved.py", returncode=1, timed_out=False, duration=1.0, steps=0, memory=(),
        findings=tuple(findings), max_steps=6, timeout=60.0, cuda=True, simulated=simulated,
        ranks=(report([], []),), unsupported=(),
    )
    return ProbeResult((script,))


@pytest.fixture
def simulated_result() -> ProbeResult:
    reports = [report([mismatch()], [BUG], unsupported=())]
    confirmed = probed([static(SCRIPT, "TL012", "bug", filename="batch_not_moved.py")], reports)
    needs = probed([static(SCRIPT, "TL017", "bug", filename="batch_not_moved.py")], reports)
    return result_of([*confirmed, *needs])


def test_text_report_says_simulated_per_finding_and_in_the_summary(simulated_result: ProbeResult) -> None:
    text = text_report.render(simulated_result)
    assert f"batch_not_moved.py:{BUG}: TL012 [rule] confirmed (simulated CUDA)" in text
    assert ", simulated CUDA" in text.splitlines()[0]
    assert "Simulated CUDA (no GPU) for batch_not_moved.py" in text
    assert "simulated CUDA cannot answer this check: it needs a real GPU" in text


def test_json_report_marks_simulated_findings_and_scripts(simulated_result: ProbeResult) -> None:
    data = json.loads(json_report.render(simulated_result))
    [script] = data["scripts"]
    assert script["simulated"] is True
    confirmed = next(f for f in script["findings"] if f["status"] == "confirmed")
    assert confirmed["simulated"] is True


def test_sarif_github_and_junit_note_the_simulation(simulated_result: ProbeResult) -> None:
    [error] = [f for f in as_findings(simulated_result) if f.code == "TL012"]
    assert "[simulated CUDA: no GPU was used]" in error.message
    case = ET.fromstring(junit_report.render(simulated_result)).find("testsuite/testcase")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None and "TL012 confirmed (simulated CUDA) at line" in failure.get("message", "")


def test_an_inconclusive_check_is_a_note_not_an_error() -> None:
    reports = [report([], [BUG], unsupported=("CUDA graphs are not simulated",))]
    result = result_of(probed([static(SCRIPT, "TL012", "bug", filename="batch_not_moved.py")], reports))
    [note] = as_findings(result)
    assert note.severity.value == "info" and "CUDA graphs are not simulated" in note.message
    assert not result.has_findings


def test_idle_whole_segments_are_fragmentation_and_a_plateau_is_not() -> None:
    growing = Sample(12, allocated=8 * MIB, reserved=1600 * MIB, inactive_split=2 * MIB, retries=0, ooms=0, peak_allocated=200 * MIB)
    steady = Sample(12, allocated=8 * MIB, reserved=190 * MIB, inactive_split=2 * MIB, retries=0, ooms=0, peak_allocated=180 * MIB)
    small = Sample(12, allocated=1 * MIB, reserved=100 * MIB, inactive_split=0, retries=0, ooms=0, peak_allocated=10 * MIB)
    assert growing.idle_segments and not growing.fragmented
    assert not steady.idle_segments and not small.idle_segments
    unknown_peak = Sample(12, allocated=100 * MIB, reserved=1600 * MIB, inactive_split=0, retries=0, ooms=0)
    assert not unknown_peak.idle_segments


def test_sizes_and_scripts_that_ask_for_cuda() -> None:
    assert parse_size("24GiB") == 24 << 30 and parse_size("512MiB") == 512 << 20 and parse_size("1000") == 1000
    for bad in ("", "lots", "-1GiB", "0", "3 parsecs"):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert wants_cuda('device = "cuda" if torch.cuda.is_available() else "cpu"\n')
    assert wants_cuda("model.cuda()\n")
    assert not wants_cuda("x = torch.ones(3)  # would be faster on cuda\n")


def test_simulated_runs_hide_real_gpus_and_carry_the_device_size(tmp_path: Path) -> None:
    spec = run_spec(SCRIPT, (), Config(), ProbeOptions(device="simulated", simulated_memory=24 << 30), tmp_path)
    assert spec.device == "simulated" and spec.simulated_memory == 24 << 30
    assert _environment(spec, tmp_path / "settings.json")["CUDA_VISIBLE_DEVICES"] == ""
    auto = _environment(RunSpec(SCRIPT, device="auto"), tmp_path / "s.json")
    assert auto.get("CUDA_VISIBLE_DEVICES") == os.environ.get("CUDA_VISIBLE_DEVICES")  # a real GPU stays visible
    settings = ChildSettings("s.py", "out", 3, (), "simulated", 24 << 30)
    settings.save(tmp_path / "c.json")
    assert ChildSettings.load(str(tmp_path / "c.json")) == settings


def test_config_accepts_the_simulated_device(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint.probe]\ndevice = "simulated"\n', encoding="utf-8")
    assert load_config(tmp_path / "pyproject.toml").probe.device == "simulated"
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint.probe]\ndevice = "gpu"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="simulated"):
        load_config(tmp_path / "pyproject.toml")


def test_cli_rejects_a_bad_memory_size() -> None:
    result = CliRunner().invoke(main, ["probe", "--device", "simulated", "--simulated-memory", "lots", str(SCRIPT)])
    assert result.exit_code == 2 and "--simulated-memory" in result.output and "24GiB" in result.output


def test_cli_probes_on_simulated_cuda_of_the_given_size(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "probe.sarif"
    script = SIM / "device_size.py"
    args = ["probe", "--all", "--ignore", "ALL", "--device", "simulated", "--simulated-memory", "24GiB"]
    result = CliRunner().invoke(main, [*args, "--format", "sarif", "-o", str(out), str(script), "--", str(24 << 30)])
    assert result.exit_code == 1, result.output
    assert "TL101 [device-mismatch] found (simulated CUDA)" in result.output
    [finding] = validate_sarif(out.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert finding["ruleId"] == "TL101" and "simulated CUDA" in finding["message"]["text"]
