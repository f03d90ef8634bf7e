#!/usr/bin/env python
"""Training on a single process."""
import torch

from onmt.inputters.inputter import build_dataset_iter, load_old_vocab
from onmt.model_builder import build_model
from onmt.models import build_model_saver
from onmt.trainer import build_trainer
from onmt.utils.optimizers import Optimizer


def main(opt, device_id):
    if device_id >= 0:
        torch.cuda.set_device(device_id)

    checkpoint = None
    vocab = torch.load(opt.data + '.vocab.pt')
    fields = load_old_vocab(vocab, opt.model_type, dynamic_dict=opt.copy_attn)

    # Build model.
    model = build_model(opt, opt, fields, checkpoint)
    optim = Optimizer.from_opt(model, opt, checkpoint=checkpoint)
    model_saver = build_model_saver(opt, opt, model, fields, optim)

    trainer = build_trainer(opt, device_id, model, fields, optim, model_saver=model_saver)

    train_iter = build_dataset_iter("train", fields, opt)
    valid_iter = build_dataset_iter("valid", fields, opt, is_train=False)

    trainer.train(
        train_iter,
        opt.train_steps,
        save_checkpoint_steps=opt.save_checkpoint_steps,
        valid_iter=valid_iter,
        valid_steps=opt.valid_steps)
