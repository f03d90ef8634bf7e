import logging

import torch
from torch.nn.utils import clip_grad_norm_

from losses import cross_entropy, max_pooling_loss

criterion_dict = {'CE': cross_entropy, 'max_pooling': max_pooling_loss}


class Executor:
    def __init__(self):
        self.step = 0

    def train(self, model, optimizer, data_loader, device, writer, args):
        ''' Train one epoch
        '''
        model.train()
        clip = args.get('grad_clip', 50.0)
        log_interval = args.get('log_interval', 10)
        epoch = args.get('epoch', 0)
        min_duration = args.get('min_duration', 0)
        criterion = criterion_dict[args.get('criterion', 'max_pooling')]

        for batch_idx, batch in enumerate(data_loader):
            key, feats, target, feats_lengths = batch
            feats = feats.to(device)
            target = target.to(device)
            feats_lengths = feats_lengths.to(device)
            num_utts = feats_lengths.size(0)
            if num_utts == 0:
                continue
            logits = model(feats)
            loss, acc = criterion(logits, target, feats_lengths, min_duration)
            loss.backward()
            grad_norm = clip_grad_norm_(model.parameters(), clip)
            if torch.isfinite(grad_norm):
                optimizer.step()
            if batch_idx % log_interval == 0:
                logging.debug('TRAIN Batch {}/{} loss {:.8f} acc {:.8f}'.format(
                    epoch, batch_idx, loss.item(), acc))

    def cv(self, model, data_loader, device, args):
        model.eval()
        criterion = criterion_dict[args.get('criterion', 'max_pooling')]
        num_seen_utts = 1
        total_loss = 0.0
        with torch.no_grad():
            for batch_idx, batch in enumerate(data_loader):
                key, feats, target, feats_lengths = batch
                feats = feats.to(device)
                target = target.to(device)
                feats_lengths = feats_lengths.to(device)
                num_utts = feats_lengths.size(0)
                if num_utts == 0:
                    continue
                logits = model(feats)
                loss, acc = criterion(logits, target, feats_lengths)
                if torch.isfinite(loss):
                    num_seen_utts += num_utts
                    total_loss += loss.item() * num_utts
        return total_loss / num_seen_utts
