"""
    This is the loadable seq2seq trainer library that is
    in charge of training details, loss compute, and statistics.
"""

from __future__ import division

import onmt.utils
from onmt.utils.logging import logger


def build_trainer(opt, device_id, model, fields, optim, model_saver=None):
    train_loss = onmt.utils.loss.build_loss_compute(model, fields["tgt"], opt)
    valid_loss = onmt.utils.loss.build_loss_compute(model, fields["tgt"], opt, train=False)

    trunc_size = opt.truncated_decoder  # Badly named...
    shard_size = opt.max_generator_batches if opt.model_dtype == 'fp32' else 0
    norm_method = opt.normalization
    grad_accum_count = opt.accum_count
    n_gpu = opt.world_size
    gpu_rank = opt.gpu_ranks[device_id] if device_id >= 0 else 0

    trainer = Trainer(model, train_loss, valid_loss, optim, trunc_size,
                      shard_size, norm_method, grad_accum_count, n_gpu, gpu_rank,
                      model_saver=model_saver)
    return trainer


class Trainer(object):
    """
    Class that controls the training process.
    """

    def __init__(self, model, train_loss, valid_loss, optim,
                 trunc_size=0, shard_size=32, norm_method="sents", grad_accum_count=1,
                 n_gpu=1, gpu_rank=1, model_saver=None):
        # Basic attributes.
        self.model = model
        self.train_loss = train_loss
        self.valid_loss = valid_loss
        self.optim = optim
        self.trunc_size = trunc_size
        self.shard_size = shard_size
        self.norm_method = norm_method
        self.grad_accum_count = grad_accum_count
        self.n_gpu = n_gpu
        self.gpu_rank = gpu_rank
        self.model_saver = model_saver

        # Set model in training mode.
        self.model.train()

    def train(self, train_iter, train_steps, save_checkpoint_steps=5000,
              valid_iter=None, valid_steps=10000):
        logger.info('Start training...')
        step = self.optim.training_step
        total_stats = onmt.utils.Statistics()

        while step <= train_steps:
            for i, batch in enumerate(train_iter):
                normalization = batch.tgt[1:].ne(self.train_loss.padding_idx).sum().item()
                self._gradient_accumulation([batch], normalization, total_stats)

                if valid_iter is not None and step % valid_steps == 0:
                    valid_stats = self.validate(valid_iter)
                    logger.info('Validation perplexity: %g' % valid_stats.ppl())

                if self.model_saver is not None and step % save_checkpoint_steps == 0:
                    self.model_saver.save(step)
                step += 1
                if step > train_steps:
                    break
        return total_stats

    def validate(self, valid_iter):
        """ Validate model.
            valid_iter: validate data iterator
        Returns:
            :obj:`nmt.Statistics`: validation loss statistics
        """
        # Set model in validating mode.
        self.model.eval()

        stats = onmt.utils.Statistics()

        for batch in valid_iter:
            src, src_lengths = batch.src if isinstance(batch.src, tuple) else (batch.src, None)
            tgt = batch.tgt

            # F-prop through the model.
            outputs, attns = self.model(src, tgt, src_lengths)

            # Compute loss.
            _, batch_stats = self.valid_loss(batch, outputs, attns)

            # Update statistics.
            stats.update(batch_stats)

        # Set model back to training mode.
        self.model.train()

        return stats

    def _gradient_accumulation(self, true_batches, normalization, total_stats):
        if self.grad_accum_count > 1:
            self.optim.zero_grad()

        for batch in true_batches:
            target_size = batch.tgt.size(0)
            # Truncated BPTT: reminder not compatible with accum > 1
            trunc_size = self.trunc_size if self.trunc_size else target_size

            src, src_lengths = batch.src if isinstance(batch.src, tuple) else (batch.src, None)
            tgt_outer = batch.tgt

            bptt = False
            for j in range(0, target_size - 1, trunc_size):
                # 1. Create truncated target.
                tgt = tgt_outer[j: j + trunc_size]

                # 2. F-prop all but generator.
                if self.grad_accum_count == 1:
                    self.optim.zero_grad()
                outputs, attns = self.model(src, tgt, src_lengths, bptt=bptt)
                bptt = True

                # 3. Compute loss.
                loss, batch_stats = self.train_loss(
                    batch, outputs, attns, normalization=normalization,
                    shard_size=self.shard_size, trunc_start=j, trunc_size=trunc_size)

                if loss is not None:
                    self.optim.backward(loss)

                total_stats.update(batch_stats)

                # 4. Update the parameters and statistics.
                if self.grad_accum_count == 1:
                    self.optim.step()

                # If truncated, don't backprop fully.
                if self.model.decoder.state is not None:
                    self.model.decoder.detach_state()

        if self.grad_accum_count > 1:
            self.optim.step()
