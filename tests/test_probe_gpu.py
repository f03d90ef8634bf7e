"""The probe's CUDA-only checks, on a real GPU: device mismatch, memory growth from
`torch.cuda.memory_stats()`, fragmentation (allocator retries), unsynchronized timing, and
the pack-2 fixtures and checks that need CUDA (TL010, TL011, TL012, TL016, TL017).
Skipped without CUDA; `bench/gpu_check.sh` runs them on a GPU machine."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES
from probe_support import DATA, line_of, marked, static

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


def _cuda_devices() -> int:
    torch = pytest.importorskip("torch")
    return int(torch.cuda.device_count())



@pytest.mark.parametrize(
    "fixture, runtime_code",
    [
        ("tl011_positions_on_cpu", "TL101"),
        ("tl012_input_not_on_model_device", "TL101"),
        ("tl010_fp16_without_scaler", "TL010"),
        ("tl010_scaler_never_updated", "TL010"),
    ],
)
def test_pack2_fixtures_are_confirmed_on_cuda(fixture: str, runtime_code: str) -> None:
    path = FIXTURES / f"{fixture}.py"
    result = probe_script(path, marked(path), None, OPTIONS)
    assert result.cuda
    [finding] = [f for f in result.findings if f.status is not Status.FOUND]
    assert finding.status is Status.CONFIRMED and finding.evidence["runtime_code"] == runtime_code, result.findings


def test_a_loader_without_workers_starves_the_gpu() -> None:
    path = gpu("loader_starves_cuda")
    findings = [static(path, "TL017", "starved"), static(path, "TL017", "fed")]
    result = probe_script(path, findings, None, ProbeOptions(max_steps=30, timeout=180.0, device="cuda"))
    assert result.cuda and result.returncode == 0, result.output_tail
    statuses = {f.line: f for f in result.findings}
    starved = statuses[line_of(path, "starved")]
    assert starved.status is Status.CONFIRMED and starved.evidence["wait_share"] >= 0.5
    assert statuses[line_of(path, "fed")].status is Status.NOT_REPRODUCED


@pytest.mark.skipif(_cuda_devices() < 2, reason="needs two GPUs")
def test_ranks_sharing_one_gpu_under_ddp() -> None:
    path = gpu("ddp_device_cuda")
    options = ProbeOptions(max_steps=4, timeout=180.0, device="cuda", nproc_per_node=2)
    result = probe_script(path, [static(path, "TL016", "ddp")], None, options)
    [finding] = [f for f in result.findings if f.code == "TL016"]
    assert finding.status is Status.CONFIRMED and finding.ranks == (1,)
    assert finding.evidence["model_device"] == "cuda:0" and finding.evidence["local_rank"] == 1
