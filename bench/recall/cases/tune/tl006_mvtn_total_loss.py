import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from tqdm import tqdm

from models.mvtn import MVTN
from models.renderer import MVRenderer
from models.multi_view import MVNetwork
from ops import ModelNet40


def train(data_loader, models_bag, setup):
    train_size = len(data_loader)
    total_loss = 0.0
    total = 0.0
    correct = 0.0
    models_bag["mvnetwork"].train()
    models_bag["mvtn"].train()
    for i, (targets, meshes, points) in enumerate(tqdm(data_loader)):
        c_batch_size = targets.shape[0]
        azim, elev, dist = models_bag["mvtn"](points, c_batch_size=c_batch_size)
        rendered_images, _ = models_bag["mvrenderer"](meshes, points, azim=azim, elev=elev, dist=dist)
        targets = targets.cuda()
        targets = targets.long()
        outputs = models_bag["mvnetwork"](rendered_images)[0]
        loss = nn.CrossEntropyLoss()(outputs, targets)
        total_loss += loss
        models_bag["optimizer"].zero_grad()
        models_bag["mvtn_optimizer"].zero_grad()
        loss.backward()
        models_bag["optimizer"].step()
        models_bag["mvtn_optimizer"].step()
        _, predicted = torch.max(outputs.data, 1)
        total += targets.size(0)
        correct += (predicted.cpu() == targets.cpu()).sum()
    avg_train_acc = 100 * correct / total
    avg_loss = total_loss / train_size
    return avg_train_acc, avg_loss


if __name__ == "__main__":
    setup = {"epochs": 100, "batch_size": 20, "nb_views": 8}
    train_loader = DataLoader(ModelNet40("data/ModelNet40", "train"), batch_size=setup["batch_size"],
                              shuffle=True, num_workers=6, drop_last=True)
    mvnetwork = MVNetwork(num_classes=40, num_parts=None, mode="cls", net_name="resnet18").cuda()
    mvtn = MVTN(setup["nb_views"]).cuda()
    models_bag = {"mvnetwork": mvnetwork, "mvtn": mvtn, "mvrenderer": MVRenderer(nb_views=8).cuda(),
                  "optimizer": torch.optim.AdamW(mvnetwork.parameters(), lr=0.001),
                  "mvtn_optimizer": torch.optim.AdamW(mvtn.parameters(), lr=0.0001)}
    for epoch in range(setup["epochs"]):
        avg_train_acc, avg_train_loss = train(train_loader, models_bag, setup)
        print(epoch, avg_train_acc, float(avg_train_loss))
