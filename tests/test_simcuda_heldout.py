"""Simulated CUDA on held-out scripts (issue 12): ordinary CUDA training scripts written
without reading the simulator or its test data, with their verdicts written down before
the first run (tests/data/simcuda_heldout/EXPECTED.md). `torchlint probe --all --device
simulated` on the folder must confirm exactly the bugs, at the buggy line, and report
nothing on the correct scripts; every run and verdict is labelled simulated."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HELDOUT = Path(__file__).resolve().parent / "data" / "simcuda_heldout"

# script -> the verdicts that count as the bug, as (code, status, source line of the bug);
# one of them must be the script's only finding.
BUGS: dict[str, set[tuple[str, str, str]]] = {
    "bug_batch_not_moved": {("TL012", "confirmed", "outputs = model(inputs)"), ("TL101", "found", "outputs = model(inputs)")},
    # TL012 learned to see a forgotten batch part after this was written (EXPECTED.md).
    "bug_labels_not_moved": {
        ("TL012", "confirmed", "loss = F.cross_entropy(logits, y)"),
        ("TL101", "found", "loss = F.cross_entropy(logits, y)"),
    },
    "bug_factory_in_forward": {("TL011", "confirmed", "bias = torch.zeros(x.size(0), 4)"), ("TL101", "found", "return h + bias")},
    "bug_optimizer_before_cuda": {("TL101", "found", "    optimizer.step()\n    print")},
    "bug_numpy_on_cuda": {("TL101", "found", "preds = logits.argmax(dim=1).numpy()")},
}
CORRECT = (
    "ok_amp_fp16_scaler_steplr",
    "ok_pinned_loader_non_blocking",
    "ok_checkpoint_resume",
    "ok_bf16_transformer",
    "ok_fused_adam",
    "ok_activation_checkpointing",
)


RUN_LINE = re.compile(r"^\S*simcuda_heldout/\w+\.py: \d+ steps?\b")
VERDICT_LINE = re.compile(r"^  \S*simcuda_heldout/\w+\.py:\d+: TL\d+ \[[\w-]+\] (confirmed|found)\b")


def _no_real_gpu() -> bool:
    torch = pytest.importorskip("torch")
    return not torch.cuda.is_available()


pytestmark = [pytest.mark.slow, pytest.mark.skipif(not _no_real_gpu(), reason="these expectations are for a machine without a GPU")]


def line_of(name: str, source: str) -> int:
    """The line where `source`, which occurs once in the script, starts."""
    text = (HELDOUT / f"{name}.py").read_text(encoding="utf-8")
    assert text.count(source) == 1, source
    return text.count("\n", 0, text.index(source)) + 1


@pytest.fixture(scope="module")
def probe_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, dict[str, Any]]]:
    """One probe of the whole folder, as a user runs it: the text report and the JSON one."""
    report = tmp_path_factory.mktemp("heldout") / "report.json"
    run = subprocess.run(
        [sys.executable, "-m", "torchlint", "probe", "--all", "--device", "simulated", "--report", str(report), str(HELDOUT)],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    scripts = {Path(s["path"]).stem: s for s in json.loads(report.read_text(encoding="utf-8"))["scripts"]}
    assert set(scripts) == {*BUGS, *CORRECT}, run.stdout
    return run.stdout, scripts


@pytest.mark.parametrize("name", sorted(BUGS))
def test_each_bug_is_confirmed_at_its_line_and_nothing_else(probe_run: tuple[str, dict[str, dict[str, Any]]], name: str) -> None:
    script = probe_run[1][name]
    assert script["simulated"] and script["cuda"]
    verdicts = [(f["code"], f["status"], f["line"]) for f in script["findings"] if f["status"] in ("confirmed", "found")]
    expected = {(code, status, line_of(name, source)) for code, status, source in BUGS[name]}
    assert len(verdicts) == 1 and verdicts[0] in expected, (verdicts, expected)
    assert all(f["simulated"] for f in script["findings"])


@pytest.mark.parametrize("name", CORRECT)
def test_each_correct_script_runs_to_the_end_and_reports_nothing(probe_run: tuple[str, dict[str, dict[str, Any]]], name: str) -> None:
    script = probe_run[1][name]
    assert script["simulated"] and script["cuda"]
    assert script["returncode"] == 0 and script["crash"] is None, script["output_tail"]
    assert script["steps"] > 0
    assert script["findings"] == [] and script["probe_errors"] == [] and script["unsupported"] == []


def test_the_text_report_labels_every_run_and_verdict_simulated(probe_run: tuple[str, dict[str, dict[str, Any]]]) -> None:
    text = probe_run[0]
    run_lines = [line for line in text.splitlines() if RUN_LINE.match(line)]
    assert len(run_lines) == len(BUGS) + len(CORRECT), text
    assert all(line.endswith(", simulated CUDA") for line in run_lines), text
    verdict_lines = [line for line in text.splitlines() if VERDICT_LINE.match(line)]
    assert len(verdict_lines) == len(BUGS), text
    assert all(line.endswith("(simulated CUDA)") for line in verdict_lines), text
