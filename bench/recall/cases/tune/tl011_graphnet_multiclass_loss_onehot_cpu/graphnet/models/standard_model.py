"""Standard model class(es), reduced: a GNN with one classification task."""
from typing import Any, Dict, List

import torch
from pytorch_lightning import LightningModule
from torch import Tensor, nn
from torch_geometric.data import Data

from graphnet.training.loss_functions import LossFunction


class MulticlassClassificationTask(nn.Module):
    """Predict the three-class particle type (noise, muon, neutrino)."""

    def __init__(self, hidden_size: int, target_label: str, loss_function: LossFunction) -> None:
        super().__init__()
        self._target_label = target_label
        self._loss_function = loss_function
        self._affine = nn.Linear(hidden_size, 3)

    def forward(self, x: Tensor) -> Tensor:
        return torch.softmax(self._affine(x), dim=-1)

    def compute_loss(self, pred: Tensor, data: Data) -> Tensor:
        target = data[self._target_label]
        return self._loss_function(pred, target)


class StandardModel(LightningModule):
    """Main class for standard models in graphnet."""

    def __init__(self, gnn: nn.Module, tasks: List[MulticlassClassificationTask],
                 optimizer_kwargs: Dict[str, Any]) -> None:
        super().__init__()
        self._gnn = gnn
        self._tasks = nn.ModuleList(tasks)
        self._optimizer_kwargs = optimizer_kwargs

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), **self._optimizer_kwargs)

    def forward(self, data: Data) -> List[Tensor]:
        x = self._gnn(data)
        return [task(x) for task in self._tasks]

    def compute_loss(self, preds: List[Tensor], data: Data) -> Tensor:
        losses = [task.compute_loss(pred, data) for task, pred in zip(self._tasks, preds)]
        return torch.sum(torch.stack(losses))

    def training_step(self, train_batch: Data, batch_idx: int) -> Tensor:
        preds = self(train_batch)
        loss = self.compute_loss(preds, train_batch)
        self.log("train_loss", loss, batch_size=train_batch.num_graphs, prog_bar=True, on_epoch=True)
        return loss

    def validation_step(self, val_batch: Data, batch_idx: int) -> Tensor:
        preds = self(val_batch)
        loss = self.compute_loss(preds, val_batch)
        self.log("val_loss", loss, batch_size=val_batch.num_graphs, prog_bar=True, on_epoch=True)
        return loss
