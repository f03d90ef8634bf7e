import time

import torch as th
from torch.nn.parallel import DistributedDataParallel

from graphstorm.trainer.gsgnn_trainer import GSgnnTrainer
from graphstorm.utils import rt_profiler, sys_tracker


class GSgnnNodePredictionTrainer(GSgnnTrainer):
    """ A trainer for node prediction. """

    def fit(self, train_loader, num_epochs, val_loader=None, test_loader=None, use_mini_batch_infer=True,
            save_model_path=None, save_model_frequency=-1, max_grad_norm=None, grad_norm_type=2.0):
        model = DistributedDataParallel(self._model, device_ids=[self.device], find_unused_parameters=True)
        device = model.device
        data = train_loader.data
        total_steps = 0
        for epoch in range(num_epochs):
            model.train()
            epoch_start = time.time()
            for i, (input_nodes, seeds, blocks) in enumerate(train_loader):
                rt_profiler.record('train_sample')
                total_steps += 1
                input_feats = data.get_node_feats(input_nodes, device)
                lbl = data.get_node_feats(seeds, device, "label")
                blocks = [block.to(device) for block in blocks]
                loss = model(blocks, input_feats, None, lbl, input_nodes)
                rt_profiler.record('train_forward')

                self.optimizer.zero_grad()
                loss.backward()
                rt_profiler.record('train_backward')
                self.optimizer.step()
                rt_profiler.record('train_step')

                if max_grad_norm is not None:
                    th.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm, grad_norm_type)
                self.log_metric("Train loss", loss.item(), total_steps)
            sys_tracker.check(f'Epoch {epoch} took {time.time() - epoch_start:.2f}s')
            if val_loader is not None:
                self.eval(model.module, val_loader, test_loader, use_mini_batch_infer, total_steps)
