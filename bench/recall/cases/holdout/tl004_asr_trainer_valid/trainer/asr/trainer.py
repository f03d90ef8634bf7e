import logging
import sys
import time

import torch
from torch.autograd import Variable
from tqdm import tqdm

from utils import constant
from utils.functions import save_model
from utils.metrics import calculate_cer, calculate_metrics, calculate_wer


class Trainer():
    """
    Trainer class
    """
    def __init__(self):
        logging.info("Trainer is initialized")

    def train(self, model, train_loader, train_sampler, valid_loader_list, opt, loss_type, start_epoch,
              num_epochs, label2id, id2label, last_metrics=None):
        history = []
        best_valid_loss = 1000000000 if last_metrics is None else last_metrics['valid_loss']
        smoothing = constant.args.label_smoothing

        for epoch in range(start_epoch, num_epochs):
            sys.stdout.flush()
            total_loss, total_cer, total_char = 0, 0, 0

            logging.info("TRAIN")
            model.train()
            pbar = tqdm(iter(train_loader), leave=True, total=len(train_loader))
            for i, (data) in enumerate(pbar):
                src, tgt, src_percentages, src_lengths, tgt_lengths = data

                if constant.USE_CUDA:
                    src = src.cuda()
                    tgt = tgt.cuda()

                opt.zero_grad()

                pred, gold, hyp_seq, gold_seq = model(src, src_lengths, tgt, verbose=False)

                strs_gold = ["".join([id2label[int(x)] for x in ut_gold]) for ut_gold in gold_seq]
                strs_hyps = ["".join([id2label[int(x)] for x in ut_hyp]) for ut_hyp in hyp_seq]

                seq_length = pred.size(1)
                sizes = Variable(src_percentages.mul_(int(seq_length)).int(), requires_grad=False)

                loss, num_correct = calculate_metrics(
                    pred, gold, input_lengths=sizes, target_lengths=tgt_lengths, smoothing=smoothing,
                    loss_type=loss_type)

                for j in range(len(strs_hyps)):
                    total_cer += calculate_cer(strs_hyps[j].replace(' ', ''), strs_gold[j].replace(' ', ''))
                    total_char += len(strs_gold[j].replace(' ', ''))

                loss.backward()

                if constant.args.clip:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), constant.args.max_norm)

                opt.step()

                total_loss += loss.item()
                pbar.set_description("(Epoch {}) TRAIN LOSS:{:.4f} CER:{:.2f}% LR:{:.7f}".format(
                    (epoch + 1), total_loss / (i + 1), total_cer * 100 / max(total_char, 1), opt._rate))

            # evaluate
            logging.info("VALID")
            model.eval()

            for ind in range(len(valid_loader_list)):
                valid_loader = valid_loader_list[ind]

                total_valid_loss, total_valid_cer, total_valid_char = 0, 0, 0
                valid_pbar = tqdm(iter(valid_loader), leave=True, total=len(valid_loader))
                for i, (data) in enumerate(valid_pbar):
                    src, tgt, src_percentages, src_lengths, tgt_lengths = data

                    if constant.USE_CUDA:
                        src = src.cuda()
                        tgt = tgt.cuda()

                    pred, gold, hyp_seq, gold_seq = model(src, src_lengths, tgt, verbose=False)

                    seq_length = pred.size(1)
                    sizes = Variable(src_percentages.mul_(int(seq_length)).int(), requires_grad=False)

                    loss, num_correct = calculate_metrics(
                        pred, gold, input_lengths=sizes, target_lengths=tgt_lengths, smoothing=smoothing,
                        loss_type=loss_type)

                    strs_gold = ["".join([id2label[int(x)] for x in gold]) for gold in gold_seq]
                    strs_hyps = ["".join([id2label[int(x)] for x in hyp]) for hyp in hyp_seq]

                    for j in range(len(strs_hyps)):
                        total_valid_cer += calculate_cer(strs_hyps[j].replace(' ', ''),
                                                         strs_gold[j].replace(' ', ''))
                        total_valid_char += len(strs_gold[j].replace(' ', ''))

                    total_valid_loss += loss.item()
                    valid_pbar.set_description("VALID SET {} LOSS:{:.4f} CER:{:.2f}%".format(
                        ind, total_valid_loss / (i + 1), total_valid_cer * 100 / max(total_valid_char, 1)))

            metrics = {
                "train_loss": total_loss / len(train_loader),
                "valid_loss": total_valid_loss / len(valid_loader),
                "history": history,
            }
            history.append(metrics)

            if best_valid_loss > total_valid_loss / len(valid_loader):
                best_valid_loss = total_valid_loss / len(valid_loader)
                save_model(model, (epoch + 1), opt, metrics, label2id, id2label, best_model=True)

            if constant.args.shuffle:
                train_sampler.shuffle(epoch)
