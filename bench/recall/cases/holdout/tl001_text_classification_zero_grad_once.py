# -*- coding: utf-8 -*-
from __future__ import absolute_import, division, print_function

import os

import torch
import torch.optim as optim
from torch.nn.modules.loss import NLLLoss

import models
import opts
import utils

if "CUDA_VISIBLE_DEVICES" not in os.environ.keys():
    os.environ["CUDA_VISIBLE_DEVICES"] = "0"
opt = opts.parse_opt()
opt.model = 'lstm'

train_iter, test_iter = utils.loadData(opt)

model = models.setup(opt)
if torch.cuda.is_available():
    model.cuda()
model.train()
optimizer = optim.Adam(model.parameters(), lr=opt.learning_rate)
optimizer.zero_grad()
loss_fun = NLLLoss()

for index, batch in enumerate(train_iter):
    if index % 1000 == 0:
        print(index)

    if len(batch.text[0]) == opt.batch_size:
        predicted = model(batch.text[0])

        loss = loss_fun(predicted, batch.label)
        loss.backward()
        utils.clip_gradient(optimizer, opt.grad_clip)
        optimizer.step()
        if torch.cuda.is_available():
            print("loss : %.5f" % loss.cpu().data.numpy()[0])
        else:
            print("loss : %.5f" % loss.data.numpy()[0])

utils.evaluation(model, test_iter)
