"""Simulated CUDA (runtime_probe/simcuda): the simulator on its own (correct-usage torture
suite, hand rules, autocast, memory), and through the probe on buggy and correct CUDA
scripts and the bundled fixtures, on a machine without a GPU. The simulator installs
process-wide and for good, so every run is a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import pytest
from conftest import FIXTURES
from probe_support import DATA, line_of, marked, static

from torchlint.runtime_probe.api import ProbeOptions, ScriptResult, probe_script
from torchlint.runtime_probe.statuses import ProbedFinding, Status

SIM = DATA.parent / "simcuda"
OPTIONS = ProbeOptions(max_steps=6, timeout=180.0, device="simulated")
PAIRS = ("tl002_matmul_benchmark", "tl010_fp16_without_scaler", "tl010_scaler_never_updated", "tl011_positions_on_cpu", "tl012_input_not_on_model_device")
BUGS = ("batch_not_moved", "labels_not_moved", "factory_in_forward", "optimizer_before_cuda", "numpy_on_cuda")
CORRECT = ("correct_amp_loader", "correct_bf16_transformer", "correct_cnn_indices")


def _no_real_gpu() -> bool:
    torch = pytest.importorskip("torch")
    return not torch.cuda.is_available()


pytestmark = pytest.mark.skipif(not _no_real_gpu(), reason="these expectations are for a machine without a GPU")


def simulate(script: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a script on simulated CUDA without the probe."""
    return subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "torchlint.runtime_probe.simcuda", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def sim(name: str) -> Path:
    return SIM / f"{name}.py"


@pytest.fixture(scope="module")
def results() -> dict[str, ScriptResult]:
    """Every probe run of this module, two at a time (each one imports torch)."""
    runs: dict[str, Callable[[], ScriptResult]] = {
        **{name: (lambda p=sim(name): probe_script(p, (), None, OPTIONS)) for name in (*BUGS, *CORRECT)},
        **{name: (lambda p=sim(name): probe_script(p, (), None, ProbeOptions(max_steps=12, timeout=180.0))) for name in ("growing_lengths", "steady_lengths")},
        **{name: (lambda p=FIXTURES / f"{name}.py": probe_script(p, marked(p), None, OPTIONS)) for name in PAIRS},
        **{f"{name}_fixed": (lambda p=FIXTURES / f"{name}_fixed.py": probe_script(p, (), None, OPTIONS)) for name in PAIRS},
        "compiled": lambda p=sim("compiled"): probe_script(p, [static(p, "TL011", "bug")], None, OPTIONS),
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(run) for name, run in runs.items()}
        return {name: future.result() for name, future in futures.items()}


def only(result: ScriptResult, code: str) -> ProbedFinding:
    [finding] = [f for f in result.findings if f.code == code]
    return finding


# --- the simulator on its own -------------------------------------------------------------


