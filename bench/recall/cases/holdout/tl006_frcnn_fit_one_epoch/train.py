import numpy as np
import torch
import torch.optim as optim
from torch.autograd import Variable
from torch.utils.data import DataLoader
from tqdm import tqdm

from nets.frcnn import FasterRCNN
from nets.frcnn_training import FasterRCNNTrainer
from utils.dataloader import FRCNNDataset, frcnn_dataset_collate


def fit_ont_epoch(net, epoch, epoch_size, epoch_size_val, gen, genval, Epoch, cuda):
    total_loss = 0
    rpn_loc_loss = 0
    rpn_cls_loss = 0
    roi_loc_loss = 0
    roi_cls_loss = 0
    val_toal_loss = 0
    with tqdm(total=epoch_size, desc=f'Epoch {epoch + 1}/{Epoch}', postfix=dict, mininterval=0.3) as pbar:
        for iteration, batch in enumerate(gen):
            if iteration >= epoch_size:
                break
            imgs, boxes, labels = batch[0], batch[1], batch[2]
            with torch.no_grad():
                if cuda:
                    imgs = Variable(torch.from_numpy(imgs).type(torch.FloatTensor)).cuda()
                else:
                    imgs = Variable(torch.from_numpy(imgs).type(torch.FloatTensor))

            losses = train_util.train_step(imgs, boxes, labels, 1)
            rpn_loc, rpn_cls, roi_loc, roi_cls, total = losses
            total_loss += total
            rpn_loc_loss += rpn_loc
            rpn_cls_loss += rpn_cls
            roi_loc_loss += roi_loc
            roi_cls_loss += roi_cls

            pbar.set_postfix(**{'total': total_loss.item() / (iteration + 1),
                                'rpn_loc': rpn_loc_loss.item() / (iteration + 1),
                                'rpn_cls': rpn_cls_loss.item() / (iteration + 1),
                                'roi_loc': roi_loc_loss.item() / (iteration + 1),
                                'roi_cls': roi_cls_loss.item() / (iteration + 1)})
            pbar.update(1)

    print('Start Validation')
    with tqdm(total=epoch_size_val, desc=f'Epoch {epoch + 1}/{Epoch}', postfix=dict, mininterval=0.3) as pbar:
        for iteration, batch in enumerate(genval):
            if iteration >= epoch_size_val:
                break
            imgs, boxes, labels = batch[0], batch[1], batch[2]
            with torch.no_grad():
                imgs = Variable(torch.from_numpy(imgs).type(torch.FloatTensor)).cuda()
                train_util.optimizer.zero_grad()
                losses = train_util.forward(imgs, boxes, labels, 1)
                _, _, _, _, val_total = losses
                val_toal_loss += val_total
            pbar.set_postfix(**{'total_loss': val_toal_loss.item() / (iteration + 1)})
            pbar.update(1)
    torch.save(model.state_dict(), 'logs/Epoch%d-Total_Loss%.4f.pth' % ((epoch + 1), total_loss / (epoch_size + 1)))


if __name__ == "__main__":
    Cuda = True
    NUM_CLASSES = 20
    model = FasterRCNN(NUM_CLASSES, backbone="resnet50")
    net = model.train()
    if Cuda:
        net = torch.nn.DataParallel(model).cuda()
    with open('2007_train.txt') as f:
        lines = f.readlines()
    np.random.shuffle(lines)
    num_val = int(len(lines) * 0.1)
    num_train = len(lines) - num_val

    lr = 1e-4
    Init_Epoch, Freeze_Epoch = 0, 50
    optimizer = optim.Adam(net.parameters(), lr, weight_decay=5e-4)
    lr_scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.95)
    gen = DataLoader(FRCNNDataset(lines[:num_train], (600, 600)), shuffle=True, batch_size=1,
                     num_workers=4, pin_memory=True, drop_last=True, collate_fn=frcnn_dataset_collate)
    gen_val = DataLoader(FRCNNDataset(lines[num_train:], (600, 600)), shuffle=True, batch_size=1,
                         num_workers=4, pin_memory=True, drop_last=True, collate_fn=frcnn_dataset_collate)
    epoch_size, epoch_size_val = num_train, num_val
    train_util = FasterRCNNTrainer(model, optimizer)
    for epoch in range(Init_Epoch, Freeze_Epoch):
        fit_ont_epoch(net, epoch, epoch_size, epoch_size_val, gen, gen_val, Freeze_Epoch, Cuda)
        lr_scheduler.step()
