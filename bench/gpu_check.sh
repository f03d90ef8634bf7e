#!/usr/bin/env bash
# One-shot check of the probe's CUDA-only findings on a GPU machine: runs every test
# marked `gpu` (device mismatch, CUDA memory growth, fragmentation, unsynchronized
# timing; the pack-2 fixtures TL010/TL011/TL012 on CUDA, a DataLoader starving the GPU
# (TL017), and with two GPUs DDP ranks sharing one (TL016)) in a few minutes, then compares
# simulated CUDA with the GPU (bench/simcuda_gpu_check.py). Needs a CUDA build of torch already installed for $PYTHON:
# the virtual environment made here sees it (--system-site-packages) and installs no torch.
#
#   bash bench/gpu_check.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv-gpu}"

"$PYTHON" - <<'PY'
import sys
try:
    import torch
except ImportError:
    sys.exit("gpu_check: no torch for this Python; install a CUDA build of torch first")
if not torch.cuda.is_available():
    sys.exit(f"gpu_check: torch {torch.__version__} sees no CUDA device")
print(f"gpu_check: torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
PY

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv --system-site-packages "$VENV"
fi
# --no-deps: never let pip replace the machine's CUDA torch with another build.
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
"$VENV/bin/python" -c "import libcst, click, pytest" 2>/dev/null \
    || "$VENV/bin/python" -m pip install -q --disable-pip-version-check libcst click pytest
"$VENV/bin/pytest" -m gpu -v -p no:cacheprovider tests/test_probe_gpu.py "$@"
# Simulated CUDA against the real GPU: verdicts, messages, allocator traces.
"$VENV/bin/python" bench/simcuda_gpu_check.py --json "${SIMCUDA_REPORT:-simcuda_gpu_check.json}"
