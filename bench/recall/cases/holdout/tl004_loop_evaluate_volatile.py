import argparse

import torch
import torch.optim as optim
from tqdm import tqdm

from data import NpzFolder, NpzLoader, TBPTTIter
from model import Loop, MaskedMSE
from utils import check_grad, wrap

parser = argparse.ArgumentParser(description='PyTorch Loop')
parser.add_argument('--epochs', type=int, default=92)
parser.add_argument('--data', default='data/vctk', type=str)
parser.add_argument('--gpu', default=0, type=int)
parser.add_argument('--seq-len', type=int, default=100)
parser.add_argument('--max-seq-len', type=int, default=1000)
parser.add_argument('--batch-size', type=int, default=64)
parser.add_argument('--lr', type=float, default=1e-4)
parser.add_argument('--clip-grad', type=float, default=0.5)
parser.add_argument('--ignore-grad', type=float, default=10000.0)
args = parser.parse_args()
torch.cuda.set_device(args.gpu)

train_loader = NpzLoader(NpzFolder(args.data + '/numpy_features'), max_seq_len=args.max_seq_len,
                         batch_size=args.batch_size, num_workers=4, pin_memory=True, shuffle=True)
valid_loader = NpzLoader(NpzFolder(args.data + '/numpy_features_valid'), max_seq_len=args.max_seq_len,
                         batch_size=args.batch_size, num_workers=4, pin_memory=True)


def train(model, criterion, optimizer, epoch, train_losses):
    total = 0
    model.train()
    for full_txt, full_feat, spkr in tqdm(train_loader, desc='Train epoch %d' % epoch):
        batch_iter = TBPTTIter(full_txt, full_feat, spkr, args.seq_len)
        batch_total = 0
        for txt, feat, spkr, start in batch_iter:
            input = wrap(txt)
            target = wrap(feat)
            spkr = wrap(spkr)

            # Zero gradients
            if start:
                optimizer.zero_grad()

            # Forward
            output, _ = model([input, spkr], target[0], start)
            loss = criterion(output, target[0], target[1])

            # Backward
            loss.backward()
            if check_grad(model.parameters(), args.clip_grad, args.ignore_grad):
                optimizer.zero_grad()
                continue
            optimizer.step()
            batch_total += loss.data[0]
        total += batch_total / len(batch_iter)
    train_losses.append(total / len(train_loader))


def evaluate(model, criterion, epoch, eval_losses):
    total = 0
    valid_enum = tqdm(valid_loader, desc='Valid epoch %d' % epoch)

    for txt, feat, spkr in valid_enum:
        input = wrap(txt, volatile=True)
        target = wrap(feat, volatile=True)
        spkr = wrap(spkr, volatile=True)

        output, _ = model([input, spkr], target[0])
        loss = criterion(output, target[0], target[1])

        total += loss.data[0]

    avg = total / len(valid_loader)
    eval_losses.append(avg)
    return avg


def main():
    model = Loop(args)
    model.cuda()
    criterion = MaskedMSE().cuda()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    train_losses = []
    eval_losses = []
    for epoch in range(1, 1 + args.epochs):
        train(model, criterion, optimizer, epoch, train_losses)
        eval_loss = evaluate(model, criterion, epoch, eval_losses)
        torch.save(model.state_dict(), 'lastmodel.pth')


if __name__ == '__main__':
    main()
