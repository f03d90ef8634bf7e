# recbole/trainer/trainer.py's Trainer before the fix, reduced (early stopping, the
# checkpoint, the evaluator set-up and the resume logic trimmed; the data loaders,
# evaluator and utilities are imported as in the repository). Partly reconstructed from
# the PR's title: the running total kept the loss tensors.
from time import time

import torch
import torch.optim as optim
from tqdm import tqdm

from recbole.evaluator import TopKEvaluator
from recbole.utils import ensure_dir, get_local_time, early_stopping, dict2str


class AbstractTrainer(object):
    def __init__(self, config, model):
        self.config = config
        self.model = model

    def fit(self, train_data):
        raise NotImplementedError('Method [next] should be implemented.')


class Trainer(AbstractTrainer):
    def __init__(self, config, model):
        super(Trainer, self).__init__(config, model)

        self.learner = config['learner']
        self.learning_rate = config['learning_rate']
        self.epochs = config['epochs']
        self.eval_step = min(config['eval_step'], self.epochs)
        self.clip_grad_norm = config['clip_grad_norm']
        self.device = config['device']
        self.start_epoch = 0
        self.cur_step = 0
        self.best_valid_score = -1
        self.optimizer = self._build_optimizer()
        self.evaluator = TopKEvaluator(config)

    def _build_optimizer(self):
        if self.learner.lower() == 'adam':
            optimizer = optim.Adam(self.model.parameters(), lr=self.learning_rate)
        elif self.learner.lower() == 'sgd':
            optimizer = optim.SGD(self.model.parameters(), lr=self.learning_rate)
        else:
            optimizer = optim.Adam(self.model.parameters(), lr=self.learning_rate)
        return optimizer

    def _train_epoch(self, train_data, epoch_idx, loss_func=None):
        self.model.train()
        loss_func = loss_func or self.model.calculate_loss
        total_loss = None
        for batch_idx, interaction in enumerate(train_data):
            interaction = interaction.to(self.device)
            self.optimizer.zero_grad()
            losses = loss_func(interaction)
            if isinstance(losses, tuple):
                loss = sum(losses)
                total_loss = losses if total_loss is None else tuple(map(sum, zip(total_loss, losses)))
            else:
                loss = losses
                total_loss = losses if total_loss is None else total_loss + losses
            self._check_nan(loss)
            loss.backward()
            if self.clip_grad_norm:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), **self.clip_grad_norm)
            self.optimizer.step()
        return total_loss

    def _check_nan(self, loss):
        if torch.isnan(loss):
            raise ValueError('Training loss is nan')

    @torch.no_grad()
    def evaluate(self, eval_data):
        self.model.eval()
        batch_matrix_list = []
        for batch_idx, batched_data in enumerate(eval_data):
            interaction, history_index, swap_row, swap_col_after, swap_col_before = batched_data
            scores = self.model.full_sort_predict(interaction.to(self.device))
            batch_matrix = self.evaluator.collect(interaction, scores)
            batch_matrix_list.append(batch_matrix)
        return self.evaluator.evaluate(batch_matrix_list, eval_data)

    def fit(self, train_data, valid_data=None, verbose=True):
        for epoch_idx in range(self.start_epoch, self.epochs):
            # train
            training_start_time = time()
            train_loss = self._train_epoch(train_data, epoch_idx)
            training_end_time = time()
            if verbose:
                print('epoch %d training [time: %.2fs, train loss: %s]' % (
                    epoch_idx, training_end_time - training_start_time, train_loss))

            # eval
            if self.eval_step <= 0 or not valid_data:
                continue
            if (epoch_idx + 1) % self.eval_step == 0:
                valid_result = self.evaluate(valid_data)
                valid_score = valid_result['Recall@10']
                if valid_score > self.best_valid_score:
                    self.best_valid_score = valid_score
                if verbose:
                    print('epoch %d evaluating: %s' % (epoch_idx, dict2str(valid_result)))
        return self.best_valid_score
