import argparse

import torch
import yaml
from torch import optim
from torch.amp import autocast
from torch.optim.lr_scheduler import CosineAnnealingLR
from torch.utils.data import DataLoader
from tqdm import tqdm

from datasets.co3d import Co3DDataset
from models.losses import MultiTaskLoss
from models.rig3r import Rig3R

parser = argparse.ArgumentParser(description="Train Rig3R model")
parser.add_argument("--config", type=str, required=True)
args = parser.parse_args()
with open(args.config, "r") as f:
    train_cfg = yaml.safe_load(f)

device = torch.device(train_cfg.get("device", "cuda") if torch.cuda.is_available() else "cpu")
train_loader = DataLoader(Co3DDataset(subset="train"), batch_size=train_cfg["batch_size"], shuffle=True, num_workers=4)
val_loader = DataLoader(Co3DDataset(subset="val"), batch_size=train_cfg["batch_size"], shuffle=False, num_workers=4)

model = Rig3R(img_size=128, patch_size=8, embed_dim=128, metadata_dim=128, num_decoder_layers=2, num_heads=2)
model.to(device)
optimizer = optim.AdamW(model.parameters(), lr=float(train_cfg["optimizer"]["lr"]), weight_decay=0.01)
scheduler = CosineAnnealingLR(optimizer, T_max=train_cfg["scheduler"]["T_max"])
criterion = MultiTaskLoss(w_point=1.0, w_pose=1.0, w_rig=1.0)


def unpack_batch(batch, device):
    images = batch["images"].to(device)
    metadata = batch["metadata"]
    for key, value in metadata.items():
        if value is not None:
            metadata[key] = value.to(device)
    return images, metadata


num_epochs = train_cfg.get("epochs", 50)
for epoch in range(num_epochs):
    model.train()
    running_loss = 0.0
    for batch_idx, batch in enumerate(tqdm(train_loader, leave=False)):
        images, metadata = unpack_batch(batch, device)

        optimizer.zero_grad()
        with autocast(device_type=str(device)):
            outputs = model(images, metadata)
        loss, loss_dict = criterion(outputs, batch)

        loss.backward()
        optimizer.step()
        running_loss += loss.item()

    scheduler.step()

    model.eval()
    val_loss = 0.0
    with torch.no_grad():
        for batch in val_loader:
            images, metadata = unpack_batch(batch, device)
            with autocast(device_type=str(device)):
                outputs = model(images, metadata)
            loss, _ = criterion(outputs, batch)
            val_loss += loss.item()
    print(f"Epoch [{epoch+1}/{num_epochs}] - Train Loss: {running_loss / len(train_loader):.4f} "
          f"Val Loss: {val_loss / len(val_loader):.4f}")
