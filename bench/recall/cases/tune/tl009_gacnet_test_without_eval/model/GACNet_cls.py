import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphAttentionConv(nn.Module):
    def __init__(self, in_channel, out_channel, dropout):
        super().__init__()
        self.conv = nn.Conv1d(in_channel, out_channel, 1)
        self.bn = nn.BatchNorm1d(out_channel)
        self.attn = nn.Conv1d(out_channel, 1, 1)
        self.dropout = dropout

    def forward(self, x):
        h = F.relu(self.bn(self.conv(x)))
        alpha = F.dropout(torch.softmax(self.attn(h), dim=-1), self.dropout, training=self.training)
        return h * alpha * h.shape[-1]


class GACNet(nn.Module):
    def __init__(self, num_classes, dropout=0.5):
        super().__init__()
        self.gac1 = GraphAttentionConv(3, 64, dropout)
        self.gac2 = GraphAttentionConv(64, 128, dropout)
        self.gac3 = GraphAttentionConv(128, 1024, dropout)
        self.fc1 = nn.Linear(1024, 512)
        self.bn1 = nn.BatchNorm1d(512)
        self.drop1 = nn.Dropout(dropout)
        self.fc2 = nn.Linear(512, num_classes)

    def forward(self, xyz):
        x = self.gac3(self.gac2(self.gac1(xyz)))
        x = torch.max(x, 2)[0]
        x = self.drop1(F.relu(self.bn1(self.fc1(x))))
        return F.log_softmax(self.fc2(x), -1)
