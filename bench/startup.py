"""Start-up of a one-file `torchlint check` (the pre-commit and editor case), side by
side with `python -c pass` and flake8 in one run.

    python bench/startup.py [--repeat 15]

Each command runs `--repeat` times in interleaved rounds, each in a fresh process;
the fastest run of each is shown (other load on the machine only ever slows a run
down), with its CPU time (user + system) and the ratio to flake8's wall time:

- `python -c pass`: the interpreter alone;
- `python -c "import libcst"`: the floor of any check that parses a file;
- `flake8 --select E,F,W,C90` on the same file (pycodestyle, pyflakes, mccabe: flake8's
  defaults; torchlint's flake8 plugin, installed beside it, does no work unless TL is
  selected);
- `torchlint check --no-cache` on a training script of `--lines` lines (80 by default;
  bench/make_tree.py's generator, with its bugs) that most rules' triggers accept:
  LibCST and those rules are imported;
- `torchlint check --no-cache` on a 20-line attention module that only TL003's
  triggers accept: one rule and the analysis library are imported;
- the training script with the result cache warm (a second pre-commit run on an unchanged file);
- `torchlint check --no-cache` on a utility module that no rule's triggers accept: no
  rule and no LibCST is imported.

The goal: the one-file check within 0.2 s, against flake8's 0.15 s, on the machine
where the issue measured 0.32 s.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from make_tree import make_file  # noqa: E402

UTILITY = '''"""Small helpers."""

import json
import os


def load(path):
    with open(path) as f:
        return json.load(f)


def ensure_dir(path):
    os.makedirs(path, exist_ok=True)
    return path
'''


# As installed: modules load from their compiled bytecode, which the warm-up run writes.
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}

MODEL = """import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((att @ v).transpose(1, 2).reshape(b, t, c))
"""


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--lines", type=int, default=80, help="length of the training script")
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    torchlint = str(bin_dir / "torchlint")
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        train = make_file("train", args.lines, random.Random(0), 1, bugs=True)
        (cwd / "train.py").write_text(train)
        (cwd / "util.py").write_text(UTILITY)
        (cwd / "model.py").write_text(MODEL)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import libcst'": [sys.executable, "-c", "import libcst"],
            "flake8 (E,F,W,C90)": [sys.executable, "-m", "flake8", "--isolated", "--select", "E,F,W,C90", "train.py"],
            "torchlint check, training script": [torchlint, "check", "--isolated", "--no-cache", "train.py"],
            "torchlint check, one rule's module": [torchlint, "check", "--isolated", "--no-cache", "model.py"],
            "torchlint check, cached": [torchlint, "check", "--isolated", "train.py"],
            "torchlint check, utility module": [torchlint, "check", "--isolated", "--no-cache", "util.py"],
        }
        for command in commands.values():  # warm-up: bytecode written, the cache filled
            subprocess.run(command, cwd=cwd, capture_output=True, check=False, env=ENV)
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.repeat):
            for name, command in commands.items():
                wall, cpu = timed(command, cwd)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu)
    flake8 = best["flake8 (E,F,W,C90)"][0]
    print(f"fastest of {args.repeat} runs; {os.cpu_count()} CPUs; training script of {train.count(chr(10))} lines")
    for name, (wall, cpu) in best.items():
        print(f"{name:36s} {wall * 1000:7.1f} ms wall  {cpu * 1000:7.1f} ms CPU  {wall / flake8:5.2f}x flake8")


if __name__ == "__main__":
    main()
