"""Slowdown of simulated CUDA: the same training loops run as plain CPU code and on
simulated CUDA (allocator model included), side by side in one run, one intra-op thread.

    .venv/bin/python bench/simcuda_slowdown.py [--steps 30] [--repeats 3] [--baseline REV] [--count | --instructions]

Prints milliseconds per step (the best of the repeats) and the ratio per loop, in CPU
time of the process (all its threads: autograd runs a simulated device's backward on a
thread of its own) and in wall time, which on a loaded machine also holds the waits for
that thread to be scheduled. The target is a ratio of at most 3 on a training loop.

`--baseline REV` also runs the same loops on the simulator of git revision REV (its
files, laid out as the installed package), alternated with the others: a before/after
comparison of a change to the simulator in one run, under the same load.

`--count` prints instead, per loop, the Python bytecodes and Python calls executed per
step: counts that load on the machine does not blur. Backward runs on the calling thread
there (autograd's multithreading off), so that the trace sees it.

`--instructions` prints instead the machine instructions per step of each loop, all
threads, C++ included, counted by valgrind's callgrind with instrumentation switched on
for the measured steps only (startup runs uninstrumented): a count that load does not
blur either, and that sees what the bytecode count misses (torch's dispatch to Python,
wrapper creation, allocations). Slow: use few `--steps`. Instruction ratios are not time
ratios where compute dominates (vectorised kernels, which valgrind also runs as AVX2)."""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent

LOOPS = ("tiny_mlp", "small_cnn", "transformer_bf16", "wide_mlp")


