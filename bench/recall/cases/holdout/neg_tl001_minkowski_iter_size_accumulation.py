import logging

import torch
from torch import nn

from lib.solvers import initialize_optimizer, initialize_scheduler
from lib.test import test
from lib.utils import AverageMeter, checkpoint, get_torch_device
from MinkowskiEngine import SparseTensor


def validate(model, val_data_loader, curr_iter, config, transform_data_fn):
    v_loss, v_score, v_mAP, v_mIoU = test(model, val_data_loader, config, transform_data_fn)
    return v_mIoU


def train(model, data_loader, val_data_loader, config, transform_data_fn=None):
    device = get_torch_device(config.is_cuda)
    # Set up the train flag for batch normalization
    model.train()
    losses = AverageMeter()
    optimizer = initialize_optimizer(model.parameters(), config)
    scheduler = initialize_scheduler(optimizer, config)
    criterion = nn.CrossEntropyLoss(ignore_index=config.ignore_label)

    best_val_miou, best_val_iter, curr_iter, epoch, is_training = 0, 0, 1, 1, True
    data_iter = data_loader.__iter__()
    while is_training:
        for iteration in range(len(data_loader) // config.iter_size):
            optimizer.zero_grad()
            batch_loss = 0

            for sub_iter in range(config.iter_size):
                coords, input, target = data_iter.next()
                coords[:, 1:] += (torch.rand(3) * 100).type_as(coords)
                if config.normalize_color:
                    input[:, 1:] = input[:, 1:] / 255. - 0.5
                sinput = SparseTensor(input, coords).to(device)
                soutput = model(sinput)
                target = target.long().to(device)
                loss = criterion(soutput.F, target.long())

                # Compute and accumulate gradient
                loss /= config.iter_size
                batch_loss += loss.item()
                loss.backward()

            # Update number of steps
            optimizer.step()
            scheduler.step()
            losses.update(batch_loss, target.size(0))

            if curr_iter >= config.max_iter:
                is_training = False
                break

            if curr_iter % config.save_freq == 0:
                checkpoint(model, optimizer, epoch, curr_iter, config, best_val_miou, best_val_iter)

            # Validation
            if curr_iter % config.val_freq == 0:
                val_miou = validate(model, val_data_loader, curr_iter, config, transform_data_fn)
                if val_miou > best_val_miou:
                    best_val_miou = val_miou
                    best_val_iter = curr_iter
                logging.info("Current best mIoU: {:.3f} at iter {}".format(best_val_miou, best_val_iter))
                # Recover back
                model.train()

            curr_iter += 1
        epoch += 1
