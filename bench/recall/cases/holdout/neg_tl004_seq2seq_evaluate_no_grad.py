import argparse
import math
import os

import torch
from torch import optim
from torch.nn import functional as F
from torch.nn.utils import clip_grad_norm_

from model import Decoder, Encoder, Seq2Seq
from utils import PAD, load_dataset


def parse_arguments():
    p = argparse.ArgumentParser(description='Hyperparams')
    p.add_argument('-epochs', type=int, default=100)
    p.add_argument('-batch_size', type=int, default=32)
    p.add_argument('-lr', type=float, default=1e-4)
    p.add_argument('-grad_clip', type=float, default=10.0)
    p.add_argument('-patience', type=int, default=5)
    return p.parse_args()


def get_device():
    if torch.cuda.is_available():
        return torch.device('cuda')
    return torch.device('cpu')


def step_loss(model, src, trg, vocab_size, teacher_forcing_ratio):
    output = model(src, trg, teacher_forcing_ratio=teacher_forcing_ratio)
    return F.nll_loss(output[1:].reshape(-1, vocab_size), trg[1:].reshape(-1), ignore_index=PAD)


def evaluate(model, val_iter, vocab_size, device):
    model.eval()
    total_loss = 0
    with torch.no_grad():
        for src, trg in val_iter:
            src, trg = src.to(device), trg.to(device)
            total_loss += step_loss(model, src, trg, vocab_size, 0.0).item()
    return total_loss / len(val_iter)


def train(model, optimizer, train_iter, vocab_size, grad_clip, device):
    model.train()
    total_loss = 0
    for b, (src, trg) in enumerate(train_iter):
        src, trg = src.to(device), trg.to(device)
        optimizer.zero_grad()
        loss = step_loss(model, src, trg, vocab_size, 0.5)
        loss.backward()
        clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        total_loss += loss.item()
        if b % 100 == 0 and b != 0:
            print("[%d][loss:%5.2f][pp:%5.2f]" % (b, total_loss / 100, math.exp(total_loss / 100)))
            total_loss = 0


def main():
    args = parse_arguments()
    device = get_device()
    train_iter, val_iter, test_iter, DE, EN = load_dataset(args.batch_size)
    de_size, en_size = len(DE), len(EN)
    encoder = Encoder(de_size, 256, 512, n_layers=2, dropout=0.5)
    decoder = Decoder(256, 512, en_size, n_layers=1, dropout=0.5)
    seq2seq = Seq2Seq(encoder, decoder).to(device)
    optimizer = optim.Adam(seq2seq.parameters(), lr=args.lr)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=2)
    best_val_loss, no_improve = None, 0
    for e in range(1, args.epochs + 1):
        train(seq2seq, optimizer, train_iter, en_size, args.grad_clip, device)
        val_loss = evaluate(seq2seq, val_iter, en_size, device)
        scheduler.step(val_loss)
        if best_val_loss is None or val_loss < best_val_loss:
            os.makedirs(".save", exist_ok=True)
            torch.save(seq2seq.state_dict(), f'./.save/seq2seq_{e}.pt')
            best_val_loss, no_improve = val_loss, 0
        else:
            no_improve += 1
            if no_improve >= args.patience:
                break
    test_loss = evaluate(seq2seq, test_iter, en_size, device)
    print("[TEST] loss:%5.2f" % test_loss)


if __name__ == "__main__":
    main()
