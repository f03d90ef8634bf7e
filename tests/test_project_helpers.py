"""Findings whose setup lives in a helper of another module: a process group started by
`utils/dist.py` (TL016) and gradients clipped by `utils/optim.py` (TL013), each with the
helper that does it right as the hard negative."""

from __future__ import annotations

from pathlib import Path

import pytest

from project_support import check, findings, write_project

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


def with_utils(root: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    """TL013 and TL016 in a project of `files` and a `utils` package."""
    write_project(root, {"pyproject.toml": "", "utils/__init__.py": "", **files})
    return findings(check(root), "TL013", "TL016")


def test_a_process_group_started_by_a_helper_needs_a_gpu_per_process(tmp_path: Path) -> None:
    helper = "import torch.distributed as dist\n\n\ndef init_distributed():\n    dist.init_process_group(backend='nccl')\n"
    assert with_utils(tmp_path, {"train.py": TRAIN_DDP, "utils/dist.py": helper}) == [("train.py", 9, "TL016")]


def test_a_helper_that_also_selects_the_gpu_is_enough(tmp_path: Path) -> None:
    helper = (
        "import os\nimport torch\nimport torch.distributed as dist\n\n\ndef init_distributed():\n"
        "    dist.init_process_group(backend='nccl')\n    torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n"
    )
    assert with_utils(tmp_path, {"train.py": TRAIN_DDP, "utils/dist.py": helper}) == []


NCCL_HELPER = "import torch.distributed as dist\n\n\ndef init_distributed(backend):\n    dist.init_process_group(backend=backend)\n"


def test_a_helper_started_process_group_counts_for_an_aliased_ddp_wrap(tmp_path: Path) -> None:
    script = (
        "from torch.nn.parallel import DistributedDataParallel as D\n\nfrom utils.dist import init_distributed\n\n"
        'init_distributed("nccl")\nmodel = D(Net().cuda())\n'
    )
    assert with_utils(tmp_path, {"train.py": script, "utils/dist.py": NCCL_HELPER}) == [("train.py", 6, "TL016")]


@pytest.mark.parametrize(
    "mention",
    [
        "# every rank wraps its model in DistributedDataParallel later",
        'print("DDP(model) comes later")',
        "from mylib import DDP\n\nDDP(x)",  # not torch's
    ],
)
def test_a_script_that_only_mentions_ddp_is_not_a_ddp_script(tmp_path: Path, mention: str) -> None:
    # Without a DDP wrap, a process group that a helper starts is not looked for: only the
    # script's own `init_process_group` says that it runs on NCCL.
    script = f'import torch\n\nfrom utils.dist import init_distributed\n\n{mention}\ninit_distributed("nccl")\nx = torch.randn(8, device="cuda")\n'
    assert with_utils(tmp_path, {"train.py": script, "utils/dist.py": NCCL_HELPER}) == []


def test_a_clip_helper_on_scaled_gradients(tmp_path: Path) -> None:
    helper = "import torch\n\n\ndef clip(model, optimizer, scaler, max_norm):\n    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
    assert with_utils(tmp_path, {"train.py": TRAIN_AMP, "utils/optim.py": helper}) == [("train.py", 11, "TL013")]


def test_a_clip_helper_that_unscales_first(tmp_path: Path) -> None:
    helper = (
        "import torch\n\n\ndef clip(model, optimizer, scaler, max_norm):\n    scaler.unscale_(optimizer)\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
    )
    assert with_utils(tmp_path, {"train.py": TRAIN_AMP, "utils/optim.py": helper}) == []


def test_a_helper_with_its_own_training_loop_is_reported_once_where_it_loops(tmp_path: Path) -> None:
    helper = (
        "def train(model, optimizer, loader):\n    for x, y in loader:\n"
        "        criterion(model(x), y).backward()\n        optimizer.step()\n"
    )
    script = "from utils.loop import train\n\nfor epoch in range(10):\n    train(model, optimizer, loader)\n"
    write_project(tmp_path, {"pyproject.toml": "", "utils/__init__.py": "", "utils/loop.py": helper, "train.py": script})
    assert findings(check(tmp_path), "TL001") == [("utils/loop.py", 4, "TL001")]
