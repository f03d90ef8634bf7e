import numpy as np
import torch

from loss.loss_class import Loss
from trainer.min_norm_solvers import MinNormSolver, gradient_normalizers


class Trainer():
    """The trainer: multi-objective training of a recommender with the MGDA solver."""

    def __init__(self, data_handler, model, losses, validation_metrics, save_to_path, params,
                 device='cuda'):
        self.data_handler = data_handler
        self.model = model.to(device)
        self.losses = losses
        self.validation_metrics = validation_metrics
        self.save_to_path = save_to_path
        self.params = params
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=params['learning_rate'])
        self.normalization_type = params.get('normalization_type', 'loss+')

    def _get_gradients(self, x, y):
        grads = {}
        loss_data = {}
        for i, loss in enumerate(self.losses):
            self.optimizer.zero_grad()
            model_output = self.model(x)
            loss_value = loss.compute_loss(y, model_output)
            loss_data[i] = loss_value.item()
            loss_value.backward()
            grads[i] = [param.grad.data.clone() for param in self.model.parameters() if param.grad is not None]
        return grads, loss_data

    def train(self):
        for epoch in range(self.params['epochs']):
            self.model.train()
            for x, y in self.data_handler.get_train_dataloader():
                x = x.to(self.device)
                y = y.to(self.device)

                # MGDA: gradients of every objective, normalized, then the min-norm weights
                grads, loss_data = self._get_gradients(x, y)
                gn = gradient_normalizers(grads, loss_data, self.normalization_type)
                for t in grads:
                    for gr_i in range(len(grads[t])):
                        grads[t][gr_i] = grads[t][gr_i] / gn[t]
                alphas, min_norm = MinNormSolver.find_min_norm_element([grads[t] for t in grads])

                model_output = self.model(x)
                loss_values = [loss.compute_loss(y, model_output) for loss in self.losses]
                weighted_loss = sum(float(alpha) * loss_value for alpha, loss_value in zip(alphas, loss_values))

                self.optimizer.zero_grad()
                weighted_loss.backward()
                self.optimizer.step()

            val_loss = self.validate()
            print(epoch, val_loss)

    def validate(self):
        self.model.eval()
        total = []
        with torch.no_grad():
            for x, y in self.data_handler.get_validation_dataloader():
                x = x.to(self.device)
                y = y.to(self.device)
                out = self.model(x)
                total.append([m.compute_loss(y, out).item() for m in self.validation_metrics])
        return np.mean(total, axis=0)
