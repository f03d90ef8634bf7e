import os
import argparse
import importlib

import torch
import tqdm


def parse_command_line():
    parser = argparse.ArgumentParser()
    parser.add_argument('-c', '--continue_exp', type=str, help='continue exp')
    parser.add_argument('-e', '--exp', type=str, default='pose', help='experiments name')
    parser.add_argument('-m', '--max_iters', type=int, default=250, help='max number of iterations (thousands)')
    return parser.parse_args()


def save(config):
    resume_file = os.path.join('exp', config['opt'].exp, 'checkpoint.pt')
    torch.save({
        'state_dict': config['inference']['net'].state_dict(),
        'optimizer': config['train']['optimizer'].state_dict(),
        'epoch': config['train']['epoch'],
    }, resume_file)


def train(train_func, data_func, config, post_epoch=None):
    while True:
        print('epoch: ', config['train']['epoch'])
        if 'epoch_num' in config['train']:
            if config['train']['epoch'] > config['train']['epoch_num']:
                break

        for phase in ['train', 'valid']:
            num_step = config['train']['{}_iters'.format(phase)]
            generator = data_func(phase)
            print('start', phase, config['opt'].exp)

            show_range = tqdm.tqdm(range(num_step), total=num_step, ascii=True)
            for i in show_range:
                datas = next(generator)
                outs = train_func(i, config, phase, **datas)
        config['train']['epoch'] += 1
        save(config)


def init():
    opt = parse_command_line()
    task = importlib.import_module('task.pose')
    config = task.__config__
    os.makedirs(os.path.join('exp', opt.exp), exist_ok=True)
    config['opt'] = opt
    config['data_provider'] = importlib.import_module(config['data_provider'])

    func = task.make_network(config)
    config['train']['epoch'] = 0
    return func, config


def main():
    func, config = init()
    data_func = config['data_provider'].init(config)
    train(func, data_func, config)


if __name__ == '__main__':
    main()
