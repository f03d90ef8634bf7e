'''Train CK+ with PyTorch.'''
from __future__ import print_function

import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

import transforms as transforms
import utils
from CK import CK
from models import VGG, ResNet18

parser = argparse.ArgumentParser(description='PyTorch CK+ CNN Training')
parser.add_argument('--model', type=str, default='VGG19')
parser.add_argument('--fold', default=1, type=int)
parser.add_argument('--bs', default=128, type=int)
parser.add_argument('--lr', default=0.01, type=float)
opt = parser.parse_args()
use_cuda = torch.cuda.is_available()
best_Test_acc = 0
cut_size = 44
total_epoch = 60

transform_train = transforms.Compose([transforms.RandomCrop(cut_size), transforms.RandomHorizontalFlip(),
                                      transforms.ToTensor()])
transform_test = transforms.Compose([
    transforms.TenCrop(cut_size),
    transforms.Lambda(lambda crops: torch.stack([transforms.ToTensor()(crop) for crop in crops])),
])
trainset = CK(split='Training', fold=opt.fold, transform=transform_train)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=opt.bs, shuffle=True, num_workers=0)
testset = CK(split='Testing', fold=opt.fold, transform=transform_test)
testloader = torch.utils.data.DataLoader(testset, batch_size=5, shuffle=False, num_workers=0)

net = VGG('VGG19') if opt.model == 'VGG19' else ResNet18()
if use_cuda:
    net.cuda()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=opt.lr, momentum=0.9, weight_decay=5e-4)


def train(epoch):
    net.train()
    train_loss = 0
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        if use_cuda:
            inputs, targets = inputs.cuda(), targets.cuda()
        optimizer.zero_grad()
        inputs, targets = Variable(inputs), Variable(targets)
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        utils.clip_gradient(optimizer, 0.1)
        optimizer.step()
        train_loss += loss.data


def test(epoch):
    global best_Test_acc
    net.eval()
    PrivateTest_loss = 0
    correct = 0
    total = 0
    for batch_idx, (inputs, targets) in enumerate(testloader):
        bs, ncrops, c, h, w = np.shape(inputs)
        inputs = inputs.view(-1, c, h, w)
        if use_cuda:
            inputs, targets = inputs.cuda(), targets.cuda()
        inputs, targets = Variable(inputs, volatile=True), Variable(targets)
        outputs = net(inputs)
        outputs_avg = outputs.view(bs, ncrops, -1).mean(1)  # avg over crops
        loss = criterion(outputs_avg, targets)
        PrivateTest_loss += loss.data
        _, predicted = torch.max(outputs_avg.data, 1)
        total += targets.size(0)
        correct += predicted.eq(targets.data).cpu().sum()
    Test_acc = 100. * correct / total
    if Test_acc > best_Test_acc:
        torch.save(net.state_dict(), os.path.join('CK+_VGG19', 'Test_model.t7'))
        best_Test_acc = Test_acc


for epoch in range(0, total_epoch):
    train(epoch)
    test(epoch)
