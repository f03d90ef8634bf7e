"""`python -m torchlint.runtime_probe.simcuda SCRIPT [ARGS...]`: run a script on simulated
CUDA, without the probe (the benchmark and the simulator's own tests use it).
`TORCHLINT_SIMULATED_MEMORY` sets the device size in bytes."""

from __future__ import annotations

import os
import runpy
import sys

from torchlint.runtime_probe.simcuda import DEFAULT_MEMORY, clean_message, install


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: python -m torchlint.runtime_probe.simcuda SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    install(int(os.environ.get("TORCHLINT_SIMULATED_MEMORY") or DEFAULT_MEMORY))
    script = os.path.abspath(sys.argv[1])
    sys.argv = [script, *sys.argv[2:]]
    sys.path[0] = os.path.dirname(script)
    try:
        runpy.run_path(script, run_name="__main__")
    except Exception as error:
        error.args = tuple(clean_message(a) if isinstance(a, str) else a for a in error.args)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
