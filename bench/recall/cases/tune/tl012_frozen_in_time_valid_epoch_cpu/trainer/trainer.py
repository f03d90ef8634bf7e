import numpy as np
import torch
from torch import nn

from base import BaseTrainer
from model.model import sim_matrix


class Trainer(BaseTrainer):
    """
    Trainer class

    Note:
        Inherited from BaseTrainer.
    """

    def __init__(self, model, loss, metrics, optimizer, config, data_loader,
                 valid_data_loader=None, lr_scheduler=None, len_epoch=None, writer=None,
                 tokenizer=None, max_samples_per_epoch=50000):
        super().__init__(model, loss, metrics, optimizer, config, writer)
        self.config = config
        self.data_loader = data_loader
        self.len_epoch = len_epoch or min(len(x) for x in data_loader)
        self.valid_data_loader = valid_data_loader
        self.do_validation = self.valid_data_loader is not None
        self.lr_scheduler = lr_scheduler
        self.tokenizer = tokenizer
        self.max_samples_per_epoch = max_samples_per_epoch

    def _train_epoch(self, epoch):
        self.model.train()
        total_loss = [0] * len(self.data_loader)
        for batch_idx, data_li in enumerate(zip(*self.data_loader)):
            if (batch_idx + 1) * self.batch_size > self.max_samples_per_epoch:
                break
            for dl_idx, data in enumerate(data_li):
                if self.tokenizer is not None:
                    data['text'] = self.tokenizer(data['text'], return_tensors='pt', padding=True,
                                                  truncation=True)
                data['text'] = {key: val.to(self.device) for key, val in data['text'].items()}
                data['video'] = data['video'].to(self.device)

                self.optimizer.zero_grad()
                text_embeds, video_embeds = self.model(data)
                output = sim_matrix(text_embeds, video_embeds)
                loss = self.loss(output)
                loss.backward()
                self.optimizer.step()
                total_loss[dl_idx] += loss.detach().item()

        log = {f'loss_{dl_idx}': total_loss[dl_idx] / self.len_epoch
               for dl_idx in range(len(self.data_loader))}
        if self.do_validation:
            val_log = self._valid_epoch(epoch)
            log.update(val_log)
        if self.lr_scheduler is not None:
            self.lr_scheduler.step()
        return log

    def _valid_epoch(self, epoch):
        self.model.eval()
        text_embed_arr = {x: [] for x in range(len(self.valid_data_loader))}
        vid_embed_arr = {x: [] for x in range(len(self.valid_data_loader))}
        with torch.no_grad():
            for dl_idx, dl in enumerate(self.valid_data_loader):
                for batch_idx, data in enumerate(dl):
                    if self.tokenizer is not None:
                        data['text'] = self.tokenizer(data['text'], return_tensors='pt',
                                                      padding=True, truncation=True)
                    data['text'] = {key: val.to(self.device) for key, val in data['text'].items()}

                    if isinstance(self.model, nn.DataParallel) and data['video'].shape[0] < len(self.model.device_ids):
                        text_embed, vid_embed = self.model.module(data, return_embeds=True)
                    else:
                        text_embed, vid_embed = self.model(data, return_embeds=True)
                    text_embed_arr[dl_idx].append(text_embed.cpu())
                    vid_embed_arr[dl_idx].append(vid_embed.cpu())

        nested_metrics = {}
        for dl_idx in text_embed_arr:
            text_embeds = torch.cat(text_embed_arr[dl_idx])
            vid_embeds = torch.cat(vid_embed_arr[dl_idx])
            sims = sim_matrix(text_embeds, vid_embeds).detach().cpu().numpy()
            for metric in self.metrics:
                nested_metrics[f'{dl_idx}_{metric.__name__}'] = metric(sims)
        return nested_metrics
