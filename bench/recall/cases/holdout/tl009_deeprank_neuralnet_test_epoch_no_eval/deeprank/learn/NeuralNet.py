import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable
from torch.utils.data.sampler import SubsetRandomSampler

from deeprank.learn import DataSet


class NeuralNet:
    def __init__(self, data_set, model, cuda=False, ngpu=0, plot=True, outdir='./'):
        self.data_set = data_set
        self.cuda = cuda
        self.ngpu = ngpu
        self.outdir = outdir
        self.data_set.process_dataset()
        self.input_shape = self.data_set.input_shape
        self.net = model(self.input_shape)
        if self.cuda:
            self.net = self.net.cuda()
        if self.ngpu > 1:
            self.net = nn.DataParallel(self.net, device_ids=list(range(self.ngpu)))
        self.criterion = nn.MSELoss(reduction='sum')
        self.optimizer = optim.SGD(self.net.parameters(), lr=0.005, momentum=0.9, weight_decay=0.001)
        self.losses = {'train': [], 'valid': [], 'test': []}

    def train(self, nepoch=50, divide_trainset=None, train_batch_size=10, num_workers=1):
        index_train, index_valid, index_test = self._divide_dataset(divide_trainset)
        train_sampler = SubsetRandomSampler(index_train)
        valid_sampler = SubsetRandomSampler(index_valid)
        self.train_loader = torch.utils.data.DataLoader(self.data_set, batch_size=train_batch_size,
                                                        sampler=train_sampler, pin_memory=self.cuda,
                                                        num_workers=num_workers)
        self.valid_loader = torch.utils.data.DataLoader(self.data_set, batch_size=train_batch_size,
                                                        sampler=valid_sampler, pin_memory=self.cuda,
                                                        num_workers=num_workers)
        self.index_test = index_test
        t0 = time.time()
        self._train(nepoch)
        print('Training done in %1.2f sec' % (time.time() - t0))

    def test(self):
        test_sampler = SubsetRandomSampler(self.index_test)
        test_loader = torch.utils.data.DataLoader(self.data_set, batch_size=10, sampler=test_sampler)
        test_loss = self._epoch(test_loader, train_model=False)
        self.losses['test'].append(test_loss)
        print('Test loss: %1.3e' % test_loss)
        return test_loss

    def _divide_dataset(self, divide_set):
        ntot = len(self.data_set)
        if divide_set is None:
            divide_set = [0.8, 0.1, 0.1]
        ntrain = int(np.ceil(float(ntot) * divide_set[0]))
        nvalid = int(np.floor(float(ntot) * divide_set[1]))
        index = np.arange(ntot)
        np.random.shuffle(index)
        return index[:ntrain].tolist(), index[ntrain:ntrain + nvalid].tolist(), index[ntrain + nvalid:].tolist()

    def _train(self, nepoch=50):
        for epoch in range(nepoch):
            print('\n: epoch %03d / %03d ' % (epoch, nepoch) + '-' * 45)
            t0 = time.time()
            train_loss = self._epoch(self.train_loader, train_model=True)
            self.losses['train'].append(train_loss)
            valid_loss = self._epoch(self.valid_loader, train_model=False)
            self.losses['valid'].append(valid_loss)
            print('  train loss       : %1.3e\n  valid loss       : %1.3e' % (train_loss, valid_loss))
            print('  epoch done in:', time.time() - t0)

    def _epoch(self, data_loader, train_model):
        running_loss = 0
        n = 0
        for d in data_loader:
            inputs, targets = d['feature'], d['target']
            inputs, targets = self._get_variables(inputs, targets)
            outputs = self.net(inputs)
            loss = self.criterion(outputs, targets)
            running_loss += loss.data.item()
            n += len(inputs)
            if train_model:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        return running_loss / n

    def _get_variables(self, inputs, targets):
        if self.cuda:
            inputs = inputs.cuda(non_blocking=True)
            targets = targets.cuda(non_blocking=True)
        inputs = Variable(inputs).float()
        targets = Variable(targets).float()
        return inputs, targets
