# MTN train.py (trimmed): multimodal transformer network for video-grounded dialogues.
import argparse
import logging
import time

import numpy as np
import torch
import torch.nn as nn

import data_handler as dh
from label_smoothing import LabelSmoothing
from mtn import make_model
from optimize import NoamOpt


class SimpleLossCompute:
    def __init__(self, generator, criterion, opt=None, l=1.0):
        self.generator = generator
        self.criterion = criterion
        self.opt = opt
        self.l = l

    def __call__(self, x, y, norm, ae_x=None, ae_y=None, ae_norm=None):
        out = self.generator(x)
        loss = self.criterion(out.contiguous().view(-1, out.size(-1)), y.contiguous().view(-1)) / norm.float()
        if ae_x is not None:
            ae_out = self.generator(ae_x)
            loss += self.l * self.criterion(ae_out.contiguous().view(-1, ae_out.size(-1)),
                                            ae_y.contiguous().view(-1)) / ae_norm.float()
        if self.opt is not None:
            loss.backward()
            self.opt.step()
            self.opt.optimizer.zero_grad()
        return loss.item() * norm.float().item()


def run_epoch(data, indices, vocab, epoch, model, loss_compute, eval=False):
    "Standard Training and Logging Function"
    start = time.time()
    total_tokens = 0
    total_loss = 0
    for j in range(len(indices)):
        batch = dh.make_batch(data, indices[j], vocab, separate_caption=args.separate_caption,
                              cut_a=args.cut_a, cuda=True)
        b = batch
        out, ae_out = model.forward(b)
        loss = loss_compute(out, b.trg_y, b.ntokens, ae_out, b.query_y, b.qntokens)
        total_loss += loss
        total_tokens += b.ntokens.item()
        if (j + 1) % args.report_interval == 0 and not eval:
            elapsed = time.time() - start
            logging.info("Epoch: %d Step: %d Loss: %f Tokens per Sec: %f" %
                         (epoch, j + 1, loss / b.ntokens.float().item(), total_tokens / elapsed))
    return total_loss / total_tokens


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--train-path", default="", type=str)
    parser.add_argument("--valid-path", default="", type=str)
    parser.add_argument("--num-epochs", default=20, type=int)
    parser.add_argument("--batch-size", default=32, type=int)
    parser.add_argument("--warmup-steps", default=9660, type=int)
    parser.add_argument("--d-model", default=512, type=int)
    parser.add_argument("--report-interval", default=100, type=int)
    parser.add_argument("--separate-caption", default=1, type=int)
    parser.add_argument("--cut-a", default=1, type=int)
    parser.add_argument("--loss-l", default=1.0, type=float)
    args = parser.parse_args()

    vocab = dh.get_vocabulary(args.train_path)
    train_data = dh.load(args.train_path, vocab)
    valid_data = dh.load(args.valid_path, vocab)
    train_indices, _ = dh.make_batch_indices(train_data, args.batch_size)
    valid_indices, _ = dh.make_batch_indices(valid_data, args.batch_size)

    model = make_model(len(vocab), len(vocab), d_model=args.d_model)
    model.cuda()
    criterion = LabelSmoothing(size=len(vocab), padding_idx=vocab["<blank>"], smoothing=0.1)
    criterion.cuda()
    model_opt = NoamOpt(args.d_model, 1, args.warmup_steps,
                        torch.optim.Adam(model.parameters(), lr=0, betas=(0.9, 0.98), eps=1e-9))

    min_valid_loss = 1.0e10
    for epoch in range(args.num_epochs):
        model.train()
        train_loss = run_epoch(train_data, train_indices, vocab, epoch + 1, model,
                               SimpleLossCompute(model.generator, criterion, opt=model_opt, l=args.loss_l))
        model.eval()
        valid_loss = run_epoch(valid_data, valid_indices, vocab, epoch + 1, model,
                               SimpleLossCompute(model.generator, criterion, opt=None, l=args.loss_l), eval=True)
        logging.info("epoch: %d train loss: %f valid loss: %f" % (epoch + 1, train_loss, valid_loss))
        if min_valid_loss > valid_loss:
            min_valid_loss = valid_loss
            torch.save(model, "mtn_best.pth")