def _loop(name: str, device: str) -> Callable[[], Any]:
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)
    autocast_device = "cuda" if device == "cuda" else "cpu"
    amp: Any = None
    if name == "tiny_mlp":
        model: nn.Module = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
        x, y, loss_fn = torch.randn(32, 64), torch.randint(0, 10, (32,)), F.cross_entropy
        make_optimizer: Callable[..., torch.optim.Optimizer] = torch.optim.Adam
    elif name == "small_cnn":
        model = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 8 * 8, 10),
        )
        x, y, loss_fn = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,)), F.cross_entropy
        make_optimizer = lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9)  # noqa: E731
    elif name == "transformer_bf16":

        class TinyLM(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.embed = nn.Embedding(64, 64)
                layer = nn.TransformerEncoderLayer(64, 4, 128, batch_first=True)
                self.blocks = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.out = nn.Linear(64, 64)

            def forward(self, idx: torch.Tensor) -> torch.Tensor:
                return self.out(self.blocks(self.embed(idx))).flatten(0, 1)

        model, amp = TinyLM(), torch.bfloat16
        x, y, loss_fn = torch.randint(0, 64, (8, 32)), torch.randint(0, 64, (8 * 32,)), F.cross_entropy
        make_optimizer = torch.optim.AdamW
    else:
        model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024))
        x, y, loss_fn = torch.randn(256, 1024), torch.randn(256, 1024), F.mse_loss
        make_optimizer = torch.optim.AdamW
    model = model.to(device)
    optimizer = make_optimizer(model.parameters())
    x, y = x.to(device), y.to(device)

    def step() -> Any:
        with torch.autocast(autocast_device, dtype=amp, enabled=amp is not None):
            loss = loss_fn(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss

    return step


def _signal(folder: str | None, name: str, answer: str) -> None:
    """Under `--instructions`: tell the parent that `name` happened, wait for its `answer`."""
    if folder:
        Path(folder, name).touch()
        while not Path(folder, answer).exists():
            time.sleep(0.05)


def worker(device: str, steps: int, handshake: str | None = None) -> dict[str, float]:
    """Per loop, "<loop>" CPU ms per step and "<loop>/wall" wall ms per step; with a
    `handshake` folder, the measured steps of each loop are bracketed by `_signal`."""
    import torch

    torch.set_num_threads(1)
    timings = {}
    for name in LOOPS:
        step = _loop(name, device)
        for _ in range(3):
            step()
        _signal(handshake, f"{name}.ready", f"{name}.go")
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(steps):
            loss = step()
        loss.item()
        timings[name] = (time.process_time() - cpu) / steps * 1000
        timings[f"{name}/wall"] = (time.perf_counter() - wall) / steps * 1000
        _signal(handshake, f"{name}.done", f"{name}.next")
    return timings


def count(device: str, steps: int) -> dict[str, float]:
    """Per loop, "<loop>" Python bytecodes per step and "<loop>/calls" Python calls per step."""
    import torch

    torch.set_num_threads(1)
    torch.autograd.set_multithreading_enabled(False)
    tally = {"opcode": 0, "call": 0}

    def trace(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        if event in tally:
            tally[event] += 1
        return trace

    counts = {}
    for name in LOOPS:
        step = _loop(name, device)
        for _ in range(3):
            step()
        tally.update(opcode=0, call=0)
        sys.settrace(trace)
        for _ in range(steps):
            step()
        sys.settrace(None)
        counts[name] = tally["opcode"] / steps
        counts[f"{name}/calls"] = tally["call"] / steps
    return counts


def _instructions(device: str, steps: int, package: Path | None = None) -> dict[str, float]:
    """Per loop, the instructions per step of a worker run under callgrind, counted for
    its measured steps only: the parent switches instrumentation on and off around them."""
    prefix = ["-m", "torchlint.runtime_probe.simcuda"] if device == "cuda" else []
    env = {**os.environ, "PYTHONPATH": str(package)} if package else dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="simcuda-instructions-") as folder:
        out = Path(folder, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}", sys.executable, "-W", "ignore", *prefix]
        command += [str(Path(__file__).resolve()), "--worker", device, "--steps", str(steps), "--handshake", folder]
        log = Path(folder, "valgrind.log")
        with log.open("w") as stderr:  # a file, not a pipe that could fill and block the worker
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=package)

        def wait(name: str) -> None:
            while not Path(folder, name).exists():
                if proc.poll() is not None:
                    raise RuntimeError(f"worker under valgrind ended early: {log.read_text()[-2000:]}")
                time.sleep(0.1)

        def control(*flags: str) -> None:
            subprocess.run(["callgrind_control", *flags, str(proc.pid)], capture_output=True, check=True)

        counts = {}
        for name in LOOPS:
            wait(f"{name}.ready")
            control("--zero")
            control("--instr=on")
            Path(folder, f"{name}.go").touch()
            wait(f"{name}.done")
            control("--instr=off")
            control("--dump")
            dumps = sorted(glob.glob(f"{out}.*"), key=os.path.getmtime)
            totals = [line for line in Path(dumps[-1]).read_text().splitlines() if line.startswith("totals:")]
            counts[name] = int(totals[0].split()[1]) / steps
            Path(folder, f"{name}.next").touch()
        proc.wait()
    return counts


