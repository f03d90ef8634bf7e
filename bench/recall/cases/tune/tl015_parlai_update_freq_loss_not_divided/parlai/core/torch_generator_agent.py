"""Generic PyTorch-based Generator agent (reduced to the training step)."""
import torch
import torch.nn.functional as F

from parlai.core.torch_agent import TorchAgent


class TorchGeneratorAgent(TorchAgent):
    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.model = self.build_model()
        if self.use_cuda:
            self.model.cuda()
        self.criterion = torch.nn.CrossEntropyLoss(ignore_index=self.NULL_IDX, reduction='sum')
        self.init_optim([p for p in self.model.parameters() if p.requires_grad], lr=opt['learningrate'])

    def build_model(self):
        raise NotImplementedError

    def compute_loss(self, batch):
        model_output = self.model(batch.text_vec, ys=batch.label_vec)
        scores = model_output[0]
        score_view = scores.reshape(-1, scores.size(-1))
        loss = self.criterion(score_view, batch.label_vec.reshape(-1))
        notnull = batch.label_vec.ne(self.NULL_IDX)
        target_tokens = notnull.long().sum().item()
        self.metrics['num_tokens'] += target_tokens
        return loss / target_tokens

    def train_step(self, batch):
        """Train on a single batch of examples."""
        batchsize = batch.text_vec.size(0)
        self.model.train()
        self.zero_grad()

        try:
            loss = self.compute_loss(batch)
            self.metrics['loss'] += loss.item()
            self.backward(loss)
            self.update_params()
        except RuntimeError as e:
            if 'out of memory' in str(e):
                print('| WARNING: ran out of memory, skipping batch. if this happens frequently, '
                      'decrease batchsize or truncate the inputs to the model.')
                self.metrics['total_skipped_batches'] = self.metrics.get('total_skipped_batches', 0) + 1
            else:
                raise e
