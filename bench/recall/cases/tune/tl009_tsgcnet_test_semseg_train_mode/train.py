import torch
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable
from torch.utils.data import DataLoader
from tqdm import tqdm

from dataloader import plydataset
from TSGCNet import TSGCNet
from utils import test_semseg

if __name__ == "__main__":
    torch.cuda.set_device(0)
    train_dataset = plydataset("data/train")
    test_dataset = plydataset("data/test")
    train_loader = DataLoader(train_dataset, batch_size=2, shuffle=True, num_workers=8)
    test_loader = DataLoader(test_dataset, batch_size=1, shuffle=False, num_workers=8)

    model = TSGCNet(in_channels=12, output_channels=17, k=32)
    model = torch.nn.DataParallel(model, device_ids=[0, 1])
    model.cuda()
    optimizer = optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999), weight_decay=1e-5)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)

    best_iou = 0
    for epoch in range(0, 201):
        train_loss = []
        for batch_id, (index, points, label_face, label_face_onehot, name, raw_points_face) in tqdm(
                enumerate(train_loader), total=len(train_loader), smoothing=0.9):
            coordinate = points.transpose(2, 1)
            coordinate, label_face = Variable(coordinate.float()), Variable(label_face.long())
            coordinate, label_face = coordinate.cuda(), label_face.cuda()

            optimizer.zero_grad()
            model = model.train()
            pred = model(coordinate[:, :12, :], coordinate[:, 12:, :])
            label_face = label_face.view(-1, 1)[:, 0]
            pred = pred.contiguous().view(-1, 17)
            loss = F.nll_loss(pred, label_face)
            loss.backward()
            optimizer.step()
            train_loss.append(loss.item())
        scheduler.step()

        metrics, mIoU = test_semseg(model, test_loader, num_classes=17, generate_ply=True)
        if mIoU > best_iou:
            best_iou = mIoU
            torch.save(model.state_dict(), "coordinate_%d_%f.pth" % (epoch, best_iou))
        print("Epoch %d: train loss %f, test mIoU %f" % (epoch, sum(train_loss) / len(train_loader), mIoU))
