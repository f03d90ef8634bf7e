import os
import time

import torch
import torch.nn.functional as F


class ClassificationTrainer(object):
    def __init__(self, model, embedding, train_loader, trainer_config, train_evaluator, test_evaluator,
                 dev_evaluator):
        self.model = model
        self.embedding = embedding
        self.optimizer = trainer_config['optimizer']
        self.train_loader = train_loader
        self.batch_size = trainer_config['batch_size']
        self.log_interval = trainer_config['log_interval']
        self.model_outfile = trainer_config['model_outfile']
        self.patience = trainer_config['patience']
        self.train_evaluator = train_evaluator
        self.test_evaluator = test_evaluator
        self.dev_evaluator = dev_evaluator
        self.iterations = 0
        self.best_dev_f1 = 0
        self.iters_not_improved = 0
        self.early_stop = False
        self.snapshot_path = os.path.join(self.model_outfile, 'best_model.pt')

    def train_epoch(self, epoch):
        self.train_loader.init_epoch()
        n_correct, n_total = 0, 0
        for batch_idx, batch in enumerate(self.train_loader):
            self.iterations += 1
            self.model.train()
            self.optimizer.zero_grad()
            scores = self.model(batch.text)
            prediction = torch.max(scores, 1)[1].view(batch.label.size(0)).data
            n_correct += (prediction == torch.max(batch.label.data, 1)[1]).sum().item()
            n_total += batch.batch_size
            train_acc = 100. * n_correct / n_total
            loss = F.cross_entropy(scores, torch.argmax(batch.label.data, dim=1))
            loss.backward()
            self.optimizer.step()

            if self.iterations % self.log_interval == 1:
                print('epoch {} iter {} loss {:.4f} acc {:.2f}'.format(epoch, self.iterations, loss.item(),
                                                                     train_acc))

    def train(self, epochs):
        os.makedirs(self.model_outfile, exist_ok=True)
        start = time.time()
        for epoch in range(1, epochs + 1):
            self.train_epoch(epoch)

            dev_acc, dev_f1, dev_loss = self.dev_evaluator.get_scores()[0]
            print('epoch {} time {:.0f}s dev acc {:.4f} f1 {:.4f} loss {:.4f}'.format(
                epoch, time.time() - start, dev_acc, dev_f1, dev_loss))

            if dev_f1 > self.best_dev_f1:
                self.iters_not_improved = 0
                self.best_dev_f1 = dev_f1
                torch.save(self.model, self.snapshot_path)
            else:
                self.iters_not_improved += 1
                if self.iters_not_improved >= self.patience:
                    self.early_stop = True
                    print('Early Stopping. Epoch: {}, Best Dev F1: {}'.format(epoch, self.best_dev_f1))
                    break
