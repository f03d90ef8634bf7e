"""The probe's checks for rule pack 2 (TL005, TL007-TL010, TL013, TL014) on the CPU.

The pack-2 fixtures run with static findings built from their `# expect:` markers (so
these tests depend on the probe alone, not on the rules) and must be confirmed with their
numbers; their corrected twins run with none and must come out clean. Two more scripts
hold other spellings of the bugs and correct patterns near them (GANs, accumulation,
GradScaler steps that skip, per-epoch schedules, frozen batch norm, evaluation samplers).
All scripts run once, in parallel, in a module-scoped fixture."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import pytest
from conftest import FIXTURES
from probe_support import CPU, line_of, marked, static

from torchlint.runtime_probe.api import ProbeOptions, ScriptResult, probe_script
from torchlint.runtime_probe.statuses import ProbedFinding, Status

pytest.importorskip("torch")

# The CPU behaviour is what is asserted here, also on a machine with a GPU (see test_probe_gpu).
OPTIONS = ProbeOptions(max_steps=20, timeout=120.0, device="cpu")
PACK2 = (
    "tl005_zero_grad_before_step",
    "tl007_scheduler_before_optimizer",
    "tl008_eval_never_reset",
    "tl009_missing_eval_mode",
    "tl010_fp16_without_scaler",
    "tl010_scaler_never_updated",
    "tl013_grad_clip_misplaced",
    "tl014_sampler_same_order",
)
BUGS = CPU / "pack2_bugs.py"
CORRECT = CPU / "pack2_correct.py"
BUG_LINES = {
    "model-clear": "TL005",
    "schedule-first": "TL007",
    "clip-after-step": "TL013",
    "clip-before-backward": "TL013",
    "inline-eval": "TL009",
}
CORRECT_LINES = {
    "gan-clear": "TL005",
    "unscaled-clip": "TL013",
    "schedule-after-step": "TL007",
    "epoch-schedule": "TL007",
    "frozen-bn-epochs": "TL008",
    "proper-eval": "TL009",
    "no-mode-layers": "TL008",
    "sampler-epochs": "TL014",
    "healthy-fp16": "TL010",
    "accumulated-clip": "TL013",
    "logged-norm": "TL013",
    "linear-eval": "TL009",
}



RUNS: dict[str, Callable[[], ScriptResult]] = {
    **{name: (lambda p=FIXTURES / f"{name}.py": probe_script(p, marked(p), None, OPTIONS)) for name in PACK2},
    **{f"{name}_fixed": (lambda p=FIXTURES / f"{name}_fixed.py": probe_script(p, (), None, OPTIONS)) for name in PACK2},
    "bugs": lambda: probe_script(BUGS, [static(BUGS, code, tag) for tag, code in BUG_LINES.items()], None, OPTIONS),
    "bugs-alone": lambda: probe_script(BUGS, (), None, OPTIONS),
    "correct": lambda: probe_script(CORRECT, [static(CORRECT, code, tag) for tag, code in CORRECT_LINES.items()], None, OPTIONS),
}


@pytest.fixture(scope="module")
def results() -> dict[str, ScriptResult]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(run) for name, run in RUNS.items()}
        return {name: future.result() for name, future in futures.items()}


def confirmed(result: ScriptResult, code: str) -> ProbedFinding:
    [finding] = [f for f in result.findings if f.code == code]
    assert finding.status is Status.CONFIRMED, (finding, result.output_tail, result.probe_errors)
    assert finding.evidence["runtime_code"] == code
    return finding


def test_zero_grad_before_step(results: dict[str, ScriptResult]) -> None:
    evidence = confirmed(results["tl005_zero_grad_before_step"], "TL005").evidence
    assert evidence["steps"] == list(range(1, 21))
    assert evidence["parameters"] == 4 and evidence["discarded_grad_norm"] > 0


def test_scheduler_before_optimizer(results: dict[str, ScriptResult]) -> None:
    evidence = confirmed(results["tl007_scheduler_before_optimizer"], "TL007").evidence
    assert (evidence["lr_before"], evidence["lr_after"]) == (0.1, 0.05)


def test_eval_mode_never_reset(results: dict[str, ScriptResult]) -> None:
    evidence = confirmed(results["tl008_eval_never_reset"], "TL008").evidence
    # 12 batches per epoch: the first epoch trains in train mode, the next in eval mode.
    assert evidence["train_mode_steps"] == 12 and evidence["eval_mode_steps"] == list(range(13, 21))
    assert evidence["layers"] == {"BatchNorm1d": 1, "Dropout": 1}


def test_missing_eval_mode(results: dict[str, ScriptResult]) -> None:
    evidence = confirmed(results["tl009_missing_eval_mode"], "TL009").evidence
    # Two evaluations of two validation batches after the first epoch's 16 steps.
    assert (evidence["forwards"], evidence["trained_steps"], evidence["layers"]) == (4, 16, {"Dropout": 1})


def test_fp16_without_scaler_underflows(results: dict[str, ScriptResult]) -> None:
    evidence = confirmed(results["tl010_fp16_without_scaler"], "TL010").evidence
    assert evidence["steps"] == [1, 2, 3, 4, 5]
    assert evidence["underflow_share"] >= 0.05 and evidence["nonfinite"] == 0


def test_scaler_stepped_twice_without_update(results: dict[str, ScriptResult]) -> None:
    result = results["tl010_scaler_never_updated"]
    evidence = confirmed(result, "TL010").evidence
    assert evidence["steps_without_update"] == 1 and "since the last update()" in evidence["error"]
    assert result.crash is not None and result.crash.type == "RuntimeError"


def test_clipping_scaled_gradients(results: dict[str, ScriptResult]) -> None:
    evidence = confirmed(results["tl013_grad_clip_misplaced"], "TL013").evidence
    assert evidence["problem"] == "scaled" and evidence["loss_scale"] == 65536.0
    assert evidence["total_norm"] > 1000 * evidence["limit"] and evidence["calls"] == 20


def test_sampler_without_set_epoch(results: dict[str, ScriptResult]) -> None:
    evidence = confirmed(results["tl014_sampler_same_order"], "TL014").evidence
    assert (evidence["passes"], evidence["epoch"], evidence["samples"]) == (3, 0, 128)


@pytest.mark.parametrize("name", PACK2)
def test_the_fixed_twin_is_clean(results: dict[str, ScriptResult], name: str) -> None:
    result = results[f"{name}_fixed"]
    assert result.crash is None and result.returncode == 0 and result.steps > 0
    assert result.findings == () and result.probe_errors == ()


def test_other_spellings_of_the_bugs_are_confirmed(results: dict[str, ScriptResult]) -> None:
    result = results["bugs"]
    statuses = {(f.code, f.line): f.status for f in result.findings}
    assert statuses == {(code, line_of(BUGS, tag)): Status.CONFIRMED for tag, code in BUG_LINES.items()}
    evidence = {f.line: f.evidence for f in result.findings}
    assert evidence[line_of(BUGS, "clip-after-step")]["problem"] == "after-step"
    assert evidence[line_of(BUGS, "clip-before-backward")]["problem"] == "no-gradients"


def test_without_static_findings_only_unambiguous_bugs_are_reported(results: dict[str, ScriptResult]) -> None:
    # A clip without gradients and a train-mode evaluation confirm static findings but
    # are not findings alone (an evaluation with dropout on can be deliberate).
    found = {(f.code, f.line, f.status) for f in results["bugs-alone"].findings}
    assert found == {
        ("TL005", line_of(BUGS, "model-clear"), Status.FOUND),
        ("TL007", line_of(BUGS, "schedule-first"), Status.FOUND),
        ("TL013", line_of(BUGS, "clip-after-step"), Status.FOUND),
    }


def test_correct_patterns_are_not_reproduced(results: dict[str, ScriptResult]) -> None:
    result = results["correct"]
    assert result.crash is None and result.probe_errors == ()
    statuses = {(f.code, f.line): f.status for f in result.findings}
    assert statuses == {(code, line_of(CORRECT, tag)): Status.NOT_REPRODUCED for tag, code in CORRECT_LINES.items()}


def test_not_reproduced_findings_say_what_was_measured(results: dict[str, ScriptResult]) -> None:
    evidence = {f.line: f.evidence.get("runtime_message", "") for f in results["correct"].findings}
    assert "no dropout or batch-norm layers" in evidence[line_of(CORRECT, "no-mode-layers")]
    assert "did not underflow" in evidence[line_of(CORRECT, "healthy-fp16")]
    assert "no dropout or batch-norm layers" in evidence[line_of(CORRECT, "linear-eval")]
