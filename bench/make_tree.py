"""Generate a large synthetic PyTorch project to benchmark torchlint on.

    python bench/make_tree.py OUT [--lines 1000000] [--big-lines 60000] [--seed 0]

The tree looks like a training repository: models, data pipelines, utilities, tests,
and a minority of training and evaluation scripts (the only files that call
`backward()`), with file sizes spread like real ones (most a few hundred lines, a few
thousand-line files), and one huge generated module of `--big-lines` lines full of
training code, to check that time grows linearly with lines. A few scripts carry the
bugs torchlint looks for. Every file is valid Python (checked as it is written); the
same seed gives the same tree.
"""

from __future__ import annotations

import argparse
import ast
import random
from pathlib import Path

HEADERS = {
    "models": "import math\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n",
    "data": "import os\nimport random\n\nimport numpy as np\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\n",
    "utils": "import json\nimport logging\nimport os\nimport time\n\nimport torch\n\nlogger = logging.getLogger(__name__)\n\n\n",
    "train": "import argparse\nimport time\n\nimport torch\nimport torch.nn as nn\nfrom torch.cuda.amp import GradScaler, autocast\n\n\n",
    "tests": "import pytest\nimport torch\n\n\n",
}

MODEL_BLOCKS = [
    '''class {Name}MLP(nn.Module):
    """Feed-forward block of {name} with a residual connection."""

    def __init__(self, dim: int = {dim}, hidden: int = {hidden}, dropout: float = 0.{p}) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(dropout)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        residual = x
        x = self.norm(x)
        x = self.fc2(self.drop(self.act(self.fc1(x))))
        return residual + self.drop(x)

''',
    '''class {Name}Attention(nn.Module):
    def __init__(self, dim: int = {dim}, heads: int = {heads}) -> None:
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=False)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        if mask is not None:
            attn = attn.masked_fill(mask == 0, float("-inf"))
        attn = attn.softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj(out)

''',
    '''class {Name}ConvBlock(nn.Module):
    def __init__(self, in_ch: int = {ch}, out_ch: int = {ch2}, stride: int = {stride}) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False), nn.BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))

''',
    '''def init_{name}_weights(module: nn.Module, std: float = 0.0{p}) -> None:
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=std)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


def {name}_positional_encoding(length: int, dim: int = {dim}) -> torch.Tensor:
    position = torch.arange(length).unsqueeze(1)
    div = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
    pe = torch.zeros(length, dim)
    pe[:, 0::2] = torch.sin(position * div)
    pe[:, 1::2] = torch.cos(position * div)
    return pe

''',
]

DATA_BLOCKS = [
    '''class {Name}Dataset(Dataset):
    """Samples of {name} stored as .npy files under `root`."""

    def __init__(self, root: str, split: str = "train", transform=None) -> None:
        self.root = os.path.join(root, split)
        self.files = sorted(f for f in os.listdir(self.root) if f.endswith(".npy"))
        self.transform = transform

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int):
        sample = np.load(os.path.join(self.root, self.files[index]))
        x = torch.from_numpy(sample[:-1]).float()
        y = torch.tensor(sample[-1]).long()
        if self.transform is not None:
            x = self.transform(x)
        return x, y

''',
    '''def {name}_collate(batch):
    xs, ys = zip(*batch)
    lengths = torch.tensor([x.shape[0] for x in xs])
    padded = torch.nn.utils.rnn.pad_sequence(xs, batch_first=True, padding_value={p})
    return padded, torch.stack(ys), lengths


def make_{name}_loader(dataset, batch_size: int = {batch}, workers: int = {workers}, shuffle: bool = True):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        num_workers=workers,
        pin_memory=True,
        collate_fn={name}_collate,
        drop_last=shuffle,
    )

''',
    '''class {Name}Augment:
    def __init__(self, p: float = 0.{p}, noise: float = 0.0{p}) -> None:
        self.p = p
        self.noise = noise

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if random.random() < self.p:
            x = torch.flip(x, dims=[-1])
        if self.noise > 0:
            x = x + self.noise * torch.randn_like(x)
        return (x - x.mean()) / (x.std() + 1e-6)

''',
]

UTIL_BLOCKS = [
    '''class {Name}Meter:
    """Running average of {name}."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sum = 0.0
        self.count = 0

    def update(self, value: float, n: int = 1) -> None:
        self.sum += value * n
        self.count += n

    @property
    def avg(self) -> float:
        return self.sum / max(self.count, 1)

''',
    '''def save_{name}_checkpoint(model, optimizer, epoch: int, path: str) -> None:
    state = {{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}}
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)
    logger.info("saved %s at epoch %d", path, epoch)


def load_{name}_checkpoint(model, optimizer, path: str, device: str = "cpu") -> int:
    state = torch.load(path, map_location=device)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["epoch"] + 1

''',
    '''def {name}_config(path: str) -> dict:
    with open(path) as f:
        config = json.load(f)
    config.setdefault("lr", {lr})
    config.setdefault("batch_size", {batch})
    config.setdefault("epochs", {epochs})
    for key in ("lr", "weight_decay"):
        if key in config:
            config[key] = float(config[key])
    return config

''',
    '''def benchmark_{name}(model, x, iters: int = {iters}) -> float:
    model.eval()
    with torch.no_grad():
        for _ in range(5):
            model(x)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(iters):
            model(x)
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters

''',
]

