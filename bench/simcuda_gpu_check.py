"""On a machine with a GPU: how faithful simulated CUDA is. Exits 0 with a note, doing
nothing, where there is no CUDA device (it never fakes one).

1. Verdicts: the simulated-CUDA test scripts (tests/data/simcuda: buggy and correct
   training scripts, growing and steady sequence lengths) and the bundled CUDA fixtures
   are probed with `--device cuda` and with `--device simulated`; per script, the
   (code, line, status) sets must agree (`simulated` labels aside).
2. Messages: the hand-rule cases (tests/data/simcuda/hand_rules.py) run natively on CUDA
   and on simulated CUDA; each outcome (ok, or the error's first line) is compared.
3. Correct usage: the torture suite runs natively on CUDA, so that its cases are known
   to be valid there.
4. Memory: growing and steady sequence lengths, default and expandable segments, run on
   CUDA under `torch.cuda.memory._record_memory_history()`; the recorded allocator trace
   is replayed through the allocator model and reserved bytes are compared.

    bash bench/gpu_check.sh          # also runs this
    python bench/simcuda_gpu_check.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SIM = REPO / "tests" / "data" / "simcuda"
FIXTURES = REPO / "fixtures"
SCRIPTS = (
    "batch_not_moved", "labels_not_moved", "factory_in_forward", "optimizer_before_cuda", "numpy_on_cuda",
    "correct_amp_loader", "correct_bf16_transformer", "correct_cnn_indices", "growing_lengths", "steady_lengths",
)
FIXTURE_PAIRS = ("tl002_matmul_benchmark", "tl010_fp16_without_scaler", "tl010_scaler_never_updated", "tl011_positions_on_cpu", "tl012_input_not_on_model_device")
MIB = 1 << 20
RECORD = """
import runpy, sys, torch
torch.cuda.memory._record_memory_history(max_entries=1_000_000)
try:
    runpy.run_path(sys.argv[2], run_name="__main__")
finally:
    torch.cuda.memory._dump_snapshot(sys.argv[1])
"""


def _verdicts(path: Path, device: str) -> set[tuple[str, int, str]]:
    from torchlint import api
    from torchlint.config import Config
    from torchlint.runtime_probe.api import ProbeOptions, probe_script

    static = [f for f in api.check_paths([str(path)], Config(), cwd=REPO).findings if not f.is_internal_error]
    result = probe_script(path, static, None, ProbeOptions(max_steps=12, timeout=300.0, device=device), REPO)
    return {(f.code, f.line, f.status.value) for f in result.findings}


def compare_verdicts() -> list[dict[str, Any]]:
    paths = [SIM / f"{name}.py" for name in SCRIPTS]
    paths += [FIXTURES / f"{name}{suffix}.py" for name in FIXTURE_PAIRS for suffix in ("", "_fixed")]
    rows = []
    for path in paths:
        real, simulated = _verdicts(path, "cuda"), _verdicts(path, "simulated")
        rows.append({"script": str(path.relative_to(REPO)), "agree": real == simulated, "cuda": sorted(real), "simulated": sorted(simulated)})
    return rows


def _run_json(argv: list[str]) -> dict[str, str]:
    proc = subprocess.run([sys.executable, "-W", "ignore", *argv], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def compare_messages() -> list[dict[str, Any]]:
    script = str(SIM / "hand_rules.py")
    real = _run_json([script])
    simulated = _run_json(["-m", "torchlint.runtime_probe.simcuda", script])
    return [{"case": case, "agree": real[case] == simulated.get(case), "cuda": real[case], "simulated": simulated.get(case)} for case in real]


def torture_on_cuda() -> str:
    proc = subprocess.run([sys.executable, "-W", "ignore", str(SIM / "torture_correct_usage.py")], capture_output=True, text=True, timeout=600)
    return (proc.stdout + proc.stderr).strip().splitlines()[-1] if (proc.stdout + proc.stderr).strip() else f"exit {proc.returncode}"


def replay_snapshot(snapshot: dict[str, Any], total_memory: int, expandable: bool) -> dict[str, Any]:
    """A `torch.cuda.memory._snapshot()` (device 0's trace) replayed through the allocator
    model of a device of `total_memory` bytes: reserved bytes, real and model."""
    from torchlint.runtime_probe.simcuda.allocator import AllocatorConfig, CachingAllocator, replay

    result = replay(snapshot["device_traces"][0], CachingAllocator(AllocatorConfig(total_memory, None, expandable)))
    return {
        "allocations": result.allocations,
        "real_reserved_mib": round(result.real_reserved / MIB, 1),
        "model_reserved_mib": round(result.model_reserved / MIB, 1),
        "max_difference_mib": round(result.max_difference / MIB, 1),
    }


def compare_memory() -> list[dict[str, Any]]:
    import torch

    total = torch.cuda.get_device_properties(0).total_memory
    rows = []
    for name in ("growing_lengths", "steady_lengths"):
        for expandable in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                snapshot_file = Path(tmp) / "snapshot.pickle"
                env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=f"expandable_segments:{expandable}")
                subprocess.run([sys.executable, "-W", "ignore", "-c", RECORD, str(snapshot_file), str(SIM / f"{name}.py")], check=True, env=env, timeout=600, capture_output=True)
                with open(snapshot_file, "rb") as handle:
                    snapshot = pickle.load(handle)
            rows.append({"script": name, "expandable_segments": expandable, **replay_snapshot(snapshot, total, expandable)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description="Compare simulated CUDA with a real GPU.")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("simcuda_gpu_check: no torch here; nothing to compare")
        return 0
    if not torch.cuda.is_available():
        print(f"simcuda_gpu_check: torch {torch.__version__} sees no CUDA device; skipped (simulation is only compared with a real GPU)")
        return 0
    print(f"simcuda_gpu_check: torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    report: dict[str, Any] = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    report["torture_on_cuda"] = torture_on_cuda()
    print(f"torture suite on CUDA: {report['torture_on_cuda']}")
    report["messages"] = compare_messages()
    for row in report["messages"]:
        print(f"  {'same' if row['agree'] else 'DIFFERENT'}: {row['case']}" + ("" if row["agree"] else f"\n    cuda:      {row['cuda']}\n    simulated: {row['simulated']}"))
    report["memory"] = compare_memory()
    for row in report["memory"]:
        print(f"  memory {row['script']} expandable={row['expandable_segments']}: real {row['real_reserved_mib']} MiB, model {row['model_reserved_mib']} MiB, largest difference {row['max_difference_mib']} MiB over {row['allocations']} allocations")
    report["verdicts"] = compare_verdicts()
    for row in report["verdicts"]:
        print(f"  {'agree' if row['agree'] else 'DISAGREE'}: {row['script']}" + ("" if row["agree"] else f"\n    cuda:      {row['cuda']}\n    simulated: {row['simulated']}"))
    agreed = sum(r["agree"] for r in report["verdicts"])
    same = sum(r["agree"] for r in report["messages"])
    print(f"SIMCUDA_GPU_CHECK verdicts {agreed}/{len(report['verdicts'])} agree, messages {same}/{len(report['messages'])} same")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0 if agreed == len(report["verdicts"]) else 1


if __name__ == "__main__":
    sys.exit(main())
