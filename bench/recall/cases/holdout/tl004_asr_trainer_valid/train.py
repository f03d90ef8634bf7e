import torch

from trainer.asr.trainer import Trainer
from utils import constant
from utils.optimizer import NoamOpt


def main(model, train_loader, train_sampler, valid_loader_list, label2id, id2label, args):
    constant.args = args
    if constant.USE_CUDA:
        model = model.cuda()
    opt = NoamOpt(args.dim_model, args.k_lr, args.warmup,
                  torch.optim.Adam(model.parameters(), betas=(0.9, 0.98), eps=1e-9))
    trainer = Trainer()
    trainer.train(model, train_loader, train_sampler, valid_loader_list, opt, args.loss, 0, args.epochs,
                  label2id, id2label)
