import argparse
import logging
import time

import torch

import data
from evaluation import encode_data, i2t
from model import VSE
from vocab import Vocabulary  # NOQA


class LogCollector(object):
    def __init__(self):
        self.meters = {}

    def update(self, k, v, n=0):
        self.meters[k] = v


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_path", default="/w/31/faghri/vsepp_data/")
    parser.add_argument("--num_epochs", default=30, type=int)
    parser.add_argument("--batch_size", default=128, type=int)
    parser.add_argument("--learning_rate", default=.0002, type=float)
    parser.add_argument("--lr_update", default=15, type=int)
    parser.add_argument("--log_step", default=10, type=int)
    parser.add_argument("--val_step", default=500, type=int)
    parser.add_argument("--finetune", action="store_true")
    parser.add_argument("--cnn_type", default="vgg19")
    opt = parser.parse_args()

    vocab = torch.load(opt.data_path + "vocab.pkl")
    opt.vocab_size = len(vocab)
    train_loader, val_loader = data.get_loaders(opt.data_name, vocab, opt.crop_size, opt.batch_size, opt.workers, opt)

    model = VSE(opt)

    best_rsum = 0
    for epoch in range(opt.num_epochs):
        adjust_learning_rate(opt, model.optimizer, epoch)

        # train for one epoch
        train(opt, train_loader, model, epoch, val_loader)

        # evaluate on validation set
        rsum = validate(opt, val_loader, model)
        best_rsum = max(rsum, best_rsum)


def train(opt, train_loader, model, epoch, val_loader):
    train_logger = LogCollector()

    # switch to train mode
    model.train_start()

    end = time.time()
    for i, train_data in enumerate(train_loader):
        # make sure train logger is used
        model.logger = train_logger

        # Update the model
        model.train_emb(*train_data)

        if model.Eiters % opt.log_step == 0:
            logging.info("Epoch: [{0}][{1}/{2}] time {3:.3f}".format(epoch, i, len(train_loader), time.time() - end))
        end = time.time()

        # validate at every val_step
        if model.Eiters % opt.val_step == 0:
            validate(opt, val_loader, model)


def validate(opt, val_loader, model):
    # compute the encoding for all the validation images and captions
    img_embs, cap_embs = encode_data(model, val_loader, opt.log_step, logging.info)

    # caption retrieval
    (r1, r5, r10, medr, meanr) = i2t(img_embs, cap_embs)
    logging.info("Image to text: %.1f, %.1f, %.1f, %.1f, %.1f" % (r1, r5, r10, medr, meanr))
    return r1 + r5 + r10


def adjust_learning_rate(opt, optimizer, epoch):
    lr = opt.learning_rate * (0.1 ** (epoch // opt.lr_update))
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr


if __name__ == "__main__":
    main()
