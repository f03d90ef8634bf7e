import torch
import torch.nn as nn
import torch.nn.functional as F


def knn(x, k):
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x ** 2, dim=1, keepdim=True)
    pairwise_distance = -xx - inner - xx.transpose(2, 1)
    return pairwise_distance.topk(k=k, dim=-1)[1]


def get_graph_feature(x, k=20, idx=None):
    batch_size, num_dims, num_points = x.size()
    if idx is None:
        idx = knn(x, k=k)
    idx_base = torch.arange(0, batch_size, device=x.device).view(-1, 1, 1) * num_points
    idx = (idx + idx_base).view(-1)
    x = x.transpose(2, 1).contiguous()
    feature = x.view(batch_size * num_points, -1)[idx, :]
    feature = feature.view(batch_size, num_points, k, num_dims)
    x = x.view(batch_size, num_points, 1, num_dims).repeat(1, 1, k, 1)
    return torch.cat((feature - x, x), dim=3).permute(0, 3, 1, 2).contiguous()


class TSGCNet(nn.Module):
    def __init__(self, k=16, in_channels=12, output_channels=17):
        super(TSGCNet, self).__init__()
        self.k = k
        self.conv1_c = nn.Sequential(nn.Conv2d(in_channels * 2, 64, kernel_size=1, bias=False),
                                     nn.BatchNorm2d(64), nn.LeakyReLU(negative_slope=0.2))
        self.conv1_n = nn.Sequential(nn.Conv2d(in_channels * 2, 64, kernel_size=1, bias=False),
                                     nn.BatchNorm2d(64), nn.LeakyReLU(negative_slope=0.2))
        self.fuse = nn.Sequential(nn.Conv1d(128, 256, kernel_size=1, bias=False),
                                  nn.BatchNorm1d(256), nn.LeakyReLU(negative_slope=0.2))
        self.pred = nn.Sequential(nn.Conv1d(256, 128, kernel_size=1, bias=False),
                                  nn.BatchNorm1d(128), nn.LeakyReLU(negative_slope=0.2),
                                  nn.Dropout(p=0.6),
                                  nn.Conv1d(128, output_channels, kernel_size=1))

    def forward(self, x, n):
        x = self.conv1_c(get_graph_feature(x, k=self.k)).max(dim=-1)[0]
        n = self.conv1_n(get_graph_feature(n, k=self.k)).max(dim=-1)[0]
        x = self.fuse(torch.cat((x, n), dim=1))
        x = self.pred(x)
        return F.log_softmax(x.transpose(2, 1), dim=-1)
