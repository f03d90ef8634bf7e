import logging

import torch
from torch.utils.tensorboard import SummaryWriter

from joeynmt.builders import build_gradient_clipper, build_optimizer, build_scheduler
from joeynmt.model import build_model
from joeynmt.prediction import predict

logger = logging.getLogger(__name__)


class TrainManager:
    """Manages training loop, validations, learning rate scheduling and early stopping."""

    def __init__(self, model, cfg):
        train_cfg = cfg["training"]
        self.model = model
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)
        self.clip_grad_fun = build_gradient_clipper(config=train_cfg)
        self.optimizer = build_optimizer(config=train_cfg, parameters=self.model.parameters())
        self.scheduler, self.scheduler_step_at = build_scheduler(config=train_cfg, optimizer=self.optimizer)
        self.validation_freq = train_cfg.get("validation_freq", 1000)
        self.batch_multiplier = train_cfg.get("batch_multiplier", 1)
        self.epochs = train_cfg["epochs"]
        self.batch_size = train_cfg["batch_size"]
        self.normalization = train_cfg.get("normalization", "batch")
        self.steps = 0
        self.tb_writer = SummaryWriter(log_dir=cfg["model_dir"] + "/tensorboard/")

    def train_and_validate(self, train_data, valid_data):
        self.train_iter = train_data.make_iter(batch_size=self.batch_size, shuffle=True, device=self.device)
        for epoch_no in range(self.epochs):
            logger.info("EPOCH %d", epoch_no + 1)
            self.model.zero_grad()
            epoch_loss = 0
            total_batch_loss = 0
            for i, batch in enumerate(self.train_iter):
                # get batch loss
                norm_batch_loss = self._train_step(batch)
                total_batch_loss += norm_batch_loss

                # update!
                if (i + 1) % self.batch_multiplier == 0:
                    if self.clip_grad_fun is not None:
                        self.clip_grad_fun(parameters=self.model.parameters())
                    self.optimizer.step()
                    self.model.zero_grad()
                    self.steps += 1
                    if self.scheduler is not None and self.scheduler_step_at == "step":
                        self.scheduler.step()
                    self.tb_writer.add_scalar("train/batch_loss", total_batch_loss, self.steps)
                    epoch_loss += total_batch_loss
                    total_batch_loss = 0

                    # validate on the entire dev set
                    if self.steps % self.validation_freq == 0:
                        self._validate(valid_data)

            if self.scheduler is not None and self.scheduler_step_at == "epoch":
                self.scheduler.step()
            logger.info("Epoch %3d: total training loss %.2f", epoch_no + 1, epoch_loss)

    def _train_step(self, batch):
        # reactivate training
        self.model.train()

        # get loss
        batch_loss, _, _, _ = self.model(return_type="loss", **vars(batch))

        # normalize batch loss
        if self.normalization == "batch":
            normalizer = batch.nseqs
        else:
            normalizer = batch.ntokens
        norm_batch_loss = batch_loss / normalizer
        if self.batch_multiplier > 1:
            norm_batch_loss = norm_batch_loss / self.batch_multiplier

        # accumulate gradients
        norm_batch_loss.backward()
        return norm_batch_loss.item()

    def _validate(self, valid_data):
        valid_scores, valid_hypotheses = predict(model=self.model, data=valid_data, device=self.device,
                                                 compute_loss=True, normalization=self.normalization)
        self.tb_writer.add_scalar("valid/loss", valid_scores["loss"], self.steps)
        logger.info("Validation at step %d: loss %.4f ppl %.2f", self.steps, valid_scores["loss"], valid_scores["ppl"])
        return valid_scores


def train(cfg, train_data, valid_data, src_vocab, trg_vocab):
    model = build_model(cfg["model"], src_vocab=src_vocab, trg_vocab=trg_vocab)
    trainer = TrainManager(model=model, cfg=cfg)
    trainer.train_and_validate(train_data=train_data, valid_data=valid_data)
