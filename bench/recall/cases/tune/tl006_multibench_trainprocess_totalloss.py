import time

import torch
from torch import nn

from eval_scripts.complexity import all_in_one_train
from eval_scripts.performance import accuracy

softmax = nn.Softmax()


class MMDL(nn.Module):
    def __init__(self, encoders, fusion, head, has_padding=False):
        super(MMDL, self).__init__()
        self.encoders = nn.ModuleList(encoders)
        self.fuse = fusion
        self.head = head
        self.has_padding = has_padding

    def forward(self, inputs, training=False):
        outs = [self.encoders[i](inputs[i], training=training) for i in range(len(inputs))]
        out = self.fuse(outs, training=training)
        if type(out) is tuple:
            out = out[0]
        return self.head(out, training=training)


def deal_with_objective(objective, pred, truth, args):
    if type(objective) == nn.CrossEntropyLoss:
        if len(truth.size()) == len(pred.size()):
            truth1 = truth.squeeze(len(pred.size()) - 1)
        else:
            truth1 = truth
        return objective(pred, truth1.long().cuda())
    return objective(pred, truth.float().cuda())


def train(encoders, fusion, head, train_dataloader, valid_dataloader, total_epochs, early_stop=False,
          optimtype=torch.optim.RMSprop, lr=0.001, weight_decay=0.0, objective=nn.CrossEntropyLoss(),
          save='best.pt', clip_val=8, track_complexity=True):
    model = MMDL(encoders, fusion, head).cuda()

    def trainprocess():
        op = optimtype([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=weight_decay)
        bestacc = 0
        patience = 0
        for epoch in range(total_epochs):
            totalloss = 0.0
            totals = 0
            model.train()
            for j in train_dataloader:
                op.zero_grad()
                out = model([i.float().cuda() for i in j[:-1]], training=True)
                loss = deal_with_objective(objective, out, j[-1], None)

                totalloss += loss * len(j[-1])
                totals += len(j[-1])
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip_val)
                op.step()
            print("Epoch " + str(epoch) + " train loss: " + str(totalloss / totals))
            model.eval()
            with torch.no_grad():
                totalloss = 0.0
                pred = []
                true = []
                for j in valid_dataloader:
                    out = model([i.float().cuda() for i in j[:-1]], training=False)
                    loss = deal_with_objective(objective, out, j[-1], None)
                    totalloss += loss * len(j[-1])
                    pred.append(torch.argmax(out, 1))
                    true.append(j[-1])
            pred = torch.cat(pred, 0)
            true = torch.cat(true, 0)
            acc = accuracy(true, pred)
            if acc > bestacc:
                patience = 0
                bestacc = acc
                torch.save(model, save)
            else:
                patience += 1
            if early_stop and patience > 7:
                break

    if track_complexity:
        all_in_one_train(trainprocess, [model])
    else:
        trainprocess()
