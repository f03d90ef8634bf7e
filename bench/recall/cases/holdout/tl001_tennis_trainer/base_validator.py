import torch
import torch.nn.functional as F
import numpy as np


def val(model, val_loader, criterion, device, epoch):
    model.eval()
    losses = []
    for iter_id, batch in enumerate(val_loader):
        with torch.no_grad():
            out = model(batch[0].float().to(device))
            gt_hm_hp = batch[1].float().to(device)
            loss = criterion(F.sigmoid(out), gt_hm_hp)
        losses.append(loss.item())
    return np.mean(losses)