TRAIN_BLOCKS = [
    '''def train_{name}_epoch(model, loader, optimizer, criterion, device, scaler=None, clip: float = {clip}):
    model.train()
    total, seen = 0.0, 0
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        with autocast(enabled=scaler is not None):
            loss = criterion(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
        total += loss.item() * x.size(0)
        seen += x.size(0)
    return total / max(seen, 1)

''',
    '''@torch.no_grad()
def evaluate_{name}(model, loader, device):
    model.eval()
    correct, seen = 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        pred = model(x).argmax(dim=-1)
        correct += (pred == y).sum().item()
        seen += y.numel()
    return correct / max(seen, 1)

''',
    '''def fit_{name}(model, train_loader, val_loader, epochs: int = {epochs}, lr: float = {lr}):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    best = 0.0
    for epoch in range(epochs):
        start = time.time()
        train_loss = train_{name}_epoch(model, train_loader, optimizer, criterion, device)
        accuracy = evaluate_{name}(model, val_loader, device)
        scheduler.step()
        best = max(best, accuracy)
        print(f"epoch {{epoch}} loss {{train_loss:.4f}} acc {{accuracy:.3f}} ({{time.time() - start:.1f}}s)")
    return best

''',
    '''def accumulate_{name}(model, loader, optimizer, accum_steps: int = {accum}):
    model.train()
    optimizer.zero_grad()
    for i, (x, y) in enumerate(loader):
        loss = nn.functional.mse_loss(model(x), y) / accum_steps
        loss.backward()
        if (i + 1) % accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()

''',
]

BUG_BLOCKS = [
    '''def buggy_{name}_loop(model, loader, optimizer):
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()

''',
    '''def time_{name}_forward(model, x):
    x = x.cuda()
    start = time.time()
    out = model(x)
    elapsed = time.time() - start
    return out, elapsed

''',
]

TEST_BLOCKS = [
    '''def test_{name}_shapes():
    x = torch.randn({batch}, {dim})
    layer = torch.nn.Linear({dim}, {hidden})
    assert layer(x).shape == ({batch}, {hidden})


@pytest.mark.parametrize("p", [0.0, 0.{p}, 0.5])
def test_{name}_dropout(p):
    layer = torch.nn.Dropout(p)
    layer.eval()
    x = torch.ones({dim})
    assert torch.equal(layer(x), x)

''',
]

KINDS = {
    "models": MODEL_BLOCKS,
    "data": DATA_BLOCKS,
    "utils": UTIL_BLOCKS,
    "train": TRAIN_BLOCKS,
    "tests": TEST_BLOCKS,
}
# Share of files per kind: training scripts are a minority in a real repository.
SHARES = {"models": 0.35, "data": 0.2, "utils": 0.18, "train": 0.12, "tests": 0.15}
WORDS = "alpha beta gamma delta sigma omega vision text audio graph patch token pixel frame mel".split()


def fill(template: str, rng: random.Random, serial: int) -> str:
    word = rng.choice(WORDS)
    name = f"{word}{serial}"
    return template.format(
        name=name,
        Name=name.capitalize(),
        dim=rng.choice([128, 256, 384, 512, 768]),
        hidden=rng.choice([512, 1024, 1536, 2048, 3072]),
        heads=rng.choice([4, 8, 12, 16]),
        ch=rng.choice([32, 64, 128]),
        ch2=rng.choice([64, 128, 256]),
        stride=rng.choice([1, 2]),
        p=rng.randint(1, 4),
        batch=rng.choice([16, 32, 64, 128]),
        workers=rng.choice([2, 4, 8]),
        lr=rng.choice(["1e-3", "3e-4", "1e-4"]),
        epochs=rng.choice([10, 30, 90]),
        iters=rng.choice([50, 100]),
        clip=rng.choice(["1.0", "5.0"]),
        accum=rng.choice([2, 4, 8]),
    )


def make_file(kind: str, target_lines: int, rng: random.Random, serial: int, bugs: bool) -> str:
    parts = [HEADERS["train" if kind == "big" else kind]]
    blocks = TRAIN_BLOCKS if kind == "big" else KINDS[kind]
    lines = parts[0].count("\n")
    while lines < target_lines:
        template = rng.choice(BUG_BLOCKS) if bugs and rng.random() < 0.1 else rng.choice(blocks)
        serial += 1
        block = fill(template, rng, serial)
        parts.append(block)
        lines += block.count("\n")
    return "".join(parts)


def file_sizes(total: int, rng: random.Random) -> list[int]:
    """Line counts spread like a real repository's: a median of about 200, a long tail."""
    sizes: list[int] = []
    while sum(sizes) < total:
        sizes.append(min(max(int(rng.lognormvariate(5.3, 0.9)), 20), 4000))
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--lines", type=int, default=1_000_000, help="total lines of the ordinary files")
    parser.add_argument("--big-lines", type=int, default=60_000, help="lines of the one huge module (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    kinds = list(SHARES)
    files = lines = 0
    for i, size in enumerate(file_sizes(args.lines, rng)):
        kind = rng.choices(kinds, weights=[SHARES[k] for k in kinds])[0]
        package = args.out / "project" / kind / f"group{i % 20:02d}"
        package.mkdir(parents=True, exist_ok=True)
        text = make_file(kind, size, rng, i * 1000, bugs=kind == "train" and rng.random() < 0.2)
        write(package / f"{kind}_{i:05d}.py", text)
        files += 1
        lines += text.count("\n")
    if args.big_lines:
        folder = args.out / "project" / "generated"
        folder.mkdir(parents=True, exist_ok=True)
        text = make_file("big", args.big_lines, rng, 10_000_000, bugs=True)
        write(folder / "big_training_module.py", text)
        files += 1
        lines += text.count("\n")
        print(f"big module: {text.count(chr(10))} lines")
    print(f"{files} files, {lines} lines under {args.out}")


def write(path: Path, text: str) -> None:
    ast.parse(text)  # every generated file must be valid Python
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
