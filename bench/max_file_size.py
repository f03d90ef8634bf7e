"""Peak memory of checking one big training module, by its size: the figures behind the
default `max-file-size` (docs/performance.md).

    python bench/max_file_size.py [--sizes 0.5,1,2,4] [--torchlint .venv/bin/torchlint]

For each size (MB), a module of realistic training code (`make_tree.py`'s big module:
models, loaders, training loops, a few of the bugs torchlint finds) is written to a
temporary folder and checked once with `torchlint check --jobs 1 --no-cache` under
`/usr/bin/time -v`, with `max-file-size` raised above it. Prints size, lines, wall time,
peak RSS and peak RSS per byte of source. Linux only (GNU time).
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_tree import make_file  # noqa: E402  (a sibling script, not a package)

MB = 1_000_000


def module_of_size(size: int, seed: int = 0) -> str:
    """Training code of about `size` bytes, valid Python, the same for the same seed."""
    sample = make_file("big", 2_000, random.Random(seed), 10_000_000, bugs=True)
    bytes_per_line = len(sample.encode()) / sample.count("\n")
    text = make_file("big", int(size / bytes_per_line), random.Random(seed), 10_000_000, bugs=True)
    return text


def measure(torchlint: str, path: Path, config: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in bytes, exit status) of one check of `path`."""
    command = ["/usr/bin/time", "-v", torchlint, "check", "--jobs", "1", "--no-cache", "--config", str(config), str(path)]
    done = subprocess.run(command, capture_output=True, text=True)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    if rss is None or wall is None:
        raise SystemExit(f"cannot read /usr/bin/time's output:\n{done.stderr[-2000:]}")
    hours, minutes, seconds = wall.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds), int(rss.group(1)) * 1024, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0.5,1,2,4", help="module sizes in MB, comma-separated")
    parser.add_argument("--torchlint", default=str(Path(sys.executable).with_name("torchlint")))
    args = parser.parse_args()
    print(f"{'MB':>5} {'lines':>8} {'wall s':>7} {'peak RSS MB':>11} {'RSS/byte':>8}  exit")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for size in (float(s) * MB for s in args.sizes.split(",")):
            text = module_of_size(int(size))
            path = folder / "big_training_module.py"
            path.write_text(text, encoding="utf-8")
            config = folder / "torchlint.toml"
            config.write_text(f"max-file-size = {len(text.encode()) + 1}\n", encoding="utf-8")
            wall, rss, status = measure(args.torchlint, path, config)
            actual = len(text.encode())
            lines = text.count("\n")
            print(f"{actual / MB:5.2f} {lines:8,} {wall:7.1f} {rss / MB:11.0f} {rss / actual:8.0f}  {status}", flush=True)


if __name__ == "__main__":
    main()
