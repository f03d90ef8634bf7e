# train.py reduced (reconstructed: the argument list keeps what the trainer reads, with
# iteration_per_update defaulting to 1, an update on every mini-batch; the data loader and
# the seq2seq model are imported as in the repository).
import argparse

import torch
from torch import optim
import torch.nn as nn

from simple_nmt.data_loader import DataLoader
import simple_nmt.data_loader as data_loader
from simple_nmt.models.seq2seq import Seq2Seq
from simple_nmt.trainer import SingleTrainer
from simple_nmt.trainer import MaximumLikelihoodEstimationEngine


def define_argparser():
    p = argparse.ArgumentParser()
    p.add_argument('--model_fn', required=True)
    p.add_argument('--train', required=True)
    p.add_argument('--valid', required=True)
    p.add_argument('--lang', required=True)
    p.add_argument('--gpu_id', type=int, default=-1)
    p.add_argument('--batch_size', type=int, default=32)
    p.add_argument('--n_epochs', type=int, default=20)
    p.add_argument('--verbose', type=int, default=2)
    p.add_argument('--init_epoch', type=int, default=1)
    p.add_argument('--max_length', type=int, default=100)
    p.add_argument('--dropout', type=float, default=.2)
    p.add_argument('--word_vec_size', type=int, default=512)
    p.add_argument('--hidden_size', type=int, default=768)
    p.add_argument('--n_layers', type=int, default=4)
    p.add_argument('--max_grad_norm', type=float, default=5.)
    p.add_argument('--iteration_per_update', type=int, default=1)
    p.add_argument('--lr', type=float, default=1e-3)
    p.add_argument('--use_noam_decay', action='store_true')
    return p.parse_args()


def main(config):
    loader = DataLoader(
        config.train,
        config.valid,
        (config.lang[:2], config.lang[-2:]),
        batch_size=config.batch_size,
        device=-1,
        max_length=config.max_length,
    )
    input_size, output_size = len(loader.src.vocab), len(loader.tgt.vocab)
    model = Seq2Seq(
        input_size,
        config.word_vec_size,
        config.hidden_size,
        output_size,
        n_layers=config.n_layers,
        dropout_p=config.dropout,
    )
    loss_weight = torch.ones(output_size)
    loss_weight[data_loader.PAD] = 0.
    crit = nn.NLLLoss(weight=loss_weight, reduction='sum')

    if config.gpu_id >= 0:
        model.cuda(config.gpu_id)
        crit.cuda(config.gpu_id)

    optimizer = optim.Adam(model.parameters(), lr=config.lr)

    mle_trainer = SingleTrainer(MaximumLikelihoodEstimationEngine, config)
    mle_trainer.train(
        model,
        crit,
        optimizer,
        train_loader=loader.train_iter,
        valid_loader=loader.valid_iter,
        src_vocab=loader.src.vocab,
        tgt_vocab=loader.tgt.vocab,
        n_epochs=config.n_epochs,
    )


if __name__ == '__main__':
    config = define_argparser()
    main(config)
