import torch
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, model, train_dataset, config, device):
        self.model = model.to(device)
        self.config = config
        self.device = device
        self.train_loader = DataLoader(train_dataset, batch_size=config.batch_size, shuffle=True, num_workers=4)
        self.optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.lr)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: min(1.0, (step + 1) / config.warmup_steps))
        self.global_step = 0

    def optimizer_step(self, zero_grad: bool = False):
        self.optimizer.step()
        self.scheduler.step()
        if zero_grad:
            self.optimizer.zero_grad()

    def train_step(self, batch):
        batch = {k: v.to(self.device) for k, v in batch.items()}
        outputs = self.model(**batch)
        loss = outputs.loss
        loss.backward()
        self.optimizer_step()
        self.global_step += 1
        return loss.item()

    def train(self):
        self.model.train()
        for epoch in range(self.config.num_epochs):
            for batch in self.train_loader:
                loss = self.train_step(batch)
                if self.global_step % self.config.log_every == 0:
                    print(f"epoch {epoch} step {self.global_step}: loss {loss:.4f}")
