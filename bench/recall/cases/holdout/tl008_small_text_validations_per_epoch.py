import numpy as np
import torch
import torch.nn.functional as F

from small_text.integrations.pytorch.utils.data import dataloader


class TransformerBasedClassification:

    def __init__(self, transformer_model, num_classes, num_epochs=10, lr=2e-5, mini_batch_size=12,
                 validations_per_epoch=1, device=None):
        self.transformer_model = transformer_model
        self.num_classes = num_classes
        self.num_epochs = num_epochs
        self.lr = lr
        self.mini_batch_size = mini_batch_size
        self.validations_per_epoch = validations_per_epoch
        self.device = device
        self.model = None

    def _train_loop(self, sub_train, sub_valid, optimizer, scheduler):
        for epoch in range(self.num_epochs):
            train_loss, train_acc = self._train_loop_epoch(epoch, sub_train, sub_valid, optimizer, scheduler)

    def _train_loop_epoch(self, epoch, sub_train, sub_valid, optimizer, scheduler):
        self.model.train()
        train_loss = 0.
        train_acc = 0.
        valid_losses = []
        train_iter = dataloader(sub_train.data, self.mini_batch_size, self._create_collate_fn(), train=True)
        num_batches = int(np.ceil(len(sub_train) / self.mini_batch_size))
        validate_every = max(num_batches // self.validations_per_epoch, 1)
        for i, (x, masks, cls) in enumerate(train_iter):
            loss, acc = self._train_single_batch(x, masks, cls, optimizer)
            scheduler.step()
            train_loss += loss
            train_acc += acc
            if self.validations_per_epoch > 1 and (i + 1) % validate_every == 0:
                valid_loss, valid_acc = self.validate(sub_valid)
                valid_losses.append(valid_loss)
        return train_loss / len(sub_train), train_acc / len(sub_train)

    def _train_single_batch(self, x, masks, cls, optimizer):
        x, masks, cls = x.to(self.device), masks.to(self.device), cls.to(self.device)
        optimizer.zero_grad()
        outputs = self.model(x, attention_mask=masks)
        logits = outputs.logits
        loss = F.cross_entropy(logits, cls)
        loss.backward()
        optimizer.step()
        acc = (logits.argmax(dim=1) == cls).sum().item()
        return loss.detach().item(), acc

    def validate(self, validation_set):
        valid_loss = 0.
        acc = 0.
        self.model.eval()
        valid_iter = dataloader(validation_set.data, self.mini_batch_size, self._create_collate_fn(), train=False)
        for x, masks, cls in valid_iter:
            x, masks, cls = x.to(self.device), masks.to(self.device), cls.to(self.device)
            with torch.no_grad():
                outputs = self.model(x, attention_mask=masks)
                loss = F.cross_entropy(outputs.logits, cls)
                valid_loss += loss.item()
                acc += (outputs.logits.argmax(dim=1) == cls).sum().item()
        return valid_loss / len(validation_set), acc / len(validation_set)

    def _create_collate_fn(self):
        def collate(batch):
            text, masks, label = zip(*batch)
            return torch.cat(text), torch.cat(masks), torch.tensor(label)
        return collate