def test_correct_usage_torture_suite_runs_clean() -> None:
    run = simulate(SIM / "torture_correct_usage.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "TORTURE 0 failures" in run.stdout, run.stdout


@pytest.fixture(scope="module")
def hand_rules() -> dict[str, str]:
    run = simulate(SIM / "hand_rules.py")
    assert run.returncode == 0, run.stderr
    return dict(json.loads(run.stdout.strip().splitlines()[-1]))


SAME_DEVICE = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


@pytest.mark.parametrize(
    "case, outcome",
    [
        ("copy_ from cpu", "ok"),
        ("to cuda and back", "ok"),
        ("cpu index into cuda", "ok"),
        ("cpu mask setitem on cuda", "ok"),
        ("cuda index into cpu", "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)"),
        (
            "conv cpu input, cuda weight",
            "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same "
            "or input should be a MKLDNN tensor and weight is a dense tensor",
        ),
        ("conv cuda input, cpu bias", "RuntimeError: Input type (torch.cuda.FloatTensor) and bias type (torch.FloatTensor) should be the same"),
        ("foreach positions mixed", SAME_DEVICE),
        ("foreach one mixed list", "ok"),
        ("where with 0-dim cpu", "ok"),
        ("where with cpu tensor", SAME_DEVICE),
        ("add 0-dim cpu", "ok"),
        ("add cpu tensor", SAME_DEVICE),
        (
            "index_select cpu index",
            "RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different from other "
            "tensors on cuda:0 (when checking argument in method wrapper_CUDA_index_select)",
        ),
        (
            "embedding cpu indices",
            "RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different from other "
            "tensors on cuda:0 (when checking argument in method wrapper_CUDA_index_select)",
        ),
        ("ctc_loss cpu lengths", "ok"),
        ("pin_memory copy", "ok"),
        ("pin_memory loader", "ok"),
        ("is_pinned on cuda", "ok"),
        ("pin_memory on cuda", "RuntimeError: cannot pin 'CUDAFloatType' only dense CPU tensors can be pinned"),
        ("pin_memory on cuda bf16", "RuntimeError: cannot pin 'CUDABFloat16Type' only dense CPU tensors can be pinned"),
        ("pin_memory loader of cuda tensors", "RuntimeError: cannot pin 'CUDAFloatType' only dense CPU tensors can be pinned"),
        ("pin_memory factory on cuda", "RuntimeError: Only dense CPU tensors can be pinned"),
        ("pin_memory empty_like of cuda", "RuntimeError: Only dense CPU tensors can be pinned"),
    ],
)
def test_each_hand_rule_allows_or_raises_as_cuda_does(hand_rules: dict[str, str], case: str, outcome: str) -> None:
    assert hand_rules[case] == outcome


def test_growing_lengths_reserve_many_times_the_peak_and_expandable_segments_do_not() -> None:
    def figures(run: subprocess.CompletedProcess[str]) -> tuple[int, int]:
        assert run.returncode == 0, run.stderr
        words = run.stdout.split()
        return int(words[words.index("reserved") + 1]), int(words[words.index("allocated") + 1])

    reserved, peak = figures(simulate(sim("growing_lengths")))
    assert reserved >= 5 * peak
    reserved, peak = figures(simulate(sim("growing_lengths"), {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}))
    assert reserved <= peak + 40
    reserved, peak = figures(simulate(sim("steady_lengths")))
    assert reserved <= 1.5 * peak


def test_every_allocation_returns_after_freeing_and_empty_cache() -> None:
    run = simulate(sim("memory_returns"))
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    assert figures["peak"] > 0 and figures["reserved_before_empty"] > 0 and figures["views_share"]
    assert figures["direct_counted"] and figures["direct_plain"], "SimTensor(elem) is wrap(elem)"
    assert figures["allocated"] == figures["reserved"] == 0


def test_what_dispatch_keeps_per_operator_changes_no_outcome() -> None:
    run = simulate(sim("dispatch_caches"))
    assert run.returncode == 0, run.stderr
    findings = json.loads(run.stdout.strip().splitlines()[-1])
    errors = {
        "add": "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
        "mm": "Expected all tensors to be on the same device, but got mat2 is on cpu, different from other tensors on cuda:0 "
        "(when checking argument in method wrapper_CUDA_mm)",
    }
    for name, error in errors.items():
        assert findings.pop(f"{name} mixed first") == findings.pop(f"{name} mixed after same device") == error
        assert findings.pop(f"{name} same device first") == findings.pop(f"{name} same device after mixed") == "SimTensor"
    assert findings == dict.fromkeys(findings, True) and len(findings) == 7


def test_a_dispatch_rule_for_a_subclass_of_the_script_still_runs() -> None:
    """The simulator answers torch's lookup of `register_torch_dispatch` rules for its own
    tensors; a rule for any other class is found as before."""
    run = simulate(sim("dispatch_rules"))
    assert run.returncode == 0, run.stderr
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome["rule_ran"] == ["aten.add.Tensor"] and outcome["rule_result"] == [2.0, 2.0, 2.0]
    assert outcome["simulated_add"] == ["cuda:0", [2.0, 2.0, 2.0]]


def test_an_operator_without_a_cpu_kernel_is_inconclusive_not_a_crash_of_the_user() -> None:
    run = simulate(sim("custom_cuda_op"))
    assert run.returncode != 0
    assert "SimulationUnsupported: simulated CUDA: torchlint_test.scale.default has no CPU kernel" in run.stderr
    assert "(the probe reports this run as inconclusive)" in run.stderr


# --- through the probe --------------------------------------------------------------------


@pytest.mark.parametrize("name", BUGS)
def test_buggy_cuda_scripts_are_confirmed_at_the_bug_line(results: dict[str, ScriptResult], name: str) -> None:
    result = results[name]
    assert result.simulated and result.cuda
    finding = only(result, "TL101")
    assert finding.status is Status.FOUND and finding.simulated
    assert finding.line == line_of(sim(name), "bug")
    assert {d.split(":")[0] for d in finding.evidence["devices"]} == {"cuda", "cpu"}
    assert "vcuda" not in json.dumps(finding.evidence) + finding.message


@pytest.mark.parametrize("name", CORRECT)
def test_correct_cuda_scripts_report_nothing(results: dict[str, ScriptResult], name: str) -> None:
    result = results[name]
    assert result.simulated and result.returncode == 0 and result.crash is None, result.output_tail
    assert result.findings == () and result.probe_errors == ()


@pytest.mark.parametrize("name", PAIRS)
def test_cuda_fixtures_are_confirmed_on_simulated_cuda(results: dict[str, ScriptResult], name: str) -> None:
    result = results[name]
    assert result.simulated
    statuses = [f for f in result.findings if f.status is not Status.FOUND]
    assert statuses and all(f.status is Status.CONFIRMED and f.simulated for f in statuses), result.findings
    assert all(f.label == "confirmed (simulated CUDA)" for f in statuses)


@pytest.mark.parametrize("name", PAIRS)
def test_their_fixed_twins_stay_clean(results: dict[str, ScriptResult], name: str) -> None:
    result = results[f"{name}_fixed"]
    assert result.simulated and result.crash is None and result.findings == (), result.findings


def test_growing_sequence_lengths_are_fragmentation_under_auto(results: dict[str, ScriptResult]) -> None:
    result = results["growing_lengths"]
    assert result.simulated  # --device auto, no GPU, a script that asks for CUDA
    finding = only(result, "TL104")
    assert finding.status is Status.FOUND and finding.line == line_of(sim("growing_lengths"), "step")
    assert finding.evidence["reserved_per_peak_allocated"] >= 3
    assert "expandable_segments:True" in finding.message and "bucket" in finding.message
    assert results["steady_lengths"].findings == ()


def test_what_the_simulation_cannot_do_is_inconclusive(results: dict[str, ScriptResult]) -> None:
    result = results["compiled"]
    [finding] = result.findings
    assert finding.status is Status.INCONCLUSIVE and finding.simulated
    assert "torch.compile is not simulated" in finding.evidence["reason"]
    assert result.unsupported == ("torch.compile is not simulated",)
