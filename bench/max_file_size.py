"""Peak memory of checking one big module, by its size: the figures behind the defaults
of `max-file-size` and `max-file-tokens` (docs/performance.md).

    python bench/max_file_size.py [--sizes 0.5,1,2,4] [--kinds training,table]
                                  [--torchlint .venv/bin/torchlint]

For each kind and size (MB), a module is written to a temporary folder and checked once
with `torchlint check --jobs 1 --no-cache` under `/usr/bin/time -v`, with both limits
raised above it: `training` is realistic training code (`make_tree.py`'s big module:
models, loaders, training loops, a few of the bugs torchlint finds), `table` a generated
lookup table (about one token per byte, the densest code there is). Prints size, lines,
tokens, wall time, peak RSS, and peak RSS per byte and per token of source: memory
follows tokens, not bytes. Linux only (GNU time).
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

from torchlint.sources import count_tokens  # noqa: E402

MB = 1_000_000


def module_of_size(size: int, seed: int = 0) -> str:
    """Training code of about `size` bytes, valid Python, the same for the same seed."""
    sample = make_file("big", 2_000, random.Random(seed), 10_000_000, bugs=True)
    bytes_per_line = len(sample.encode()) / sample.count("\n")
    text = make_file("big", int(size / bytes_per_line), random.Random(seed), 10_000_000, bugs=True)
    return text


def table_of_size(size: int) -> str:
    """A generated lookup table of about `size` bytes that triggers a rule."""
    row = "a = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
    return "import torch\nloss.backward()\nopt.step()\n" + row * (size // len(row))


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
    parser.add_argument("--kinds", default="training,table", help="training, table or both")
    parser.add_argument("--torchlint", default=str(Path(sys.executable).with_name("torchlint")))
    args = parser.parse_args()
    makers = {"training": module_of_size, "table": table_of_size}
    print(f"{'kind':>8} {'MB':>5} {'lines':>8} {'tokens':>9} {'wall s':>7} {'peak RSS MB':>11} {'RSS/byte':>8} {'RSS/token':>9}  exit")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for kind in args.kinds.split(","):
            for size in (float(s) * MB for s in args.sizes.split(",")):
                text = makers[kind](int(size))
                path = folder / f"big_{kind}_module.py"
                path.write_text(text, encoding="utf-8")
                actual = len(text.encode())
                tokens = count_tokens(text)
                config = folder / "torchlint.toml"
                config.write_text(f"max-file-size = {actual + 1}\nmax-file-tokens = {tokens + 1}\n", encoding="utf-8")
                wall, rss, status = measure(args.torchlint, path, config)
                lines = text.count("\n")
                print(
                    f"{kind:>8} {actual / MB:5.2f} {lines:8,} {tokens:9,} {wall:7.1f} {rss / MB:11.0f} "
                    f"{rss / actual:8.0f} {rss / tokens:9.0f}  {status}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
