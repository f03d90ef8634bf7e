# The reporter's trainer from the Accelerate thread (reconstructed around the quoted training loop).
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModel, get_cosine_schedule_with_warmup


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class RegressionModel(torch.nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = AutoModel.from_pretrained(backbone)
        self.dropout = torch.nn.Dropout(0.1)
        self.head = torch.nn.Linear(self.backbone.config.hidden_size, 1)
        self.loss_fn = torch.nn.MSELoss()

    def forward(self, input_ids, attention_mask, label=None):
        hidden = self.backbone(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state[:, 0]
        preds = self.head(self.dropout(hidden)).squeeze(-1)
        loss = self.loss_fn(preds, label) if label is not None else None
        return preds, loss


class Trainer:
    def __init__(self, args, train_dataset, valid_dataset):
        self.args = args
        self._accelerator = Accelerator(mixed_precision="fp16",
                                        gradient_accumulation_steps=args.gradient_accumulation_steps)
        model = RegressionModel(args.backbone)
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
        train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True, num_workers=4,
                                  pin_memory=True)
        valid_loader = DataLoader(valid_dataset, batch_size=args.batch_size * 2, num_workers=4, pin_memory=True)
        num_steps = len(train_loader) * args.epochs // args.gradient_accumulation_steps
        lr_scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps, num_steps)
        (self.model, self.optimizer, self.train_loader, self.valid_loader,
         self.lr_scheduler) = self._accelerator.prepare(model, optimizer, train_loader, valid_loader, lr_scheduler)

    def train_one_epoch(self, dataloader):
        self.model.train()
        self._trn_loss_meter = AverageMeter()
        for step, batch in enumerate(dataloader):
            with self._accelerator.accumulate(self.model):
                self.optimizer.zero_grad()
                _, loss = self.model(**batch)
                self._accelerator.backward(loss)
                if self._accelerator.sync_gradients:
                    self._accelerator.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
                self.optimizer.step()
                self.lr_scheduler.step()
                # assuming dataset has label as key
                self._trn_loss_meter.update(loss.item() * self.args.gradient_accumulation_steps,
                                            batch["label"].size(0))
        return self._trn_loss_meter.avg

    @torch.no_grad()
    def evaluate(self, dataloader):
        self.model.eval()
        meter = AverageMeter()
        for batch in dataloader:
            _, loss = self.model(**batch)
            meter.update(loss.item(), batch["label"].size(0))
        return meter.avg

    def fit(self):
        for epoch in range(self.args.epochs):
            train_loss = self.train_one_epoch(self.train_loader)
            valid_loss = self.evaluate(self.valid_loader)
            self._accelerator.print(f"epoch {epoch}: train {train_loss:.4f} valid {valid_loss:.4f}")
