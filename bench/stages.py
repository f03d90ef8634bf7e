"""Where torchlint's time goes, stage by stage, in one process.

    python bench/stages.py PATH...

For the files torchlint discovers under PATH, the CPU time of each stage of checking a
file, as `engine.check_source` runs them: reading and decoding, the trigger prefilter,
CPython's parser (the guard in front of LibCST's), LibCST's parser, the shared `Index`
walk, each rule, and the positions of reported nodes; with each stage's share of the
LibCST parse time. Only files that pass the prefilter go past it, as in a real run.
"""

from __future__ import annotations

import argparse
import ast
import time
import warnings
from collections import Counter
from pathlib import Path

import libcst as cst

from torchlint import api, engine
from torchlint.config import Config
from torchlint.discovery import discover
from torchlint.positions import node_positions
from torchlint.rule import FileContext
from torchlint.rules import _analysis
from torchlint.sources import SourceFile, decode, read_bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    files = discover([str(Path(p).resolve()) for p in args.paths], Config(), Path.cwd())
    rules = api.enabled_rules(Config())
    cost: Counter[str] = Counter()
    parsed = parsed_lines = with_findings = lines = 0

    def timed(stage: str, start: float) -> float:
        now = time.process_time()
        cost[stage] += now - start
        return now

    for path in files:
        start = time.process_time()
        data = read_bytes(path)
        source = decode(path, data) if isinstance(data, bytes) else data
        start = timed("read and decode", start)
        if not isinstance(source, SourceFile):
            continue
        lines += source.text.count("\n")
        active = engine.triggered_rules(source.text, rules)
        start = timed("prefilter", start)
        if not active:
            continue
        try:
            with warnings.catch_warnings(), engine.recursion_limit(engine.GUARD_RECURSION_LIMIT):
                warnings.simplefilter("ignore")
                ast.parse(source.text)
            start = timed("CPython parse (guard)", start)
            module = cst.parse_module(source.text)
        except Exception:
            continue
        start = timed("LibCST parse", start)
        parsed += 1
        parsed_lines += source.text.count("\n")
        ctx = FileContext(str(path), source.text, module)
        _analysis.index(ctx)
        start = timed("Index", start)
        reported = []
        with engine.recursion_limit(engine.TREE_RECURSION_LIMIT):
            for rule in active:
                try:
                    reported.extend(rule.check(ctx))
                except Exception:
                    pass
                start = timed(f"rule {rule.CODE}", start)
            if reported:
                with_findings += 1
                node_positions(module, (report.node for report in reported))
                start = timed("positions", start)

    parse = cost["LibCST parse"] or 1.0
    print(f"{len(files)} files, {lines:,} lines; {parsed} files ({parsed_lines:,} lines) passed the prefilter; "
          f"{with_findings} had findings\n")
    print("| stage | CPU s | share of the LibCST parse |")
    print("|---|---:|---:|")
    for stage, seconds in cost.most_common():
        print(f"| {stage} | {seconds:.2f} | {seconds / parse:.3f} |")


if __name__ == "__main__":
    main()
