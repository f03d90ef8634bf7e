""" Trainer (reduced to the training and validation passes) """
import copy
import logging as log
import time

import numpy as np
import torch
from allennlp.data.iterators import BasicIterator, BucketIterator
from torch.nn.utils.clip_grad import clip_grad_norm_
from torch.optim.lr_scheduler import ReduceLROnPlateau


class SamplingMultiTaskTrainer:
    def __init__(self, model, patience=2, val_interval=100, max_vals=50, serialization_dir=None,
                 cuda_device=-1, grad_norm=None, grad_clipping=None, keep_all_checkpoints=False):
        self._model = model
        self._patience = patience
        self._max_vals = max_vals
        self._val_interval = val_interval
        self._serialization_dir = serialization_dir
        self._cuda_device = cuda_device
        self._grad_norm = grad_norm
        self._grad_clipping = grad_clipping
        self._keep_all_checkpoints = keep_all_checkpoints
        self._task_infos = None
        self._metric_infos = None
        if self._cuda_device >= 0:
            self._model = self._model.cuda(self._cuda_device)

    def _setup_training(self, tasks, batch_size, optimizer_params):
        task_infos = {task.name: {} for task in tasks}
        for task in tasks:
            task_info = task_infos[task.name]
            iterator = BucketIterator(sorting_keys=[("input1", "num_tokens")], batch_size=batch_size)
            task_info["iterator"] = iterator
            task_info["tr_generator"] = iterator(task.train_data, num_epochs=None)
            task_info["loss"] = 0.0
            task_info["total_batches_trained"] = 0
            task_info["n_batches_since_val"] = 0
        self._task_infos = task_infos
        parameters = [p for p in self._model.parameters() if p.requires_grad]
        optimizer = torch.optim.Adam(parameters, lr=optimizer_params["lr"])
        scheduler = ReduceLROnPlateau(optimizer, mode="max", factor=0.5, patience=1)
        return task_infos, optimizer, scheduler

    def train(self, tasks, validation_interval, batch_size, optimizer_params, sample_weights):
        task_infos, optimizer, scheduler = self._setup_training(tasks, batch_size, optimizer_params)
        n_pass, should_stop = 0, False
        all_tr_metrics = {}
        self._model.train()
        while not should_stop:
            task = tasks[np.random.choice(len(tasks), p=sample_weights)]
            task_info = task_infos[task.name]
            tr_generator = task_info["tr_generator"]
            for batch in tr_generator:
                optimizer.zero_grad()
                output_dict = self._forward(batch, task=task)
                loss = output_dict["loss"]
                loss.backward()
                task_info["loss"] += loss.data.cpu().numpy()
                if self._grad_clipping is not None:
                    clip_grad_norm_(self._model.parameters(), self._grad_clipping)
                optimizer.step()
                task_info["total_batches_trained"] += 1
                task_info["n_batches_since_val"] += 1
                break
            n_pass += 1
            if n_pass % validation_interval == 0:
                epoch = int(n_pass / validation_interval)
                all_val_metrics, should_save, new_best = self._validate(epoch, tasks, batch_size)
                scheduler.step(all_val_metrics["macro_avg"])
                should_stop = epoch >= self._max_vals
        return all_tr_metrics

    def _calculate_validation_performance(self, task, task_infos, tasks, batch_size, all_val_metrics,
                                          n_examples_overall):
        n_examples, batch_num = 0, 0
        task_info = task_infos[task.name]
        max_data_points = min(task.n_val_examples, 5000)
        val_iter = BasicIterator(batch_size)
        val_generator = val_iter(task.val_data, num_epochs=1, shuffle=False)
        n_val_batches = int(np.ceil(max_data_points / batch_size))
        all_val_metrics["%s_loss" % task.name] = 0.0

        for batch in val_generator:
            batch_num += 1
            out = self._forward(batch, task=task)
            loss = out["loss"]
            all_val_metrics["%s_loss" % task.name] += loss.data.cpu().numpy()
            n_examples += out["n_exs"]
            if batch_num >= n_val_batches:
                break

        all_val_metrics["%s_loss" % task.name] /= batch_num
        task_metrics = task.get_metrics(reset=True)
        for name, value in task_metrics.items():
            all_val_metrics["%s_%s" % (task.name, name)] = value
        all_val_metrics["macro_avg"] += all_val_metrics["%s_%s" % (task.name, task.val_metric)] / len(tasks)
        n_examples_overall += n_examples
        task_info["n_batches_since_val"] = 0
        task_info["loss"] = 0
        return n_examples_overall, task_infos, all_val_metrics

    def _validate(self, val_pass, tasks, batch_size):
        self._model.eval()
        all_val_metrics = {"macro_avg": 0.0}
        n_examples_overall = 0.0
        for task in tasks:
            n_examples_overall, self._task_infos, all_val_metrics = self._calculate_validation_performance(
                task, self._task_infos, tasks, batch_size, all_val_metrics, n_examples_overall)
        should_save, new_best = True, True
        self._model.train()
        return all_val_metrics, should_save, new_best

    def _forward(self, batch, task=None):
        if self._cuda_device >= 0:
            batch = {k: v.cuda(self._cuda_device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
        model_out = self._model.forward(task, batch)
        return model_out