def _run(device: str, steps: int, package: Path | None = None, counting: bool = False) -> dict[str, float]:
    """One worker process; with `package`, a folder holding another `torchlint` package,
    the simulator is that one (the folder leads `sys.path`)."""
    prefix = ["-m", "torchlint.runtime_probe.simcuda"] if device == "cuda" else []
    env = {**os.environ, "PYTHONPATH": str(package)} if package else None
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", *prefix, str(Path(__file__).resolve()), "--worker", device, "--steps", str(steps), *(["--count"] if counting else [])],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=package,  # `-m` puts the working folder first on sys.path
    )
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def baseline_package(revision: str, folder: Path) -> Path:
    """The files of `revision`, laid out under `folder` as the installed package is
    (pyproject's `package-dir`: `torchlint.rules` lives in `rules/`, ...); returns the
    folder to put on sys.path."""
    source = folder / "source"
    source.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    layout = folder / "package"
    package_dirs = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    for name, directory in sorted(package_dirs.items(), key=lambda item: item[0].count(".")):
        target = layout.joinpath(*name.split("."))
        if target.exists():
            continue  # inside a folder already laid out
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source / directory, target_is_directory=True)
    return layout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV", help="also run the simulator of this git revision")
    parser.add_argument("--count", action="store_true", help="count Python bytecodes and calls per step instead of timing")
    parser.add_argument("--instructions", action="store_true", help="count machine instructions per step under valgrind instead of timing")
    parser.add_argument("--worker", choices=("cpu", "cuda"))
    parser.add_argument("--handshake", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(count(args.worker, args.steps) if args.count else worker(args.worker, args.steps, args.handshake)))
        return
    with tempfile.TemporaryDirectory(prefix="simcuda-baseline-") as folder:
        package = baseline_package(args.baseline, Path(folder)) if args.baseline else None
        runs: dict[str, tuple[str, Path | None]] = {"cpu": ("cpu", None), "cuda": ("cuda", None)}
        if package:
            runs["baseline"] = ("cuda", package)
        if args.instructions:
            instructions = {run: _instructions(device, args.steps, where) for run, (device, where) in runs.items()}
        elif args.count:
            counts = {run: _run(device, args.steps, where, counting=True) for run, (device, where) in runs.items()}
        else:
            best: dict[str, dict[str, float]] = {run: {} for run in runs}
            for _ in range(args.repeats):
                for run, (device, where) in runs.items():  # alternated, so that load on the machine hits all
                    for name, ms in _run(device, args.steps, where).items():
                        best[run][name] = min(best[run].get(name, float("inf")), ms)
    labels = {"cpu": "plain CPU", "cuda": "simulated", "baseline": f"{args.baseline}"[:12]}
    if args.instructions:
        print(f"{'loop':<18} {'plain CPU instr/step':>21}" + "".join(f" {labels[run] + ' instr/step':>23} {'ratio':>7}" for run in runs if run != "cpu"))
        for name in LOOPS:
            plain = instructions["cpu"][name]
            print(f"{name:<18} {plain:>21,.0f}" + "".join(f" {instructions[run][name]:>23,.0f} {instructions[run][name] / plain:>6.2f}x" for run in runs if run != "cpu"))
        print("SIMCUDA_INSTRUCTIONS " + json.dumps(instructions))
        return
    if args.count:
        print(f"{'loop':<18}" + "".join(f" {labels[run] + ' bytecodes/step':>28} {'calls/step':>10}" for run in runs))
        for name in LOOPS:
            print(f"{name:<18}" + "".join(f" {counts[run][name]:>28.0f} {counts[run][name + '/calls']:>10.0f}" for run in runs))
        print("SIMCUDA_COUNTS " + json.dumps(counts))
        return
    header = f"{'loop':<18} {'plain CPU ms/step':>18} {'simulated ms/step':>18} {'slowdown':>9} {'wall slowdown':>14}"
    if package:
        header += f" {args.baseline[:12] + ' ms/step':>20} {'slowdown':>9} {'wall slowdown':>14}"
    print(header)
    for name in LOOPS:
        cpu = best["cpu"][name]
        row = f"{name:<18} {cpu:>18.2f}"
        for run in runs:
            if run != "cpu":
                sim = best[run][name]
                wall = best[run][f"{name}/wall"] / best["cpu"][f"{name}/wall"]
                row += f" {sim:>{18 if run == 'cuda' else 20}.2f} {sim / cpu:>8.2f}x {wall:>13.2f}x"
        print(row)
    for run in runs:
        if run != "cpu":
            ratios = {key: round(best[run][key] / best["cpu"][key], 2) for key in best["cpu"]}
            print(("SIMCUDA_SLOWDOWN " if run == "cuda" else f"SIMCUDA_SLOWDOWN_BASELINE {args.baseline} ") + json.dumps(ratios))


if __name__ == "__main__":
    main()
