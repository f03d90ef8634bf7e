"""The probe running real scripts on the CPU, each in its own subprocess.

Static findings are built by hand (`probe_support.static`) so that these tests depend on
the probe alone, not on what the static rules report. The scripts run once, in parallel,
in a module-scoped fixture; the tests then look at the results."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from probe_support import CPU, DATA, line_of, static

from torchlint.config import Config, ProbeScript, ProbeSettings
from torchlint.finding import Finding
from torchlint.runtime_probe.api import ProbeOptions, ScriptResult, probe_script
from torchlint.runtime_probe.statuses import ProbedFinding, Status

MAX_STEPS = 8
OPTIONS = ProbeOptions(max_steps=MAX_STEPS, timeout=120.0)


def cpu(name: str) -> Path:
    return CPU / f"{name}.py"


CASES: dict[str, list[Finding]] = {
    "missing_zero_grad": [
        static(cpu("missing_zero_grad"), "TL001", "step"),
        static(cpu("missing_zero_grad"), "TL001", "never-called"),
        static(cpu("missing_zero_grad"), "TL002", "step"),
    ],
    "accumulation": [static(cpu("accumulation"), "TL001", "step")],
    "gan": [static(cpu("gan"), "TL001", "step-d"), static(cpu("gan"), "TL001", "step-g")],
    "inplace_zero": [static(cpu("inplace_zero"), "TL001", "step")],
    "lbfgs": [static(cpu("lbfgs"), "TL001", "step")],
    "loss_accumulates_graph": [],
    "best_loss": [],
    "eval_without_no_grad": [
        static(cpu("eval_without_no_grad"), "TL004", "eval-forward"),
        static(cpu("eval_without_no_grad"), "TL004", "eval-no-grad"),
        static(cpu("eval_without_no_grad"), "TL004", "eval-never-called"),
        static(cpu("eval_without_no_grad"), "TL004", "eval-in-caller"),
    ],
    "frozen_batchnorm": [static(cpu("frozen_batchnorm"), "TL004", "forward")],
    "sampler_from_factory": [static(cpu("sampler_from_factory"), "TL014", "epoch-loop")],
    "view_after_transpose": [static(cpu("view_after_transpose"), "TL003", "view")],
    "view_fails": [static(cpu("view_fails"), "TL003", "view")],
    "device_mismatch": [],
    "device_handled": [],
    "crash": [],
    "dataloader_workers": [],
}


@pytest.fixture(scope="module")
def pids_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("worker-pids")


@pytest.fixture(scope="module")
def results(pids_folder: Path) -> dict[str, ScriptResult]:
    workers = ProbeScript("dataloader_workers.py", env=(("PROBE_TEST_PIDS", str(pids_folder)),))
    config = Config(probe=ProbeSettings(scripts=(workers,)))

    def run(name: str) -> ScriptResult:
        return probe_script(cpu(name), CASES[name], config, OPTIONS)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(CASES, pool.map(run, CASES)))


def by_status(result: ScriptResult) -> dict[tuple[str, int], Status]:
    return {(f.code, f.line): f.status for f in result.findings}


def only(result: ScriptResult, code: str) -> ProbedFinding:
    [finding] = [f for f in result.findings if f.code == code]
    return finding


def test_missing_zero_grad_is_confirmed_with_steps_and_norms(results: dict[str, ScriptResult]) -> None:
    result = results["missing_zero_grad"]
    path = cpu("missing_zero_grad")
    assert by_status(result) == {
        ("TL001", line_of(path, "step")): Status.CONFIRMED,
        ("TL001", line_of(path, "never-called")): Status.NOT_REACHED,
        ("TL002", line_of(path, "step")): Status.NEEDS_GPU,
    }
    evidence = next(f for f in result.findings if f.status is Status.CONFIRMED).evidence
    assert evidence["runtime_code"] == "TL102"
    assert evidence["steps_carried_over"] == MAX_STEPS - 1
    norms = evidence["grad_norm"]
    assert norms[str(MAX_STEPS)] > norms["1"]


def test_step_limit_stops_the_script_cleanly(results: dict[str, ScriptResult]) -> None:
    result = results["missing_zero_grad"]
    assert (result.steps, result.stopped, result.returncode, result.crash) == (MAX_STEPS, "max-steps", 0, None)
    assert [sample["step"] for sample in result.memory] == list(range(1, MAX_STEPS + 1))


@pytest.mark.parametrize("name", ["accumulation", "gan", "inplace_zero", "lbfgs"])
def test_correct_gradient_handling_is_not_reproduced(results: dict[str, ScriptResult], name: str) -> None:
    result = results[name]
    assert result.steps == MAX_STEPS and result.crash is None
    assert result.findings and all(f.status is Status.NOT_REPRODUCED for f in result.findings), result.findings


def test_a_loss_kept_with_its_graph_is_memory_growth(results: dict[str, ScriptResult]) -> None:
    result = results["loss_accumulates_graph"]
    finding = only(result, "TL103")
    assert finding.status is Status.FOUND
    assert finding.line == line_of(cpu("loss_accumulates_graph"), "accumulate")
    assert finding.evidence["holder"] == "total_loss"
    alive = [sample["alive_graphs"] for sample in result.memory]
    assert alive == sorted(alive) and alive[-1] == MAX_STEPS - 1


def test_keeping_the_best_loss_is_not_growth(results: dict[str, ScriptResult]) -> None:
    result = results["best_loss"]
    assert result.findings == () and result.steps == MAX_STEPS
    assert max(sample["alive_graphs"] for sample in result.memory) <= 2


def test_eval_mode_forward_with_grad_enabled(results: dict[str, ScriptResult]) -> None:
    path = cpu("eval_without_no_grad")
    result = results["eval_without_no_grad"]
    assert by_status(result) == {
        ("TL004", line_of(path, "eval-forward")): Status.CONFIRMED,
        ("TL004", line_of(path, "eval-no-grad")): Status.NOT_REPRODUCED,
        ("TL004", line_of(path, "eval-never-called")): Status.NOT_REACHED,
        ("TL004", line_of(path, "eval-in-caller")): Status.CONFIRMED,
    }
    evidence = {f.line: f.evidence for f in result.findings if f.status is Status.CONFIRMED}
    assert evidence[line_of(path, "eval-forward")]["never_backpropagated"] == 3
    assert evidence[line_of(path, "eval-in-caller")]["never_backpropagated"] == 3


def test_deliberate_eval_mode_training_is_not_a_bug(results: dict[str, ScriptResult]) -> None:
    [finding] = results["frozen_batchnorm"].findings
    assert finding.status is Status.NOT_REPRODUCED
    assert "deliberate" in finding.evidence["runtime_message"]


def test_a_sampler_never_given_the_epoch_through_a_factory_and_a_trainer(results: dict[str, ScriptResult]) -> None:
    [finding] = results["sampler_from_factory"].findings
    assert finding.status is Status.CONFIRMED, finding
    assert finding.line == line_of(cpu("sampler_from_factory"), "epoch-loop")
    assert "3 passes" in finding.evidence["runtime_message"]


def test_view_on_a_non_contiguous_tensor(results: dict[str, ScriptResult]) -> None:
    [finding] = results["view_after_transpose"].findings
    assert finding.status is Status.CONFIRMED
    assert finding.evidence["failures"] == 0 and finding.evidence["calls"] == MAX_STEPS


def test_a_failing_view_is_confirmed_and_the_crash_reported(results: dict[str, ScriptResult]) -> None:
    result = results["view_fails"]
    [finding] = result.findings
    assert finding.status is Status.CONFIRMED and finding.evidence["failures"] == 1
    assert result.returncode == 1 and result.crash is not None and result.crash.type == "RuntimeError"
    assert f'view_fails.py", line {line_of(cpu("view_fails"), "view")}' in result.crash.traceback
    assert "runtime_probe" not in result.crash.traceback


def test_device_mismatch_points_at_the_call(results: dict[str, ScriptResult]) -> None:
    result = results["device_mismatch"]
    finding = only(result, "TL101")
    assert finding.status is Status.FOUND
    assert finding.line == line_of(cpu("device_mismatch"), "call")
    assert set(finding.evidence["devices"]) == {"meta", "cpu"}
    assert result.crash is not None and result.returncode == 1


def test_a_model_that_moves_its_inputs_is_not_a_mismatch(results: dict[str, ScriptResult]) -> None:
    result = results["device_handled"]
    assert result.findings == () and result.returncode == 0


def test_a_crashing_script_is_reported_with_its_traceback(results: dict[str, ScriptResult]) -> None:
    result = results["crash"]
    assert result.returncode == 1 and result.steps == 2 and not result.timed_out
    assert result.crash is not None and result.crash.type == "ValueError"
    assert "the data ran out" in result.crash.traceback and 'crash.py", line 12' in result.crash.traceback


def test_no_dataloader_worker_is_left_behind(results: dict[str, ScriptResult], pids_folder: Path) -> None:
    result = results["dataloader_workers"]
    assert result.steps == MAX_STEPS and result.stopped == "max-steps"
    pids = [int(p.name.removeprefix("worker-")) for p in pids_folder.glob("worker-*")]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in pids)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_script_that_never_ends_is_killed_and_keeps_a_partial_report() -> None:
    # The timeout also has to cover `import torch`, which takes over 12 s on a loaded machine.
    result = probe_script(DATA / "forever.py", (), None, ProbeOptions(timeout=30.0))
    assert result.timed_out and result.stopped == "signal"
    assert result.steps == 3
    assert "waiting forever" in result.output_tail


def test_a_distributed_script_is_probed_in_every_rank() -> None:
    path = DATA / "ddp_gloo.py"
    result = probe_script(path, (), None, ProbeOptions(max_steps=4, timeout=120.0, nproc_per_node=2))
    assert result.returncode == 0 and [r.rank for r in result.ranks] == [0, 1]
    assert all(r.steps == 4 and r.stopped == "max-steps" for r in result.ranks)
    finding = only(result, "TL102")
    assert finding.status is Status.FOUND and finding.ranks == (0, 1)
    assert finding.line == line_of(path, "step")


def test_arguments_from_the_configuration() -> None:
    script = ProbeScript("needs_args.py", args=("--steps", "2", "--tag", "configured"))
    result = probe_script(DATA / "needs_args.py", (), Config(probe=ProbeSettings(scripts=(script,))))
    assert (result.returncode, result.steps) == (0, 2)


def test_a_script_missing_its_arguments_fails_with_its_usage() -> None:
    result = probe_script(DATA / "needs_args.py", ())
    assert result.returncode == 2 and "required" in result.output_tail
    assert os.path.basename(result.path) == "needs_args.py"
