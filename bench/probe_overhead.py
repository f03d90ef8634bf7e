"""How much the probe slows a training loop down: runs `overhead_loop.py` plainly and
under the probe, alternately, and prints the ratio of the median loop CPU times.
Target: <= 1.2.

    python bench/probe_overhead.py [--steps 300] [--rounds 7]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

from torchlint.runtime_probe import runner

LOOP = Path(__file__).resolve().parent / "overhead_loop.py"
SECONDS = re.compile(r"loop_seconds=([0-9.]+)")


def _seconds(output: str) -> float:
    match = SECONDS.search(output)
    if match is None:
        raise SystemExit(f"the loop did not finish:\n{output}")
    return float(match.group(1))


def plain(steps: int) -> float:
    done = subprocess.run([sys.executable, str(LOOP), str(steps)], capture_output=True, text=True, check=True)
    return _seconds(done.stdout)


def probed(steps: int) -> float:
    outcome = runner.run(runner.RunSpec(LOOP, args=(str(steps),), max_steps=steps + 1, timeout=600.0))
    if outcome.reports and outcome.reports[0].events:
        raise SystemExit(f"the probe reported something on a clean loop: {outcome.reports[0].events}")
    return _seconds(outcome.output_tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    plain_times, probed_times = [], []
    for round_ in range(1, args.rounds + 1):
        plain_times.append(plain(args.steps))
        probed_times.append(probed(args.steps))
        print(f"round {round_}: plain {plain_times[-1]:.3f} s, probed {probed_times[-1]:.3f} s")
    plain_median, probed_median = statistics.median(plain_times), statistics.median(probed_times)
    print(f"{args.steps} steps, median of {args.rounds}: plain {plain_median:.3f} s, probed {probed_median:.3f} s CPU")
    print(f"overhead ratio {probed_median / plain_median:.3f} (target <= 1.2)")


if __name__ == "__main__":
    main()
