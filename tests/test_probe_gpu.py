"""The probe's CUDA-only checks, on a real GPU: device mismatch, memory growth from
`torch.cuda.memory_stats()`, fragmentation (allocator retries) and unsynchronized timing.
Skipped without CUDA; `bench/gpu_check.sh` runs them on a GPU machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from probe_support import DATA, line_of, static

from torchlint.runtime_probe.api import ProbeOptions, ScriptResult, probe_script
from torchlint.runtime_probe.statuses import ProbedFinding, Status


def _cuda_available() -> bool:
    if shutil.which("nvidia-smi") is None:
        return False
    torch = pytest.importorskip("torch")
    return bool(torch.cuda.is_available())


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _cuda_available(), reason="needs a CUDA device")]

GPU = DATA / "gpu"
OPTIONS = ProbeOptions(max_steps=8, timeout=180.0, device="cuda")


def gpu(name: str) -> Path:
    return GPU / f"{name}.py"


def only(result: ScriptResult, code: str) -> ProbedFinding:
    [finding] = [f for f in result.findings if f.code == code]
    return finding


def test_device_mismatch_on_cuda() -> None:
    result = probe_script(gpu("device_mismatch_cuda"), (), None, OPTIONS)
    assert result.cuda and result.returncode == 1
    finding = only(result, "TL101")
    assert finding.status is Status.FOUND
    assert finding.line == line_of(gpu("device_mismatch_cuda"), "call")
    assert {d.split(":")[0] for d in finding.evidence["devices"]} == {"cuda", "cpu"}


def test_memory_growth_from_cuda_statistics() -> None:
    result = probe_script(gpu("memory_growth_cuda"), (), None, OPTIONS)
    assert result.cuda and result.steps == 8
    finding = only(result, "TL103")
    assert finding.status is Status.FOUND
    assert finding.evidence["growth_per_step_bytes"] >= 4 * 1024 * 1024
    allocated = [sample["allocated_bytes"] for sample in result.memory]
    assert allocated[-1] > allocated[2]


def test_fragmentation_shows_allocator_retries() -> None:
    result = probe_script(gpu("fragmentation_cuda"), (), None, OPTIONS)
    assert result.cuda and result.returncode == 0
    finding = only(result, "TL104")
    assert finding.status is Status.FOUND and finding.evidence["num_alloc_retries"] > 0


def test_unsynchronized_timing_is_confirmed_and_synchronized_is_not() -> None:
    path = gpu("timing_cuda")
    findings = [static(path, "TL002", "clock"), static(path, "TL002", "synced-clock")]
    result = probe_script(path, findings, None, ProbeOptions(max_steps=3, timeout=180.0, device="cuda"))
    statuses = {f.line: f.status for f in result.findings if f.code == "TL002" and f.status is not Status.FOUND}
    assert statuses == {line_of(path, "clock"): Status.CONFIRMED, line_of(path, "synced-clock"): Status.NOT_REPRODUCED}
