import argparse
import os

import torch

from trainer import NetworkManager


def main():
    parser = argparse.ArgumentParser(description='Fine-tune a ResNet on CUB-200-2011')
    parser.add_argument('--net_choice', default='ResNet', type=str)
    parser.add_argument('--model_choice', default=50, type=int)
    parser.add_argument('--epochs', default=90, type=int)
    parser.add_argument('--batch_size', default=32, type=int)
    parser.add_argument('--base_lr', default=0.001, type=float)
    parser.add_argument('--weight_decay', default=1e-4, type=float)
    parser.add_argument('--img_size', default=448, type=int)
    parser.add_argument('--data_dir', default='./CUB_200_2011', type=str)
    args = parser.parse_args()

    options = {
        'net_choice': args.net_choice,
        'model_choice': args.model_choice,
        'epochs': args.epochs,
        'batch_size': args.batch_size,
        'base_lr': args.base_lr,
        'weight_decay': args.weight_decay,
        'momentum': 0.9,
        'img_size': args.img_size,
        'device': torch.device('cuda' if torch.cuda.is_available() else 'cpu'),
    }
    path = {
        'data': args.data_dir,
        'model_save': os.path.join(os.getcwd(), 'model_save'),
    }
    manager = NetworkManager(options, path)
    manager.train()


if __name__ == '__main__':
    main()
