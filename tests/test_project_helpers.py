"""Findings whose setup lives in a helper of another module: a process group started by
`utils/dist.py` (TL016) and gradients clipped by `utils/optim.py` (TL013), each with the
helper that does it right as the hard negative."""

from __future__ import annotations

import textwrap
from pathlib import Path

from torchlint import api
from torchlint.config import Config

TRAIN_DDP = """
from torch.nn.parallel import DistributedDataParallel as DDP

from utils.dist import init_distributed


def main():
    init_distributed()
    model = DDP(Net().cuda())
    fit(model)
"""

TRAIN_AMP = """
import torch

from utils.optim import clip

scaler = torch.cuda.amp.GradScaler()
for x, y in loader:
    with torch.autocast("cuda"):
        loss = criterion(model(x.cuda()), y.cuda())
    scaler.scale(loss).backward()
    clip(model, optimizer, scaler, 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
"""


def project(root: Path, files: dict[str, str]) -> list[tuple[str, str, int]]:
    (root / "pyproject.toml").write_text("")
    (root / "utils").mkdir()
    (root / "utils" / "__init__.py").write_text("")
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    result = api.check_paths([root], Config(), cwd=root, jobs=1)
    return sorted((Path(f.filename).name, f.code, f.line) for f in result.findings if f.code in ("TL013", "TL016"))


def test_a_process_group_started_by_a_helper_needs_a_gpu_per_process(tmp_path: Path) -> None:
    helper = "import torch.distributed as dist\n\n\ndef init_distributed():\n    dist.init_process_group(backend='nccl')\n"
    assert project(tmp_path, {"train.py": TRAIN_DDP, "utils/dist.py": helper}) == [("train.py", "TL016", 9)]


def test_a_helper_that_also_selects_the_gpu_is_enough(tmp_path: Path) -> None:
    helper = (
        "import os\nimport torch\nimport torch.distributed as dist\n\n\ndef init_distributed():\n"
        "    dist.init_process_group(backend='nccl')\n    torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n"
    )
    assert project(tmp_path, {"train.py": TRAIN_DDP, "utils/dist.py": helper}) == []


def test_a_clip_helper_on_scaled_gradients(tmp_path: Path) -> None:
    helper = "import torch\n\n\ndef clip(model, optimizer, scaler, max_norm):\n    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
    assert project(tmp_path, {"train.py": TRAIN_AMP, "utils/optim.py": helper}) == [("train.py", "TL013", 11)]


def test_a_clip_helper_that_unscales_first(tmp_path: Path) -> None:
    helper = (
        "import torch\n\n\ndef clip(model, optimizer, scaler, max_norm):\n    scaler.unscale_(optimizer)\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
    )
    assert project(tmp_path, {"train.py": TRAIN_AMP, "utils/optim.py": helper}) == []


def test_a_helper_with_its_own_training_loop_is_reported_once_where_it_loops(tmp_path: Path) -> None:
    helper = (
        "def train(model, optimizer, loader):\n    for x, y in loader:\n"
        "        criterion(model(x), y).backward()\n        optimizer.step()\n"
    )
    script = "from utils.loop import train\n\nfor epoch in range(10):\n    train(model, optimizer, loader)\n"
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "loop.py").write_text(helper)
    (tmp_path / "train.py").write_text(script)
    result = api.check_paths([tmp_path], Config(), cwd=tmp_path, jobs=1)
    assert [(Path(f.filename).name, f.line) for f in result.findings if f.code == "TL001"] == [("loop.py", 4)]
