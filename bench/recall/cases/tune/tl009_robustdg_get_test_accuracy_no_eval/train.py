import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

from algorithms.hybrid import Hybrid


def get_dataloader(args, split):
    # Stand-in for the repository's chest X-ray loaders: (image, one-hot label, one-hot domain, index, object id)
    n = 256
    x = torch.randn(n, 3, 224, 224)
    y = torch.nn.functional.one_hot(torch.randint(0, args.out_classes, (n,)), args.out_classes).float()
    d = torch.nn.functional.one_hot(torch.randint(0, 3, (n,)), 3).float()
    ds = TensorDataset(x, y, d, torch.arange(n), torch.randint(0, 64, (n,)))
    loader = DataLoader(ds, batch_size=args.batch_size, shuffle=(split == 'train'))
    return {'data_loader': loader, 'domain_list': ['nih', 'chex', 'kaggle'], 'total_domains': 3, 'base_domain_size': n}


parser = argparse.ArgumentParser()
parser.add_argument('--epochs', type=int, default=40)
parser.add_argument('--lr', type=float, default=0.001)
parser.add_argument('--opt', default='sgd')
parser.add_argument('--batch_size', type=int, default=16)
parser.add_argument('--out_classes', type=int, default=2)
parser.add_argument('--penalty_ws', type=float, default=0.1)
parser.add_argument('--match_case', type=float, default=1.0)
parser.add_argument('--n_runs', type=int, default=3)
args = parser.parse_args()

cuda = torch.device('cuda:0')
for run in range(args.n_runs):
    train_dataset = get_dataloader(args, 'train')
    val_dataset = get_dataloader(args, 'val')
    test_dataset = get_dataloader(args, 'test')
    train_method = Hybrid(args, train_dataset, val_dataset, test_dataset, 'results', run, cuda)
    train_method.train()
    print('Max Test Acc: ', train_method.max_test_acc)
