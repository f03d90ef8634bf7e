import logging

import numpy as np
import torch
import torch.nn as nn
from scipy import sparse


class LearningConfig(object):
    """Container for hyperparameters used by label models during learning."""

    def __init__(self):
        self.epochs = 5
        self.batch_size = 64
        self.step_size = 0.01
        self.step_schedule = None
        self.step_multiplier = 0.1
        self.momentum = 0.9
        self.random_seed = 0


class LabelModel(nn.Module):
    """Parent class for all generative label models."""

    def _do_estimate(self, votes, config):
        torch.manual_seed(config.random_seed)
        batches = self._create_minibatches(votes, config.batch_size, shuffle_rows=True)

        optimizer = torch.optim.SGD(self.parameters(), lr=config.step_size, momentum=config.momentum, weight_decay=0)
        if config.step_schedule is not None and config.step_multiplier is not None:
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, config.step_schedule, gamma=config.step_multiplier)
        else:
            scheduler = None

        for epoch in range(config.epochs):
            logging.info('Epoch {}/{}'.format(epoch + 1, config.epochs))
            if scheduler is not None:
                scheduler.step()

            self.train()
            running_loss = 0.0
            for i_batch, inputs in enumerate(batches):
                optimizer.zero_grad()
                log_likelihood = self(*inputs)
                loss = -1 * torch.mean(log_likelihood)
                loss += self._get_regularization_loss()
                loss.backward()
                optimizer.step()
                running_loss += loss.item()

            epoch_loss = running_loss / len(batches)
            logging.info('Train Loss: %.6f', epoch_loss)

    def _create_minibatches(self, votes, batch_size, shuffle_rows=False):
        if shuffle_rows:
            index = np.arange(np.shape(votes)[0])
            np.random.shuffle(index)
            votes = votes[index, :]
        batches = [self._convert_votes(votes[i * batch_size:(i + 1) * batch_size])
                   for i in range(int(np.ceil(votes.shape[0] / batch_size)))]
        return batches

    def _convert_votes(self, votes):
        votes = sparse.coo_matrix(votes)
        return (torch.tensor(votes.toarray(), dtype=torch.long),)

    def _get_regularization_loss(self):
        return 0.0
