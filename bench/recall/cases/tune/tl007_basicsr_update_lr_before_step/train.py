import argparse
import math

import torch

import options.options as option
from data import create_dataloader, create_dataset
from models import create_model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('-opt', type=str, help='Path to option YAML file.')
    args = parser.parse_args()
    opt = option.parse(args.opt, is_train=True)

    train_set = create_dataset(opt['datasets']['train'])
    train_size = int(math.ceil(len(train_set) / opt['datasets']['train']['batch_size']))
    total_iters = int(opt['train']['niter'])
    total_epochs = int(math.ceil(total_iters / train_size))
    train_loader = create_dataloader(train_set, opt['datasets']['train'], opt, None)

    model = create_model(opt)
    current_step = 0
    start_epoch = 0

    for epoch in range(start_epoch, total_epochs + 1):
        for _, train_data in enumerate(train_loader):
            current_step += 1
            if current_step > total_iters:
                break
            #### update learning rate
            model.update_learning_rate(current_step, warmup_iter=opt['train']['warmup_iter'])

            #### training
            model.feed_data(train_data)
            model.optimize_parameters(current_step)

            if current_step % opt['logger']['print_freq'] == 0:
                print('<epoch:{:3d}, iter:{:8,d}, lr:{:.3e}>'.format(epoch, current_step,
                                                                   model.get_current_learning_rate()))


if __name__ == '__main__':
    main()
