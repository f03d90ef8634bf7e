"""Latency of `torchlint server`: from an edit to its diagnostics, as an editor sees it.

    python bench/lsp_latency.py [--lines 2000] [--edits 20]

A training module of `--lines` lines (bench/make_tree.py's generated training code,
with its bugs) is opened in a server driven over stdio by the test suite's JSON-RPC
client; then `--edits` times a line is changed (a full-text didChange, as most
clients send) and the time until the diagnostics of that version arrive is measured.
That time includes the server's debounce (`DEBOUNCE_SECONDS`). Printed: the time to
the first diagnostics after open, and the median and worst latency after a change,
against the goal of 300 ms; and, side by side in the same run, a bare
`libcst.parse_module` of the same text (the floor of any check that parses again
after each change) and a one-file `torchlint check --no-cache` of the module (process
start-up included), with the latency's ratio to the bare parse.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

from lsp_client import LspClient  # noqa: E402
from make_tree import make_file  # noqa: E402

GOAL_MS = 300
BARE_PARSE = """
import sys, time, libcst
text = open(sys.argv[1], encoding="utf-8").read()
best = min(
    (lambda t: (libcst.parse_module(text), time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(5)
)
print(best)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=20)
    args = parser.parse_args()
    text = make_file("big", args.lines, random.Random(0), 1, bugs=True)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "train_module.py"
        path.write_text(text)
        client = LspClient(Path(folder))
        client.request("initialize", {"processId": None, "rootUri": Path(folder).as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        uri = path.as_uri()
        began = time.perf_counter()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        found = client.diagnostics(uri)
        opened = time.perf_counter() - began
        latencies = []
        lines = text.split("\n")
        for version in range(2, args.edits + 2):
            edited = list(lines)
            edited[version] = edited[version] + f"  # edit {version}"
            began = time.perf_counter()
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": "\n".join(edited)}]},
            )
            client.diagnostics(uri)
            latencies.append(time.perf_counter() - began)
        client.close()
        began = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "torchlint", "check", "--isolated", "--no-cache", "-q", str(path)],
            capture_output=True,
            check=False,
        )
        cli = time.perf_counter() - began
        parse = float(subprocess.run([sys.executable, "-c", BARE_PARSE, str(path)], capture_output=True, text=True, check=True).stdout)
    ms = [t * 1000 for t in latencies]
    print(f"module: {text.count(chr(10))} lines, {len(found)} diagnostics")
    print(f"open -> diagnostics:            {opened * 1000:7.1f} ms")
    print(f"change -> diagnostics, median:  {statistics.median(ms):7.1f} ms  (goal <= {GOAL_MS} ms)")
    print(f"change -> diagnostics, worst:   {max(ms):7.1f} ms  over {len(ms)} edits")
    print(f"bare LibCST parse of the text:  {parse * 1000:7.1f} ms (best of 5)")
    print(f"change -> diagnostics / bare parse: {statistics.median(ms) / 1000 / parse:5.2f}x (median)")
    print(f"torchlint check of the same file: {cli * 1000:7.1f} ms (a fresh process)")


if __name__ == "__main__":
    main()
