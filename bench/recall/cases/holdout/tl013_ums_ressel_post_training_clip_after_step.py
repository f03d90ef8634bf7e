# post_train/post_training.py's PostTraining before the fix (trimmed: tensorboard, the
# checkpoint resume, the per-iteration logging); the datasets, models and checkpoint
# manager are imported as in the repository.
import logging
from datetime import datetime

import torch
from torch import nn, optim
from torch.utils.data import DataLoader
from tqdm import tqdm

from post_train.bert.dataset import BertPostTrainingDataset
from post_train.electra.dataset import ElectraPostTrainingDataset
from post_train.pretrained_dpt import BertDPT, ElectraDPT
from models.utils.checkpointing import CheckpointManager


class PostTraining(object):
  def __init__(self, hparams):
    self.hparams = hparams
    self._logger = logging.getLogger(__name__)

  def _build_dataloader(self):
    self.pretrained_type = self.hparams.model_type.split("_")[0]
    training_dataset_map = {
      "bert": BertPostTrainingDataset,
      "electra": ElectraPostTrainingDataset,
    }
    self.train_dataset = training_dataset_map[self.pretrained_type](self.hparams, split="train")
    self.train_dataloader = DataLoader(
      self.train_dataset,
      batch_size=self.hparams.train_batch_size,
      num_workers=self.hparams.cpu_workers,
      shuffle=True if self.pretrained_type == "electra" else False,
      drop_last=True
    )

  def _build_model(self):
    training_model_map = {
      "bert": BertDPT,
      "electra": ElectraDPT,
    }
    self.model = training_model_map[self.pretrained_type](self.hparams)
    self.model = self.model.to(self.device)

    if -1 not in self.hparams.gpu_ids and len(self.hparams.gpu_ids) > 1:
      self.model = nn.DataParallel(self.model, self.hparams.gpu_ids)

    self.optimizer = optim.Adam(self.model.parameters(), lr=self.hparams.learning_rate)
    self.checkpoint_manager = CheckpointManager(self.model, self.optimizer, self.hparams.save_dirpath, hparams=self.hparams)

  def train(self):
    self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    self._build_dataloader()
    self._build_model()

    train_begin = datetime.utcnow()
    global_iteration_step = 0
    accu_mlm_loss, accu_nsp_loss = 0, 0
    accumulate_batch, accu_count = 0, 0

    for epoch in range(1, self.hparams.num_epochs):
      self.model.train()

      tqdm_batch_iterator = tqdm(self.train_dataloader)
      for batch_idx, batch in enumerate(tqdm_batch_iterator):
        buffer_batch = batch.copy()
        for key in batch:
          buffer_batch[key] = buffer_batch[key].to(self.device)

        mlm_loss, nsp_loss = self.model(buffer_batch)
        mlm_loss = mlm_loss.mean()
        nsp_loss = nsp_loss.mean()
        accu_mlm_loss += mlm_loss.item()
        accu_nsp_loss += nsp_loss.item()

        loss = mlm_loss + nsp_loss
        loss.backward()
        accu_count += 1

        accumulate_batch += buffer_batch["input_ids"].shape[0]
        if self.hparams.virtual_batch_size == accumulate_batch \
            or batch_idx == (len(self.train_dataset) // self.hparams.train_batch_size):  # last batch

          self.optimizer.step()

          nn.utils.clip_grad_norm_(self.model.parameters(), self.hparams.max_gradient_norm)
          self.optimizer.zero_grad()

          global_iteration_step += 1
          description = "[{}][Epoch: {:3d}][Iter: {:6d}][MLM_Loss: {:6f}][NSP_Loss: {:6f}]".format(
            datetime.utcnow() - train_begin, epoch, global_iteration_step,
            accu_mlm_loss / accu_count, accu_nsp_loss / accu_count)
          tqdm_batch_iterator.set_description(description)

          accumulate_batch, accu_count = 0, 0
          accu_mlm_loss, accu_nsp_loss = 0, 0

          if global_iteration_step % self.hparams.checkpoint_save_step == 0:
            self.checkpoint_manager.step(global_iteration_step)
