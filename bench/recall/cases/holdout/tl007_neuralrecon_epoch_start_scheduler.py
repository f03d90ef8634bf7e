# NeuralRecon main.py (trimmed: config parsing, transforms, logging and the
# distributed branch; the model and dataset come from the repository's packages).
import os
import time

import torch
from torch.utils.data import DataLoader

from config import cfg, update_config
from datasets import find_dataset_def, transforms
from models import NeuralRecon
from utils import DictAverageMeter, make_nograd_func, tensor2float

update_config(cfg, None)
torch.manual_seed(cfg.SEED)
torch.cuda.manual_seed(cfg.SEED)

transform = transforms.Compose([transforms.ResizeImage((640, 480)), transforms.ToTensor()])

MVSDataset = find_dataset_def(cfg.DATASET)
train_dataset = MVSDataset(cfg.TRAIN.PATH, "train", transform, cfg.TRAIN.N_VIEWS, len(cfg.MODEL.THRESHOLDS) - 1)
test_dataset = MVSDataset(cfg.TEST.PATH, "test", transform, cfg.TEST.N_VIEWS, len(cfg.MODEL.THRESHOLDS) - 1)
TrainImgLoader = DataLoader(train_dataset, cfg.BATCH_SIZE, shuffle=False, num_workers=cfg.TRAIN.N_WORKERS,
                            drop_last=True)
TestImgLoader = DataLoader(test_dataset, cfg.BATCH_SIZE, shuffle=False, num_workers=cfg.TEST.N_WORKERS,
                           drop_last=False)

# model, optimizer
model = NeuralRecon(cfg)
model = torch.nn.DataParallel(model, device_ids=[0])
model.cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=cfg.TRAIN.LR, betas=(0.9, 0.999), weight_decay=cfg.TRAIN.WD)


def train():
    start_epoch = 0
    if cfg.LOADCKPT != '':
        state_dict = torch.load(cfg.LOADCKPT)
        model.load_state_dict(state_dict['model'])
        optimizer.param_groups[0]['initial_lr'] = state_dict['optimizer']['param_groups'][0]['lr']
        optimizer.param_groups[0]['lr'] = state_dict['optimizer']['param_groups'][0]['lr']
        start_epoch = state_dict['epoch'] + 1

    milestones = [int(epoch_idx) for epoch_idx in cfg.TRAIN.LREPOCHS.split(':')[0].split(',')]
    lr_gamma = 1 / float(cfg.TRAIN.LREPOCHS.split(':')[1])
    lr_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones, gamma=lr_gamma,
                                                        last_epoch=start_epoch - 1)

    for epoch_idx in range(start_epoch, cfg.TRAIN.EPOCHS):
        print('Epoch {}:'.format(epoch_idx))
        lr_scheduler.step()
        TrainImgLoader.dataset.epoch = epoch_idx
        TrainImgLoader.dataset.tsdf_cashe = {}
        # training
        for batch_idx, sample in enumerate(TrainImgLoader):
            start_time = time.time()
            loss, scalar_outputs = train_sample(sample)
            print('Epoch {}/{}, Iter {}/{}, train loss = {:.3f}, time = {:.3f}'.format(
                epoch_idx, cfg.TRAIN.EPOCHS, batch_idx, len(TrainImgLoader), loss, time.time() - start_time))
            del scalar_outputs

        # checkpoint
        if (epoch_idx + 1) % cfg.SAVE_FREQ == 0:
            torch.save({
                'epoch': epoch_idx,
                'model': model.state_dict(),
                'optimizer': optimizer.state_dict()},
                "{}/model_{:0>6}.ckpt".format(cfg.LOGDIR, epoch_idx))


def test():
    for ckpt in sorted(fn for fn in os.listdir(cfg.LOGDIR) if fn.endswith(".ckpt")):
        state_dict = torch.load(os.path.join(cfg.LOGDIR, ckpt))
        model.load_state_dict(state_dict['model'])
        TestImgLoader.dataset.tsdf_cashe = {}
        avg_test_scalars = DictAverageMeter()
        for batch_idx, sample in enumerate(TestImgLoader):
            loss, scalar_outputs, outputs = test_sample(sample)
            avg_test_scalars.update(scalar_outputs)
            del scalar_outputs
        print("epoch {} avg_test_scalars:".format(state_dict['epoch']), avg_test_scalars.mean())


def train_sample(sample):
    model.train()
    optimizer.zero_grad()

    outputs, loss_dict = model(sample)
    loss = loss_dict['total_loss']
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return tensor2float(loss), tensor2float(loss_dict)


@make_nograd_func
def test_sample(sample):
    model.eval()

    outputs, loss_dict = model(sample)
    loss = loss_dict['total_loss']

    return tensor2float(loss), tensor2float(loss_dict), outputs


if __name__ == '__main__':
    if cfg.MODE == "train":
        train()
    elif cfg.MODE == "test":
        test()
