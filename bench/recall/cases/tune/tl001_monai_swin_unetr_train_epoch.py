# Swin UNETR BTCV tutorial: training and validation helpers (the training helper as
# reported in the issue; the rest reconstructed after the tutorial's notebook).
import time

import torch
from monai.data import DataLoader, decollate_batch
from monai.inferers import sliding_window_inference
from monai.losses import DiceCELoss
from monai.metrics import DiceMetric
from monai.networks.nets import SwinUNETR
from monai.transforms import AsDiscrete

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
max_epochs = 300
batch_size = 1
val_every = 10


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train_epoch(model, loader, optimizer, epoch, loss_func):
    model.train()
    start_time = time.time()
    run_loss = AverageMeter()
    for idx, batch_data in enumerate(loader):
        data, target = batch_data["image"].to(device), batch_data["label"].to(device)
        logits = model(data)
        loss = loss_func(logits, target)
        loss.backward()
        optimizer.step()
        run_loss.update(loss.item(), n=batch_size)
        print(
            "Epoch {}/{} {}/{}".format(epoch, max_epochs, idx, len(loader)),
            "loss: {:.4f}".format(run_loss.avg),
            "time {:.2f}s".format(time.time() - start_time),
        )
        start_time = time.time()
    return run_loss.avg


def val_epoch(model, loader, acc_func, post_label, post_pred):
    model.eval()
    with torch.no_grad():
        for batch_data in loader:
            data, target = batch_data["image"].to(device), batch_data["label"].to(device)
            logits = sliding_window_inference(data, (96, 96, 96), 4, model)
            labels = [post_label(t) for t in decollate_batch(target)]
            outputs = [post_pred(t) for t in decollate_batch(logits)]
            acc_func(y_pred=outputs, y=labels)
        acc = acc_func.aggregate().item()
        acc_func.reset()
    return acc


def trainer(model, train_loader, val_loader, optimizer, loss_func, acc_func, scheduler):
    post_label = AsDiscrete(to_onehot=14)
    post_pred = AsDiscrete(argmax=True, to_onehot=14)
    best_acc = 0.0
    for epoch in range(max_epochs):
        train_loss = train_epoch(model, train_loader, optimizer, epoch, loss_func)
        print("Final training {}/{} loss: {:.4f}".format(epoch, max_epochs - 1, train_loss))
        if (epoch + 1) % val_every == 0:
            val_acc = val_epoch(model, val_loader, acc_func, post_label, post_pred)
            if val_acc > best_acc:
                best_acc = val_acc
                torch.save(model.state_dict(), "best_metric_model.pth")
        scheduler.step()
    return best_acc


def main(train_ds, val_ds):
    model = SwinUNETR(img_size=(96, 96, 96), in_channels=1, out_channels=14, feature_size=48).to(device)
    train_loader = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=4)
    val_loader = DataLoader(val_ds, batch_size=1, shuffle=False, num_workers=4)
    loss_func = DiceCELoss(to_onehot_y=True, softmax=True)
    acc_func = DiceMetric(include_background=True, reduction="mean")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=max_epochs)
    return trainer(model, train_loader, val_loader, optimizer, loss_func, acc_func, scheduler)
