import time

import torch
import torch.nn.parallel
import torch.optim
from torch.nn.utils import clip_grad_norm_

from ssn_dataset import SSNDataSet
from ssn_models import SSN
from transforms import *
from ops.ssn_ops import CompletenessLoss, ClassWiseRegressionLoss
from ops.utils import get_configs
from ssn_opts import parser

best_loss = 100


def main():
    global args, best_loss
    args = parser.parse_args()
    dataset_configs = get_configs(args.dataset)
    num_class = dataset_configs['num_class']

    model = SSN(num_class, args.num_aug_segments, args.num_body_segments, args.num_aug_segments,
                args.modality, base_model=args.arch, dropout=args.dropout)
    crop_size = model.crop_size
    scale_size = model.scale_size
    input_mean = model.input_mean
    input_std = model.input_std
    policies = model.get_optim_policies()
    train_augmentation = model.get_augmentation()

    model = torch.nn.DataParallel(model, device_ids=args.gpus).cuda()

    normalize = GroupNormalize(input_mean, input_std)
    train_loader = torch.utils.data.DataLoader(
        SSNDataSet("", dataset_configs['train_list'], num_segments=args.num_body_segments,
                   modality=args.modality, image_tmpl="img_{:05d}.jpg",
                   transform=torchvision.transforms.Compose([
                       train_augmentation, Stack(roll=False), ToTorchFormatTensor(div=True), normalize])),
        batch_size=args.batch_size, shuffle=True,
        num_workers=args.workers, pin_memory=True, drop_last=True)

    activity_criterion = torch.nn.CrossEntropyLoss().cuda()
    completeness_criterion = CompletenessLoss().cuda()
    regression_criterion = ClassWiseRegressionLoss().cuda()

    optimizer = torch.optim.SGD(policies, args.lr, momentum=args.momentum, weight_decay=args.weight_decay)

    for epoch in range(args.start_epoch, args.epochs):
        adjust_learning_rate(optimizer, epoch, args.lr_steps)
        train(train_loader, model, activity_criterion, completeness_criterion, regression_criterion,
              optimizer, epoch)


def train(train_loader, model, act_criterion, comp_criterion, regression_criterion, optimizer, epoch):
    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()
    act_losses = AverageMeter()
    comp_losses = AverageMeter()
    reg_losses = AverageMeter()

    model.train()

    end = time.time()
    optimizer.zero_grad()
    for i, (out_frames, out_prop_len, out_prop_scaling, out_prop_type, out_prop_labels,
            out_prop_reg_targets, out_stage_split) in enumerate(train_loader):
        data_time.update(time.time() - end)

        input_var = torch.autograd.Variable(out_frames)
        scaling_var = torch.autograd.Variable(out_prop_scaling)
        target_var = torch.autograd.Variable(out_prop_labels)
        reg_target_var = torch.autograd.Variable(out_prop_reg_targets)
        prop_type_var = torch.autograd.Variable(out_prop_type)

        activity_out, activity_target, completeness_out, completeness_target, \
            regression_out, regression_labels, regression_target = model(input_var, scaling_var, target_var,
                                                                         reg_target_var, prop_type_var)

        act_loss = act_criterion(activity_out, activity_target)
        comp_loss = comp_criterion(completeness_out, completeness_target, out_stage_split[0][0],
                                   out_stage_split[0][1])
        reg_loss = regression_criterion(regression_out, regression_labels, regression_target)

        loss = act_loss + comp_loss * args.comp_loss_weight + reg_loss * args.reg_loss_weight

        losses.update(loss.item(), out_frames.size(0))
        act_losses.update(act_loss.item(), out_frames.size(0))
        comp_losses.update(comp_loss.item(), out_frames.size(0))
        reg_losses.update(reg_loss.item(), out_frames.size(0))

        loss.backward()

        if args.clip_gradient is not None:
            clip_grad_norm_(model.parameters(), args.clip_gradient)

        optimizer.step()
        optimizer.zero_grad()

        batch_time.update(time.time() - end)
        end = time.time()

        if i % args.print_freq == 0:
            print('Epoch: [{0}][{1}/{2}]\tTime {batch_time.val:.3f}\tLoss {loss.avg:.4f}'.format(
                epoch, i, len(train_loader), batch_time=batch_time, loss=losses))


class AverageMeter(object):
    """Computes and stores the average and current value"""
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


def adjust_learning_rate(optimizer, epoch, lr_steps):
    decay = 0.1 ** (sum(epoch >= np.array(lr_steps)))
    lr = args.lr * decay
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr * param_group['lr_mult']


if __name__ == '__main__':
    main()
