import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision.utils
from torch.autograd import Variable

from models.viz_utils import line_plot, images_plot

criterion = nn.CrossEntropyLoss()

mean = {
    'cifar10': (0.4914, 0.4822, 0.4465),
    'cifar100': (0.5071, 0.4867, 0.4408),
}

std = {
    'cifar10': (0.2023, 0.1994, 0.2010),
    'cifar100': (0.2675, 0.2565, 0.2761),
}


def learning_rate(init, epoch):
    optim_factor = 0
    if epoch > 160:
        optim_factor = 3
    elif epoch > 120:
        optim_factor = 2
    elif epoch > 60:
        optim_factor = 1
    return init * math.pow(0.2, optim_factor)


def get_hms(seconds):
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return h, m, s


def bits_per_dim(logpx, inputs):
    return -logpx / float(np.log(2.) * np.prod(inputs.shape[1:])) + 8.


def update_lr(optimizer, lr):
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


def out_im(im):
    imc = torch.clamp(im, -.5, .5)
    return imc + .5


def train(args, model, optimizer, epoch, trainloader, trainset, viz, use_cuda, train_log):
    model.train()
    correct = 0
    total = 0

    if not args.densityEstimation:
        lr = learning_rate(args.lr, epoch)
        update_lr(optimizer, lr)

    for batch_idx, (inputs, targets) in enumerate(trainloader):
        cur_iter = (epoch - 1) * len(trainloader) + batch_idx
        if epoch - 1 <= args.warmup_epochs:
            this_lr = args.lr * float(cur_iter) / (args.warmup_epochs * len(trainloader))
            update_lr(optimizer, this_lr)

        if use_cuda:
            inputs, targets = inputs.cuda(), targets.cuda()
        optimizer.zero_grad()

        inputs, targets = Variable(inputs, requires_grad=True), Variable(targets)

        if args.densityEstimation:
            _, logpz, trace = model(inputs)
            logpx = logpz + trace
            loss = bits_per_dim(logpx, inputs).mean()
        else:
            out, _ = model(inputs)
            loss = criterion(out, targets)

        loss.backward()
        optimizer.step()

        if args.densityEstimation:
            if batch_idx % args.log_every == 0:
                line_plot(viz, "bits/dim", cur_iter, loss.item())
                log_dict = {"iter": cur_iter, "loss": loss.item(), "epoch": epoch}
                train_log.write("{}\n".format(json.dumps(log_dict)))
                train_log.flush()
        else:
            _, predicted = torch.max(out.data, 1)
            total += targets.size(0)
            correct += predicted.eq(targets.data).cpu().sum()
            sys.stdout.write('\r| Epoch [%3d/%3d] Iter[%3d/%3d]\t\tLoss: %.4f Acc@1: %.3f'
                             % (epoch, args.epochs, batch_idx + 1,
                                (len(trainset) // args.batch) + 1, loss.data.item(),
                                100. * correct.type(torch.FloatTensor) / float(total)))
            sys.stdout.flush()


def test(best_result, args, model, epoch, testloader, viz, use_cuda, test_log):
    model.eval()
    objective = 0.
    total = 0
    with torch.no_grad():
        for batch_idx, (inputs, targets) in enumerate(testloader):
            if use_cuda:
                inputs, targets = inputs.cuda(), targets.cuda()
            inputs, targets = Variable(inputs), Variable(targets)

            if args.densityEstimation:
                z, logpz, trace = model(inputs)
                logpx = logpz + trace
                loss = bits_per_dim(logpx, inputs)

                objective += -loss.cpu().sum().item()

                if batch_idx == 0:
                    x_re = model.module.inverse(z, 10) if use_cuda else model.inverse(z, 10)
                    err = (inputs - x_re).abs().sum()
                    line_plot(viz, "recons err", epoch, err.item())
                    im_dir = os.path.join(args.save_dir, 'ims')
                    os.makedirs(im_dir, exist_ok=True)
                    torchvision.utils.save_image(x_re.cpu(),
                                                 os.path.join(im_dir, "recons_{}.jpg".format(epoch)),
                                                 int(inputs.size(0) ** .5), normalize=True)
                    images_plot(viz, "recons", out_im(x_re).cpu())
                    del x_re, err

                del z, logpz, trace, logpx, loss

            else:
                out, out_bij = model(inputs)
                _, predicted = torch.max(out.data, 1)
                objective += predicted.eq(targets.data).sum().item()
                del out, out_bij, _, predicted

            total += targets.size(0)
            del inputs, targets

    objective = float(objective) / float(total)
    line_plot(viz, "test bits/dim" if args.densityEstimation else "test acc", epoch, objective)
    print("\n| Validation Epoch #%d\t\t\tobjective =  %.4f" % (epoch, objective), flush=True)
    if objective > best_result:
        state = {'model': model, 'objective': objective, 'epoch': epoch}
        os.makedirs(args.save_dir, exist_ok=True)
        torch.save(state, os.path.join(args.save_dir, 'checkpoint.t7'))
        best_result = objective

    test_log.write("{} {}\n".format(epoch, objective))
    test_log.flush()
    return best_result
