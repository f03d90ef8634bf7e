import torch
import torch.nn as nn
import torch.nn.functional as F

from mt_dnn.matcher import SANBertNetwork


class MTDNNModel(object):
    def __init__(self, opt, state_dict=None, num_train_step=-1):
        self.config = opt
        self.updates = state_dict['updates'] if state_dict and 'updates' in state_dict else 0
        self.network = SANBertNetwork(opt)
        if state_dict:
            self.network.load_state_dict(state_dict['state'], strict=False)
        self.mnetwork = nn.DataParallel(self.network) if opt['multi_gpu_on'] else self.network
        if opt['cuda']:
            self.network.cuda()
        self.optimizer = torch.optim.Adamax(self.network.parameters(), opt['learning_rate'])

    def update(self, batch_meta, batch_data):
        self.network.train()
        inputs = batch_data[:batch_meta['input_len']]
        logits = self.mnetwork(*inputs)
        loss = F.cross_entropy(logits, batch_data[batch_meta['label']].cuda())
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.network.parameters(), self.config['grad_clipping'])
        self.optimizer.step()
        self.updates += 1

    def predict(self, batch_meta, batch_data):
        self.network.eval()
        task_id = batch_meta['task_id']
        inputs = batch_data[:batch_meta['input_len']]
        if len(inputs) == 3:
            inputs.append(None)
            inputs.append(None)
        inputs.append(task_id)
        score = self.mnetwork(*inputs)
        score = F.softmax(score, dim=1).data.cpu().numpy()
        predict = score.argmax(axis=1).tolist()
        return score.reshape(-1).tolist(), predict, batch_meta['label']
